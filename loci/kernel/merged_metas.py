"""What a question reads of each indexed scope's meta, and the merge's stamp, kept in
routing.sqlite beside the routing rows.

``manifest.json`` listed every scope's meta (4.6 MB at 1,000 pulled scopes; it is now a header of
the merge, ``loci_pipeline.routing.header``); a one-shot question that read and checked it whole
paid for the corpus, not for the scopes it reached. The merge
(``loci_pipeline.routing``) therefore also writes, into the routing file it already writes:

- ``merge(key, value)``: the schema version and tokenizer the routing rows were made with
  (what the query side checks of ``manifest.json`` before trusting the index), the metas'
  fields, and the groups of scopes that are copies of one another (``twin_groups``);
- ``metas(name, meta)``: of each indexed scope's meta (as the manifest lists it) the fields a
  question reads (``QUERY_FIELDS``: a pulled scope's origin, the chunk count a long-lived
  engine warms by, the build fingerprint and the index's size that tell identical copies apart:
  ``twin_groups``),
  as JSON, one row a scope; so a pull rewrites the rows of the scopes it
  changed and a question reads the rows of the scopes it answers from. Not the build time
  nor the facts: the routing file stays the same bytes whoever merged the same scopes.

One file, one transaction: the rows a question reads agree with the routing rows it routed by.
Every reader of all the scopes' metas goes through these rows (``loci.query.store.indexed_metas``),
and an incremental merge keeps a scope's row without reading its meta file. A routing file without
these tables (written before them, beside a manifest listing every meta) is read through
``manifest.json``, as before; the next merge writes it whole. Imported by both sides; imports neither.
"""
from __future__ import annotations

import json
import sqlite3
from typing import Iterable

from loci.kernel.config import SCHEMA_VERSION

STAMP_TABLE = "merge"
METAS_TABLE = "metas"
QUERY_FIELDS = ("chunks", "origin", "fingerprint", "vocab_tokens", "vocab_weight")
TWINS_KEY = "twins"        # in the merge table: the groups of identical copies (``twin_groups``)
TABLES = (f"CREATE TABLE IF NOT EXISTS {STAMP_TABLE} (key TEXT PRIMARY KEY, value TEXT)",
          f"CREATE TABLE IF NOT EXISTS {METAS_TABLE} (name TEXT PRIMARY KEY, meta TEXT)")


def stamp() -> dict[str, str]:
    """What this loci writes in the ``merge`` table."""
    from loci.kernel import tokens

    return {"schema_version": str(SCHEMA_VERSION), "tokenizer": tokens.signature(), "fields": ",".join(QUERY_FIELDS)}


def written_here(recorded: dict[str, str] | None) -> bool:
    """The ``merge`` table (``read_stamp``) says the rows were written as this loci writes them."""
    return recorded is not None and all(recorded.get(k) == v for k, v in stamp().items())


def project(meta: dict) -> dict:
    """The fields of a scope's meta a question reads."""
    return {k: meta[k] for k in QUERY_FIELDS if k in meta}


def has_tables(con: sqlite3.Connection) -> bool:
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return STAMP_TABLE in names and METAS_TABLE in names


def write(con: sqlite3.Connection, metas: dict[str, dict], rewrite: Iterable[str] | None = None) -> None:
    """The stamp, and the metas rows: every scope of ``metas`` (``rewrite`` None), or only the
    ``rewrite`` ones plus the removal of rows no longer in ``metas`` (inside the caller's transaction)."""
    for ddl in TABLES:
        con.execute(ddl)
    if rewrite is not None and (read_stamp(con) or {}).get("fields") != stamp()["fields"]:
        rewrite = None   # rows written with other fields (an older loci): every one again, once
    con.executemany(f"INSERT OR REPLACE INTO {STAMP_TABLE} VALUES (?, ?)", sorted(stamp().items()))
    if rewrite is None:
        con.execute(f"DELETE FROM {METAS_TABLE}")
        names = sorted(metas)
    else:
        kept = set(metas)
        gone = [n for (n,) in con.execute(f"SELECT name FROM {METAS_TABLE}") if n not in kept]
        con.executemany(f"DELETE FROM {METAS_TABLE} WHERE name = ?", [(n,) for n in gone])
        names = sorted(set(rewrite) & kept)
    con.executemany(f"INSERT OR REPLACE INTO {METAS_TABLE} VALUES (?, ?)",
                    [(n, json.dumps(project(metas[n]), sort_keys=True, separators=(",", ":"))) for n in names])
    con.execute(f"INSERT OR REPLACE INTO {STAMP_TABLE} VALUES (?, ?)",
                (TWINS_KEY, json.dumps(_grouped(con), separators=(",", ":"))))


def read_stamp(con: sqlite3.Connection) -> dict[str, str] | None:
    """The ``merge`` table; None for a routing file written before it."""
    if not has_tables(con):
        return None
    return dict(con.execute(f"SELECT key, value FROM {STAMP_TABLE}").fetchall())


def read_meta(con: sqlite3.Connection, name: str) -> dict | None:
    """What the merge recorded of one scope's meta (``project``); None when it has none (or its
    row is damaged)."""
    row = con.execute(f"SELECT meta FROM {METAS_TABLE} WHERE name = ?", (name,)).fetchone()
    return None if row is None else _parsed(row[0])


def read_metas(con: sqlite3.Connection) -> dict[str, dict]:
    """``read_meta`` of every scope the merge recorded, in one read; damaged rows left out."""
    out = {}
    for name, raw in con.execute(f"SELECT name, meta FROM {METAS_TABLE}"):
        meta = _parsed(raw)
        if meta is not None:
            out[name] = meta
    return out


def _parsed(raw) -> dict | None:
    try:
        meta = json.loads(raw)
    except (TypeError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def twin_groups(con: sqlite3.Connection) -> list[tuple[str, ...]]:
    """Scopes that are copies of one another (``twin_key``), two or more a group, names sorted:
    what the last merge recorded (one row; a question does not read every scope's meta)."""
    return twins_in(read_stamp(con) or {})


def twins_in(stamp: dict[str, str]) -> list[tuple[str, ...]]:
    """``twin_groups`` as the ``merge`` table ``stamp`` (``read_stamp``) holds them; a damaged
    entry reads as no copies."""
    try:
        groups = json.loads(stamp.get(TWINS_KEY) or "[]")
    except (TypeError, ValueError):
        return []
    if not isinstance(groups, list):
        return []
    return [tuple(g) for g in groups if isinstance(g, list) and len(g) > 1 and all(isinstance(n, str) for n in g)]


def _grouped(con: sqlite3.Connection) -> list[list[str]]:
    """The copies among the metas rows, as ``twin_groups`` reads them back."""
    groups: dict[tuple, list[str]] = {}
    for name, meta in read_metas(con).items():
        key = twin_key(meta)
        if key is not None:
            groups.setdefault(key, []).append(name)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def twin_key(meta: dict) -> tuple | None:
    """What two scopes share when one is a copy of the other (None: nothing to compare by): the
    build fingerprint (commit, clean tree, tokenizer, parameters) and what the index holds (its
    chunks, its routing words and their weight), so two folders of one repository that happen to
    fingerprint alike are still told apart by their content."""
    fingerprint = meta.get("fingerprint")
    if not isinstance(fingerprint, str) or not fingerprint:
        return None
    return fingerprint, meta.get("chunks"), meta.get("vocab_tokens"), meta.get("vocab_weight")
