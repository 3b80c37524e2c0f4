"""The routing decision: a pure function of question, routing index, context and Params.

Signals: a scope named as a name (not merely a word that happens to be its
name), the cwd's scope, vocabulary evidence, recency as a tie-break. Gates in
order: out of group, forced (name or cwd), enumeration, deixis, evidence.
Abstention is a RouteResult with a reason and a shortlist, never an exception.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Collection, Mapping, Sequence

from loci.query import grammar
from loci.query.project_files.topics import fact_file_patterns
from loci.query.question import Question
from loci.kernel.config import DEFAULT_PARAMS, Params
from loci.query.store import RoutingIndex
from loci.kernel.tokens import ABBREVIATIONS, surface_forms, tokenize


@dataclass(frozen=True)
class Context:
    """Where the question comes from: the cwd's scope and the group confinement."""

    cwd_scope: str | None = None
    eligible: frozenset[str] | None = None   # None: every scope is eligible
    demoted: frozenset[str] = frozenset()    # soft group reached through the cwd
    strict: bool = False                     # abstain when the best answer is outside
    group: str | None = None
    # copies of another scope's content (same build fingerprint) answered by that scope: a copy
    # takes no place of its own unless the question names it or is asked from inside it
    shadowed: frozenset[str] = frozenset()


@dataclass
class ScopeScore:
    scope: str
    evidence: float = 0.0
    alias: float = 0.0
    cwd: float = 0.0
    recency: float = 0.0
    demoted: bool = False
    matched: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return self.evidence + self.alias + self.cwd + self.recency


DETAILS_SHOWN = 12   # the scopes' score details `route --explain` lists, best first


@dataclass
class RouteResult:
    outcome: str                       # routed | abstained | enumerated
    scopes: list[str]
    reason: str | None                 # None | deictic | no_evidence | ambiguous | out_of_group
    candidates: list[dict]
    scores: dict[str, float]
    gate: str = ""                     # which gate decided, for --explain
    details: list[ScopeScore] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    # the language a question says it is about ("my Node CLI") and the scopes written in none of
    # it, left out as the excluded are (``other_language``)
    languages: list[str] = field(default_factory=list)
    other_language: list[str] = field(default_factory=list)
    unwritten: bool = False            # no project is written in ``languages`` (an empty set says so)
    # the names the question writes that no project mentions (``unheld_names``), when they decided
    unheld: list[str] = field(default_factory=list)
    semantic: dict | None = None       # what the vectors said, when they were asked (second_opinion)
    # enumeration: why each member is in the set, [{"scope", "facts": [...], "terms": [...]}];
    # the query service replaces each fact token with its citation
    members: list[dict] = field(default_factory=list)
    # chosen scopes that have identical copies elsewhere in the home: {scope: [copies]}
    copies: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self, explain: bool = False) -> dict:
        out = {"outcome": self.outcome, "scopes": list(self.scopes), "reason": self.reason,
               "candidates": self.candidates, "scores": dict(self.scores)}
        if self.outcome == "enumerated":
            out["members"] = [dict(m) for m in self.members]
        if self.semantic is not None:
            out["semantic"] = dict(self.semantic)
        if self.copies:
            out["same_content"] = {s: list(c) for s, c in self.copies.items()}
        if explain:
            out["explain"] = self.explanation()
        return out

    def for_text(self) -> "RouteResult":
        """This result with what the text view reads of the per-scope scores: the first
        ``DETAILS_SHOWN`` details (``route --explain``) and the chosen scopes'. At 1,000 scopes
        turning every scope's details into plain data cost a one-shot question more than its
        search; ``--json`` is made from the whole result."""
        chosen = set(self.scopes)
        details = [d for i, d in enumerate(self.details) if i < DETAILS_SHOWN or d.scope in chosen]
        kept = {d.scope for d in details} | chosen
        return replace(self, details=details, scores={s: v for s, v in self.scores.items() if s in kept})

    def explanation(self) -> dict:
        """What `route --explain` shows: the deciding gate, the question's tokens and every
        scope's score parts, best first."""
        return {"gate": self.gate, "tokens": list(self.tokens), "excluded": list(self.excluded),
                "languages": list(self.languages), "other_language": len(self.other_language),
                "details": [{"scope": d.scope, "total": d.total, "evidence": d.evidence, "alias": d.alias,
                             "cwd": d.cwd, "recency": d.recency, "demoted": d.demoted,
                             "matched": dict(d.matched)} for d in self.details]}


def answered_by(groups: Sequence[Sequence[str]], pulled: Collection[str] = (), cwd_scope: str | None = None,
                eligible: Collection[str] | None = None) -> dict[str, str]:
    """Of each group of identical copies, every scope but the one that answers for them, with that
    one: the cwd's, else the first eligible one, built here before pulled, by name."""
    out: dict[str, str] = {}
    for group in groups:
        ranked = sorted(group, key=lambda s: (s != cwd_scope, eligible is not None and s not in eligible,
                                              s in pulled, s))
        out.update((s, ranked[0]) for s in ranked[1:])
    return out


def one_per_content(scopes: Sequence[str], groups: Sequence[Sequence[str]], shadowed: Collection[str]) -> list[str]:
    """``scopes`` with identical copies chosen together (a name every clone goes by) reduced to
    one, at the place of the first: the one that answers for the others (not in ``shadowed``)
    when it was chosen. A copy named alone keeps its place."""
    group_of = {s: tuple(g) for g in groups for s in g}
    out: list[str] = []
    for s in scopes:
        group = group_of.get(s)
        if group is None:
            out.append(s)
            continue
        if any(k in group for k in out):
            continue
        chosen = [g for g in scopes if g in group]
        out.append(next((g for g in chosen if g not in shadowed), s))
    return out


def scope_rows(index: RoutingIndex, names: Collection[str]) -> frozenset[int]:
    """The rows of ``index`` that hold the scopes ``names`` (those it has)."""
    return frozenset(index.position[s] for s in names if s in index.position)


def shadowed_copies(groups: Sequence[Sequence[str]], pulled: Collection[str] = (), cwd_scope: str | None = None,
                    eligible: Collection[str] | None = None) -> frozenset[str]:
    """The copies that take no place of their own (``answered_by``'s keys)."""
    return frozenset(answered_by(groups, pulled, cwd_scope, eligible))


def question_tokens(question: "Question | str", enumerative: bool) -> list[str]:
    """The question's evidence tokens (``Question.tokens``), for a caller that holds only the text
    and knows whether it is an enumeration."""
    return Question.of(question).evidence_tokens(enumerative)


FACT = "fact:"


def rarity(n_scopes: int, n_holders: int) -> float:
    """1 for a token one scope holds, falling toward ~0.3 for one every scope holds."""
    if n_scopes <= 1 or n_holders <= 0:
        return 1.0
    return math.log(1 + n_scopes / n_holders) / math.log(1 + n_scopes)


