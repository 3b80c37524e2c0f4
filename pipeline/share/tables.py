"""Every table of a pulled bundle checked against the schema this loci writes, before anything
is built from it: column names and types, values in range, vectors finite and of the
manifest's model and dimension. A table that fails is a BundleError of one line.
"""
from __future__ import annotations

from pathlib import Path

from loci_pipeline.share.bundle import VECTOR_KEYS, VECTOR_ROLES, BundleError, Manifest


def _schema(role: str):
    """The schema this loci writes for ``role``; only that role's module is imported (a map pull
    checks vocabularies and references alone: the chunk and structure modules cost it 0.4 s)."""
    if role in ("chunks", "vocab"):
        from loci_pipeline.table_schemas import CHUNK_SCHEMA, VOCAB_SCHEMA

        return CHUNK_SCHEMA if role == "chunks" else VOCAB_SCHEMA
    if role in ("symbols", "calls"):
        from loci_pipeline.structure_tables import CALL_SCHEMA, SYMBOL_SCHEMA

        return SYMBOL_SCHEMA if role == "symbols" else CALL_SCHEMA
    from loci_pipeline.uses import REFS_SCHEMA

    return {"refs": REFS_SCHEMA}[role]


# columns every row must fill, and the only values some may take
_NOT_NULL = {"chunks": ("id", "kind", "path", "line", "text", "hash"), "vocab": ("token", "weight"),
             "symbols": ("id", "label", "kind", "path", "line"), "calls": ("src", "dst", "line"),
             "refs": ("name", "role", "line")}


def _allowed(role: str) -> dict[str, frozenset]:
    """The columns of ``role`` that may take only some values, and those values."""
    if role not in ("chunks", "symbols"):
        return {}
    from loci_pipeline.paths import PATH_KINDS

    if role == "chunks":
        from loci_pipeline.chunks import CHUNK_KINDS

        return {"kind": frozenset(CHUNK_KINDS), "path_kind": frozenset(PATH_KINDS)}
    from loci_pipeline.structure_tables import SYMBOL_KINDS

    return {"kind": frozenset(SYMBOL_KINDS), "path_kind": frozenset(PATH_KINDS)}


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
    """The first value of ``table`` this loci would not write. Numbers are checked with numpy, which
    pyarrow has loaded already (``pyarrow.compute`` is 0.15 s to import on a pull's path)."""
    import numpy as np
    import pyarrow as pa

    for name in _NOT_NULL.get(role, ()):
        if table.column(name).null_count:
            return f"has empty values in column {name!r}"
    for name in ("line", "id"):
        if name in table.column_names and pa.types.is_integer(table.schema.field(name).type) \
                and len(table) and table.column(name).to_numpy().min() < 0:   # no nulls: _NOT_NULL has both
            return f"has a negative {name!r}"
    if role == "vocab" and len(table):
        weight = table.column("weight").to_numpy()
        if not np.isfinite(weight).all() or weight.min() < 0:
            return "has a weight that is negative or not a number"
    for name, allowed in _allowed(role).items():
        if len(table):
            values = set(table.column(name).unique().to_pylist()) - {None}
            if not values <= allowed:
                return f"has {name} {sorted(values - allowed)[0][:40]!r}, not one of {', '.join(sorted(allowed))}"
    return None


def _vectors(role: str, path: Path, manifest: Manifest) -> str | None:
    """A vector table as ``loci_pipeline.embed.store_as_parquet`` writes it, of the manifest's model."""
    from loci.kernel.vectorfiles import vector_table_problem

    return vector_table_problem(path, VECTOR_KEYS[role], manifest.model_of(role))


def check_tables(staged: dict[str, Path], manifest: Manifest, where: str) -> dict:
    """Read every staged table whole and refuse the bundle at the first that is not what this
    loci writes (a truncated file fails here even when its checksum was made to match); returns
    the tables read (the vector tables aside), for what is built from them next."""
    import pyarrow.parquet as pq

    tables = {}
    for role, path in sorted(staged.items()):
        try:
            if role in VECTOR_ROLES:
                found = _vectors(role, path, manifest)
            else:   # not pq.read_table: that imports pyarrow.dataset (0.35 s on a pull's path)
                table = tables[role] = pq.ParquetFile(path).read()
                found = _columns(table, _schema(role)) or _values(role, table)
        except BundleError:
            raise
        except Exception as exc:  # a damaged Parquet file: pyarrow raises several kinds
            first = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            found = f"cannot be read ({first})"
        if found:
            raise BundleError(f"{where}/{path.name} {found}; nothing was pulled, re-export the bundle")
    return tables


def check_summary(path: Path, model: dict, where: str) -> None:
    """A scope's summary as ``loci_pipeline.embed.write_scope_summary`` writes it: float16 rows of the
    dimension of the ``model`` its store is of, as the manifest names it (``Manifest.model_of``), finite."""
    import numpy as np

    try:
        rows = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise BundleError(f"{where}/{path.name} cannot be read ({str(exc)[:80]}); re-export the bundle") from None
    dim = model.get("dim")
    if rows.dtype != np.float16 or rows.ndim != 2 or rows.shape[1] != dim or not np.isfinite(rows).all():
        raise BundleError(f"{where}/{path.name} is not a summary of {dim}-wide float16 rows; re-export the bundle")
