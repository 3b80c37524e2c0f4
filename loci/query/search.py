"""Episode search inside one scope: BM25 + char-gram TF-IDF (+ vectors when present), fused.

Each ranker's scores are scaled to [0, 1] and fused with weights renormalised
over the rankers that scored. A passage is returned only when it is lexically
grounded (or semantically confident above the scope's floor), so a scope can
return nothing. ``gate=False`` (``--scope``) skips that gate. Scores are sparse
dicts (chunk row -> score): only chunks some ranker touched are considered.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Mapping, Sequence

from loci.kernel.config import DEFAULT_PARAMS, Params
from loci.kernel.language import translation_language
from loci.kernel.tokens import tokenize
from loci.query.project_files.about import RECENT_COMMITS, about_rows, own_files, rows_read
from loci.query.project_files.changelog import is_changelog
from loci.query.project_files.facts import fact_rows
from loci.query.project_files.file_kinds import is_licence
from loci.query.project_files.headings import only_includes
from loci.query.project_files.layout import main_modules
from loci.query.project_files.topics import asks_about_licence
from loci.query.question import Plan, Question

RANKER_WEIGHTS = {"bm25": 0.40, "grams": 0.45, "semantic": 0.35}  # docs/decisions/semantic-routing.md
# in the scope the vectors picked on their own (the router's second opinion), meaning leads:
# a paraphrase shares few words with its answer, so its lexical matches there are incidental
SEMANTIC_LED_WEIGHTS = {"bm25": 0.20, "grams": 0.20, "semantic": 0.60}
# how much a passage from each kind of path counts, relative to shipped code and docs
PATH_KIND_FACTOR = {"source": 1.0, "docs": 1.0, "test": 0.6, "fixture": 0.4, "example": 0.8,
                    "vendored": 0.3, "generated": 0.4}
# project-level passages (README, docs, CONTRIBUTING, changelog, manifests) for questions
# that point at the project itself ("how do I run the tests here?")
META_KIND_FACTOR = {"readme": 1.5, "doc": 1.3, "note": 1.5, "commit": 0.7, "docstring": 0.7, "comment": 0.6}
# a question about the project itself, asked from inside it: the files that hold the fact it asks
# for by convention (licence, manifest, CONTRIBUTING, changelog; loci.query.project_files) count
# this much more, enter the ranking at FACT_FILE_BASE even when no ranker touched them, and the
# best FACT_FILE_SLOTS of them are always among the first answers (right after the best one)
FACT_FILE_FACTOR = 1.6
FACT_FILE_BASE = 0.35
FACT_FILE_SLOTS = 2
# a translated copy (README.es.md) repeats its original: for a question in English it ranks this low
TRANSLATION_FACTOR = 0.3
RECENCY_WEIGHT = 0.03    # added for the newest commit, scaled down to 0 for the oldest (and undated chunks)
BM25_GROUNDED = 1.5      # a raw BM25 score at least this high counts as grounded
GRAMS_GROUNDED = 0.22    # or a char-gram cosine at least this high

Scores = Mapping[int, float]

# the passages closest in meaning lend their words to the words' search (pseudo-relevance
# feedback): a paraphrase shares few words with its answer, but the passages the vectors rank
# first usually do, and so does the answer beside them (docs/decisions/answer-ranking.md, section 9)
BORROW_PASSAGES = 3   # the first passages by meaning
BORROW_TERMS = 10     # lend this many words: those most of them hold, the rarest in the scope first
BORROW_WEIGHT = 1.0   # their BM25 adds to the question's own at this weight

# a second encoder's ranking (the multilingual one, on prose) fused with the transformer's by
# reciprocal rank at this constant; its first VOUCHED_TOP passages count as grounded for a
# question not in English (docs/decisions/answer-ranking.md)
MEANING_RRF_K = 5
VOUCHED_TOP = 3


@dataclass(frozen=True)
class Meaning:
    """The vectors' view of one scope for one question.

    ``cosines``: the transformer's cosine of each passage judged (what the scope's semantic floor
    is fitted on); ``other``: a second encoder's passages, best first, when the home has one;
    ``vouched``: passages that encoder grounds on its own (its best, for a question the words
    and the transformer cannot read)."""

    cosines: Scores
    other: Sequence[int] = ()
    vouched: frozenset = frozenset()

    def scores(self) -> dict[int, float] | None:
        """One ranking of meaning: the cosines alone, or with a second encoder the reciprocal-rank
        fusion of both orders (their cosines live on different scales)."""
        if not self.other:
            return dict(self.cosines) or None
        out: dict[int, float] = {}
        for order in (sorted(self.cosines, key=lambda d: (-self.cosines[d], d)), self.other):
            for r, d in enumerate(order):
                out[d] = out.get(d, 0.0) + 1.0 / (MEANING_RRF_K + 1 + r)
        return out or None


@dataclass
class EpisodeHit:
    text: str
    source: str
    line: int
    kind: str
    score: float
    heading: str = ""

    def to_json(self) -> dict:
        return {"text": self.text, "source": self.source, "line": self.line,
                "kind": self.kind, "score": round(self.score, 4)}


def fuse(parts: dict[str, Scores | None], weights: Mapping[str, float] = RANKER_WEIGHTS,
         only: Collection[int] | None = None) -> dict[int, float]:
    """Weighted sum of the scaled rankers that produced scores, renormalised over them; with
    ``only``, of those rows alone (each ranker still scaled by its best row overall)."""
    tops = {k: max(v.values()) for k, v in parts.items() if v}
    present = {k: parts[k] for k, top in tops.items() if top > 0}
    if not present:
        return {}
    total_w = sum(weights[k] for k in present)
    out: dict[int, float] = {}
    for k, v in present.items():
        w, top = weights[k] / total_w, tops[k]
        for d, s in (v.items() if only is None else ((d, v[d]) for d in only if d in v)):
            out[d] = out.get(d, 0.0) + w * (s / top)
    return out


def grounded(rows: Iterable[int] | None, bm25: Scores | None, grams: Scores | None, cosines: Scores,
             semantic_floor: float | None, also: Collection[int] = ()) -> set[int]:
    """The rows (of ``rows``, when given) a gated search may return: ``also`` (fact files,
    passages a second encoder vouches for), and those the words ground (``BM25_GROUNDED``,
    ``GRAMS_GROUNDED``) or whose closeness in meaning reaches the scope's floor. A char-gram
    ranker scores nearly every passage a little; the rest are dropped before they are fused,
    weighed or read."""
    keep = set(also)
    keep.update(d for d, v in (bm25 or {}).items() if v >= BM25_GROUNDED)
    keep.update(d for d, v in (grams or {}).items() if v >= GRAMS_GROUNDED)
    if semantic_floor is not None:
        keep.update(d for d, v in cosines.items() if v >= semantic_floor)
    return keep if rows is None else keep.intersection(rows)


def rank(bm25: Scores | None, grams: Scores | None, kinds: Mapping[int, tuple[str, str]], *,
         k: int = 5, gate: bool = True, prefer_project_docs: bool = False,
         semantic: Meaning | None = None, semantic_floor: float | None = None,
         semantic_led: bool = False, fact_files: Iterable[int] = (), headed: Collection[int] = (),
         demoted: Iterable[int] = (), rationale: bool = True, kept: Collection[int] | None = None,
         changelog: Iterable[int] = (), params: Params = DEFAULT_PARAMS) -> list[tuple[int, float]]:
    """Fuse, weigh by chunk and path kind, gate, and return the best (chunk row, score) pairs.

    ``kinds`` maps each candidate row to its (chunk kind, path kind, recency in [0, 1]);
    ``fact_files`` are rows of the files holding the fact a question about the project asks
    for (grounded by convention, see ``FACT_FILE_FACTOR``), the best of ``headed`` (README sections
    whose heading names that fact: "## Contributing") first; ``demoted`` rows are translated copies;
    ``rationale`` False (the question asks no why) counts commit bodies, docstrings and comments
    at ``params.outside_why``: they explain code and its changes, prose answers how. ``changelog``
    rows (changelog entries and licence texts: ``held_back``) follow the first ``k`` other
    passages: an entry says what changed in a feature with the feature's own words, the docs say
    how it works. The gate keeps the ``grounded`` rows (``kept``: the caller's ``grounded`` of these
    same scores, when it has them).
    """
    meaning = semantic.scores() if semantic else None
    cosines, vouched = (semantic.cosines, semantic.vouched) if semantic else ({}, frozenset())
    facts, demoted = set(fact_files), set(demoted)
    only = None
    if gate:   # what the gate drops is not fused, weighed or kept: only grounded rows are
        only = kept if kept is not None else grounded(None, bm25, grams, cosines, semantic_floor, facts | vouched)
    fused = fuse({"bm25": bm25, "grams": grams, "semantic": meaning},
                 SEMANTIC_LED_WEIGHTS if semantic_led else RANKER_WEIGHTS, only)
    outside_why = {} if rationale else dict(params.outside_why)
    for d in facts:
        fused[d] = max(fused.get(d, 0.0), FACT_FILE_BASE)
    out = []
    for d, score in fused.items():
        kind, path_kind, recency = kinds.get(d, ("doc", "source", 0.0))
        score = score * PATH_KIND_FACTOR.get(path_kind, 1.0) + RECENCY_WEIGHT * recency
        if prefer_project_docs:
            score *= META_KIND_FACTOR.get(kind, 1.0)
        if d in facts:
            score *= FACT_FILE_FACTOR
        if d in demoted:
            score *= TRANSLATION_FACTOR
        score *= outside_why.get(kind, 1.0)
        if score > 0:
            out.append((d, score))
    out.sort(key=lambda p: (-p[1], p[0]))
    out = after_the_docs(out, set(changelog), k)
    lead = next((p for p in out if p[0] in headed), None)
    if lead is not None and out[0] is not lead:   # the README's heading says this section answers
        out.remove(lead)
        out.insert(0, lead)
    slots = [p for p in out if p[0] in facts][:FACT_FILE_SLOTS]
    late = [p for p in slots if out.index(p) >= k - len(slots)]
    if late:
        rest = [p for p in out if p not in late]
        out = rest[:1] + late + rest[1:]
    return out[: k * 3]


def after_the_docs(ranked: list[tuple[int, float]], late: set[int], k: int) -> list[tuple[int, float]]:
    """``ranked`` with the ``late`` rows after the first ``k`` others (after all of them when
    there are fewer), each group in its own order."""
    if not late:
        return ranked
    others = [p for p in ranked if p[0] not in late]
    return others[:k] + [p for p in ranked if p[0] in late] + others[k:]


def search_scope(question: "Question | str", q_tokens: Sequence[str], lex, *, plan: Plan = Plan(),
                 semantic: Callable[[Collection[int]], Meaning | None] | None = None,
                 semantic_floor: float | None = None, semantic_led: bool = False,
                 params: Params = DEFAULT_PARAMS) -> list[tuple[int, float]]:
    """Rank one scope's chunks for the question; (chunk row, score) pairs, best first.

    ``semantic``, given the lexical rankers' candidates, returns the vectors' ``Meaning``: their own
    best rows and those candidates' (a passage the words found is judged on its closeness in
    meaning, not dropped to 0 for being outside the vectors' short list)."""
    q = Question.of(question)
    bm25 = lex.bm25_scores(q_tokens)  # only the tokens the scope holds have postings
    grams = lex.gram_scores(q.text, q.grams(lex.lo, lex.hi))
    worded = set(bm25 or ()) | set(grams or ())
    sem = semantic(worded) if semantic is not None else None
    if sem is not None:
        bm25 = with_borrowed_words(lex, bm25, sem, q_tokens)
    prose = lex.prose_paths()
    prefer_project_docs = plan.prefer_project_docs
    facts, headed = fact_rows(q.text, prose, lex.chunks, named=plan.project_named) if prefer_project_docs else (set(), set())
    # after borrowing: a passage only the lent words find is weighed by its own kinds too
    candidates = set(bm25 or ()) | set(grams or ()) | (set(sem.cosines) | set(sem.other) if sem else set()) | facts
    kept = None
    if plan.gate:   # only the rows the ranking's gate keeps are weighed: their kinds are read
        kept = grounded(None, bm25, grams, sem.cosines if sem else {}, semantic_floor,
                        facts | (sem.vouched if sem else frozenset()))
        candidates &= kept
    if not candidates:
        return own_words_first(lex, plan.about, [], prose) if plan.about else []
    translated, late_file = held_back(q, prose)
    demoted = {i for i in candidates if translated(i)}
    kinds = lex.chunk_kinds(candidates)
    logs = {i for i in candidates if late_file(i)}
    ranked = rank(bm25, grams, kinds, k=plan.k, gate=plan.gate, prefer_project_docs=prefer_project_docs,
                  semantic=sem, semantic_floor=semantic_floor, semantic_led=semantic_led and sem is not None,
                  fact_files=facts, headed=headed, demoted=demoted, rationale=q.why, kept=kept, changelog=logs, params=params)
    # a passage and its tail's window are one answer: the held-back rows follow k distinct others
    ranked = after_the_docs(distinct(ranked, lex.chunks([i for i, _ in ranked]), unread=True), logs, plan.k)

    def late(i: int) -> bool:   # leads only when no other passage would
        return translated(i) or late_file(i)

    if q.quoted:
        ranked = quoted_first(lex, ranked, q.quoted, late)
    if plan.cite:
        ranked = cited_first(lex, ranked, plan.cite, late)
    return own_words_first(lex, plan.about, ranked, prose) if plan.about else ranked


