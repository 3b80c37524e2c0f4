"""Cross-scope references: which registered project uses which, with citations.

Each index run writes ``refs/<scope>.parquet``: the names the scope is known by
(``provides``) and the imports and declared dependencies it has (``uses``),
each with a path and line. The routing merge keeps, in ``uses.parquet``, every
name a scope provides and every use of a name another scope provides; ``loci
uses`` joins the two when it reads (``loci.query.uses.edges``). The file grows
with the references, not with their edges: a name provided by a hundred forks
is a hundred rows, not a hundred times its uses.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from loci.kernel.atomic import write_with
from loci.kernel.config import Layout
from loci_pipeline.paths import path_kind
from loci_pipeline.dependencies import declared
from loci_pipeline.references import normalise, provided

REFS_SCHEMA = pa.schema([("name", pa.string()), ("role", pa.string()), ("how", pa.string()),
                         ("path", pa.string()), ("line", pa.int32())])
USES_SCHEMA = pa.schema([("scope", pa.string()), ("role", pa.string()), ("norm", pa.string()),
                         ("target", pa.string()), ("how", pa.string()), ("path", pa.string()),
                         ("line", pa.int32()), ("rank", pa.int8())])
HOW_ORDER = {"dependency": 0, "import": 1}
KIND_ORDER = {"source": 0, "docs": 1, "example": 2, "test": 3}


@dataclass(frozen=True)
class Ref:
    name: str
    role: str      # provides | uses
    how: str       # manifest | package | dependency | import
    path: str
    line: int


def scope_refs(root: Path, relpaths: Sequence[str], imported: Iterable[tuple[str, str, int]],
               deps: Sequence[str] | None = None) -> list[Ref]:
    """Everything one scope provides and references (``deps``: its declared dependencies, if read)."""
    refs = [Ref(name, "provides", "manifest" if path == "manifest" else "package", path, line)
            for name, path, line in provided(root, relpaths)]
    refs += [Ref(name, "uses", "dependency", path, line) for name, path, line in declared(root, relpaths, deps)]
    refs += [Ref(name, "uses", "import", path, line) for name, path, line in imported]
    return refs


def write_refs(layout: Layout, scope: str, refs: Sequence[Ref]) -> None:
    table = pa.table({"name": [r.name for r in refs], "role": [r.role for r in refs],
                      "how": [r.how for r in refs], "path": [r.path for r in refs],
                      "line": [int(r.line) for r in refs]}, schema=REFS_SCHEMA)
    path = layout.refs(scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_with(path, lambda tmp: pq.write_table(table, tmp))


def _rank(r: Ref) -> int:
    """Where a citation comes within its pair: dependencies, then imports; source files first."""
    return HOW_ORDER.get(r.how, 2) * 5 + KIND_ORDER.get(path_kind(r.path), 4)


def linked_refs(refs: Mapping[str, Sequence[Ref]]) -> list[tuple]:
    """The rows of ``uses.parquet`` (USES_SCHEMA): every name a scope provides, and every use of a
    name some other scope provides. Linear in the rows, whatever the number of providers."""
    owners: dict[str, set[str]] = {}
    for scope, rows in refs.items():
        for r in rows:
            if r.role == "provides":
                owners.setdefault(normalise(r.name), set()).add(scope)
    out = set()
    for scope, rows in refs.items():
        for r in rows:
            norm = normalise(r.name)
            who = owners.get(norm)
            if who is None or r.role not in ("provides", "uses") or (r.role == "uses" and scope in who):
                continue   # a name this scope provides itself is its own code, whoever else provides it
            out.add((scope, r.role, norm, r.name, r.how, r.path, int(r.line), _rank(r)))
    return sorted(out)


def find_uses(refs: Mapping[str, Sequence[Ref]]) -> list[tuple[str, str, str, str, str, int]]:
    """(from, to, target, how, path, line) for every use of one scope's name by another scope."""
    from loci.query.uses import edges

    return edges(linked_refs(refs))


def read_refs(layout: Layout, scope: str) -> list[Ref]:
    try:
        table = pq.ParquetFile(layout.refs(scope)).read()   # not read_table: it imports pyarrow.dataset
    except (OSError, pa.ArrowInvalid):
        return []
    cols = table.to_pydict()
    return [Ref(*row) for row in zip(cols["name"], cols["role"], cols["how"], cols["path"], cols["line"])]