def token_evidence(index: RoutingIndex, token: str, params: Params, skip: frozenset[int] = frozenset(),
                   also: Sequence[str] = ()) -> dict[int, float]:
    """Per-scope evidence of one token: log of the scope's smoothed share over the mean share.

    A scope that uses the token more than the average scope does earns evidence; a
    broad scope spreads its mass thin and earns little; Dirichlet smoothing keeps a
    tiny scope's share honest, and the saturating factor w / (w + k) keeps a word
    mentioned once or twice in a big scope's prose from counting as prominent there.
    ``skip``: scopes counted nowhere (copies of another scope: one content is one witness).
    ``also``: other spellings of the same word ("color" for "colour"): one word, one posting
    list, each scope's weights of its forms added. Scored apart, the rarer spelling would lift the
    one project that writes it above those that use the word most.
    """
    rows = index.get(token)
    for other in also:
        extra = index.get(other)
        if extra:
            rows = dict(rows)
            for i, w in extra.items():
                rows[i] = rows.get(i, 0.0) + w
    if skip:
        rows = {i: w for i, w in rows.items() if i not in skip}
    if not rows:
        return {}
    n = len(index.scopes) - len(skip)
    size = index.size
    mean_share = sum(w / size[i] for i, w in rows.items()) / n
    if mean_share <= 0:
        return {}
    mu = params.smoothing * index.median_size
    scale = math.log(max(n, 2))  # evidence on one scale whatever the number of scopes
    rare = rarity(n, len(rows))  # a token most scopes hold is weak evidence whoever uses it most
    out: dict[int, float] = {}
    for i, w in rows.items():
        p = (w + mu * mean_share) / (size[i] + mu)
        ev = math.log(p / mean_share) / scale * (w / (w + params.prominence_k)) * rare
        if ev > 0:
            out[i] = ev
    return out


def spellings_of(tok: str, toks: Sequence[str], q: Question) -> list[str]:
    """The question word's other spelling, unless the question also writes it."""
    spelt = q.other_spellings.get(tok)
    return [spelt] if spelt and spelt not in toks else []


def word_evidence(index: RoutingIndex, tok: str, toks: Sequence[str], q: Question, params: Params,
                  skip: frozenset[int], holders: dict[str, set[int]]) -> dict[int, float]:
    """Per-scope evidence of one of the question's words as vocabulary, in any of its forms; the
    scopes holding another form join the word's ``holders``."""
    # "colour" finds "color": one word in two spellings, one posting list
    forms = spellings_of(tok, toks, q)
    for other in forms:
        holders.setdefault(tok, set()).update(set(index.get(other)) - skip)
    evidence = token_evidence(index, tok, params, skip, also=forms)
    short = ABBREVIATIONS.get(tok)
    if short and short not in toks:
        # "directory" also finds code's "dir": its best form, an abbreviation being a code name's
        # piece that other words share ("int", "col", "ref")
        holders.setdefault(tok, set()).update(set(index.get(short)) - skip)
        for i, ev in token_evidence(index, short, params, skip).items():
            evidence[i] = max(evidence.get(i, 0.0), ev)
    return evidence


def _recency(index: RoutingIndex) -> list[float]:
    """Each scope's rank by its newest commit, 0 to 1 (computed once per index)."""
    cached = index.__dict__.get("_recency")
    if cached is not None:
        return cached
    index.__dict__["_recency"] = out = _recency_ranks(index)
    return out


def _recency_ranks(index: RoutingIndex) -> list[float]:
    dated = sorted((d, i) for i, d in enumerate(index.updated) if d)
    out = [0.0] * len(index.scopes)
    for rank, (_d, i) in enumerate(dated):
        out[i] = (rank + 1) / len(dated)
    return out


def name_hits(question: str, aliases: Mapping[str, Sequence[str]], index: RoutingIndex,
              enumerative: bool) -> tuple[dict[str, int], set[str], dict[str, list[str]]]:
    """Scopes the question names (strong uses), scopes it excludes ("besides X"), and
    scopes whose ordinary-word name appears bare, with the words that follow it.

    When the question names some project unmistakably ("the requests library", `attrs`), an
    ordinary word that reads as a name only after a preposition ("with backoff") is a bare use.
    A name listed with a name by "and", "or" or a comma reads as that one does ("use click and
    jinja": both are named; "besides flask and starlette": both are set aside), read from the
    names the question uses as names until no more join them."""
    lowered = question.lower()
    present = [(scope, alias) for scope, names in aliases.items() for alias in names
               if len(alias) >= 2 and alias.lower() in lowered]
    joined: dict[str, str] = {}
    for _ in range(len(present) + 1):
        named, excluded, soft, read = _read_names(question, present, index, joined)
        if read == joined or not soft:   # only a name read as a word may join a list
            break
        joined = read
    return named, excluded, soft


def _read_names(question: str, present: Sequence[tuple[str, str]], index: RoutingIndex, joined: Mapping[str, str]
                ) -> tuple[dict[str, int], set[str], dict[str, list[str]], dict[str, str]]:
    """``name_hits`` for the (scope, alias) pairs the question spells, given the names ``joined``
    already reads (alias -> "named", "marked", "excluded"); also how each alias reads now."""
    soft: dict[str, list[str]] = {}
    named: dict[str, int] = {}
    excluded: set[str] = set()
    read: dict[str, str] = {}
    uses = [(scope, alias, *grammar.name_uses(question, alias, joined)) for scope, alias in present]
    unmistakable = any(marked for *_rest, marked in uses)
    for scope, alias, strong, bare, excl, marked in uses:
        guessed = unmistakable and strong and not marked   # named only after a preposition
        ordinary = (guessed or bare and not strong) and _is_ordinary_word(alias, scope, index)
        if guessed and ordinary:
            strong, bare = 0, bare + strong
        if excl:
            excluded.add(scope)
            read[alias] = "excluded"
        if strong or bare and (not ordinary or _api_phrase(alias, grammar.next_words(question, alias), scope, index)):
            named[scope] = named.get(scope, 0) + (strong or bare)
            read.setdefault(alias, "marked" if marked else "named")
        elif bare:
            soft.setdefault(scope, []).extend(grammar.next_words(question, alias))
    return named, excluded, soft, read


def symbol_holders(question: str, index: RoutingIndex, params: Params) -> list[tuple[str, list[int], set[int]]]:
    """Each code name the question uses (``parse_defaults``, ``PluginManager._verify_hook``,
    ``PolynomialHash``) with the scopes that hold it, heaviest first, and those that weigh the most.

    A code name is looked up whole (its qualified form first, then its last part): its split
    words are ordinary vocabulary. A scope holds it when its weight for the name is at least
    ``symbol_holder_share`` of the heaviest holder's: a definition weighs 1, a passing mention
    in another project's prose 0.35, so a project that only mentions the name is no holder.
    """
    words = grammar.identifiers(question) + [w for w in grammar.upper_camel_words(question)
                                             if w not in grammar.identifiers(question)]
    out: list[tuple[str, list[int], set[int]]] = []
    for word in words:
        for key in _whole_names(word):
            rows = index.get(key)
            if rows:
                top = max(rows.values())
                held = sorted((i for i, w in rows.items() if w >= params.symbol_holder_share * top),
                              key=lambda i: -rows[i])
                out.append((word, held, {i for i in held if rows[i] == top}))
                break
    return out


