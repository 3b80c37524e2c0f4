"""The semantic side of `ask`: a question vector against one scope's stored chunk vectors.

Used only when `loci embed` has run and `--fast` is not given; numpy and the
encoder are imported here and nowhere else on the query path.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loci.kernel.config import DEFAULT_PARAMS

DEFAULT_SEMANTIC_FLOOR = 0.5    # cosine; `loci calibrate` fits one per scope
TOP_SEMANTIC = 20               # candidate chunks taken from the vector ranker per scope
LABELS_FOR_EXPANSION = 3


@dataclass
class SemanticSide:
    """Per-process state: the encoder, the question vectors, each scope's vectors."""

    layout: Any
    model: str
    model_id: str
    encoder: Any = None
    floors: dict[str, float] = field(default_factory=dict)
    route_floors: dict[str, float] = field(default_factory=dict)
    background: dict[str, tuple[float, float]] = field(default_factory=dict)   # per scope, off-topic (mean, sd)
    window_chance: tuple = DEFAULT_PARAMS.semantic_window_chance   # what windows win by chance (Passages)
    # question -> vector; scope -> aligned rows, (labels, vectors), unit rows: caches of one budget
    _qvec: Any = field(default=None, init=False, repr=False)
    _vectors: Any = field(default=None, init=False, repr=False)
    _labels: Any = field(default=None, init=False, repr=False)
    _matrix: Any = field(default=None, init=False, repr=False)
    _summary: Any = None
    lexical: Any = None    # scope -> its LexicalIndex, the session's own (one connection per scope)
    budget: Any = None   # the ByteBudget its caches share (the session's; None: one of Params.engine_cache_bytes)
    prefetch: Any = None   # scopes -> None: the session's fetch of mapped scopes' stores, several at once
    fetch_store: Any = None   # (scope, role) -> None: the session's fetch of a store a scope's fetch left remote

    @classmethod
    def open(cls, layout, lexical=None, budget=None, prefetch=None, fetch_store=None) -> "SemanticSide | None":
        """None when no embeddings were built; raises EncoderUnavailable when they cannot be read.
        ``lexical``: the session's scope -> LexicalIndex, so a scope's query file is opened once;
        ``prefetch``: the session's fetch of several scopes' stores at once; ``fetch_store``: of
        one store a scope's fetch left remote (its symbol labels)."""
        from loci.kernel.config import read_embed_config

        cfg = read_embed_config(layout)
        if cfg is None:
            return None
        from loci.query.calibration import route_background, route_floors, semantic_floors, window_chance
        from loci.query.semantic import load_encoder

        model = cfg.get("model", "default")
        side = cls(layout, model, cfg["model_id"], lexical=lexical, budget=budget, prefetch=prefetch,
                   fetch_store=fetch_store)
        # "default" means the default of the loci that built the vectors: load what built them
        side.encoder = load_encoder(cfg["model_id"] if model == "default" else model, layout)
        side.floors = semantic_floors(layout, side.model_id) or {}
        side.route_floors = route_floors(layout, side.model_id)
        side.background = route_background(layout, side.model_id)
        side.window_chance = window_chance(layout, side.model_id) or side.window_chance
        return side

    def __post_init__(self):
        """The caches share one byte budget, least recently used out (``loci.kernel.bytecache``)."""
        from loci.kernel.bytecache import ByteBudget
        from loci.kernel.config import DEFAULT_PARAMS

        if self.budget is None:
            self.budget = ByteBudget(DEFAULT_PARAMS.engine_cache_bytes)
        self._qvec, self._vectors, self._labels, self._matrix = (self.budget.view() for _ in range(4))

    def qvec(self, question: str):
        return self._qvec.fetch(question, lambda: self.encoder.encode([question])[0])

    def scores(self, scope: str, lex, question: str, also=()) -> dict[int, float] | None:
        """Cosine of the question against the scope's chunks: the best TOP_SEMANTIC of them, and
        every row of ``also`` (the lexical rankers' candidates), so a passage the words found
        keeps its closeness in meaning instead of reading as unrelated when it is 21st."""
        import numpy as np

        from loci.query.semantic import Passages, load_vectors

        def read():
            hashes, matrix = load_vectors(self.layout, self.model_id, scope)
            return Passages(lex.hashes(), hashes, matrix, self.window_chance) if hashes else None

        passages = self._vectors.fetch(scope, read)
        if passages is None or not len(passages):
            return None
        cos = passages.scores(self.qvec(question))
        top = np.argsort(-cos, kind="stable")[:TOP_SEMANTIC]
        out = {int(i): float(cos[i]) for i in top if cos[i] > 0}
        rows = np.fromiter((i for i in also if i not in out), dtype=np.int64)
        rows = rows[(rows >= 0) & (rows < len(cos))]
        rows = rows[cos[rows] > 0]
        out.update(zip(rows.tolist(), cos[rows].tolist()))
        return out

    def _affinity(self, question: str, scope: str, k: int, keep: bool) -> float | None:
        """The question's affinity to one scope (None: no usable vectors). With ``keep`` the
        scope's unit rows stay for the next question; a one-shot reads the stored rows once and
        makes them unit a block at a time (``unit_scores``: the same cosines)."""
        from loci.query.semantic import affinity, semantic_scores, unit_scores

        def read(unit: bool):
            lex = self.lexical(scope) if self.lexical is not None else None
            return affinity_matrix(self.layout, self.model_id, scope, unit=unit, lex=lex)

        matrix = self._matrix.fetch(scope, lambda: read(True)) if keep else read(False)
        if matrix.size == 0 or matrix.shape[1] != self.encoder.dim:
            return None
        score = semantic_scores if keep else unit_scores
        return affinity(score(self.qvec(question), matrix), k)

    def affinities(self, question: str, scopes, k: int, *, include=(), shortlist: int | None = None,
                   keep: bool = True) -> dict[str, float]:
        """Each scope's closeness to the question: the mean cosine of its ``k`` nearest chunks.

        With ``shortlist``, a first pass over the merged per-scope summaries keeps only that many
        scopes, plus ``include`` (the route's own choice, which the second opinion must judge);
        only their vectors are read. ``keep`` holds each matrix read for the next question (a
        long-lived session); without it a one-shot reads the stored rows once."""
        scopes = list(scopes)
        if shortlist is not None and len(scopes) > shortlist:
            scopes = self._shortlist(question, scopes, shortlist, include)
        if self.prefetch is not None:   # a pulled map's shortlisted stores come together, not one by one
            self.prefetch(scopes)
        out = {}
        for scope in scopes:
            got = self._affinity(question, scope, k, keep=keep)
            if got is not None:
                out[scope] = got
        return out

    def _shortlist(self, question: str, scopes: list[str], n: int, include) -> list[str]:
        from loci.query.semantic import load_summary, shortlist

        if self._summary is None:
            self._summary = load_summary(self.layout, self.model_id) or False
        if not self._summary:
            return scopes
        chosen = shortlist(self._summary, self.qvec(question), scopes, n)
        return chosen + [s for s in include if s in scopes and s not in chosen]

    def route_params(self, params):
        """``params`` with the second opinion's floors for this model, or None when none are known.

        The shipped floors are cosines of the default transformer; another model's
        cosines live on another scale, so its floors must come from `loci calibrate`.
        """
        from dataclasses import replace

        from loci.query.semantic import TRANSFORMER_ID

        fitted = self.route_floors
        if fitted:
            return replace(params, **fitted)
        return params if self.model_id == TRANSFORMER_ID else None

    def expansion(self, scope: str, question: str) -> list[str]:
        """The scope's symbol labels nearest the question (to widen lexical search)."""
        from loci.query.semantic import load_label_vectors, nearest_labels

        def read():
            if self.fetch_store is not None:   # a pulled map's labels come when first read
                self.fetch_store(scope, "label_vectors")
            return load_label_vectors(self.layout, self.model_id, scope)

        labels, vectors = self._labels.fetch(scope, read)
        if not labels:
            return []
        return [lab for lab, cos in nearest_labels(self.qvec(question), vectors, labels, LABELS_FOR_EXPANSION)
                if cos >= self.floor(scope)]

    def floor(self, scope: str) -> float:
        return self.floors.get(scope, DEFAULT_SEMANTIC_FLOOR)


def affinity_matrix(layout, model_id: str, scope: str, unit: bool = True, lex=None):
    """The scope's chunk vectors a question's affinity is measured on: every chunk's own row (not
    its windows) but translated copies' (float32 unit rows, or as stored with ``unit=False``).

    A translation repeats its original in another language; for a question in that language
    its vectors would be closest whatever the question asks (the encoder is English), so a
    project with translated READMEs would pull every foreign question (docs/decisions/generalisation.md).
    `loci calibrate` measures the off-topic background on the same matrices. ``lex``: the scope's
    LexicalIndex when the caller has it open (else its query file is opened here).
    """
    from loci.query.lexical import load_lexical
    from loci.query.semantic import load_vectors, own_rows

    lex = lex if lex is not None else load_lexical(layout.query_db(scope))
    copies = lex.translated_hashes() if lex is not None else set()
    keys, matrix = load_vectors(layout, model_id, scope, unit)
    return own_rows(keys, matrix, copies)