def distinct(hits: Sequence[tuple[int, float]], rows: Mapping[int, dict], *,
             unread: bool = False) -> list[tuple[int, float]]:
    """``hits`` without a passage already given (``rows``: row -> its chunk): the same file and line
    (a passage and its tail's window) or the same text (a doc comment repeated, a copied file); the
    first kept; a passage that only includes another file (``only_includes``: it repeats that file,
    saying nothing of its own) never. A row with no chunk is kept when ``unread`` (nothing says it repeats one), else
    dropped (it cannot be shown)."""
    out, seen = [], set()
    for i, score in hits:
        row = rows.get(i)
        if row is None:
            if unread:
                out.append((i, score))
            continue
        where = (row["path"], row.get("line")) if row.get("path") else None
        key = " ".join(str(row.get("text") or "").split())
        if where and where in seen or key and key in seen or only_includes(str(row.get("text") or "")):
            continue
        seen.update(k for k in (where, key) if k)
        out.append((i, score))
    return out


def held_back(q: Question, prose: Mapping[int, str]) -> tuple[Callable[[int], bool], Callable[[int], bool]]:
    """Which rows the ranking holds back for ``q``: (a translated copy, for a question not read as
    another language's prose; a changelog entry, for a question that asks about no change, and a
    licence text, for one that asks about no licence: its boilerplate "use", "copy", "modify",
    "contribution" match many questions and answer none of them)."""
    licence = asks_about_licence(q.text)

    def translated(i: int) -> bool:
        return not q.reads_as_foreign_prose and i in prose and translation_language(prose[i]) is not None

    def late_file(i: int) -> bool:
        return i in prose and (not q.about_change and is_changelog(prose[i]) or not licence and is_licence(prose[i]))

    return translated, late_file


