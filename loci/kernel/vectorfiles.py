"""Writing a vector store (the matrix, then its manifest) and reading one back from the
Parquet form a bundle carries. Shared by the build side (`loci embed`, a pull) and the query
side (a pulled scope's stores fetched when a question first needs them), so both write the
same files from the same bytes. numpy and pyarrow are imported by whoever imports this.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from loci.kernel.atomic import write_json, write_with
from loci.kernel.vectorstore import VECTOR_DTYPE, VECTOR_SCHEMA, manifest_copies, matrix_path, matrix_stamp, meta_path


def quantize(matrix: np.ndarray, dtype: str = VECTOR_DTYPE) -> np.ndarray:
    """Rows as stored: int8 scaled so each row's largest component is +-127 (the scale is
    dropped: cosines need only the direction), or float16."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if dtype == "float16":
        return matrix.astype(np.float16)
    if dtype != "int8":
        raise ValueError(f"unknown vector dtype {dtype!r}")
    peak = np.abs(matrix).max(axis=1, keepdims=True) if len(matrix) else np.ones((0, 1), np.float32)
    return np.rint(matrix * (127.0 / np.where(peak > 0, peak, 1.0))).astype(np.int8)


def write_vectors(path: Path, keys: list[str], matrix: np.ndarray, model_id: str, dim: int,
                  dtype: str = VECTOR_DTYPE, encoding: str = "", copies: list[str] | None = None) -> None:
    """One vector store: the matrix (.npy), then its manifest (.json) naming the keys in row
    order, the matrix file it belongs to, how the model was run (``encoding``, when not
    plainly) and, for a scope's chunks, which keys are translated copies (``copies``: what a
    route leaves out, known without opening the scope's query file). A reader memory-maps the
    matrix without pyarrow."""
    stored = quantize(matrix.reshape(len(keys), dim), dtype)
    mpath = matrix_path(path)
    write_with(mpath, lambda tmp: save_npy(tmp, stored))
    write_json(meta_path(path), {"model": model_id, "dim": int(dim), "schema": VECTOR_SCHEMA,
                                 "dtype": str(stored.dtype), "rows": len(keys), "keys": keys,
                                 "matrix": matrix_stamp(mpath), **({"encoding": encoding} if encoding else {}),
                                 **({"copies": list(copies)} if copies is not None else {})})
    if path.suffix == ".parquet":
        path.unlink(missing_ok=True)   # the schema-1 store this one replaces
        path.with_suffix(".keys.npy").unlink(missing_ok=True)


def store_from_parquet(parquet: Path, path: Path, key_column: str) -> dict[str, object]:
    """Write the vector store ``path`` from a table ``store_as_parquet`` made; returns its
    model and dim. Raises ValueError/OSError on a table that is not one."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(parquet)
    raw = pf.schema_arrow.metadata or {}
    model, dim = raw[b"loci.model"].decode(), int(raw[b"loci.dim"])
    table = pf.read(columns=[key_column, "vector"])
    _write_table(table, path, key_column, model, dim, raw)
    return {"model": model, "dim": dim}


def store_from_checked_parquet(parquet: Path, path: Path, key: str, want: dict) -> str | None:
    """``vector_table_problem`` and ``store_from_parquet`` from one read of the table: how it
    differs from what the manifest's ``want`` names (nothing written), or None (the store
    written). What a question's fetch of a pulled scope's vectors runs."""
    table, found = _checked_table(parquet, key, want)
    if found is None:
        raw = table.schema.metadata or {}
        _write_table(table, path, key, raw[b"loci.model"].decode(), int(raw[b"loci.dim"]), raw)
    return found


def _write_table(table, path: Path, key_column: str, model: str, dim: int, raw: dict) -> None:
    matrix = np.asarray(flat_vectors(table.column("vector")), dtype=np.float32).reshape(len(table), dim)
    write_vectors(path, table.column(key_column).to_pylist(), matrix, model, dim,
                  encoding=raw.get(b"loci.encoding", b"").decode(), copies=table_copies(raw))


def table_copies(raw: dict) -> list[str] | None:
    """The translated copies a vector table's metadata names (``loci.copies``), None when it names
    none (a bundle made before they were named) or names them unreadably."""
    try:
        return manifest_copies({"copies": json.loads(raw[b"loci.copies"])})
    except (KeyError, ValueError):
        return None


def flat_vectors(column) -> np.ndarray:
    """A fixed-size-list column's values, row after row (``flatten()`` would import
    pyarrow.compute, 30 ms of a question that fetches a scope); its rows have no nulls."""
    arr = column.combine_chunks()
    size = arr.type.list_size
    return arr.values.slice(arr.offset * size, len(arr) * size).to_numpy(zero_copy_only=False)


def save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as fh:  # a file object: np.save would append ".npy" to a bare path
        np.save(fh, array)


def vector_table_problem(path: Path, key: str, want: dict) -> str | None:
    """How the Parquet vector table ``path`` differs from what ``store_as_parquet`` writes for
    the model and dimension ``want`` names (``{"model", "dim"}``), or None."""
    return _checked_table(path, key, want)[1]


def _checked_table(path: Path, key: str, want: dict):
    """(the table's key and vector columns, None), or (None, how it differs from ``want``): its
    schema checked before any row is read, then the rows (no empty row, every value finite)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    schema = pf.schema_arrow
    raw = schema.metadata or {}
    model, dim = raw.get(b"loci.model", b"").decode("utf-8", "replace"), raw.get(b"loci.dim", b"").decode()
    if model != want.get("model") or dim != str(want.get("dim")):
        return None, (f"holds vectors of {model[:60] or 'no model'} (dim {dim[:8] or '?'}), not the manifest's "
                      f"{want.get('model')} (dim {want.get('dim')})")
    names = schema.names
    vtype = schema.field("vector").type if "vector" in names else None
    if key not in names or schema.field(key).type != pa.string():
        return None, f"has no string column {key!r}"
    if vtype is None or not pa.types.is_fixed_size_list(vtype) or vtype.list_size != want["dim"] \
            or vtype.value_type != pa.float32():
        return None, f"has no column 'vector' of {want['dim']} float32 values"
    table = pf.read(columns=[key, "vector"])   # not read_table: that imports pyarrow.dataset (0.15 s)
    if table.column(key).null_count or table.column("vector").null_count:
        return None, "has empty rows"
    if not np.isfinite(flat_vectors(table.column("vector"))).all():
        return None, "holds vectors with NaN or infinite values"
    return table, None