def symbol_route(question: "Question | str", index: RoutingIndex, params: Params,
                 elig: Sequence[ScopeScore]) -> tuple[list[ScopeScore], str, bool] | None:
    """For a question about code structure (where is X defined, what calls X), the scopes its
    code names pick out: (scopes, name, too_many), or None.

    Every name held by at most ``select_max`` eligible scopes contributes its holders (``select_max``
    in all): a function defined in one project is asked about there. The heaviest holder of a name
    comes first (it defines the name; a type stub declares it at a fraction of that weight), then
    the others by evidence: a small stub package's words are all the library's names, so by
    evidence alone it would lead the library it describes. When every name is held more widely,
    the holders come back as an abstention's shortlist (``too_many``). Elsewhere a code name is
    vocabulary like any word: an open question's ``sys.exit()``, ``pyproject.toml`` or ``Node.js``
    names no project's code.
    """
    q = Question.of(question)
    shape = q.shape
    if not (shape.callers or shape.callees or shape.define and grammar.asks_where(q.text)):
        return None
    by_pos = {index.position[s.scope]: s for s in elig}
    picks, defines = [], set()
    for word, held, heaviest in symbol_holders(q.text, index, params):
        scopes = [by_pos[i] for i in held if i in by_pos]
        if scopes:
            picks.append((word, scopes))
            if len(scopes) <= params.select_max:
                defines.update(index.scopes[i] for i in heaviest)
    if not picks:
        return None
    few = [(w, sc) for w, sc in picks if len(sc) <= params.select_max]
    if few:
        chosen = {s.scope: s for _w, sc in few for s in sc}
        ranked = sorted(chosen.values(), key=lambda s: (s.scope not in defines, -s.total, s.scope))
        return ranked[: params.select_max], few[0][0], False
    word, scopes = min(picks, key=lambda p: len(p[1]))
    return sorted(scopes, key=lambda s: (-s.total, s.scope))[:5], word, True


def _whole_names(word: str) -> list[str]:
    """Lookup keys for a code name, most specific first: ``a.B.c_d`` -> ``b.c_d``'s tokens whole."""
    segments = [p for p in re.split(r"\.|::", word) if p]
    keys = []
    if len(segments) > 1:
        keys.append(tokenize(".".join(segments[-2:]))[0])
    last = tokenize(segments[-1]) if segments else []
    if last:
        keys.append(last[0])
    return [k for k in dict.fromkeys(keys) if k]


def _points_at_a_project(question: str, kind: str | None, words: int) -> bool:
    """Does a bare "it" in a question without evidence stand for a project?

    When what is asked is a fact about a project (how to install it, its licence, its
    changelog, its tests: ``project_files.topics.TOPICS``), or when the question holds no more than one
    word of its own (``words``: "How do I configure it?", "what does it return?"): nothing in it
    describes what "it" is. In any other question "it" is anaphora for something the question
    itself describes ("swallowing the first word ... what's wrong with it?"), the abstention is
    for lack of evidence, and the vectors may still answer it.
    """
    return kind == "weak" and (words <= 1 or bool(fact_file_patterns(question)))


def _api_phrase(alias: str, followers: Sequence[str], scope: str, index: RoutingIndex) -> bool:
    """Is an ordinary-word name followed by a word that, joined to it, is one of that scope's own
    API names? "a click option" writes ``click.option``, an idiom of one ecosystem: the word is
    the project's name there. The scope must be the heaviest holder of the qualified name."""
    own = index.position.get(scope, -1)
    for word in followers:
        keys = tokenize(f"{alias}.{word}")
        rows = index.get(keys[0]) if keys and "." in keys[0] else {}
        if rows and max(rows, key=rows.get) == own:
            return True
    return False


def _is_ordinary_word(alias: str, scope: str, index: RoutingIndex) -> bool:
    """An alias is an ordinary word when other scopes use it as vocabulary too."""
    toks = tokenize(alias)
    if not toks:
        return True
    own = index.position.get(scope, -1)
    holders = {i for t in toks[:1] for i in index.get(t)}
    return bool(holders - {own}) or alias.isalpha() and len(alias) <= 4


def other_language(q: Question, index: RoutingIndex, context: Context) -> set[str]:
    """The scopes a question rules out by naming the language it is about ("In my Node CLI"):
    those holding none of its language facts, when some scope holds one (the cwd's never)."""
    held = {i for lang in q.languages for i in index.get(FACT + lang)}
    if not held:
        return set()
    return {s for s in index.scopes if index.position[s] not in held and s != context.cwd_scope}


