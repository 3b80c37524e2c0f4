"""Fit the routing thresholds that depend on the corpus, and write calibration.json.

Samples come from ``loci.query.evalgen``: the calibration half of the signature
questions should route; unanswerable and deictic-without-cwd questions should
not. The evidence floor, then ``concentrated_min_evidence``, is moved to the cut
where the router's whole gate decides the samples best (balanced accuracy),
within a band around the shipped default, and only when it beats the default
by more than noise. The report gives each band's size, the floor's accuracy on
its own samples, and whether the bands overlap. When chunk vectors exist, a
per-scope semantic floor is fitted from how close off-topic questions come to
each scope's chunks.
"""
from __future__ import annotations

import bisect
import functools
import math
import random
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable, Mapping, Sequence

from loci.query import evalgen
from loci.query.calibration import CALIBRATION_SCHEMA
from loci.kernel.config import DEFAULT_PARAMS, Layout, Params
from loci.kernel.vectorstore import window_owner
from loci.query.grammar import deixis
from loci.query.router import FACT, Context, route, scope_rows
from loci.query.store import RoutingIndex

CLAMP = (0.7, 1.5)          # a fitted value stays within these factors of the shipped default
MIN_GAIN = 0.05            # balanced accuracy a cut must add over the default (about 2 standard errors here)
SEMANTIC_MARGIN = 0.02      # above how close the off-topic questions came to the scope's chunks (``near_top``)
NULL_TOP = 24 / 25          # "above the off-topic questions": above this share of them (the level the best of two
#                             dozen stood at on average, kept as a quantile so that more questions steady it)
ROUTE_ADD_MARGIN = 0.03     # the second opinion adds a scope only above the off-topic questions' best affinities
ROUTE_RESCUE_STEP = 0.10    # ... and answers an abstention only this much higher again
BACKGROUND_QUANTILE = 0.9   # a no-evidence question stands out as this share of off-topic questions does not
BACKGROUND_TYPICAL = 0.5    # a vocabulary route standing out no more than the typical off-topic question is vetoed
APPLIED = ("evidence_floor",)
# a question not in English routes by the multilingual encoder's closest scope when it comes this
# much above how close the shipped off-topic questions in fifteen languages come here (``near_top``):
# on the development corpus that puts the floor where fold A chose it (0.366, halfway between the
# off-topic questions and the farthest right answer; docs/decisions/answer-ranking.md), and on a
# corpus whose prose sits closer to everyday questions it rises with them
MULTILINGUAL_MARGIN = 0.076

"""What calibration writes. ``concentrated_min_evidence`` is fitted and reported only: the
generated routable questions carry 2-4 distinctive words, while that gate exists for
one-symbol questions, so on them its best cut only ever rises (on the dev corpus to
0.77-0.85, which abstains on 2 of 71 labelled questions the default routes)."""


