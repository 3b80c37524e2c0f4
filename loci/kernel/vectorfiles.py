"""Writing a vector store (the matrix, then its manifest) and reading one back from the
Parquet form a bundle carries. Shared by the build side (`loci embed`, a pull) and the query
side (a pulled scope's stores fetched when a question first needs them), so both write the
same files from the same bytes. numpy and pyarrow are imported by whoever imports this.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from loci.kernel.atomic import write_json, write_with
from loci.kernel.vectorstore import VECTOR_DTYPE, VECTOR_SCHEMA, matrix_path, matrix_stamp, meta_path


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
                  dtype: str = VECTOR_DTYPE, encoding: str = "") -> None:
    """One vector store: the matrix (.npy), then its manifest (.json) naming the keys in row
    order, the matrix file it belongs to and how the model was run (``encoding``, when not
    plainly). A reader memory-maps the matrix without pyarrow."""
    stored = quantize(matrix.reshape(len(keys), dim), dtype)
    mpath = matrix_path(path)
    write_with(mpath, lambda tmp: save_npy(tmp, stored))
    write_json(meta_path(path), {"model": model_id, "dim": int(dim), "schema": VECTOR_SCHEMA,
                                 "dtype": str(stored.dtype), "rows": len(keys), "keys": keys,
                                 "matrix": matrix_stamp(mpath), **({"encoding": encoding} if encoding else {})})
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
    flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    matrix = np.asarray(flat, dtype=np.float32).reshape(len(table), dim)
    write_vectors(path, table.column(key_column).to_pylist(), matrix, model, dim,
                  encoding=raw.get(b"loci.encoding", b"").decode())
    return {"model": model, "dim": dim}


def save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as fh:  # a file object: np.save would append ".npy" to a bare path
        np.save(fh, array)


def vector_table_problem(path: Path, key: str, want: dict) -> str | None:
    """How the Parquet vector table ``path`` differs from what ``store_as_parquet`` writes for
    the model and dimension ``want`` names (``{"model", "dim"}``), or None."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path).read()   # not read_table: that imports pyarrow.dataset (0.15 s)
    raw = table.schema.metadata or {}
    model, dim = raw.get(b"loci.model", b"").decode("utf-8", "replace"), raw.get(b"loci.dim", b"").decode()
    if model != want.get("model") or dim != str(want.get("dim")):
        return f"holds vectors of {model[:60] or 'no model'} (dim {dim[:8] or '?'}), not the manifest's " \
               f"{want.get('model')} (dim {want.get('dim')})"
    vtype = table.schema.field("vector").type if "vector" in table.column_names else None
    if key not in table.column_names or table.schema.field(key).type != pa.string():
        return f"has no string column {key!r}"
    if vtype is None or not pa.types.is_fixed_size_list(vtype) or vtype.list_size != want["dim"] \
            or vtype.value_type != pa.float32():
        return f"has no column 'vector' of {want['dim']} float32 values"
    if table.column(key).null_count or table.column("vector").null_count:
        return "has empty rows"
    flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    if not np.isfinite(flat).all():
        return "holds vectors with NaN or infinite values"
    return None