def route(question: "Question | str", index: RoutingIndex, context: Context = Context(),
          aliases: Mapping[str, Sequence[str]] | None = None,
          params: Params = DEFAULT_PARAMS) -> RouteResult:
    """Decide which scopes ``question`` belongs to, or abstain with a shortlist."""
    q = Question.of(question)
    question = q.text
    aliases = aliases or {}
    enumerative = q.enumerative
    toks = q.tokens
    named, excluded, soft = name_hits(question, aliases, index, enumerative)
    off_language = other_language(q, index, context) if not (enumerative or named) else set()
    # a copy of another scope (not named, not the cwd's) takes no place and is no second witness
    copies = {s for s in context.shadowed if s not in named and s != context.cwd_scope}
    skip = scope_rows(index, copies)
    n = len(index.scopes) - len(skip)
    recency = _recency(index)

    scores = [ScopeScore(s) for s in index.scopes]
    holders: dict[str, set[int]] = {}
    negated = {t for w in grammar.negated_words(question) for t in tokenize(w)[:1]} if enumerative else set()
    toks = [t for t in toks if t not in negated]
    # the words naming the ecosystem ruled the other languages out: among the projects left they
    # count as the language fact every one of them holds, not as vocabulary ("Node.js" is a Node
    # logger's word as much as a Node CLI parser's)
    spent = q.language_tokens if off_language else frozenset()
    plain = q.unnamed_language_words   # "shell tab-completion" is no fact:shell
    for tok in toks:
        rows, facts = ({} if tok in spent else index.get(tok)), ({} if tok in plain else index.get(FACT + tok))
        if rows or facts:
            holders[tok] = (set(rows) | set(facts)) - skip
        evidence = {} if tok in spent else word_evidence(index, tok, toks, q, params, skip, holders)
        facts = {i: w for i, w in facts.items() if i not in skip}
        for i in facts:  # a fact (license, language, dependency) is held or not, whatever the size
            evidence[i] = evidence.get(i, 0.0) + params.fact_evidence * rarity(n, len(facts))
        for i, ev in evidence.items():
            scores[i].matched[tok] = ev
    said = [t for t in toks if t not in spent or index.get(FACT + t)]   # a spent word that is no fact says nothing
    norm = max(1.0, len(said)) ** params.length_norm
    for sc in scores:
        sc.evidence = sum(sc.matched.values()) / norm if sc.matched else 0.0
        if sc.scope in context.demoted:
            sc.demoted = True
            sc.evidence *= params.soft_group_factor
        sc.recency = params.recency_boost * recency[index.position[sc.scope]]
        if not enumerative:
            if sc.scope in named:
                sc.alias = params.alias_boost
            elif sc.scope in soft and any(sc.matched.get(t, 0.0) >= params.soft_alias_min
                     for w in soft.get(sc.scope, ()) for t in tokenize(w)[:1]):
                # "a click option": the bare name modifies a word that scope is known for
                sc.alias = params.soft_alias_boost
            if sc.scope == context.cwd_scope:
                sc.cwd = params.cwd_boost

    def eligible(sc: ScopeScore) -> bool:
        if sc.scope in excluded or sc.scope in off_language:
            return False
        if sc.scope in copies:
            return False
        return context.eligible is None or sc.scope in context.eligible

    distinct_cap = max(1, int(n * params.distinctive_max_share))
    concentrated = {t for t, h in holders.items() if len(h) <= params.concentrated_max_scopes}

    def has_concentrated(sc: ScopeScore) -> list[str]:
        return [t for t in sc.matched if t in concentrated
                and sc.matched[t] >= params.concentrated_min_evidence]

    def distinctive_terms(sc: ScopeScore) -> list[str]:
        return [t for t in sc.matched if len(holders.get(t, ())) <= distinct_cap]

    def held_distinctive(sc: ScopeScore) -> list[str]:
        i = index.position[sc.scope]
        terms = [t for t, h in holders.items() if i in h and len(h) <= distinct_cap]
        return sorted(terms, key=lambda t: -sc.matched.get(t, 0.0))

    def routable(sc: ScopeScore, floor: float) -> bool:
        return (sc.evidence >= floor or len(distinctive_terms(sc)) >= params.min_matched_tokens
                or bool(has_concentrated(sc)))

    def outside(sc: ScopeScore) -> bool:
        return context.eligible is not None and sc.scope not in context.eligible and sc.scope not in copies

    def outside_would_route() -> bool:
        """Is the corpus-wide winner outside the group asked, and would it route on its own?"""
        return (top_all is not None and outside(top_all) and (top_all.alias >= params.alias_boost
                or bool(top_all.cwd) or routable(top_all, params.evidence_floor)))

    keyed = sorted((-s.total, s.scope, i) for i, s in enumerate(scores))   # each total once
    ranked = [scores[i] for _, _, i in keyed]
    elig = [s for s in ranked if eligible(s)]
    top = elig[0] if elig else None
    top_all = ranked[0] if ranked else None
    scores_out = {name: round(-neg, 4) for neg, name, _ in keyed if -neg > 0}

    def result(outcome, chosen, reason, gate):
        if reason == "no_evidence" and outside_would_route():
            reason = "out_of_group"   # `--group` confines in every mode: nothing in it, the answer lies outside
        # an answer outside the group: the scopes out there that hold the question are the shortlist
        cands = [] if outcome != "abstained" else shortlist(
            ranked, held_distinctive, outside if reason == "out_of_group" else eligible)
        if cands:
            forms = surface_forms(question)
            cands = [{"scope": c["scope"], "terms": [forms.get(t, t) for t in c["terms"]]} for c in cands]
        return RouteResult(outcome, [s.scope for s in chosen], reason, cands, scores_out, gate,
                           ranked, toks, sorted(excluded), languages=sorted(q.languages) if off_language else [],
                           other_language=sorted(off_language))

    if top is None:
        return result("abstained", [], "out_of_group" if context.eligible is not None else "no_evidence",
                      "no eligible scope")
    # 1. out of group: judged against the corpus-wide winner, and only if it would route itself
    if context.strict and outside_would_route():
        return result("abstained", [], "out_of_group", "out_of_group")
    # 2. enumeration: a set question, asked of every scope in turn
    if enumerative:
        # "which of my projects use jinja?": those declaring it by the names it is published under
        # (Jinja2); it does not use itself
        used = sorted(named) if grammar.asks_about_use(question) else []
        published = [tuple(dict.fromkeys(t for a in aliases.get(s, (s,)) for t in tokenize(a)[:1])) for s in used]
        chosen, why = enumerate_members([s for s in elig if s.scope not in used], toks, negated, index, params,
                                        distinctive_terms, top, q,
                                        lambda t: holder_count(index, t, spellings_of(t, toks, q)), sorted(excluded),
                                        published)
        if not chosen:
            out = result("abstained", [], "no_evidence", "enumeration found no scope")
            unwritten = unwritten_languages(q, index, negated)
            if unwritten:   # "which of my Kotlin projects ...?" when none is: every project is in another language
                out.gate = f"enumeration: no project is written in {' or '.join(unwritten)}"
                out.languages, out.other_language, out.candidates = unwritten, list(index.scopes), []
                out.unwritten = True
            return out
        out = result("enumerated", chosen, None, "enumeration")
        out.members = why
        return out
    # 3. forced: a name or the cwd identifies the subject
    kind = q.deixis
    here = next((s for s in elig if s.cwd), None)
    if here is not None and kind in ("strong", "own") and not any(s.alias >= params.alias_boost for s in elig):
        # "this project" / "my app", asked from inside a project and naming no other: that project
        # answers, first, whatever vocabulary the others share with the question
        rest = [s for s in elig if s is not here and s.total >= params.select_ratio * top.total and s.total > 0]
        return result("routed", [here] + rest[: params.select_max - 1], None, "cwd")
    forced = bool(top.alias >= params.alias_boost or top.cwd)
    if not forced:
        if kind == "strong":
            return result("abstained", [], "deictic", "deixis")
        symbol = symbol_route(q, index, params, elig)
        if symbol is not None:
            chosen, word, many = symbol
            if many:  # a code name many projects define: which one is meant, only the asker knows
                return RouteResult("abstained", [], "ambiguous", [{"scope": s.scope, "terms": [word]} for s in chosen],
                                   scores_out, "symbol", ranked, toks, sorted(excluded))
            return result("routed", chosen, None, "symbol")
        unheld = unheld_names(question, index)
        if len(unheld) >= UNHELD_NAMES:   # "OAuth2 ... PKCE" where no project mentions either
            out = result("abstained", [], "no_evidence", "unheld names")
            out.unheld = unheld
            return out
        if not routable(top, params.evidence_floor):
            return result("abstained", [], "deictic" if _points_at_a_project(question, kind, len(q.tokens)) else "no_evidence",
                          "evidence")
    chosen = [s for s in elig if s.total >= params.select_ratio * top.total and s.total > 0]
    if forced and not top.cwd and len(named) == 1:
        names = aliases.get(top.scope, (top.scope,))
        builder = built_on(top, elig, name_tokens(names, toks)) if grammar.instrument_only(question, *names) else None
        if builder is not None:   # "... with msgpack": the converter built on msgpack answers, msgpack next
            chosen = [builder] + [s for s in chosen if s is not builder]
    chosen = chosen[: params.select_max]
    for s in elig:  # every holder of a concentrated token comes back, demoted or not
        if has_concentrated(s) and s not in chosen and len(chosen) < params.select_max + 2:
            chosen.append(s)
    return result("routed", chosen, None, "forced" if forced else "evidence")