def near_top(values: Sequence[float]) -> float:
    """The ``NULL_TOP`` quantile of ``values`` (their maximum when there are fewer than 25): how
    close the off-topic questions come, without letting the single closest one decide."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(NULL_TOP * len(ordered)))]


def method_signature() -> str:
    """A digest of how this loci fits, apart from the corpus: the questions it asks, the constants
    above, and the code that generates the questions, fits and routes them (a refit costs seconds,
    so any change of that code fits again). A loci that fits another way fits again
    (``calibration_stale``)."""
    import hashlib
    from pathlib import Path

    from loci.query import router, semantic_search

    digest = hashlib.sha256()
    for text in (repr(evalgen.UNANSWERABLE_QUESTIONS), repr(evalgen.DEICTIC_TEMPLATES),
                 repr(evalgen.SIGNATURE_TEMPLATES), repr((CLAMP, MIN_GAIN, SEMANTIC_MARGIN, NULL_TOP,
                 ROUTE_ADD_MARGIN, ROUTE_RESCUE_STEP, BACKGROUND_QUANTILE, BACKGROUND_TYPICAL, APPLIED,
                 CALIBRATION_SCHEMA))):
        digest.update(text.encode() + b"\0")
    from loci_pipeline import calibration_pieces

    for module in (evalgen, router, semantic_search, calibration_pieces):
        digest.update(Path(module.__file__).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=1)   # the code it digests does not change in a process (an export asks once a bundle)
def piece_signature() -> str:
    """A digest of how one scope's calibration piece is computed: the functions that compute it,
    the constants they read, the query side's vector code and the off-topic questions. A piece
    (kept in the home or carried by a bundle) is valid for this digest only. Narrower than
    ``method_signature`` on purpose: a loci that fits the words another way still lands a
    bundle's piece, or a map-pulled scope, whose vectors are remote, would have no background and
    its raw closeness would outrank every local scope's lift above its own. Every byte of the modules
    it reads counts: code that does not compute a piece goes elsewhere (``scope_state``), or every
    published piece is refused by the next loci."""
    import hashlib
    import inspect
    from pathlib import Path

    from loci.query import multilingual, semantic, semantic_search
    from loci_pipeline import calibration_pieces

    digest = hashlib.sha256()
    for fn in _PIECE_FUNCTIONS:
        digest.update(inspect.getsource(fn).encode() + b"\0")
    digest.update(repr((SEMANTIC_MARGIN, NULL_TOP, DEFAULT_PARAMS.semantic_route_k, DEFAULT_PARAMS.semantic_window_chance,
                        evalgen.UNANSWERABLE_QUESTIONS, evalgen.UNANSWERABLE_FOREIGN, CALIBRATION_SCHEMA)).encode())
    for module in (semantic, semantic_search, multilingual, calibration_pieces):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Sample:
    """What the gates see for one labelled question, measured once."""

    question: str
    family: str
    routable: bool          # the label: should this question route?
    evidence: float         # the top eligible scope's summed evidence
    concentrated: float     # its best token held by at most concentrated_max_scopes scopes
    distinct: int           # how many of its matched tokens are distinctive
    pointing: bool          # strongly deictic: the deixis gate abstains whatever the evidence


@dataclass(frozen=True)
class Fit:
    """One fitted threshold and how well it separates its samples."""

    name: str
    value: float
    default: float
    best_cut: float         # before the clamp and the noise guard
    accuracy: float         # of the threshold alone on its own samples
    routable: int
    unroutable: int
    overlap: bool
    routable_min: float | None
    unroutable_max: float | None
    note: str = ""


def measure(questions: Sequence[evalgen.GenQuestion], index: RoutingIndex,
            aliases: Mapping[str, Sequence[str]], params: Params = DEFAULT_PARAMS,
            context: Context = Context()) -> list[Sample]:
    """Route each question with no cwd (``context``: the home's copies, as a question routes)
    and record the top scope's gate inputs."""
    skip = scope_rows(index, context.shadowed)
    cap = max(1, int((len(index.scopes) - len(skip)) * params.distinctive_max_share))
    out = []
    for q in questions:
        r = route(q.question, index, context, aliases, params)
        top = r.details[0] if r.details else None
        held = {t: len((set(index.get(t)) | set(index.get(FACT + t))) - skip) for t in r.tokens}
        conc = [ev for t, ev in (top.matched.items() if top else ())
                if held.get(t, 0) <= params.concentrated_max_scopes]
        out.append(Sample(q.question, q.family, not q.should_abstain,
                          top.evidence if top else 0.0, max(conc, default=0.0),
                          sum(1 for t in (top.matched if top else ()) if held.get(t, 0) <= cap),
                          deixis(q.question) == "strong"))
    return out


def routes(sample: Sample, params: Params) -> bool:
    """Whether the router's gates would let ``sample`` route under ``params`` (no cwd, no name)."""
    return not sample.pointing and (sample.evidence >= params.evidence_floor
                                    or sample.distinct >= params.min_matched_tokens
                                    or sample.concentrated >= params.concentrated_min_evidence)


def gate_accuracy(samples: Sequence[Sample], params: Params) -> float:
    """Share of samples the whole gate decides right under ``params``."""
    return sum(routes(s, params) == s.routable for s in samples) / len(samples) if samples else 0.0


def balanced_accuracy(samples: Sequence[Sample], params: Params) -> float:
    """Mean of the routable and the unroutable hit rates, so the bigger band cannot decide alone."""
    rates = []
    for label in (True, False):
        band = [s for s in samples if s.routable is label]
        if band:
            rates.append(sum(routes(s, params) == label for s in band) / len(band))
    return round(sum(rates) / len(rates), 9) if rates else 0.0


_VALUE: dict[str, Callable[[Sample], float]] = {
    "evidence_floor": lambda s: s.evidence,
    "concentrated_min_evidence": lambda s: s.concentrated,
}


def cut_scores(samples: Sequence[Sample], params: Params, name: str, cuts: Sequence[float]) -> list[float]:
    """``balanced_accuracy`` of ``samples`` with threshold ``name`` at each of ``cuts``, in one pass.

    Without that threshold a sample's gate is already decided (pointing: never routes; another
    gate passes: always) or it routes exactly when its value reaches the cut, so each band's
    count at a cut is one binary search in its sorted free values (the same ratios
    ``balanced_accuracy`` takes, for thousands of samples and cuts at 1,000 scopes)."""
    value_of = _VALUE[name]
    without = replace(params, **{name: math.inf})
    bands = []
    for label in (True, False):
        band = [s for s in samples if s.routable is label]
        if band:
            always = sum(1 for s in band if routes(s, without))
            free = sorted(value_of(s) for s in band if not s.pointing and not routes(s, without))
            bands.append((label, len(band), always, free))
    out = []
    for c in cuts:
        rates = []
        for label, n, always, free in bands:
            routed = always + len(free) - bisect.bisect_left(free, c)
            rates.append((routed if label else n - routed) / n)
        out.append(round(sum(rates) / len(rates), 9) if rates else 0.0)
    return out


def _candidates(values: Sequence[float], default: float) -> list[float]:
    v = sorted(set(values))
    cuts = {default, *((a + b) / 2 for a, b in zip(v, v[1:]))}
    if v:
        cuts |= {v[0] / 2 if v[0] > 0 else v[0], v[-1] + max(abs(v[-1]) * 0.05, 0.01)}
    return sorted(cuts)


def fit_threshold(samples: Sequence[Sample], params: Params, name: str) -> Fit:
    """Move one threshold of ``params`` to where the whole gate decides the samples best.

    Best means the highest balanced accuracy; among equals, the cut nearest the
    shipped default. The result is clamped to ``CLAMP`` around the default, and the
    default is kept unless the cut beats it by ``MIN_GAIN``: the samples are few and
    generated, and a cut that wins by a sample or two is noise. The reported
    accuracy, bands and overlap are those of this threshold alone.
    """
    default = float(getattr(DEFAULT_PARAMS, name))
    value_of = _VALUE[name]
    pos = [value_of(s) for s in samples if s.routable]
    neg = [value_of(s) for s in samples if not s.routable]
    lo, hi = (min(pos) if pos else None), (max(neg) if neg else None)
    if not pos or not neg:
        return Fit(name, default, default, default, 0.0, len(pos), len(neg), False, lo, hi,
                   note="too few samples in one band; the shipped default is kept")

    cuts = _candidates(pos + neg, default)
    band = (default * CLAMP[0], default * CLAMP[1])
    every = sorted({*cuts, *band, default})
    score = dict(zip(every, cut_scores(samples, params, name, every))).__getitem__

    def best(cuts: Sequence[float]) -> float:
        return max(cuts, key=lambda c: (score(c), -abs(c - default)))

    free = best(cuts)
    value = best([c for c in cuts if band[0] <= c <= band[1]] + list(band))
    gain = score(value) - score(default)
    note = "" if value == free else f"clamped from {free:.3f} to {CLAMP[0]}-{CLAMP[1]} x the default"
    if value != default and gain < MIN_GAIN:
        note = (f"default kept: the best cut ({value:.3f}) adds {100 * gain:.1f} points of "
                f"balanced accuracy, under the {100 * MIN_GAIN:.0f} that would not be noise")
        value = default
    alone = (sum(v >= value for v in pos) + sum(v < value for v in neg)) / (len(pos) + len(neg))
    return Fit(name, round(value, 4), default, round(free, 4), alone, len(pos), len(neg), hi >= lo, lo, hi, note)


# --- the semantic floor -------------------------------------------------------------------

def semantic_floors(layout: Layout, scopes: Sequence[str], questions: Sequence[str],
                    load_encoder: Callable | None = None, pieces=None,
                    judged: Sequence[Sequence[str]] | None = None, eligible: Sequence[str] | None = None) -> dict:
    """Per model with stored vectors: per scope, a cosine just above the closest any off-topic
    question came to one of its chunks. Returns {"models": {...}} or {"skipped": reason}.
    Each scope's values come from its piece (``loci_pipeline.calibration_pieces``): kept, carried
    by its bundle, or computed here when its vectors are; the questions are encoded only then.
    With ``judged`` (per question, the scopes its words chose) the route floors are fitted on the
    scopes the second opinion measures (``measured_by_opinion``, over ``eligible``), where the
    model has a merged summary."""
    from loci_pipeline.calibration_pieces import Pieces, null_vectors

    models = stored_models(layout)
    if not models:
        return {"skipped": "no vectors yet (run `loci embed`); search keeps its default semantic gate"}
    try:
        from loci.query import semantic
    except ImportError:
        return {"skipped": "the semantic module is not available"}
    load_encoder = load_encoder or semantic.load_encoder
    pieces = pieces if pieces is not None else Pieces(layout, scopes, piece_signature())
    out: dict[str, dict] = {}
    problems: list[str] = []
    readable = list(eligible if eligible is not None else scopes)
    for model in models:
        try:
            null = null_vectors(layout, model, questions, load_encoder)
            per = model_pieces(layout, pieces, model, questions, load_encoder, null)
        except Exception as exc:  # EncoderUnavailable, or a model only a path could name
            problems.append(f"{model}: {str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__}")
            continue
        read, few = opinion_reads(layout, model, null[0], judged, readable)
        out[model] = semantic_from_pieces(per, len(questions), read, few)
    pieces.save()
    result: dict = {"models": out}
    if problems:
        result["problems"] = problems
    if not out:
        result = {"skipped": "no encoder could be loaded: " + "; ".join(problems)}
    return result


def opinion_reads(layout: Layout, model: str, vectors: Callable, judged: Sequence[Sequence[str]] | None,
                  eligible: list[str]) -> tuple[list[set] | None, list[set] | None]:
    """``measured_by_opinion`` for ``model``'s off-topic questions (``vectors()``: encoded, as the
    pieces read them) twice: as far as the live opinion reads (``semantic_read``) and for the few
    whose standing judges a question (``semantic_shortlist``); (None, None) (every scope) without
    ``judged``, a merged summary of this model, or an encoder for the questions."""
    from loci.query.semantic import load_summary

    summary = load_summary(layout, model) if judged is not None else None
    if summary is None:
        return None, None
    try:
        encoded = vectors()
    except Exception:  # EncoderUnavailable: a pulled home's pieces came with its bundles, unencoded
        return None, None
    p = DEFAULT_PARAMS
    return (measured_by_opinion(summary, encoded, eligible, judged, p.semantic_scopes_read),
            measured_by_opinion(summary, encoded, eligible, judged, p.semantic_shortlist))


def model_pieces(layout: Layout, pieces, model: str, questions: Sequence[str], load_encoder: Callable,
                 null: tuple[Callable, str] | None = None) -> dict:
    """Each scope's piece for ``model`` (``Pieces.semantic``): kept, landed, or computed from its
    vectors, the off-topic ``questions`` encoded only when one must be (``null``: the caller's
    ``null_vectors`` of them, when it reads them too)."""
    from loci_pipeline.calibration_pieces import null_vectors

    vectors, tag = null if null is not None else null_vectors(layout, model, questions, load_encoder)
    return pieces.semantic(model, lambda scope: semantic_piece(layout, model, scope, vectors()), len(questions),
                           tag, leave_one_out_z)


def semantic_piece(layout: Layout, model: str, scope: str, null) -> dict | None:
    """One scope's piece: its floor (just above how close the off-topic questions ``null``, encoded,
    come to its chunks) and each one's affinity as routing reads it (None without such chunks);
    None when the scope has no vectors of this width here."""
    from loci.query import semantic
    from loci.query.semantic_search import scope_vectors

    vectors = scope_vectors(layout, model, scope)
    if vectors is None or vectors.stored.dim != null.shape[1]:
        return None
    passages = scope_passages(vectors, DEFAULT_PARAMS.semantic_window_chance)
    cosines = [vectors.stored.cosines(v) for v in null]
    lifts = window_lifts(passages, cosines)
    closest = near_top([float(passages.scores(None, cos).max()) for cos in cosines])
    k = DEFAULT_PARAMS.semantic_route_k
    return {"floor": round(min(1.0, closest + SEMANTIC_MARGIN), 4),
            "null": [semantic.affinity(cos[vectors.affine], k) for cos in cosines] if len(vectors.affine) else None,
            **({"lifts": lifts} if lifts else {})}


def scope_passages(vectors, chance=()):
    """The passages of a scope's ``ScopeVectors`` as search scores them (``loci.query.semantic.Passages``:
    a passage is its own row or its closest window less ``chance``), one per stored chunk. A
    scope's floor is fitted with ``Params.semantic_window_chance``: the fitted table needs every scope."""
    return vectors.passages(lambda: [k for k in vectors.keys if window_owner(k) is None], chance)


def window_lifts(passages, null) -> list[list[float]]:
    """Per number of windows (1, 2, ..., the last: that many or more), the sum and count of how
    much a passage's closest window beats its own row on the off-topic questions (``null``: each
    one's cosines to every stored row); empty when no passage has windows."""
    import numpy as np

    if not len(passages.owners):
        return []
    buckets = len(DEFAULT_PARAMS.semantic_window_chance)
    windowed = np.unique(passages.owners)
    count = np.minimum(np.bincount(passages.owners)[windowed], buckets) - 1
    sums = np.zeros(buckets)
    for cos in null:
        own, windows = passages.parts(None, cos)
        best = own.copy()
        np.maximum.at(best, passages.owners, windows)
        sums += np.bincount(count, weights=(best - own)[windowed], minlength=buckets)
    n = np.bincount(count, minlength=buckets) * len(null)
    return [[round(float(a), 6), int(b)] for a, b in zip(sums, n)]


def window_chance_from(per: Mapping[str, Mapping]) -> tuple[float, ...]:
    """``Params.semantic_window_chance`` fitted from the scopes' pieces: per number of windows, the
    mean lift of a passage's closest window over its own row on off-topic questions (a count no
    passage has takes the one before it); empty when no scope has windows."""
    sums: list[float] = []
    counts: list[int] = []
    for piece in per.values():
        for b, (total, n) in enumerate(piece.get("lifts") or ()):
            if b >= len(sums):
                sums.append(0.0)
                counts.append(0)
            sums[b] += total
            counts[b] += n
    if not any(counts):
        return ()
    filled, last = [], next(s / n for s, n in zip(sums, counts) if n)
    for total, n in zip(sums, counts):
        last = total / n if n else last
        filled.append(round(last, 4))
    return tuple(filled)


def bundle_piece(layout: Layout, scope: str, model: str | None) -> dict | None:
    """The scope's calibration piece for its bundle's manifest, with what fitted it: its semantic
    piece for ``model`` (kept here, else computed from its vectors) and its multilingual one when
    `loci calibrate` kept one for its store as it is (the encoder is not loaded to push); None
    when neither can be had."""
    from loci.query import semantic
    from loci_pipeline.calibration_pieces import MULTILINGUAL, Pieces, multilingual_for_bundle, questions_digest

    questions = evalgen.UNANSWERABLE_QUESTIONS
    method = piece_signature()
    got = None
    if model:
        pieces = Pieces(layout, [scope], method)
        try:
            got = model_pieces(layout, pieces, model, questions, semantic.load_encoder).get(scope)
        except Exception:  # EncoderUnavailable: the bundle goes without, its consumers compute it or not
            got = None
        pieces.save()
    foreign = multilingual_for_bundle(layout, scope, method)
    if got is None and foreign is None:
        return None
    return {"method": method, "questions": questions_digest(),
            **({"model": model, "floor": got["floor"], "null": got["null"]} if got is not None else {}),
            **({MULTILINGUAL: foreign} if foreign is not None else {})}


def semantic_from_pieces(per: Mapping[str, Mapping], n: int, measured: Sequence[set] | None = None,
                         few: Sequence[set] | None = None) -> dict:
    """One model's corpus-level values from its scopes' pieces ({scope: {"floor", "null"}}, in
    the index's order): the floors, the route floors from each question's best over the scopes
    the second opinion measures for it (``measured``, per question; None: every scope), each
    scope's background and the z floor and veto, read over the scopes whose standing judges each
    question (``few``; default ``measured``)."""
    floors = {scope: piece["floor"] for scope, piece in per.items()}
    per_scope = {scope: piece["null"] for scope, piece in per.items() if piece.get("null") is not None}
    standings = {scope: per[scope]["z"] for scope in per_scope} if all("z" in per[s] for s in per_scope) else None
    per_question = [max((per_scope[s][j] for s in _read_for(j, per_scope, measured)), default=0.0)
                    for j in range(n)]   # each off-topic question's best affinity where it was measured
    out: dict = {"floors": floors, "null_questions": n}
    chance = window_chance_from(per)
    if chance:
        out["window_chance"] = list(chance)
    if floors and per_question:
        out["route"] = route_floors_from(per_question)
        background = background_from(per_scope)
        if background:
            out["background"] = background
            few = measured if few is None else few
            out["route"]["semantic_z_floor"] = z_floor_from(per_scope, standings=standings, measured=few)
            out["route"]["semantic_z_veto"] = z_floor_from(per_scope, BACKGROUND_TYPICAL, standings, few)
    return out


def _read_for(j: int, scopes: Mapping, measured: Sequence[set] | None):
    """The scopes (of ``scopes``) the second opinion measures for question ``j``: every one without
    ``measured``, or when none of those it names has a piece."""
    if measured is None:
        return scopes
    return [s for s in measured[j] if s in scopes] or scopes


def measured_by_opinion(summary, qvecs, scopes: Sequence[str], judged: Sequence[Sequence[str]],
                        shortlist: int = DEFAULT_PARAMS.semantic_shortlist) -> list[set]:
    """Per off-topic question (``qvecs``, encoded), the scopes the live second opinion measures: the
    ``shortlist`` whose merged summaries (``semantic.load_summary``) come closest, and those its
    words chose or pointed at (``judged``, ``ask.judged_scopes`` of its lexical route). Among
    hundreds of scopes the best of every scope is closer to an off-topic question than the best of
    these (0.524 against 0.453 at 1,000 real scopes, 0.409 against 0.402 at 22): floors fitted on
    every scope kept the second opinion quiet at scale (docs/decisions/semantic-routing.md)."""
    from loci.query.semantic import shortlist as closest

    return [set(closest(summary, q, scopes, shortlist)) | {s for s in words if s in scopes}
            for q, words in zip(qvecs, judged)]


def multilingual_floor(layout: Layout, scopes: Sequence[str], questions: Sequence[str],
                       encoder=None, pieces=None) -> dict:
    """``multilingual_route_floor`` fitted on this corpus: how close the off-topic questions in other
    languages come to a scope's best passage (``near_top``), plus ``MULTILINGUAL_MARGIN``; or
    {"skipped": reason} without a multilingual store. Each scope's best passages are its piece."""
    import numpy as np

    from loci.query.multilingual import MultilingualSide, load_encoder, scope_affinity
    from loci_pipeline.calibration_pieces import Pieces, encoded, multilingual_tag

    side = MultilingualSide.open(layout, encoder=encoder)
    if side is None:
        return {"skipped": "no multilingual store (the multilingual extra and `loci embed`); the shipped floor stays"}
    real = [encoder]

    def encode_each(texts):   # one at a time, as a question is encoded when asked
        real[0] = real[0] or load_encoder(layout)
        return np.stack([np.asarray(real[0].encode([t])[0]) for t in texts])

    tag = multilingual_tag(encoder)
    side.encoder = _Lookup(lambda: encoded(layout, tag, questions, encode_each), questions)
    pieces = pieces if pieces is not None else Pieces(layout, scopes, piece_signature())
    per = pieces.multilingual(lambda scope: [scope_affinity(side, q, [scope]).get(scope) for q in questions], tag)
    pieces.save()
    best = [max((v[j] for v in per.values() if v[j] is not None), default=0.0) for j in range(len(questions))]
    if not any(best):
        return {"skipped": "no scope has multilingual vectors yet; the shipped floor stays"}
    top = near_top(best)
    return {"questions": len(best), "null_best_affinity": round(top, 4),
            "multilingual_route_floor": round(min(1.0, top + MULTILINGUAL_MARGIN), 4)}


class _Lookup:
    """An encoder of the fixed questions whose vectors are read (or encoded) only when asked."""

    def __init__(self, vectors: Callable, questions: Sequence[str]):
        self._vectors, self._rows, self._got = vectors, {q: i for i, q in enumerate(questions)}, None

    def encode(self, texts):
        if self._got is None:
            self._got = self._vectors()
        return self._got[[self._rows[t] for t in texts]]


def route_floors_from(best: Sequence[float]) -> dict:
    """The second opinion's floors from each off-topic question's best affinity: add above nearly all
    of them (``near_top``), rescue higher still, veto a vocabulary route below what the typical one reaches (median)."""
    ordered = sorted(best)
    top = near_top(ordered)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    add = min(1.0, top + ROUTE_ADD_MARGIN)
    return {"null_best_affinity": round(top, 4), "null_median_affinity": round(median, 4),
            "semantic_add_floor": round(add, 4), "semantic_rescue_floor": round(min(1.0, add + ROUTE_RESCUE_STEP), 4),
            "semantic_veto_floor": round(median, 4)}


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    return mean, (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5


def background_from(per_scope: Mapping[str, Sequence[float]]) -> dict[str, list[float]]:
    """Per scope, the off-topic questions' mean affinity and its spread (scopes with fewer than
    three questions, or no spread, have no background)."""
    out = {}
    for scope, values in per_scope.items():
        if len(values) >= 3:
            mean, sd = (round(v, 4) for v in _mean_sd(values))
            if sd > 0:
                out[scope] = [mean, sd]
    return out


def leave_one_out_z(values: Sequence[float], n: int | None = None) -> list[float | None]:
    """Each of the first ``n`` off-topic questions' standing in one scope against the background
    of the others (None where the others have no spread): a function of the scope alone, so
    each scope's piece keeps it (``calibration_pieces``)."""
    out: list[float | None] = []
    for j in range(len(values) if n is None else n):
        rest = [v for i, v in enumerate(values) if i != j]
        z = None
        if len(rest) >= 2:
            mean, sd = _mean_sd(rest)
            if sd > 0:
                z = (values[j] - mean) / sd
        out.append(z)
    return out


def z_floor_from(per_scope: Mapping[str, Sequence[float]], quantile: float = BACKGROUND_QUANTILE,
                 standings: Mapping[str, Sequence[float | None]] | None = None,
                 measured: Sequence[set] | None = None) -> float:
    """How far above a scope's background a question must stand to count as on-topic: the
    ``quantile`` of the off-topic questions' own best standing, each measured against the
    background of the others (leave one out: a question is never its own background), over the
    scopes the second opinion measures for it (``measured``; None: every scope).
    ``standings``: each scope's ``leave_one_out_z``, when already known."""
    n = min((len(v) for v in per_scope.values()), default=0)
    if standings is None:
        standings = {scope: leave_one_out_z(values, n) for scope, values in per_scope.items()}
    best = []
    for j in range(n):
        zs = [standings[s][j] for s in _read_for(j, standings, measured) if standings[s][j] is not None]
        if zs:
            best.append(max(zs))
    if not best:
        return DEFAULT_PARAMS.semantic_z_floor
    best.sort()
    return round(best[min(len(best) - 1, int(quantile * len(best)))], 4)


# --- the whole run ------------------------------------------------------------------------

def calibrate(layout: Layout, *, seed: int = 0, load_encoder: Callable | None = None,
              write: bool = True, multilingual_encoder=None, full: bool = False) -> dict:
    """Fit on the current index and write ``calibration.json`` (atomically); return what was written.

    The words' fit (``fit_words``) is kept as it was while few of the scopes it was fitted on
    moved (``lexical_fit_holds``), and so are the corpus-level semantic values (``corpus_moved``):
    then only the moved scopes' own values are read from their pieces. ``full`` fits everything
    again whatever moved."""
    from loci.query.ask import open_session
    from loci.kernel.atomic import build_lock, write_json

    # the whole routing index is loaded only to fit the words (``fit_words``): while their fit stands,
    # the off-topic questions are routed reading their own words' rows, as a one-shot question is
    # (loading 3 million postings at 1,000 scopes was most of a calibrated pull of one bundle)
    from loci.query.store import indexed_metas

    session = open_session(layout.home, keep_full_index=False, params=DEFAULT_PARAMS)
    manifest = session.manifest
    scopes = scope_digests(indexed_metas(layout, session.merged))
    method = method_signature()
    previous = {} if full else previous_calibration(layout)
    words = (None if full else kept_words(previous, scopes, manifest, method)) \
        or fit_words(session, scopes, manifest, seed, method)
    applied = dict(words["params"])
    names = list(scopes)
    now = corpus_state(layout, scopes, method, multilingual_encoder)
    moved = None if full else corpus_moved(previous, now, DEFAULT_PARAMS.calibration_refit_share)
    semantic = None if moved is None else kept_semantic(layout, previous["semantic"], moved, names, load_encoder)
    if semantic is not None:
        foreign, fit = previous["multilingual"], {**strip_moved(previous["corpus_fit"]), "moved": len(moved)}
    else:
        foreign, semantic = fit_semantic(layout, session, names, applied, load_encoder, multilingual_encoder)
        fit = {**now, "moved": 0}
    if "multilingual_route_floor" in foreign:
        applied["multilingual_route_floor"] = foreign["multilingual_route_floor"]
    data = {
        "schema_version": CALIBRATION_SCHEMA,
        "fitted_at": time.time(),
        "index_written_at": manifest.get("written_at"),
        "fitted_from": fitted_from(layout, method),
        "tokenizer": manifest.get("tokenizer"),
        "seed": seed,
        "scopes": len(names),
        "params": applied,
        "fits": words["fits"],
        "gate_accuracy": words["gate_accuracy"],
        "lexical": {**words["lexical"], "moved": moved_scopes(words["lexical"]["scopes"], scopes)},
        "semantic": semantic,
        "multilingual": foreign,
        "corpus_fit": fit,
    }
    if write:
        with build_lock(layout.lock, "calibrate"):
            write_json(layout.calibration, data)
            layout.thresholds_choice.unlink(missing_ok=True)   # fitted: the steps refresh the fit again
    return data


def fit_semantic(layout: Layout, session, names: Sequence[str], applied: Mapping, load_encoder: Callable | None,
                 multilingual_encoder) -> tuple[dict, dict]:
    """(the multilingual floor, the semantic floors) fitted over every scope's pieces; the off-topic
    questions routed by their words with the ``applied`` params, for the second opinion's reads."""
    from loci_pipeline.calibration_pieces import Pieces

    pieces = Pieces(layout, names, piece_signature())
    null = list(evalgen.UNANSWERABLE_QUESTIONS)
    foreign = multilingual_floor(layout, names, evalgen.UNANSWERABLE_FOREIGN, multilingual_encoder, pieces)
    semantic = semantic_floors(layout, names, null, load_encoder, pieces, *opinion_inputs(session, names, null, applied))
    return foreign, semantic


# --- the corpus-level semantic values while few scopes moved -------------------------------

def stored_models(layout: Layout) -> list[str]:
    """The models the home holds chunk vectors of."""
    root = layout.vectors_root
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def corpus_state(layout: Layout, scopes: Mapping[str, str], method: str, multilingual_encoder=None) -> dict:
    """What the corpus-level semantic values are fitted from: how loci fits (``method``, the pieces'
    signature, the encoders' tags) and, per scope, a digest of what it was built from and of the
    files its pieces come from (``scope_state``)."""
    import hashlib

    from loci_pipeline.calibration_pieces import multilingual_tag, semantic_tag

    models = stored_models(layout)
    return {"method": method, "pieces": piece_signature(),
            "tags": {**{m: semantic_tag(m) for m in models}, "": multilingual_tag(multilingual_encoder)},
            "scopes": {s: hashlib.sha256(f"{d}|{scope_state(layout, s, models)}".encode()).hexdigest()[:16]
                       for s, d in scopes.items()}}


def scope_state(layout: Layout, scope: str, models: Sequence[str]) -> str:
    """Everything a scope's pieces can be computed or landed from, as file stats: its meta (a pull
    writes it last), its query file, its multilingual store and its vectors of each of ``models``.
    A scope whose state is unchanged has the pieces it had. (Here, not in ``calibration_pieces``,
    whose every byte is in the pieces' signature.)"""
    from loci.kernel.stamps import files_state
    from loci.kernel.vectorstore import meta_path, multilingual_vectors

    return files_state((("meta", layout.meta(scope)), ("query", layout.query_db(scope)),
                        ("multilingual", meta_path(multilingual_vectors(layout, scope))),
                        *((f"vectors:{m}", meta_path(layout.vectors(m, scope))) for m in models)))


def strip_moved(fit: Mapping) -> dict:
    """A fit's record (words' or corpus') without its count of scopes moved since."""
    return {k: v for k, v in fit.items() if k != "moved"}


def corpus_moved(previous: Mapping, now: Mapping, share: float) -> list[str] | None:
    """The scopes added, changed or gone since the corpus-level semantic values in place were fitted
    over every scope, while those values still stand: fitted the same way (``corpus_state``'s
    method, pieces and tags), on nearly these scopes (``lexical_fit_holds``, the same share: one
    off-topic question's best over a thousand scopes, or a quantile of them, is not moved by a
    bundle or two); None to fit them all again."""
    fit, sem = previous.get("corpus_fit"), previous.get("semantic")
    if not isinstance(fit, dict) or not isinstance(fit.get("scopes"), dict) \
            or any(fit.get(k) != now[k] for k in ("method", "pieces", "tags")) \
            or not isinstance(sem, dict) or not isinstance(sem.get("models"), dict) or sem.get("problems") \
            or set(sem["models"]) != set(now["tags"]) - {""} or not isinstance(previous.get("multilingual"), dict):
        return None
    if not lexical_fit_holds(fit["scopes"], now["scopes"], share):
        return None
    return [s for s in sorted(set(fit["scopes"]) | set(now["scopes"])) if fit["scopes"].get(s) != now["scopes"].get(s)]


def kept_semantic(layout: Layout, previous: Mapping, moved: Sequence[str], names: Sequence[str],
                  load_encoder: Callable | None) -> dict | None:
    """The semantic values in place (``previous``, calibration.json's "semantic") with the ``moved``
    scopes' own values (floor, background) taken from their pieces now and the gone ones left out;
    the corpus-level values (route floors, z floors, window chance) as they were. None when a
    moved scope's piece cannot be had (an encoder that does not load): fit everything again."""
    from loci.query import semantic
    from loci_pipeline.calibration_pieces import Pieces

    present = set(names)
    pieces = Pieces(layout, [s for s in moved if s in present], piece_signature())
    out = {"models": {}}
    try:
        for model, entry in previous["models"].items():
            per = model_pieces(layout, pieces, model, evalgen.UNANSWERABLE_QUESTIONS,
                               load_encoder or semantic.load_encoder)
            out["models"][model] = patched_model(entry, per, moved, names)
    except Exception:  # EncoderUnavailable, or a model only a path could name
        return None
    pieces.save()
    return out


def patched_model(entry: Mapping, per: Mapping[str, Mapping], moved: Sequence[str], names: Sequence[str]) -> dict:
    """One model's values in place (``entry``) with each ``moved`` scope's floor and background
    from its piece now (``per``; absent: it has no vectors of this width any more), in the
    index's order (``names``): a scope gone from it is left out."""
    moved = set(moved)
    fresh = {"floors": {s: p["floor"] for s, p in per.items()},
             "background": background_from({s: p["null"] for s, p in per.items() if p.get("null") is not None})}
    out = dict(entry)
    for key, new in fresh.items():
        old = entry.get(key) or {}
        merged = {s: held[s] for s in names if s in (held := new if s in moved else old)}
        if merged or key in entry:
            out[key] = merged
    return out


def previous_calibration(layout: Layout) -> dict:
    """The calibration in place, or {} (none, or one that cannot be read)."""
    from loci.query.calibration import CalibrationError, read_calibration

    try:
        return read_calibration(layout) or {}
    except CalibrationError:
        return {}


# --- whether the calibration in place still fits ------------------------------------------

def vector_files_state(layout: Layout) -> str:
    """The vectors a fit reads, as a digest of file stats: the model the queries use and every
    vector matrix under the home (any model's, summaries included; the multilingual stores)."""
    import hashlib

    from loci.kernel.config import read_embed_config

    cfg = read_embed_config(layout)
    if cfg is not None:
        model = cfg.get("model_id")
    else:   # lost: the model its vectors still hold (they did not move; `loci update` writes it again)
        from loci_pipeline.home_steps import lost_embed_model

        model = lost_embed_model(layout)
    digest = hashlib.sha256(str(model).encode())
    for folder in (layout.vectors_root, layout.multilingual_root):   # every model's, and the multilingual stores
        for path in sorted(folder.rglob("*.npy")) if folder.is_dir() else ():
            st = path.stat()
            digest.update(f"{path.relative_to(layout.home)}:{st.st_mtime_ns}:{st.st_size};".encode())
    return digest.hexdigest()[:16]


def fitted_from(layout: Layout, method: str | None = None) -> dict:
    """What a fit reads besides the index (whose ``written_at`` calibration.json keeps as
    ``index_written_at``): how this loci fits (``method_signature``) and the vectors (``vector_files_state``)."""
    return {"method": method or method_signature(), "vectors": vector_files_state(layout)}


STALE_INDEX = "the index changed since this fit"
STALE_VECTORS = "the vectors changed since this fit"
STALE_METHOD = "this loci fits another way than the one that made it"


def calibration_stale(layout: Layout, data: Mapping | None = None, manifest: Mapping | None = None) -> str | None:
    """Why the calibration in place no longer fits the home as it is, None while it does: the one
    test the calibrate step (its up-to-date check) and `loci doctor` both make, so that doctor
    asks for `loci calibrate` exactly when it would fit again. ``data`` and ``manifest``: the
    calibration and the index, when the caller has read them."""
    from loci.kernel.errors import StoreError
    from loci.query.calibration import CalibrationError, read_calibration
    from loci.query.store import read_manifest

    try:
        data = data if data is not None else read_calibration(layout)
    except CalibrationError as exc:
        return str(exc)
    if data is None:
        return "not calibrated"
    try:
        manifest = manifest if manifest is not None else read_manifest(layout)
    except StoreError as exc:
        return str(exc)
    if data.get("index_written_at") != manifest.get("written_at"):
        return STALE_INDEX
    recorded = data.get("fitted_from") if isinstance(data.get("fitted_from"), dict) else {}
    now = fitted_from(layout)
    if recorded.get("method") != now["method"]:
        return STALE_METHOD
    return STALE_VECTORS if recorded.get("vectors") != now["vectors"] else None


def standing(layout: Layout, data: Mapping) -> dict:
    """How the calibration in place stands against the home now (what ``render`` shows of it):
    how many scopes moved since its words' fit, and why it is stale (None: it is not)."""
    from loci.kernel.errors import StoreError
    from loci.query.store import indexed_metas, read_manifest

    try:
        manifest = read_manifest(layout)
    except StoreError:
        manifest = {}
    words = data.get("lexical") or {}
    try:
        digests = scope_digests(indexed_metas(layout)) if manifest else {}
    except StoreError:
        digests = {}
    moved = moved_scopes(words["scopes"], digests) if isinstance(words.get("scopes"), dict) else None
    return {"moved": moved, "stale": calibration_stale(layout, data, manifest or None)}


def opinion_inputs(session, names: Sequence[str], questions: Sequence[str], applied: Mapping) -> tuple[list, list]:
    """(per off-topic question the scopes its words chose or pointed at, as the live route with the
    fitted words' params does; the scopes a second opinion may measure: not identical copies)."""
    from loci.query.ask import judged_scopes, route_question, shadowed

    session.params = replace(DEFAULT_PARAMS, **applied)
    judged = [judged_scopes(route_question(session, q, fast=True)) for q in questions]
    hidden = shadowed(session)
    return judged, [s for s in names if s not in hidden]


def scope_digests(metas: Mapping[str, Mapping]) -> dict[str, str]:
    """Each scope of the index and what it was built from (its content fingerprint), of its meta as
    the merge recorded it (``loci.query.store.indexed_metas``)."""
    return {name: str(entry.get("fingerprint") or entry.get("built_at")) for name, entry in metas.items()}


def moved_scopes(fitted: Mapping[str, str], current: Mapping[str, str]) -> int:
    """Scopes added, changed or gone since ``fitted``."""
    return sum(fitted.get(s) != d for s, d in current.items()) + sum(s not in current for s in fitted)


def lexical_fit_holds(fitted: Mapping[str, str], current: Mapping[str, str], share: float) -> bool:
    """The words' fit still stands: at most ``share`` of the scopes it was fitted on moved.

    The evidence floor is one number for the whole corpus, fitted on a few questions per scope;
    a bundle or two of a thousand cannot move it by more than the fit's own noise, while the
    fit costs a route of every generated question through the whole index (~40 s at 1,000
    scopes). In a small corpus one scope is a large share, and every change fits again."""
    return bool(fitted) and moved_scopes(fitted, current) <= share * len(fitted)


def kept_words(previous: Mapping, scopes: Mapping[str, str], manifest: Mapping, method: str) -> dict | None:
    """The words' fit of the calibration in place (``previous``), when it was fitted the same way
    on nearly these scopes (``lexical_fit_holds``) by ``method``; None to fit again."""
    words = previous.get("lexical")
    if not isinstance(words, dict) or not isinstance(words.get("scopes"), dict) \
            or words.get("method") != method or words.get("tokenizer") != manifest.get("tokenizer") \
            or not isinstance(previous.get("fits"), dict) or not isinstance(previous.get("gate_accuracy"), dict):
        return None
    if not lexical_fit_holds(words["scopes"], scopes, DEFAULT_PARAMS.calibration_refit_share):
        return None
    return {"params": {k: v for k, v in previous["params"].items() if k in APPLIED},
            "fits": previous["fits"], "gate_accuracy": previous["gate_accuracy"],
            "lexical": strip_moved(words)}


def fit_words(session, scopes: Mapping[str, str], manifest: Mapping, seed: int, method: str) -> dict:
    """The evidence floor (and ``concentrated_min_evidence``, reported) fitted on questions
    generated from the index's words, at most ``calibration_max_routable`` routable ones."""
    from loci.query.ask import shadowed

    session.keep_full_index = True   # every word's holders: the questions are generated from them
    index = session.routing_for("")
    aliases = session.aliases()
    context = Context(shadowed=shadowed(session))
    questions = evalgen.generate(index, aliases, DEFAULT_PARAMS, seed=seed, shadowed=context.shadowed)
    routable, unroutable = evalgen.calibration_questions(questions)
    routable = bounded(routable, DEFAULT_PARAMS.calibration_max_routable, seed)
    samples = measure([*routable, *unroutable], index, aliases, DEFAULT_PARAMS, context)
    floor = fit_threshold(samples, DEFAULT_PARAMS, "evidence_floor")
    conc = fit_threshold(samples, replace(DEFAULT_PARAMS, evidence_floor=floor.value),
                         "concentrated_min_evidence")
    applied = {f.name: f.value for f in (floor, conc) if f.name in APPLIED}
    fitted = replace(DEFAULT_PARAMS, **applied)
    return {"params": applied,
            "fits": {f.name: asdict(f) for f in (floor, conc)},
            "gate_accuracy": {"default": round(gate_accuracy(samples, DEFAULT_PARAMS), 4),
                              "fitted": round(gate_accuracy(samples, fitted), 4)},
            "lexical": {"scopes": dict(scopes), "method": method,
                        "tokenizer": manifest.get("tokenizer"), "fitted_at": time.time()}}


def bounded(items: Sequence, cap: int, seed: int = 0) -> list:
    """At most ``cap`` of ``items``, the same ones for the same seed, in their order."""
    if len(items) <= cap:
        return list(items)
    keep = set(random.Random(f"{seed}:bounded").sample(range(len(items)), cap))
    return [x for i, x in enumerate(items) if i in keep]


def render(data: Mapping, now: Mapping | None = None) -> list[str]:
    """Plain-text report of a calibration (fresh, or read back for ``--show`` with ``now``, its
    ``standing`` against the home as it is)."""
    fits = data.get("fits", {})
    floor = fits.get("evidence_floor", {})
    conc = fits.get("concentrated_min_evidence", {})
    lines = [
        f"evidence floor      {floor.get('value', '?')}   (shipped default {floor.get('default', '?')})",
        f"samples             {floor.get('routable', 0)} routable + {floor.get('unroutable', 0)} "
        f"unroutable, generated from your scopes (no labelling)",
        f"accuracy            {100 * float(floor.get('accuracy', 0.0)):.1f}% of those samples decided right "
        f"by the floor alone",
    ]
    if floor.get("note"):
        lines.append(f"                    {floor['note']}")
    if conc and "concentrated_min_evidence" not in data.get("params", {}):
        lines.append(f"concentrated token  {conc.get('default', '?')} kept (best cut here {conc.get('best_cut', '?')}, "
                     f"reported only: generated questions have no one-symbol questions)")
    elif conc:
        lines.append(f"concentrated token  {conc.get('value', '?')}   (shipped default {conc.get('default', '?')})"
                     + (f"; {conc['note']}" if conc.get("note") else ""))
    acc = data.get("gate_accuracy", {})
    if acc:
        lines.append(f"all gates           {100 * acc.get('default', 0):.1f}% with the defaults, "
                     f"{100 * acc.get('fitted', 0):.1f}% fitted")
    words = data.get("lexical") or {}
    if isinstance(words.get("scopes"), dict):
        moved = words.get("moved", 0) if now is None or now.get("moved") is None else now["moved"]
        lines.append(f"fitted on           {len(words['scopes'])} scopes; {moved} of "
                     f"{data.get('scopes', '?')} scopes changed since (the words' fit is done again past "
                     f"{100 * DEFAULT_PARAMS.calibration_refit_share:.0f}% of them)")
    fit = data.get("corpus_fit") or {}
    if isinstance(fit.get("scopes"), dict) and "models" in data.get("semantic", {}):
        lines.append(f"semantic values     fitted over {len(fit['scopes'])} scopes; {fit.get('moved', 0)} changed since "
                     f"(only their own floors are read again until more than "
                     f"{100 * DEFAULT_PARAMS.calibration_refit_share:.0f}% have)")
    sem = data.get("semantic", {})
    if "skipped" in sem:
        lines.append(f"semantic floor      skipped: {sem['skipped']}")
    for model, info in sorted(sem.get("models", {}).items()):
        floors = info.get("floors", {})
        if floors:
            vals = sorted(floors.values())
            lines.append(f"semantic floor      {model}: {len(floors)} scope(s), {vals[0]:.3f} to {vals[-1]:.3f}")
            route = info.get("route", {})
            if route:
                lines.append(f"second opinion      {model}: adds a scope above {route['semantic_add_floor']:.3f}, "
                             f"answers an abstention above {route['semantic_rescue_floor']:.3f}, "
                             f"vetoes a vocabulary route below {route.get('semantic_veto_floor', 0):.3f} "
                             f"(off-topic questions: median {route.get('null_median_affinity', 0):.3f}, "
                             f"{100 * NULL_TOP:.0f}th percentile {route['null_best_affinity']:.3f})")
            if "semantic_z_floor" in route:
                lines.append(f"background          {model}: {len(info.get('background', {}))} scope(s); a question "
                             f"without evidence is on-topic {route['semantic_z_floor']:.2f} spreads above one, "
                             f"a vocabulary route near nothing below {route.get('semantic_z_veto', 0):.2f}")
        else:
            lines.append(f"semantic floor      {model}: no scope has vectors that match the model")
    for problem in sem.get("problems", []):
        lines.append(f"                    skipped {problem}")
    foreign = data.get("multilingual", {})
    if "multilingual_route_floor" in foreign:
        lines.append(f"other languages     a question not in English routes by meaning above "
                     f"{foreign['multilingual_route_floor']:.3f} ({foreign['questions']} off-topic questions in "
                     f"other languages: {100 * NULL_TOP:.0f}th percentile {foreign['null_best_affinity']:.3f})")
    elif foreign.get("skipped"):
        lines.append(f"other languages     skipped: {foreign['skipped']}")
    if now is not None and now.get("stale"):
        lines += ["", f"! stale: {now['stale']}; `loci calibrate` fits it again"]
    if floor.get("overlap"):
        lines += ["",
                  f"! warning: the two bands overlap (routable from {floor.get('routable_min', 0):.2f}, "
                  f"unroutable up to {floor.get('unroutable_max', 0):.2f}).",
                  "  No floor can split them cleanly: your projects share vocabulary, so asking from",
                  "  inside a project (or with --scope) matters more than the floor does."]
    return lines


# what computes a scope's piece (``piece_signature``), bound once at import
_PIECE_FUNCTIONS = (semantic_piece, scope_passages, window_lifts, near_top, leave_one_out_z, multilingual_floor)