def cited_first(lex, ranked: list[tuple[int, float]], words: Sequence[str],
                late: Callable[[int], bool] = lambda i: False) -> list[tuple[int, float]]:
    """An enumeration member's answer led by a passage holding a word it was chosen for
    (``Plan.cite``, rarest first): the best ranked one holding the first word any passage holds,
    else the passage that word's BM25 ranks first; scored just above the best. A ``late`` passage
    (a changelog entry, a translated copy) leads only when no other holds the word. "Where do I
    load configuration from a .env file?" lists a framework for its ".env": its answer shows where."""
    for word in words:
        holding = lex.bm25_scores([word]) or {}
        if holding:
            return led_by(ranked, holding, late)
    return ranked


def led_by(ranked: list[tuple[int, float]], holding: Mapping[int, float],
           late: Callable[[int], bool] = lambda i: False) -> list[tuple[int, float]]:
    """``ranked`` led by one of the ``holding`` passages: the best ranked, else the one scored
    highest there; a ``late`` one only when no other holds it. Scored just above the best."""
    order = [d for d, _ in ranked if d in holding]
    shown = set(order)
    order += sorted((d for d in holding if d not in shown), key=lambda d: (-holding[d], d))
    first = next((d for d in order if not late(d)), order[0])
    top = max((v for _, v in ranked), default=1.0)
    return [(first, top * 1.01)] + [p for p in ranked if p[0] != first]