# a question writing this many technical names (acronyms, names with digits) that no project mentions
# as a word or a fact is about something none of them does: "the OAuth2 flow with PKCE",
# "RGB to CMYK", "CUDA on my GPU". One such name alone may be a synonym or a typo of a held one.
UNHELD_NAMES = 2


def unheld_names(question: str, index: RoutingIndex) -> list[str]:
    """The acronyms and names with digits ``question`` writes (``grammar.name_shaped_words``, not a
    number, not a code name with "_" or "." the symbol route reads) that no scope holds as a word
    or a fact, read whole ("OAuth2", not its "auth"); each once, in the question's order."""
    out: dict[str, str] = {}
    for word in grammar.name_shaped_words(question):
        toks = tokenize(word)
        if not toks or "_" in word or "." in word or not any(c.isalpha() for c in word) or word.lower() in out:
            continue
        if not (index.get(toks[0]) or index.get(FACT + toks[0])):
            out[word.lower()] = word
    return list(out.values())


def name_tokens(names: Sequence[str], toks: Sequence[str]) -> set[str]:
    """The question's tokens (``toks``) that spell one of a scope's ``names``."""
    return {t for a in names for t in tokenize(a)} & set(toks)


def built_on(named: ScopeScore, elig: Sequence[ScopeScore], spelt: set[str]) -> ScopeScore | None:
    """The project built on the named one that the question is about, if any: one holding more of
    the question's evidence than the named project and using its name (``spelt``) more than the
    named project's own words do. "Packing my objects with msgpack": cattrs' msgpack converter;
    "a lock backed by Redis": portalocker's Redis lock. Asked only where the name is the
    question's instrument (``grammar.instrument_only``): "Why does Starlette ..." is about
    Starlette, however often sse-starlette says its name."""
    own = max((named.matched.get(t, 0.0) for t in spelt), default=0.0)
    best = None
    for s in elig:
        if s is named or s.alias or s.evidence <= named.evidence:
            continue
        if max((s.matched.get(t, 0.0) for t in spelt), default=0.0) > own and (best is None or s.evidence > best.evidence):
            best = s
    return best


FACT_USES = FACT + "uses:"   # the fact is a declared dependency


def holder_count(index: RoutingIndex, token: str, forms: Sequence[str] = ()) -> int:
    """How many scopes hold a word in any of its forms (``token`` and ``forms``)."""
    held = index.get(token)
    if not forms:
        return len(held)
    return len(set(held).union(*(index.get(f) for f in forms)))


def asked_facts(elig: Sequence[ScopeScore], toks: Sequence[str], index: RoutingIndex,
                uses: bool, required: Collection[str] = ()) -> dict[str, list[str]]:
    """Per eligible scope, the question's words it holds as facts (licence, language, marker
    file, toolchain...; a declared dependency only when the question asks about ``uses``).
    A fact every eligible scope holds tells none apart and is not asked, unless it is ``required``
    (the names of a project whose users are asked for: every other project may use it)."""
    pos = {s.scope: index.position[s.scope] for s in elig}

    def holds(p: int, t: str) -> bool:
        return _holds_fact(index, p, t, uses)

    asked = [t for t in dict.fromkeys(toks) if any(holds(p, t) for p in pos.values())
             and (t in required or not all(holds(p, t) for p in pos.values()))]
    return {s: [t for t in asked if holds(p, t)] for s, p in pos.items()}


def _holds_fact(index: RoutingIndex, p: int, t: str, uses: bool) -> bool:
    """Does the scope at position ``p`` hold word ``t`` as a fact (a declared dependency only
    when the question asks about ``uses``)?"""
    return p in index.get(FACT + t) and (uses or p not in index.get(FACT_USES + t))


DEPENDENCY_FREE = "dependency-free"   # the fact of a project whose installation pulls in nothing


def enumerate_members(elig: Sequence[ScopeScore], toks: Sequence[str], negated: set[str], index: RoutingIndex,
                      params: Params, distinctive_terms, top: ScopeScore,
                      question: "Question | str" = "", holder_count=None,
                      left_out: Sequence[str] = (), published: Sequence[Sequence[str]] = ()
                      ) -> tuple[list[ScopeScore], list[dict]]:
    """The scopes an enumerative question asks for, each with why: (members, reasons).

    Facts first: when the question names facts some projects hold, the members are
    the projects holding as many of them as any project does ("Python projects that
    depend on click" holds both; "written in Rust or Go", one), whatever their size
    or vocabulary, since a fact is held or not. Otherwise vocabulary: every scope with
    its own distinctive evidence (or several of the question's words, each at
    ``enum_word_evidence`` or more: "parse", "command" and "argument" are every CLI project's
    words, but a project using them all is about parsing arguments), not far below the best,
    and every scope using one of
    the question's rare words (held by at most ``concentrated_max_scopes``: "NO_COLOR",
    "dotenv"; an everyday word also by at most ``rare_word_max_share`` of the scopes: in a home of
    a dozen, two projects share "turn" or "friendly" by chance) more than the average scope does,
    since such a word names the topic. Negated words ("aren't
    written in Python") keep only the scopes that lack them. A declared dependency counts
    only when the question asks what a project uses (builds on, depends on, pulls in);
    "with no dependencies" asks for the dependency-free fact. ``holder_count(t)``: how many scopes
    hold word ``t`` in any of its spellings (by default, in the one given). ``left_out``: the
    projects the question sets aside ("besides flask"): a fact only they hold is still what is
    asked, and no other project holding it makes the set empty, not one of words ("which projects
    use jinja besides flask?" is not answered by jinja, which holds the word). ``published``: for
    each project the question asks about the use of, the names it is published under, asked as
    one fact each, held under any of them: listed with "and" a member declares every one of those
    projects ("use click and jinja"), listed with "or" any one ("use click or jinja"), and is cited
    by the name it declares (Jinja2). A set asked to be written in a language no eligible project
    is written in ("which of my Kotlin projects ...": ``unwritten_languages``) is empty.
    """
    holder_count = holder_count or (lambda t: len(index.get(t)))
    q = Question.of(question)
    question = q.text
    if unwritten_languages(q, index, negated, [index.position[s.scope] for s in elig]):
        return [], []
    if grammar.asks_for_no_dependencies(question):
        toks = [*toks, DEPENDENCY_FREE]
        negated = negated - {t for w in ("dependency", "dependencies") for t in tokenize(w)}
    uses = grammar.asks_about_use(question) and DEPENDENCY_FREE not in toks
    names = {t for group in published for t in group}
    fact_words = list(dict.fromkeys([*(t for t in toks if t not in q.unnamed_language_words), *names]))
    held = asked_facts(elig, fact_words, index, uses, names)
    count = {s: len(v) for s, v in held.items()}
    if published:   # the names one project is published under are one fact, held under any of them, and
        # what is asked: a project that declares none of the projects named (listed with "and": not all
        # of them) is no member; listed with "or", they are one fact between them
        either = grammar.listed_as_alternatives(question, names)
        for s, v in held.items():
            declared = sum(1 for g in published if set(g) & set(v))
            if declared < (1 if either else len(published)):
                held[s], count[s] = [], 0
            else:
                count[s] = sum(1 for t in v if t not in names) + (1 if either else declared)
    best = max(count.values(), default=0)
    set_aside = [index.position[s] for s in left_out if s in index.position]
    named_like: set[str] = set()
    if best:
        chosen = sorted((s for s in elig if count[s.scope] == best), key=lambda s: (-s.evidence, s.scope))
    elif not negated and (published or any(_holds_fact(index, p, t, uses) for p in set_aside for t in fact_words)):
        chosen = []
    else:
        named_like = grammar.name_shaped_tokens(question)
        small_cap = max(1, int(len(index.scopes) * params.rare_word_max_share))
        rare = {t for t in toks if 0 < holder_count(t) <= (
            params.concentrated_max_scopes if t in named_like else min(params.concentrated_max_scopes, small_cap))}

        def several_words(s: ScopeScore) -> bool:   # together they name the topic; one common word does not
            return sum(1 for v in s.matched.values() if v >= params.enum_word_evidence) >= params.enum_words

        chosen = [s for s in elig if s.evidence >= params.enum_floor and (distinctive_terms(s) or several_words(s))
                  and s.evidence >= params.enum_min_share * top.evidence
                  or any(s.matched.get(t, 0.0) > 0 for t in rare)]
    by_fact = bool(best)
    if negated:
        lacking = [s for s in elig if not any(
            index.position[s.scope] in index.get(FACT + t) or
            index.get(t).get(index.position[s.scope], 0.0) >= params.negation_hold for t in negated)]
        if not (chosen and toks):
            by_fact = any(index.get(FACT + t) for t in negated)
        chosen = [s for s in (chosen if chosen and toks else lacking) if s in lacking]
    if not by_fact:  # a vocabulary set is cut to its best; a fact's set is whole
        chosen = chosen[: params.enum_max]
    # a member kept for lacking a fact is cited by what it holds in that fact's place
    # (loci.query.enumeration.cite): the holder named here tells which kind of fact it is
    lacks = {t: index.scopes[min(index.get(FACT + t))] for t in sorted(negated) if index.get(FACT + t)}
    why = [{"scope": s.scope, "facts": list(held.get(s.scope, ())) if best else [],
            "terms": sorted(s.matched, key=lambda t: -s.matched[t])[:6], **({"lacks": lacks} if lacks else {}),
            **({} if best else {"rare": sorted(t for t in rare if s.matched.get(t, 0.0) > 0),
                                "cites": cited_words(s, rare, named_like, distinctive_terms, holder_count)})}
           for s in chosen]
    return chosen, why


