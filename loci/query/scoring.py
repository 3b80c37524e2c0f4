"""Accuracy of route/ask results against labelled questions.

Pure: labelled questions (the fields of ``dev-questions.jsonl``) and one result
per question (the JSON object of ``route --json`` or ``ask --json``) in, a
``Report`` out. ``loci eval --questions`` and ``bench/run.py`` both score here.

Rules, per question mode:
- ``one``: top-1 is a hit when the outcome is ``routed`` and the first scope is gold.
- ``set``: precision/recall/F1 of the returned scopes against the gold set
  (an abstention returns the empty set); averaged over questions.
- abstention: the positive class is "should abstain" (mode ``abstain``); a
  prediction is positive when the outcome is ``abstained``. Counted over all questions.
- hit@5 (mode ``one`` and ``set``; only for results that carry ``blocks``): in
  a block of a gold scope, one of the first five episodes or first five
  structure results contains every answer term (``set``: at least one term),
  case-insensitively, or cites an evidence path (same path and a line within
  ``LINE_WINDOW``, or the same commit; structure: the same source file). A
  ``set`` question is a hit when every gold scope that has a block has such a
  result. A missing result (the tool failed) counts as a miss everywhere.
- answered elsewhere (mode ``one``): the route put another scope first, and that scope's block
  holds every answer term among its first five episodes or structure results. Beside many other
  scopes a neighbour may answer (a library's own dependency, a fork); the label's own terms say
  whether it did. ``top1_answered`` counts these with the top-1 hits.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

LINE_WINDOW = 40
TOP_K = 5
REQUIRED_FIELDS = ("id", "family", "question", "gold_scopes", "mode")
MODES = ("one", "set", "abstain")


@dataclass(frozen=True)
class Evidence:
    """One cited location: ``scope:path:line``, ``scope:path`` or ``scope:commit:sha``."""

    scope: str
    path: str
    line: int | None


def parse_evidence(text: str) -> Evidence:
    scope, _, rest = text.partition(":")
    if rest.startswith("commit:"):
        return Evidence(scope, rest, None)
    m = re.fullmatch(r"(.+):(\d+)", rest)
    if m:
        return Evidence(scope, m.group(1), int(m.group(2)))
    return Evidence(scope, rest, None)


@dataclass
class QuestionScore:
    """How one result fared on one question; ``None`` where a rule does not apply."""

    id: str
    family: str
    mode: str
    error: bool
    top1: bool | None
    set_prf: tuple[float, float, float] | None
    should_abstain: bool
    abstained: bool
    hit5: bool | None
    routed_right: bool = False   # the route put a gold scope first (one) or returned the gold set (set)
    answered_elsewhere: bool = False   # another scope came first, and its first five hold every answer term


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


@dataclass
class Metrics:
    """Aggregated scores of a group of questions (a family, or all of them)."""

    n: int = 0
    errors: int = 0
    top1_hits: int = 0
    top1_n: int = 0
    elsewhere_hits: int = 0
    set_sums: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    set_n: int = 0
    abstain_tp: int = 0
    abstain_fp: int = 0
    abstain_fn: int = 0
    hit5_hits: int = 0
    hit5_n: int = 0
    hit5_routed_hits: int = 0
    hit5_routed_n: int = 0

    def add(self, s: QuestionScore) -> None:
        self.n += 1
        self.errors += s.error
        if s.top1 is not None:
            self.top1_n += 1
            self.top1_hits += s.top1
            self.elsewhere_hits += s.answered_elsewhere
        if s.set_prf is not None:
            self.set_n += 1
            self.set_sums = [a + b for a, b in zip(self.set_sums, s.set_prf)]
        self.abstain_tp += s.should_abstain and s.abstained
        self.abstain_fp += s.abstained and not s.should_abstain
        self.abstain_fn += s.should_abstain and not s.abstained
        if s.hit5 is not None:
            self.hit5_n += 1
            self.hit5_hits += s.hit5
            if s.routed_right:
                self.hit5_routed_n += 1
                self.hit5_routed_hits += s.hit5

    @property
    def top1(self) -> float | None:
        return _ratio(self.top1_hits, self.top1_n)

    @property
    def top1_answered(self) -> float | None:
        """top-1 that also counts a first scope that answers by the label's terms (not gold)."""
        return _ratio(self.top1_hits + self.elsewhere_hits, self.top1_n)

    @property
    def set_precision(self) -> float | None:
        return _ratio(self.set_sums[0], self.set_n)

    @property
    def set_recall(self) -> float | None:
        return _ratio(self.set_sums[1], self.set_n)

    @property
    def set_f1(self) -> float | None:
        return _ratio(self.set_sums[2], self.set_n)

    @property
    def abstain_precision(self) -> float | None:
        return _ratio(self.abstain_tp, self.abstain_tp + self.abstain_fp)

    @property
    def abstain_recall(self) -> float | None:
        return _ratio(self.abstain_tp, self.abstain_tp + self.abstain_fn)

    @property
    def hit5(self) -> float | None:
        return _ratio(self.hit5_hits, self.hit5_n)

    @property
    def hit5_routed(self) -> float | None:
        """hit@5 over the questions routed right: the answer ranking seen apart from routing."""
        return _ratio(self.hit5_routed_hits, self.hit5_routed_n)

    def as_dict(self) -> dict:
        names = ("n", "errors", "top1", "set_precision", "set_recall", "set_f1",
                 "abstain_precision", "abstain_recall", "hit5", "hit5_routed", "top1_answered")
        return {k: getattr(self, k) for k in names}


