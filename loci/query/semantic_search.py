"""The semantic side of `ask`: a question vector against one scope's stored chunk vectors.

Used only when `loci embed` has run and `--fast` is not given; numpy and the
encoder are imported here and nowhere else on the query path.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

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
    # question -> vector; scope -> ScopeVectors, (labels, StoredRows); (scope, question) -> every
    # stored row's cosine: caches of one budget
    _qvec: Any = field(default=None, init=False, repr=False)
    _vectors: Any = field(default=None, init=False, repr=False)
    _labels: Any = field(default=None, init=False, repr=False)
    _cosines: Any = field(default=None, init=False, repr=False)
    _summary: Any = None
    _summary_scores: Any = field(default=None, init=False, repr=False)   # (question, its first-pass scores)
    lexical: Any = None    # scope -> its LexicalIndex, the session's own (one connection per scope)
    budget: Any = None   # the ByteBudget its caches share (the session's; None: one of Params.engine_cache_bytes)
    prefetch: Any = None   # (scopes, roles) -> None: the session's fetch of mapped scopes' stores, several at once
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
        self._qvec, self._vectors, self._labels, self._cosines = (self.budget.view() for _ in range(4))

    def qvec(self, question: str):
        return self._qvec.fetch(question, lambda: self.encoder.encode([question])[0])

    def vectors(self, scope: str, lex=None) -> "ScopeVectors | None":
        """The scope's stored chunk vectors, read once for the route and the search (None when it
        has none); ``lex``: its LexicalIndex when the caller has it open."""
        def read():
            return scope_vectors(self.layout, self.model_id, scope, self._query_file(scope, lex))

        return self._vectors.fetch(scope, read)

    def _query_file(self, scope: str, lex=None):
        """How ``scope_vectors`` opens the scope's query file if it must: ``lex`` when the caller
        has it open, else the session's own (None: ``scope_vectors`` opens it)."""
        if lex is not None:
            return lambda: lex
        return (lambda: self.lexical(scope)) if self.lexical is not None else None

    def cosines(self, scope: str, vectors: "ScopeVectors", question: str):
        """The question's cosine to every stored row of the scope: the route's affinity and the
        search of the same question read them once."""
        return self._cosines.fetch((scope, question), lambda: vectors.stored.cosines(self.qvec(question)))

    def scores(self, scope: str, lex, question: str, also=()) -> dict[int, float] | None:
        """Cosine of the question against the scope's chunks: the best TOP_SEMANTIC of them, and
        every row of ``also`` (the lexical rankers' candidates), so a passage the words found
        keeps its closeness in meaning instead of reading as unrelated when it is 21st."""
        import numpy as np

        vectors = self.vectors(scope, lex)
        if vectors is None:
            return None
        passages = vectors.passages(lex.hashes, self.window_chance)
        if not len(passages):
            return None
        cos = passages.scores(None, self.cosines(scope, vectors, question))
        top = np.argsort(-cos, kind="stable")[:TOP_SEMANTIC]
        out = {int(i): float(cos[i]) for i in top if cos[i] > 0}
        rows = np.fromiter((i for i in also if i not in out), dtype=np.int64)
        rows = rows[(rows >= 0) & (rows < len(cos))]
        rows = rows[cos[rows] > 0]
        out.update(zip(rows.tolist(), cos[rows].tolist()))
        return out

    def _affinity(self, question: str, scope: str, k: int, keep: bool) -> float | None:
        """The question's affinity to one scope (None: no usable vectors). With ``keep`` the
        scope's vectors and cosines stay for the next question and the search; a one-shot's
        route reads them once."""
        from loci.query.semantic import affinity

        if keep:
            vectors = self.vectors(scope)
        else:
            vectors = scope_vectors(self.layout, self.model_id, scope, self._query_file(scope))
        if vectors is None or vectors.stored.dim != self.encoder.dim:
            return None
        if keep:   # the search of the same question reads every row's cosine
            return affinity(self.cosines(scope, vectors, question)[vectors.affine], k)
        return affinity(vectors.affine_cosines(self.qvec(question)), k)

    def affinities(self, question: str, scopes, k: int, *, include=(), shortlist: int | None = None,
                   keep: bool = True) -> dict[str, float]:
        """Each scope's closeness to the question: the mean cosine of its ``k`` nearest chunks.

        With ``shortlist``, a first pass over the merged per-scope summaries keeps only that many
        scopes, plus ``include`` (the route's own choice, which the second opinion must judge);
        only their vectors are read. ``keep`` holds each matrix read for the next question (a
        long-lived session); without it a one-shot reads the stored rows once."""
        scopes = list(scopes)
        if shortlist is not None:
            scopes = self.first_pass(question, scopes, shortlist, include)
        if self.prefetch is not None:   # a pulled map's shortlisted vectors come together, not one by one
            from loci.kernel.territory import READ_ROLES

            self.prefetch(scopes, READ_ROLES)
        out = {}
        for scope in scopes:
            got = self._affinity(question, scope, k, keep=keep)
            if got is not None:
                out[scope] = got
        return out

    def first_pass(self, question: str, scopes, n: int, include=()) -> list[str]:
        """The ``n`` scopes whose merged summaries come closest to the question, plus ``include``;
        every scope of ``scopes`` when there are no more than ``n`` or no summary."""
        scopes = list(scopes)
        return self._shortlist(question, scopes, n, include) if len(scopes) > n else scopes

    def _shortlist(self, question: str, scopes: list[str], n: int, include) -> list[str]:
        from loci.query.semantic import load_summary, shortlist, summary_scores

        if self._summary is None:
            self._summary = load_summary(self.layout, self.model_id) or False
        if not self._summary:
            return scopes
        cached = self._summary_scores   # one first pass a question, however many cuts are read of it
        if cached is None or cached[0] != question:
            cached = self._summary_scores = (question, summary_scores(self._summary, self.qvec(question)))
        chosen = shortlist(self._summary, None, scopes, n, scores=cached[1])
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
        from loci.query.semantic import StoredRows, load_label_vectors, nearest_labels

        def read():
            if self.fetch_store is not None:   # a pulled map's labels come when first read
                self.fetch_store(scope, "label_vectors")
            labels, matrix = load_label_vectors(self.layout, self.model_id, scope, unit=False)
            return labels, StoredRows(matrix)

        labels, vectors = self._labels.fetch(scope, read)
        if not labels:
            return []
        return [lab for lab, cos in nearest_labels(self.qvec(question), vectors, labels, LABELS_FOR_EXPANSION)
                if cos >= self.floor(scope)]

    def floor(self, scope: str) -> float:
        return self.floors.get(scope, DEFAULT_SEMANTIC_FLOOR)