def unwritten_languages(q: Question, index: RoutingIndex, negated: Collection[str] = (),
                        among: Collection[int] | None = None) -> list[str]:
    """The language facts of the languages an enumeration asks its members to be written in ("my
    Kotlin projects", "written in Kotlin or Scala": ``grammar.set_languages``; not one negated) when
    no scope (at the positions ``among``; by default any) is written in any of them: then the set is
    empty whatever else it asks. Empty when one is held, or when the question names none."""
    words = [w for w in grammar.set_languages(q.text) if not set(tokenize(w)[:1]) & set(negated)]
    langs = sorted({lang for w in words for lang in grammar.ECOSYSTEMS[w.lower()]})
    held = {i for lang in langs for i in index.get(FACT + lang)}
    if among is not None:
        held &= set(among)
    return [] if held else langs


CITED_WORDS = 3


def cited_words(s: ScopeScore, rare: set[str], named_like: set[str], distinctive_terms,
                holder_count) -> list[str]:
    """The words written as names ("NO_COLOR", ".env", "8080": ``grammar.name_shaped_tokens``) a
    member chosen by words holds among the question's rare or distinctive ones: its block leads with
    a passage holding one (``search.cited_first``), as a fact member's with the fact's line. Rare
    ones first, then those the fewest projects hold, a whole name before its pieces ("no_color"
    before "color"), then its strongest. An everyday word is no citation: "closest" is held by a
    sibling-walking helper as much as by a typo suggester."""
    words = {t for t in set(distinctive_terms(s)) | rare if t in named_like and s.matched.get(t, 0.0) > 0}
    return sorted(words, key=lambda t: (t not in rare, holder_count(t), -len(t), -s.matched.get(t, 0.0), t)
                  )[:CITED_WORDS]


def built_from_words(result: RouteResult) -> bool:
    """An enumeration whose members were chosen by words (each names its ``rare`` ones), not by a
    fact held or lacking: the only kind meaning may narrow."""
    return result.outcome == "enumerated" and bool(result.members) and all(
        "rare" in m and not m.get("facts") and not m.get("lacks") for m in result.members)


def enumeration_opinion(result: RouteResult, affinity: Mapping[str, float], background: Background | None,
                        params: Params = DEFAULT_PARAMS) -> RouteResult:
    """Narrow a set built from words by meaning: a member that holds none of the question's rare
    words (``rare``: it was chosen for words many projects use, "closest", "valid", "command") stays
    only when the question stands out from its off-topic background as few off-topic questions do
    (``semantic_z_floor``). A set chosen by facts, or by lacking one, is whole; a member without
    vectors or background is not judged; meaning never empties the set."""
    members = result.members
    if not background or not built_from_words(result):
        return result

    def far(m: dict) -> bool:
        z = None if m["rare"] else spreads_above(affinity, background, m["scope"])
        return z is not None and z < params.semantic_z_floor

    dropped = [m["scope"] for m in members if far(m)]
    if not dropped or len(dropped) == len(members):
        return result
    kept = [m for m in members if m["scope"] not in dropped]
    note = {**_opinion_note(_by_affinity(result, {m["scope"]: affinity[m["scope"]] for m in members
                                                  if m["scope"] in affinity}, Context())),
            "action": "narrowed", "dropped": dropped}
    return replace(result, scopes=[m["scope"] for m in kept], members=kept, semantic=note)


SHORTLIST_MAX = 5


def shortlist(ranked: Sequence[ScopeScore], distinctive_terms, eligible, limit: int = SHORTLIST_MAX) -> list[dict]:
    """The scopes holding a distinctive matched term, with the terms that put each there."""
    out = []
    for sc in ranked:
        terms = distinctive_terms(sc)
        if terms and eligible(sc):
            out.append({"scope": sc.scope, "terms": terms[:6]})
        if len(out) >= limit:
            break
    return out


# a route decided by a name, the cwd, --scope or a code name the question spells (gate "symbol")
# is not second-guessed: it rests on the name itself, which meaning cannot outvote
SEMANTIC_GATES = ("evidence",)


def open_to_opinion(result: RouteResult) -> bool:
    """Can the vectors change this outcome? A vocabulary route or a no-evidence abstention only
    (not a route to the project that defines a code name the question spells, as a named project's
    route is not either); the caller skips encoding the question otherwise."""
    if result.gate not in SEMANTIC_GATES:
        return False
    return result.outcome == "routed" or (result.outcome == "abstained" and result.reason == "no_evidence")


