"""Text rendering of result objects; `--json` output goes through each result's to_json()."""
from __future__ import annotations

import json
import sys

from loci.query.router import DETAILS_SHOWN


def dump_json(obj: object, write=None) -> None:
    """``obj`` as indented JSON and a newline, to stdout (or through ``write``)."""
    (write or sys.stdout.write)(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def report_json(report) -> dict:
    """A build API report (a dataclass, its nested reports too) as the plain object ``--json``
    prints: the report's own fields, paths as text."""
    from dataclasses import asdict

    return json.loads(json.dumps(asdict(report), default=str))


class View(dict):
    """A result as plain data (``loci.query.engine.plain``) read by attribute, as the renderers
    read the result objects: ``view.scopes``, ``view.details[0].total``, ``hit.get("via")``."""

    def __getattr__(self, name: str) -> object:
        try:
            return _viewed(self[name])
        except KeyError:
            raise AttributeError(name) from None


def _viewed(value: object) -> object:
    if isinstance(value, dict) and not isinstance(value, View):
        return View(value)
    if isinstance(value, list):
        return [_viewed(v) for v in value]
    return value


def show(op: str, payload: dict, *, explain: bool, as_json: bool, echo, err, write=None) -> None:
    """Print one answer payload (``loci.query.engine.answer``), whichever process made it: notes
    through ``err``, text through ``echo``, ``--json`` through ``write`` (default: stdout)."""
    for note in payload.get("notes", ()):
        err(note)
    if as_json:
        dump_json(payload["json"], write)
    elif op == "route":
        echo("\n".join(route_lines(View(payload["view"]), explain)))
    else:
        echo("\n".join(ask_lines(View(payload["view"]))))


REASONS = {
    "deictic": "the question points at a project (this/here/it) without naming one",
    "no_evidence": "no project holds enough of the question to tell which it is about",
    "ambiguous": "the code name it asks about is defined in several projects",
    "out_of_group": "the best answer lies outside the group",
    # finer causes of a no_evidence abstention, one of which is shown instead
    "no_terms": "no project holds a distinctive term from this question",
    "vetoed": "the words matched by coincidence: nothing indexed comes close to the question's meaning",
    "unwritten": "no project here is written in {languages}",
    "unheld": "no project here mentions {names}",
}
# `loci route` has no --scope: a fix names the command that takes it
FIXES = {
    "deictic": "ask from inside the project directory, or with `loci ask --scope <name>`",
    "no_evidence": "pick a candidate: `loci ask --scope <name>`, or ask from inside the project directory",
    "ambiguous": "pick one: `loci ask --scope <one of the candidates>`, or ask from inside that project",
    "out_of_group": "re-run without --group, or with `loci ask --scope <name>`",
    "no_terms": "name the project (`loci ask --scope <name>`); `loci doctor` shows what is not indexed",
    "vetoed": "name the project (`loci ask --scope <name>`), or use other words",
    "unwritten": "ask without naming the language, or add a project written in it (`loci add DIR`)",
    "unheld": "if a project covers it under other names, ask with `loci ask --scope <name>`",
}


def abstention_cause(result) -> str:
    """The one cause an abstention is shown with (a key of REASONS and FIXES)."""
    if result.reason != "no_evidence":
        return result.reason
    if (getattr(result, "semantic", None) or {}).get("action") == "vetoed":
        return "vetoed"
    if getattr(result, "unwritten", False):
        return "unwritten"   # every project left out for its language ("which of my Kotlin projects ...?")
    if getattr(result, "unheld", None):
        return "unheld"   # "OAuth2 ... PKCE": names no project mentions
    held = any(getattr(d, "evidence", 0) > 0 for d in getattr(result, "details", None) or ())
    return "no_evidence" if result.candidates or held else "no_terms"


def _why(result) -> str:
    """What put the first scope first, in a few words (names and cwd are the forcing signals)."""
    top = next((d for d in result.details if result.scopes and d.scope == result.scopes[0]), None)
    if result.gate == "--scope":
        return "  (--scope)"
    if top is None:
        return ""
    if top.alias and top.alias > top.cwd:
        return "  (named in the question)"
    if top.cwd:
        return "  (the working directory)"
    return ""


def _by_meaning(result) -> str:
    sem = getattr(result, "semantic", None) or {}
    if sem.get("action") == "added":
        return f"  ({sem['scope']} added: closest in meaning)"
    if sem.get("action") == "rescued":
        return "  (closest in meaning; its words alone were too weak to decide)"
    if sem.get("action") == "led":
        return f"  ({sem['scope']} first: clearly closest in meaning of the projects its words found)"
    if sem.get("action") == "fused":
        held = {d.scope for d in getattr(result, "details", None) or () if getattr(d, "evidence", 0) > 0}
        alone = [s for s in result.scopes if held and s not in held]   # its place is the closest in meaning's
        tail = f"; {', '.join(alone)} by meaning alone" if alone else "; neither decided alone"
        return f"  (ranked high by both its words and its meaning{tail})"
    if sem.get("action") == "narrowed":
        return f"  ({', '.join(sem['dropped'])} left out: only common words, far in meaning)"
    return ""


COPIES_NAMED = 3   # a text answer names this many identical copies of a scope, then counts the rest


def copies_line(scope: str, copies: list[str]) -> str:
    """The line saying which identical copies ``scope`` answers for (``route --json`` lists them all)."""
    shown = copies if len(copies) <= COPIES_NAMED + 1 else copies[:COPIES_NAMED]   # "and 1 other" names it
    named = ", ".join(shown) + (f" and {len(copies) - len(shown)} other copies" if len(shown) < len(copies) else "")
    return f"  {scope} also answers for {named} (the same content)"


def route_lines(result, explain: bool = False) -> list[str]:
    lines: list[str] = []
    if result.outcome == "abstained":
        cause = abstention_cause(result)
        reason = REASONS.get(cause, cause).format(languages=" or ".join(getattr(result, "languages", None) or ()),
                                                  names=" or ".join(getattr(result, "unheld", None) or ()))
        lines.append(f"ABSTAINED - {reason}.")
        if result.candidates:
            parts = [f"{c['scope']} ({', '.join(c['terms']) or 'close in meaning'})" for c in result.candidates]
            lines.append("  candidates: " + "; ".join(parts))
        lines.append("  " + FIXES.get(cause, FIXES["no_evidence"]))
    else:
        word = "ENUMERATED" if result.outcome == "enumerated" else "ROUTED"
        lines.append(f"{word} -> {', '.join(result.scopes)}{_why(result)}{_by_meaning(result)}")
        for scope, copies in (getattr(result, "copies", None) or {}).items():
            lines.append(copies_line(scope, copies))
    if explain:
        lines.append(f"  decided by: {result.gate}")
        sem = result.semantic
        if sem:
            lines.append(f"  vectors: {sem['scope']} closest in meaning (affinity {sem['affinity']:.3f}, "
                         f"{sem['margin']:.3f} ahead): {sem['action']}")
        lines.append(f"  tokens: {' '.join(result.tokens[:40])}")
        if result.excluded:
            lines.append(f"  excluded by the question: {', '.join(result.excluded)}")
        if getattr(result, "other_language", None):
            lines.append(f"  asked about {' or '.join(result.languages)}: {len(result.other_language)} "
                         f"project(s) in other languages left out")
        lines.append(f"  {'scope':<24} {'total':>7} {'evid':>7} {'name':>5} {'cwd':>5} {'rec':>5}  matched")
        for d in result.details[:DETAILS_SHOWN]:
            matched = ", ".join(f"{t}={v:.2f}" for t, v in sorted(d.matched.items(), key=lambda kv: -kv[1])[:6])
            flag = " (demoted)" if d.demoted else ""
            lines.append(f"  {d.scope:<24} {d.total:7.3f} {d.evidence:7.3f} {d.alias:5.1f} {d.cwd:5.1f} "
                         f"{d.recency:5.2f}  {matched}{flag}")
    return lines


def ask_lines(result) -> list[str]:
    lines = route_lines(result.route)
    for block in result.blocks:
        lines.append("")
        origin = getattr(block, "origin", None) or {}
        at = f" @ {origin['commit'][:12]}" if origin.get("commit") else ""
        lines.append(f"== {block.scope}" + (f"  ({origin.get('repository') or 'pulled'}{at})" if origin else ""))
        if not block.episodes and not block.structure:
            lines.append("  no evidence in this scope")
        for hit in block.structure:
            via = f"  (via {hit['via']})" if hit.get("via") else ""
            lines.append(f"  [{hit.get('relation', 'symbol')}] {hit['label']}  "
                         f"{hit['source_file']}:{hit['line']}{via}")
        for ep in block.episodes:
            cite = (ep.source if ep.source.startswith(("commit:", "tag:")) else f"{ep.source}:{ep.line}") + at
            head = f" - {ep.heading}" if ep.heading else ""
            lines.append(f"  [{ep.kind}] {cite}{head}")
            lines.append(f"      {snippet(ep.text, result.route.tokens)}")
        for note in block.notes:
            lines.append(f"  ({note})")
    return lines


SNIPPET_CHARS = 300


def snippet(text: str, tokens, width: int = SNIPPET_CHARS) -> str:
    """The passage on one line, less its decoration (``loci.kernel.markup``), at most ``width``
    characters: its opening, or, when the question's
    words (``tokens``, the router's) lie further in, the stretch that holds the most of them,
    centred on them (a long section's answer is often past its first lines)."""
    from collections import Counter

    from loci.kernel.markup import without_decoration
    from loci.kernel.tokens import tokenize

    # logos and badges say nothing on one line; a passage that is all markup (a maintainers' HTML
    # comment) is shown as written rather than as nothing
    flat = " ".join(without_decoration(text).split()) or " ".join(text.split())
    if len(flat) <= width:
        return flat
    wanted = set(tokens)
    words, at = [], 0
    for word in flat.split(" "):
        words.append((at, at + len(word), wanted.intersection(tokenize(word)) if wanted else set()))
        at += len(word) + 1
    held, inside, j = [], Counter(), 0     # per opening word: the question's words wholly inside
    for i, (begin, _, found) in enumerate(words):
        j = max(j, i)                          # a word longer than the window holds no window
        while j < len(words) and words[j][1] <= begin + width:
            inside.update(words[j][2])
            j += 1
        held.append(sum(1 for n in inside.values() if n > 0))
        if i < j:
            inside.subtract(found)
    most = max(held)
    if most <= held[0]:
        return flat[:width] + "…"
    runs = [i for i, n in enumerate(held) if n == most]
    begin = words[runs[len(runs) // 2]][0]
    return "…" + flat[begin:begin + width] + ("…" if begin + width < len(flat) else "")