QUOTE_MAX_HOLDERS = 3    # a quoted string more passages hold says little about which one answers
QUOTE_CANDIDATES = 60    # at most this many passages holding its words are read for it


def quoted_first(lex, ranked: list[tuple[int, float]], quoted: Sequence[str],
                 late: Callable[[int], bool] = lambda i: False) -> list[tuple[int, float]]:
    """A string the question quotes ('18.0', "too many arguments") is text the asker has seen: when
    one to ``QUOTE_MAX_HOLDERS`` passages of the scope hold it verbatim (case and spacing aside),
    the best ranked of them leads (``led_by``). The first quoted string that qualifies decides; one
    with no word to look it up by ('-5'), or whose words more than ``QUOTE_CANDIDATES`` passages
    hold together ("Options:"), changes nothing."""
    for text in quoted:
        words = sorted(set(tokenize(text)))
        if not words:
            continue
        per = [lex.bm25_scores([w]) or {} for w in words]
        common = set(per[0]).intersection(*per[1:])
        if not common or len(common) > QUOTE_CANDIDATES:   # none, or too many to tell it is rare
            continue
        rows = lex.chunks(sorted(common))
        needle = " ".join(text.lower().split())
        holding = {d: sum(p[d] for p in per) for d, row in rows.items()
                   if needle in " ".join(((row.get("heading") or "") + "\n" + row["text"]).lower().split())}
        if 1 <= len(holding) <= QUOTE_MAX_HOLDERS:
            return led_by(ranked, holding, late)
    return ranked