def _by_affinity(result: RouteResult, affinity: Mapping[str, float], context: Context) -> list[tuple[float, str]]:
    """(affinity, scope) of the scopes an opinion may name (eligible, not excluded), closest first."""
    excluded = set(result.excluded) | set(result.other_language) | (set(context.shadowed) - set(result.scopes))
    return sorted(((a, s) for s, a in affinity.items() if s not in excluded
                   and (context.eligible is None or s in context.eligible)), key=lambda x: (-x[0], x[1]))


def _opinion_note(ranked: Sequence[tuple[float, str]]) -> dict:
    """What an opinion records: its closest scope, how close, and how far ahead of the next."""
    best, leader = ranked[0]
    margin = best - ranked[1][0] if len(ranked) > 1 else best
    return {"scope": leader, "affinity": round(best, 4), "margin": round(margin, 4), "action": "none"}


def foreign_opinion(result: RouteResult, affinity: Mapping[str, float], context: Context = Context(),
                    params: Params = DEFAULT_PARAMS) -> RouteResult:
    """Judge a question not in English by the multilingual encoder instead of the English vectors.

    ``affinity``: each scope's best passage by that encoder. Like the second opinion it can
    change only a vocabulary route or a no-evidence abstention. When the closest scope reaches
    ``multilingual_route_floor`` (off-topic questions in other languages stay below it), it
    answers first, with the next scopes within ``multilingual_close`` of it, then the words'
    own choice, ``select_max`` in all; below the floor the decision stands.
    """
    ranked = _by_affinity(result, affinity, context)
    if not ranked or not open_to_opinion(result):
        return result
    best, leader = ranked[0]
    note = _opinion_note(ranked)
    if best < params.multilingual_route_floor:
        return replace(result, semantic=note)
    close = [s for a, s in ranked if a >= best - params.multilingual_close]
    words = result.scopes if result.outcome == "routed" else []
    chosen = [*close, *(s for s in words if s not in close)][: params.select_max]
    note["action"] = "foreign"
    return replace(result, outcome="routed", scopes=chosen, reason=None, candidates=[], gate="multilingual",
                   semantic=note)


Background = Mapping[str, tuple[float, float]]   # per scope: off-topic questions' mean affinity and its spread


def second_opinion(result: RouteResult, affinity: Mapping[str, float], context: Context = Context(),
                   params: Params = DEFAULT_PARAMS, question: "Question | str" = "",
                   background: Background | None = None, judged: Collection[str] | None = None) -> RouteResult:
    """Let the chunk vectors widen, veto or rescue a decision made on vocabulary alone.

    ``affinity`` is each scope's closeness to the question in meaning (the mean
    cosine of its nearest chunks), measured at the edge; this stays pure. The
    lexical decision keeps its order: the vectors' favourite is appended when
    it clears ``semantic_add_floor`` and is not already chosen, so a paraphrase
    that shares no word with its answer still reaches it. When none of the
    route's own scopes comes even ``semantic_veto_floor`` close and no other
    scope is near enough to join it, the words matched by coincidence (an
    off-topic question that happens to use a project's example data) and the
    route becomes a no-evidence abstention, its scopes kept as the shortlist.
    An abstention for lack of evidence (never a deictic one, nor a group
    refusal) routes to the favourite when it is close
    (``semantic_rescue_floor``) and clearly ahead of the next scope
    (``semantic_rescue_margin``); otherwise, when the favourite is at least as
    close as no off-topic question comes (``semantic_add_floor``), to the
    ``semantic_fused_max`` scopes that words and meaning together rank highest
    (``_two_witnesses``), the closest in meaning among them. A question in another language is measured by an
    English encoder on a lower scale: for it the bar is what a typical off-topic
    question reaches (``semantic_veto_floor``) and up to ``select_max`` scopes answer.

    ``background`` (fitted by `loci calibrate`: each scope's mean affinity to off-topic
    questions and its spread) lets a question count as on-topic when it stands out from one
    scope's background as few off-topic questions do (``semantic_z_floor``), a vocabulary route
    count as near nothing when no scope stands out more than a typical off-topic question does
    (``semantic_z_veto``), and orders the scopes by meaning above their background.

    ``judged``: the scopes whose closeness says how far the question stands out and whether one
    leads clearly (the first pass's first ``semantic_shortlist`` and the route's own, what
    calibration fits those cuts on); the others in ``affinity`` were read only to find the closest.
    Among more scopes read, one stands out by chance more often. None: every scope in ``affinity``.
    """
    ranked = _by_affinity(result, affinity, context)
    if not ranked or not open_to_opinion(result):
        return result
    q = Question.of(question)
    best, leader = ranked[0]
    margin = best - ranked[1][0] if len(ranked) > 1 else best
    near = [s for _a, s in ranked]
    judged = set(near if judged is None else judged)
    judged_near = [s for s in near if s in judged]
    by_meaning = _above_background(near, affinity, background)
    clear = _clear_leader([s for s in by_meaning if s in judged], affinity, background, params.semantic_lead_ratio)
    note = _opinion_note(ranked)
    out = replace(result, semantic=note)
    if result.outcome == "routed":
        # judged on the route's own scopes: among hundreds some other scope is always near-ish
        own = max((affinity[s] for s in result.scopes if s in affinity), default=best)
        near_nothing = (own < params.semantic_veto_floor and best < params.semantic_add_floor) or (
            bool(background) and stands_out(affinity, background, judged_near) < params.semantic_z_veto)
        if near_nothing and all(s in affinity for s in result.scopes):
            # (a chosen scope with no vectors yet, say one indexed but not embedded, cannot be judged)
            note["action"] = "vetoed"
            return replace(out, outcome="abstained", scopes=[], reason="no_evidence",
                           candidates=_chosen_as_shortlist(result, q.text), gate="semantic")
        if leader in result.scopes:
            note["action"] = "agreed"
            if result.scopes[0] != leader and (clear == leader or _words_tie(result, leader, params)):
                # the words split between projects (or all but tie); meaning picks one of them: it goes first
                note["action"] = "led"
                out = replace(out, scopes=[leader, *(s for s in result.scopes if s != leader)])
        elif best >= params.semantic_add_floor and len(result.scopes) < params.select_max:
            note["action"] = "added"
            # joined after the words' choice, or before it when it leads in meaning as clearly as a
            # fused abstention's leader must (the same rule as "led" above), or when the words' choice
            # rests on one word and is clearly farther in meaning (a big scope holding a rare word)
            first = affinity.get(result.scopes[0])
            ahead = clear == leader or (_carried_by_one_word(result) and first is not None
                                        and best - first >= ONE_WORD_MARGIN)
            out = replace(out, scopes=[leader, *result.scopes] if ahead else [*result.scopes, leader])
    elif best >= params.semantic_rescue_floor and margin >= params.semantic_rescue_margin:
        note["action"] = "rescued"
        out = replace(out, outcome="routed", scopes=[leader], reason=None, candidates=[], gate="semantic")
    elif not q.other_script and (q.reads_as_foreign_prose or _holds_a_word(result)):
        # an English encoder reads another script's letters as noise: no opinion on such a question;
        # and where no project holds a word of an English one, meaning is the only witness: it
        # answers as a rescue does (above), close and clearly ahead, or not at all
        foreign = q.reads_as_foreign_prose
        if (best >= (params.semantic_veto_floor if foreign else params.semantic_add_floor)
                or stands_out(affinity, background, judged_near) >= params.semantic_z_floor):
            chosen = _two_witnesses(result, by_meaning)
            if clear is not None:
                chosen = [clear, *(s for s in chosen if s != clear)]
            places = params.select_max if foreign else params.semantic_fused_max
            if by_meaning and by_meaning[0] not in chosen[:places]:
                # the scope closest in meaning keeps a place, the last: the words alone do not outvote it
                chosen = [*chosen[:places - 1], by_meaning[0]]
            note["action"] = "fused"
            out = replace(out, outcome="routed", scopes=chosen[:places], reason=None, candidates=[], gate="semantic")
    if out.outcome == "abstained" and out.reason == "no_evidence" and q.reads_as_foreign_prose:
        # its words match little in English vocabulary: the scopes nearest in meaning are its shortlist
        listed = [c["scope"] for c in out.candidates]
        extra = ({"scope": s, "terms": []} for s in by_meaning if s not in listed)
        out = replace(out, candidates=[*out.candidates, *extra][:SHORTLIST_MAX])
    return out