def _cached_refs(layout: Layout, scopes: Sequence[str], changed: Iterable[str] | None,
                 unless_same: bool = False) -> dict[str, list[Ref]] | None:
    """Every scope's ``provides`` rows and the ``uses`` rows that name something provided.

    ``refs.sqlite`` caches all scopes' refs; with ``changed`` (a pull) only those scopes
    (and new or departed ones) are re-read from Parquet, so merging one pulled bundle into
    a thousand-scope home does not open a thousand files (its ``cached`` table names the scopes
    it holds, those with no refs too: they are not read again either). With ``unless_same``, None when
    no scope came or went and the re-read ones hold the rows they held (nothing to merge)."""
    import sqlite3

    path = layout.refs_db
    wanted = set(scopes)
    con = sqlite3.connect(path)  # rollback journal: a killed merge leaves the last committed cache
    try:
        con.executescript("""
            CREATE TABLE IF NOT EXISTS refs (scope TEXT, name TEXT, norm TEXT, role TEXT, how TEXT,
                                             path TEXT, line INTEGER);
            CREATE INDEX IF NOT EXISTS refs_scope ON refs (scope);
            CREATE INDEX IF NOT EXISTS refs_role_norm ON refs (role, norm);
            CREATE TABLE IF NOT EXISTS merged (scope TEXT PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS cached (scope TEXT PRIMARY KEY);
        """)
        merged = {s for (s,) in con.execute("SELECT scope FROM merged")}   # the scopes of the last merge
        # the scopes whose refs the cache holds, those with none too (a cache from before ``cached``:
        # the scopes with rows, so a scope without any is read once more, then recorded)
        recorded = {s for (s,) in con.execute("SELECT scope FROM cached")}
        present = recorded or {s for (s,) in con.execute("SELECT DISTINCT scope FROM refs")}
        fresh = wanted if changed is None else (set(changed) & wanted) | (wanted - present)
        stale = sorted((present - wanted) | (fresh & present))
        new = {s: sorted((r.name, r.role, r.how, r.path, int(r.line)) for r in read_refs(layout, s))
               for s in sorted(fresh)}
        same = unless_same and merged == wanted and all(
            new[s] == sorted(con.execute("SELECT name, role, how, path, line FROM refs WHERE scope = ?", (s,)))
            for s in fresh)
        # once this commits the cache holds the wanted scopes: each was held already or is read now
        con.executemany("DELETE FROM cached WHERE scope = ?", [(s,) for s in sorted(recorded - wanted)])
        con.executemany("INSERT INTO cached VALUES (?)", [(s,) for s in sorted(wanted - recorded)])
        if same:
            con.commit()
            return None
        con.executemany("DELETE FROM refs WHERE scope = ?", [(s,) for s in stale])
        con.executemany("INSERT INTO refs VALUES (?, ?, ?, ?, ?, ?, ?)", (
            (s, name, normalise(name), role, how, path, line)
            for s, rows in new.items() for name, role, how, path, line in rows))
        con.execute("DELETE FROM merged")   # until uses.parquet is written (``_merged``)
        con.commit()
        rows = con.execute("SELECT scope, name, role, how, path, line FROM refs WHERE role = 'provides' "
                           "OR (role = 'uses' AND norm IN (SELECT norm FROM refs WHERE role = 'provides'))")
        out: dict[str, list[Ref]] = {}
        for scope, *fields in rows:
            out.setdefault(scope, []).append(Ref(*fields))
        return out
    finally:
        con.close()


def merge_uses(layout: Layout, scopes: Sequence[str], changed: Iterable[str] | None = None) -> int:
    """Write ``uses.parquet`` from every indexed scope's refs; returns its number of rows.

    With ``changed``, only those scopes' refs are read again (``_cached_refs``), and when they
    hold what they held (a bundle whose code moved but not its imports) nothing is rewritten:
    the merge then costs what changed, not the corpus (returns -1)."""
    refs = _cached_refs(layout, scopes, changed, unless_same=changed is not None and layout.uses.is_file())
    if refs is None:
        return -1
    rows = linked_refs(refs)
    columns = list(zip(*rows)) if rows else [[] for _ in USES_SCHEMA.names]
    table = pa.table({name: list(col) for name, col in zip(USES_SCHEMA.names, columns)}, schema=USES_SCHEMA)
    write_with(layout.uses, lambda tmp: pq.write_table(table, tmp))
    _merged(layout, scopes)
    return len(rows)


def _merged(layout: Layout, scopes: Sequence[str]) -> None:
    """Record the scopes ``uses.parquet`` was just written from (a merge killed before the
    write leaves none recorded, so the next one writes it whatever the references hold)."""
    import sqlite3

    con = sqlite3.connect(layout.refs_db)
    try:
        con.execute("DELETE FROM merged")
        con.executemany("INSERT INTO merged VALUES (?)", [(s,) for s in sorted(set(scopes))])
        con.commit()
    finally:
        con.close()