class ScopeVectors:
    """One scope's stored chunk vectors (``StoredRows``, as stored), read once for both readers:
    the route's affinity, over every chunk's own row but translated copies' (``affine``), and
    search's passages, built at its first search.

    A translation repeats its original in another language; for a question in that language
    its vectors would be closest whatever the question asks (the encoder is English), so a
    project with translated READMEs would pull every foreign question (docs/decisions/generalisation.md).
    `loci calibrate` measures the off-topic background on the same rows."""

    def __init__(self, keys: list[str], stored, copies=frozenset()):
        from loci.query.semantic import own_row_index

        self._keys = "\n".join(keys)   # one string, not a str object a key (~60 bytes more each)
        self.stored = stored
        self.affine = own_row_index(keys, copies)
        self._passages = None

    def affine_cosines(self, query_vec) -> "np.ndarray":
        """The query's cosine to the ``affine`` rows alone (a one-shot route reads no window)."""
        from loci.query.semantic import StoredRows

        rows, a = self.stored.matrix, self.affine
        if not len(a):
            return StoredRows(rows[:0]).cosines(query_vec)
        contiguous = int(a[-1]) - int(a[0]) + 1 == len(a)   # as a build writes them: a view, no copy
        return StoredRows(rows[int(a[0]):int(a[-1]) + 1] if contiguous else rows[a]).cosines(query_vec)

    @property
    def keys(self) -> list[str]:
        return self._keys.split("\n") if self._keys else []

    def passages(self, chunk_hashes: Callable[[], list[str]], chance=()):
        """The scope's ``Passages`` (its chunks' rows and windows in this store), made once: its
        chunks' hashes (``chunk_hashes()``, a query of its index) are read only then."""
        from loci.query.semantic import Passages

        if self._passages is None:
            self._passages = Passages(chunk_hashes(), self.keys, self.stored, chance)
        return self._passages

    @property
    def nbytes(self) -> int:
        return int(self.stored.nbytes + self.affine.nbytes + len(self._keys)
                   + (self._passages.nbytes if self._passages else 0))


def scope_vectors(layout, model_id: str, scope: str, query_file=None) -> ScopeVectors | None:
    """The scope's ``ScopeVectors`` (None when it has none). Its translated copies are those its
    store's manifest names; a store written before they were named asks the scope's query file
    (``query_file()``: its LexicalIndex, opened only then; by default opened here)."""
    from loci.query.lexical import load_lexical
    from loci.query.semantic import StoredRows, load_scope_store

    keys, matrix, copies = load_scope_store(layout, model_id, scope)
    if not keys:
        return None
    if copies is None:
        lex = query_file() if query_file is not None else load_lexical(layout.query_db(scope))
        copies = lex.translated_hashes() if lex is not None else set()
    return ScopeVectors(keys, StoredRows(matrix), copies)
