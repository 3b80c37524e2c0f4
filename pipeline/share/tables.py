"""Every table of a pulled bundle checked against the schema this loci writes, before anything
is built from it: column names and types, values in range, vectors finite and of the
manifest's model and dimension. A table that fails is a BundleError of one line.
"""
from __future__ import annotations

from pathlib import Path

from pipeline.share.bundle import VECTOR_ROLES, BundleError, Manifest


def _schemas() -> dict:
    from pipeline.index import CHUNK_SCHEMA, VOCAB_SCHEMA
    from pipeline.structure_tables import CALL_SCHEMA, SYMBOL_SCHEMA
    from pipeline.uses import REFS_SCHEMA

    return {"chunks": CHUNK_SCHEMA, "vocab": VOCAB_SCHEMA, "symbols": SYMBOL_SCHEMA,
            "calls": CALL_SCHEMA, "refs": REFS_SCHEMA}


# columns every row must fill, and the only values some may take
_NOT_NULL = {"chunks": ("id", "kind", "path", "line", "text", "hash"), "vocab": ("token", "weight"),
             "symbols": ("id", "label", "kind", "path", "line"), "calls": ("src", "dst", "line"),
             "refs": ("name", "role", "line")}


def _allowed() -> dict[tuple[str, str], frozenset]:
    from pipeline.chunks import CHUNK_KINDS
    from pipeline.paths import PATH_KINDS
    from pipeline.structure_tables import SYMBOL_KINDS

    return {("chunks", "kind"): frozenset(CHUNK_KINDS), ("chunks", "path_kind"): frozenset(PATH_KINDS),
            ("symbols", "kind"): frozenset(SYMBOL_KINDS), ("symbols", "path_kind"): frozenset(PATH_KINDS)}


def _columns(table, expected) -> str | None:
    """How the table's columns differ from ``expected``'s (names, then types), or None."""
    got = {f.name: f.type for f in table.schema}
    for field in expected:
        if field.name not in got:
            return f"has no column {field.name!r}"
        if got[field.name] != field.type:
            return f"has column {field.name!r} of type {got[field.name]}, not {field.type}"
    extra = sorted(set(got) - set(expected.names))
    return f"has an unknown column {extra[0][:40]!r}" if extra else None


def _values(role: str, table) -> str | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    for name in _NOT_NULL.get(role, ()):
        if table.column(name).null_count:
            return f"has empty values in column {name!r}"
    for name in ("line", "id"):
        if name in table.column_names and pa.types.is_integer(table.schema.field(name).type) \
                and len(table) and pc.min(table.column(name)).as_py() < 0:
            return f"has a negative {name!r}"
    if role == "vocab" and len(table):
        weight = table.column("weight")
        if not pc.all(pc.is_finite(weight)).as_py() or pc.min(weight).as_py() < 0:
            return "has a weight that is negative or not a number"
    for (owner, name), allowed in _allowed().items():
        if owner == role and len(table):
            values = set(table.column(name).unique().to_pylist()) - {None}
            if not values <= allowed:
                return f"has {name} {sorted(values - allowed)[0][:40]!r}, not one of {', '.join(sorted(allowed))}"
    return None


def _vectors(role: str, path: Path, manifest: Manifest) -> str | None:
    """A vector table as ``pipeline.embed.store_as_parquet`` writes it, of the manifest's model."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    key = "hash" if role == "vectors" else "label"
    table = pq.read_table(path)
    raw = table.schema.metadata or {}
    want = manifest.embedding or {}
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


def check_tables(staged: dict[str, Path], manifest: Manifest, where: str) -> dict:
    """Read every staged table whole and refuse the bundle at the first that is not what this
    loci writes (a truncated file fails here even when its checksum was made to match); returns
    the tables read (the vector tables aside), for what is built from them next."""
    import pyarrow.parquet as pq

    schemas, tables = _schemas(), {}
    for role, path in sorted(staged.items()):
        try:
            if role in VECTOR_ROLES:
                found = _vectors(role, path, manifest)
            else:
                table = tables[role] = pq.read_table(path)
                found = _columns(table, schemas[role]) or _values(role, table)
        except BundleError:
            raise
        except Exception as exc:  # a damaged Parquet file: pyarrow raises several kinds
            first = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            found = f"cannot be read ({first})"
        if found:
            raise BundleError(f"{where}/{path.name} {found}; nothing was pulled, re-export the bundle")
    return tables