def own_words_first(lex, kind: str, ranked: list[tuple[int, float]], prose: Mapping[int, str]) -> list[tuple[int, float]]:
    """A question about the project itself (``Plan.about``: what it is, how it is used): the
    passages it says that in (``project_files.about.about_rows``) first, scored just above the best
    passage, then the ranking as it was."""
    files = own_files(prose, translation_language)
    wanted = rows_read(kind, files)
    if kind in ("changes", "recent"):
        files["commits"] = lex.first_rows("commit", RECENT_COMMITS)   # shown by row: no text read
    if kind == "layout":
        files["modules"] = main_modules(lex.module_docs())
    first = about_rows(kind, files, lex.chunks(wanted) if wanted else {})
    if not first:
        return ranked
    top = max((v for _, v in ranked), default=1.0)
    head = [(r, top * (1.0 + 0.01 * (len(first) - i))) for i, r in enumerate(first)]
    shown = set(first)
    return head + [p for p in ranked if p[0] not in shown]


def borrowed_terms(lex, rows: Sequence[int], own: Collection[str], n: int = BORROW_TERMS) -> list[str]:
    """The ``n`` words the passages ``rows`` lend to a search: not the question's ``own``, those
    most of the passages hold first, then the rarest in the scope (BM25's scale: its idf)."""
    from collections import Counter

    held: Counter = Counter()
    for row in lex.chunks(list(rows)).values():
        held.update(set(tokenize((row.get("heading") or "") + "\n" + row["text"])))
    for t in own:
        held.pop(t, None)
    scale = lex.term_scales(list(held))
    return sorted(scale, key=lambda t: (-held[t] * scale[t], t))[:n]


def with_borrowed_words(lex, bm25: Scores | None, meaning: Meaning, own: Sequence[str]) -> Scores | None:
    """``bm25`` plus, at ``BORROW_WEIGHT``, the BM25 of the words the passages first in ``meaning``
    lend (``borrowed_terms``)."""
    order = meaning.scores() or {}
    first = sorted(order, key=lambda d: (-order[d], d))[:BORROW_PASSAGES]
    terms = borrowed_terms(lex, first, set(own)) if first else []
    extra = lex.bm25_scores(terms) if terms else None
    if not extra:
        return bm25
    out = dict(bm25 or {})
    for d, v in extra.items():
        out[d] = out.get(d, 0.0) + BORROW_WEIGHT * v
    return out