@dataclass
class Report:
    overall: Metrics
    families: dict[str, Metrics]
    questions: list[QuestionScore]

    def as_dict(self) -> dict:
        return {"overall": self.overall.as_dict(),
                "families": {k: m.as_dict() for k, m in self.families.items()},
                "misses": [s.id for s in self.questions if s.top1 is False or s.error]}


def _set_prf(returned: set[str], gold: set[str]) -> tuple[float, float, float]:
    both = len(returned & gold)
    p = both / len(returned) if returned else 0.0
    r = both / len(gold) if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return (p, r, f)


def _cites(item: Mapping, evidence: list[Evidence], path_key: str, use_line: bool) -> bool:
    source = str(item.get(path_key) or "")
    for ev in evidence:
        if ev.path.startswith("commit:"):
            if source.startswith("commit:"):
                a, b = ev.path[7:], source[7:]
                if a and b and (a.startswith(b) or b.startswith(a)):
                    return True
            continue
        if source != ev.path:
            continue
        if not use_line or ev.line is None:
            return True
        line = item.get("line")
        if isinstance(line, int) and abs(line - ev.line) <= LINE_WINDOW:
            return True
    return False


def _has_terms(text: str, terms: list[str], need_all: bool) -> bool:
    if not terms:
        return False
    text = text.lower()
    found = [t.lower() in text for t in terms]
    return all(found) if need_all else any(found)


def hit_ranks(block: Mapping, evidence: list[Evidence], terms: list[str], need_all: bool,
              limit: int = TOP_K) -> tuple[int | None, int | None]:
    """(episode rank, structure rank) of the first of the block's first ``limit`` episodes and
    structure results that holds the answer or cites the evidence; None where none does."""
    ep_rank = st_rank = None
    for i, ep in enumerate(list(block.get("episodes") or [])[:limit]):
        if _has_terms(str(ep.get("text") or ""), terms, need_all) or _cites(ep, evidence, "source", True):
            ep_rank = i
            break
    for i, st in enumerate(list(block.get("structure") or [])[:limit]):
        text = " ".join(str(st.get(k) or "") for k in ("label", "text"))
        if _has_terms(text, terms, need_all) or _cites(st, evidence, "source_file", False):
            st_rank = i
            break
    return ep_rank, st_rank


def _block_hits(block: Mapping, evidence: list[Evidence], terms: list[str], need_all: bool) -> bool:
    return hit_ranks(block, evidence, terms, need_all) != (None, None)