def stands_out(affinity: Mapping[str, float], background: Background | None, scopes: Sequence[str]) -> float:
    """How far the question stands out from the off-topic background of the scope it stands out
    from most, in that background's spreads (0 without a background).

    Raw closeness is not comparable across scopes: a big collection of algorithms is 0.26 close
    to any off-topic question, a small slug library 0.14. A paraphrase 0.36 close to a scope
    whose background is 0.24 +- 0.035 is three spreads out; an off-topic question rarely is.
    """
    if not background:
        return 0.0
    zs = [z for s in scopes if (z := spreads_above(affinity, background, s)) is not None]
    return max(zs, default=0.0)


def spreads_above(affinity: Mapping[str, float], background: Background, scope: str) -> float | None:
    """The scope's closeness above its off-topic background, in that background's spreads; None
    when the scope has no closeness or no background."""
    if scope not in affinity or scope not in background or background[scope][1] <= 0:
        return None
    return (affinity[scope] - background[scope][0]) / background[scope][1]


def _lift(affinity: Mapping[str, float], background: Background, scope: str, typical: float = 0.0) -> float:
    """Closeness above the scope's own off-topic background, or above ``typical`` (the scopes'
    median background) for a scope calibration has none for (a pulled scope whose piece did not
    land): its raw closeness is not all lift."""
    return affinity[scope] - (background[scope][0] if scope in background else typical)


def typical_background(background: Background, scopes: Sequence[str] = ()) -> float:
    """The median of the scopes' off-topic means (0 without any), the level ``_lift`` takes for
    a scope without one; not computed (0) when every one of ``scopes`` has its own."""
    if scopes and all(s in background for s in scopes):
        return 0.0
    means = sorted(m for m, _sd in background.values())
    if not means:
        return 0.0
    mid = len(means) // 2
    return means[mid] if len(means) % 2 else (means[mid - 1] + means[mid]) / 2


def _above_background(by_meaning: Sequence[str], affinity: Mapping[str, float],
                      background: Background | None) -> list[str]:
    """Scopes by their closeness above their own off-topic background (raw closeness without one):
    a scope close to everything is not closer in meaning to this question for that."""
    if not background:
        return list(by_meaning)
    typical = typical_background(background, by_meaning)
    return sorted(by_meaning, key=lambda s: (-_lift(affinity, background, s, typical), s))


def _clear_leader(by_lift: Sequence[str], affinity: Mapping[str, float], background: Background | None,
                  ratio: float) -> str | None:
    """The scope that leads in meaning above its background so clearly (the runner-up's lift at most
    ``ratio`` of its own) that words only order the others; None without a background or a clear lead.
    A ratio of lifts, not a difference of cosines: it reads the same on any encoder's scale."""
    if not background or len(by_lift) < 2:
        return None
    typical = typical_background(background, by_lift[:2])
    first, second = (_lift(affinity, background, s, typical) for s in by_lift[:2])
    return by_lift[0] if first > 0 and second <= ratio * first else None


# a route whose first scope owes this share of its evidence to one of the question's words rests on
# that word; beside 1,000 scopes it is often a rare word a big scope mentions once (docutils for
# "decorative", "halt"), and a scope this much closer in meaning goes first (routing.md, session 24)
ONE_WORD_SHARE = 0.6
ONE_WORD_MARGIN = 0.05


def _carried_by_one_word(result: RouteResult) -> bool:
    """Does the route's first scope owe ``ONE_WORD_SHARE`` of its word evidence to one word?"""
    first = next((d for d in result.details if d.scope == result.scopes[0]), None)
    total = sum(first.matched.values()) if first is not None else 0.0
    return total > 0 and max(first.matched.values()) >= ONE_WORD_SHARE * total


def _words_tie(result: RouteResult, scope: str, params: Params) -> bool:
    """The words rank ``scope`` within ``semantic_tie_ratio`` of the route's first: they do not
    tell the two apart, so the closer in meaning may lead."""
    total = {d.scope: d.total for d in result.details}
    first = total.get(result.scopes[0], 0.0)
    return first > 0 and total.get(scope, 0.0) >= params.semantic_tie_ratio * first


def _holds_a_word(result: RouteResult) -> bool:
    """Does any project hold a word of the question (the words' witness, however weak)?"""
    return any(d.evidence > 0 for d in result.details)


def _two_witnesses(result: RouteResult, by_meaning: Sequence[str]) -> list[str]:
    """Scopes ordered by their rank in meaning plus their rank in words (ties: meaning first).

    For a question neither witness decides alone (too few of its words are distinctive, and no
    scope is clearly closest in meaning) the scope both rank high is the likeliest answer:
    a paraphrase's few shared words and its meaning point the same way, coincidences do not.
    """
    evidence = {d.scope: d.evidence for d in result.details}
    by_words = sorted(by_meaning, key=lambda s: (-evidence.get(s, 0.0), s))
    word_rank = {s: i for i, s in enumerate(by_words)}
    return sorted(by_meaning, key=lambda s: (by_meaning.index(s) + word_rank[s], by_meaning.index(s)))


def _chosen_as_shortlist(result: RouteResult, question: str) -> list[dict]:
    """The scopes a vetoed route had chosen, with the words that chose them, as an abstention's shortlist."""
    forms = surface_forms(question) if question else {}
    matched = {d.scope: d.matched for d in result.details}
    out = []
    for scope in result.scopes:
        terms = sorted(matched.get(scope, {}).items(), key=lambda kv: -kv[1])[:6]
        out.append({"scope": scope, "terms": [forms.get(t, t) for t, _ in terms]})
    return out
