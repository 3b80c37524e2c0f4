"""Cross-scope references: which registered project uses which, with citations.

Each index run writes ``refs/<scope>.parquet``: the names the scope is known by
(``provides``) and the imports and declared dependencies it has (``uses``),
each with a path and line. The routing merge then matches one scope's uses
against every other scope's names into ``uses.parquet`` (from, to, target, how,
path, line), which ``loci uses`` reads.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from loci.kernel.config import Layout
from loci.kernel.atomic import write_with
from pipeline.paths import path_kind
from pipeline.references import declared, normalise, provided

REFS_SCHEMA = pa.schema([("name", pa.string()), ("role", pa.string()), ("how", pa.string()),
                         ("path", pa.string()), ("line", pa.int32())])
USES_SCHEMA = pa.schema([("from", pa.string()), ("to", pa.string()), ("target", pa.string()),
                         ("how", pa.string()), ("path", pa.string()), ("line", pa.int32())])


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


def find_uses(refs: Mapping[str, Sequence[Ref]]) -> list[tuple[str, str, str, str, str, int]]:
    """(from, to, target, how, path, line) for every use of one scope's name by another scope."""
    owners: dict[str, set[str]] = {}
    for scope, rows in refs.items():
        for r in rows:
            if r.role == "provides":
                owners.setdefault(normalise(r.name), set()).add(scope)
    edges = set()
    for scope, rows in refs.items():
        for r in rows:
            if r.role != "uses":
                continue
            for owner in owners.get(normalise(r.name), ()):
                if owner != scope:
                    edges.add((scope, owner, r.name, r.how, r.path, int(r.line)))
    how_order = {"dependency": 0, "import": 1}
    kind_order = {"source": 0, "docs": 1, "example": 2, "test": 3}
    return sorted(edges, key=lambda e: (e[0], e[1], how_order.get(e[3], 2), kind_order.get(path_kind(e[4]), 4),
                                        e[4], e[5]))


def read_refs(layout: Layout, scope: str) -> list[Ref]:
    try:
        table = pq.read_table(layout.refs(scope))
    except (OSError, pa.ArrowInvalid):
        return []
    cols = table.to_pydict()
    return [Ref(*row) for row in zip(cols["name"], cols["role"], cols["how"], cols["path"], cols["line"])]


def _cached_refs(layout: Layout, scopes: Sequence[str], changed: Iterable[str] | None) -> dict[str, list[Ref]]:
    """Every scope's ``provides`` rows and the ``uses`` rows that name something provided.

    ``refs.sqlite`` caches all scopes' refs; with ``changed`` (a pull) only those scopes
    (and new or departed ones) are re-read from Parquet, so merging one pulled bundle into
    a thousand-scope home does not open a thousand files."""
    import sqlite3

    path = layout.home / "refs.sqlite"
    wanted = set(scopes)
    con = sqlite3.connect(path)  # rollback journal: a killed merge leaves the last committed cache
    try:
        con.executescript("""
            CREATE TABLE IF NOT EXISTS refs (scope TEXT, name TEXT, norm TEXT, role TEXT, how TEXT,
                                             path TEXT, line INTEGER);
            CREATE INDEX IF NOT EXISTS refs_scope ON refs (scope);
            CREATE INDEX IF NOT EXISTS refs_role_norm ON refs (role, norm);
        """)
        present = {s for (s,) in con.execute("SELECT DISTINCT scope FROM refs")}
        fresh = wanted if changed is None else (set(changed) & wanted) | (wanted - present)
        stale = sorted((present - wanted) | (fresh & present))
        con.executemany("DELETE FROM refs WHERE scope = ?", [(s,) for s in stale])
        con.executemany("INSERT INTO refs VALUES (?, ?, ?, ?, ?, ?, ?)", (
            (s, r.name, normalise(r.name), r.role, r.how, r.path, int(r.line))
            for s in sorted(fresh) for r in read_refs(layout, s)))
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
    """Write ``uses.parquet`` from every indexed scope's refs; returns the number of edges.

    With ``changed``, only those scopes' refs are read again (``_cached_refs``)."""
    edges = find_uses(_cached_refs(layout, scopes, changed))
    columns = list(zip(*edges)) if edges else [[] for _ in USES_SCHEMA.names]
    table = pa.table({name: list(col) for name, col in zip(USES_SCHEMA.names, columns)}, schema=USES_SCHEMA)
    write_with(layout.uses, lambda tmp: pq.write_table(table, tmp))
    return len(edges)