def _hit5(question: Mapping, result: Mapping | None) -> bool | None:
    if question["mode"] == "abstain":
        return None
    if result is None:
        return False
    if "blocks" not in result:
        return None
    gold = set(question["gold_scopes"])
    evidence = [parse_evidence(e) for e in question.get("evidence") or []]
    terms = list(question.get("answer_terms") or [])
    need_all = question["mode"] == "one"
    outcomes = []
    for block in result.get("blocks") or []:
        scope = block.get("scope")
        if scope in gold:
            scope_ev = [e for e in evidence if e.scope == scope]
            outcomes.append(_block_hits(block, scope_ev, terms, need_all))
    if need_all:
        return any(outcomes)
    return bool(outcomes) and all(outcomes)


def _answered_elsewhere(question: Mapping, result: Mapping | None, top1: bool | None) -> bool:
    terms = list(question.get("answer_terms") or [])
    if top1 is not False or not terms or not result or result.get("outcome") != "routed":
        return False
    first = (result.get("scopes") or [None])[0]
    block = next((b for b in result.get("blocks") or () if b.get("scope") == first), None)
    return block is not None and _block_hits(block, [], terms, need_all=True)


def score_question(question: Mapping, result: Mapping | None) -> QuestionScore:
    """Score one result (``None`` when the tool produced none) against its label."""
    mode = question["mode"]
    outcome = (result or {}).get("outcome")
    scopes = list((result or {}).get("scopes") or [])
    gold = list(question["gold_scopes"])
    top1 = None
    if mode == "one":
        top1 = outcome == "routed" and bool(scopes) and scopes[0] in gold
    set_prf = None
    if mode == "set":
        returned = set() if outcome == "abstained" else set(scopes)
        set_prf = _set_prf(returned, set(gold))
    return QuestionScore(
        id=str(question["id"]), family=str(question["family"]), mode=mode,
        error=result is None, top1=top1, set_prf=set_prf,
        should_abstain=mode == "abstain", abstained=outcome == "abstained",
        hit5=_hit5(question, result),
        routed_right=bool(top1) or (set_prf is not None and set_prf[1] == 1.0),
        answered_elsewhere=_answered_elsewhere(question, result, top1))


def score(questions: Iterable[Mapping], results: Mapping[str, Mapping | None]) -> Report:
    """Score every question against ``results[question id]`` (absent = the tool failed)."""
    overall, families, scored = Metrics(), {}, []
    for question in questions:
        s = score_question(question, results.get(question["id"]))
        scored.append(s)
        overall.add(s)
        families.setdefault(s.family, Metrics()).add(s)
    return Report(overall, dict(sorted(families.items())), scored)


def fmt_pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


COLUMNS = (("top-1", "top1"), ("set P", "set_precision"), ("set R", "set_recall"),
           ("set F1", "set_f1"), ("abstain P", "abstain_precision"),
           ("abstain R", "abstain_recall"), ("hit@5", "hit5"),
           ("hit@5 routed right", "hit5_routed"))


def render_markdown(report: Report) -> str:
    """A Markdown table: one row per family, then the overall row."""
    head = "| family | n | " + " | ".join(c for c, _ in COLUMNS) + " |"
    rows = [head, "|" + "---|" * (len(COLUMNS) + 2)]
    for name, m in [*report.families.items(), ("overall", report.overall)]:
        cells = " | ".join(fmt_pct(getattr(m, attr)) for _, attr in COLUMNS)
        rows.append(f"| {name} | {m.n} | {cells} |")
    return "\n".join(rows) + "\n"


def load_questions(path: str | Path) -> list[dict]:
    """Read a JSONL file of labelled questions; a bad line raises ValueError naming it."""
    questions = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {number}: not JSON ({exc.msg})") from None
        missing = [k for k in REQUIRED_FIELDS if not isinstance(obj, dict) or k not in obj]
        if missing:
            raise ValueError(f"{path}: line {number}: missing {', '.join(missing)}")
        if obj["mode"] not in MODES:
            raise ValueError(f"{path}: line {number}: mode must be one of {', '.join(MODES)}")
        questions.append(obj)
    return questions
