"""Query-side copies of the artifacts, in SQLite, so one-shot commands import no numpy/pyarrow.

Parquet stays the canonical store; these files are derived from it at index
time. A one-shot ``loci route`` reads ``routing.sqlite`` for just the question's
tokens; ``loci ask`` reads ``query/<scope>.sqlite`` (lexical postings, chunk
rows, structure tables) for just what it ranks. Importing numpy and
pyarrow.parquet costs ~0.2 s here, more than the whole query.
"""
from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from loci.kernel.atomic import write_with
from loci.kernel.config import QUERY_SCHEMA

PACKED = ("gram_terms", "gram_ptr", "gram_docs", "gram_counts")
"""The char-gram arrays, stored zlib-compressed: 38 -> 13 MB over the 22 development repositories;
a question reads a scope's arrays once, and inflating them costs a few ms (docs/decisions/footprint.md)."""
PACK_LEVEL = 1
"""zlib's fastest level: over the 22 development repositories 13.2 MB in 0.7 s, against level 6's
11.7 MB in 2.7 s; a one-file re-index pays the compression of its whole scope."""


def _connect(tmp: Path) -> sqlite3.Connection:
    con = sqlite3.connect(tmp)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    return con


def smallest(values, choices: str) -> str:
    """The first array typecode of ``choices`` (unsigned, narrowest first) that holds every value."""
    import numpy as np

    top = int(np.max(values)) if len(values) else 0
    limits = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF, "i": 0x7FFFFFFF, "q": 2 ** 63 - 1}
    return next(c for c in choices if top <= limits[c])


_NUMPY = {"B": "<u1", "H": "<u2", "I": "<u4", "i": "<i4", "q": "<i8", "f": "<f4"}


def pack(values, code: str) -> bytes:
    """``values`` as the little-endian bytes of a Python ``array(code)``."""
    import numpy as np

    return np.asarray(values).astype(_NUMPY[code]).tobytes()


def _postings_rows(terms: Sequence[str], ptr, docs, tf, scale, codes: tuple[str, str]):
    import numpy as np

    docs, tf = np.asarray(docs).astype(_NUMPY[codes[0]]), np.asarray(tf).astype(_NUMPY[codes[1]])
    bounds, scale = np.asarray(ptr).tolist(), np.asarray(scale, np.float64).tolist()
    for i, term in enumerate(terms):
        a, b = bounds[i], bounds[i + 1]
        yield term, scale[i], docs[a:b].tobytes(), tf[a:b].tobytes()


def write_scope_db(path: Path, *, n_docs: int, gram_range: tuple[int, int], bm25, grams,
                   chunks: Iterable[tuple], symbols=None, calls=None,
                   vocab: Iterable[tuple[str, float]] = ()) -> None:
    """One scope's query file: postings, chunk rows and (when present) structure tables.

    ``bm25`` is (terms, ptr, docs, tf, scale, norm) and ``grams`` (terms, ptr, docs, counts, norms),
    both from ``loci_pipeline.lexical_fit``; postings hold only small integers (a document number
    and a count, in the narrowest array type that fits: 3 bytes a posting here, against 8 for
    float weights), the factors that turn them into weights are per term and per document.
    ``chunks`` yields (id, kind, path_kind, path, line, heading, text, hash, recency);
    ``symbols``/``calls`` are pyarrow tables.
    """
    b_terms, b_ptr, b_docs, b_tf, b_scale, b_norm = bm25
    g_terms, g_ptr, g_docs, g_counts, g_norms = grams
    doc_code = smallest([max(n_docs - 1, 0)], "HI")
    codes = {"doc": doc_code, "bm25_tf": smallest(b_tf, "BHI"), "gram_count": smallest(g_counts, "BHI"),
             "gram_ptr": smallest(g_ptr, "iq")}

    def writer(tmp: Path) -> None:
        con = _connect(tmp)
        con.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE bm25 (term TEXT PRIMARY KEY, scale REAL, docs BLOB, tf BLOB) WITHOUT ROWID;
            CREATE TABLE arrays (name TEXT PRIMARY KEY, data BLOB) WITHOUT ROWID;
            CREATE TABLE chunks (id INTEGER PRIMARY KEY, kind TEXT, path_kind TEXT, path TEXT,
                                 line INTEGER, heading TEXT, text TEXT, hash TEXT, recency REAL);
            CREATE TABLE vocab (token TEXT, weight REAL);
        """)
        con.executemany("INSERT INTO vocab VALUES (?, ?)", vocab)
        con.executemany("INSERT INTO meta VALUES (?, ?)", [
            ("schema", str(QUERY_SCHEMA)), ("n_docs", str(n_docs)), ("zlib", ",".join(PACKED)),
            ("gram_lo", str(gram_range[0])), ("gram_hi", str(gram_range[1])),
            *((f"code_{k}", v) for k, v in codes.items())])
        con.executemany("INSERT INTO bm25 VALUES (?, ?, ?, ?)",
                        _postings_rows(b_terms, b_ptr, b_docs, b_tf, b_scale, (doc_code, codes["bm25_tf"])))
        # char n-grams number in the hundreds of thousands: whole arrays, not a row each
        arrays = [
            ("bm25_norm", pack(b_norm, "f")),
            ("gram_terms", "\n".join(g_terms).encode("utf-8")),
            ("gram_ptr", pack(g_ptr, codes["gram_ptr"])),
            ("gram_docs", pack(g_docs, doc_code)),
            ("gram_counts", pack(g_counts, codes["gram_count"])),
            ("gram_norms", pack(g_norms, "f"))]
        con.executemany("INSERT INTO arrays VALUES (?, ?)",
                        [(name, zlib.compress(data, PACK_LEVEL) if name in PACKED else data) for name, data in arrays])
        con.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", chunks)
        for name, table in (("symbols", symbols), ("calls", calls)):
            if table is None:
                continue
            cols = table.column_names
            con.execute(f"CREATE TABLE {name} ({', '.join(cols)})")
            con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(cols))})",
                            zip(*(table.column(c).to_pylist() for c in cols)))
        con.commit()
        con.close()

    write_with(path, writer)


ROUTING_SCOPE_INDEX = "routing_scope"


def write_vocab_db(path: Path, vocab: list[tuple[str, float]]) -> None:
    """A scope's routing vocabulary alone, as the ``vocab`` table of its query file (what routing
    merges): a scope pulled as a map has no query file until a question needs it."""
    def writer(tmp: Path) -> None:
        con = _connect(tmp)
        con.execute("CREATE TABLE vocab (token TEXT, weight REAL)")
        con.executemany("INSERT INTO vocab VALUES (?, ?)", vocab)
        con.commit()
        con.close()

    write_with(path, writer)


def write_routing_db(path: Path, scope_dbs: dict[str, Path], metas: dict[str, dict]) -> None:
    """Merge every scope's ``vocab`` table into routing(token, scope, weight), plus per-scope
    size and recency and each scope's meta (``loci.kernel.merged_metas``, what a question reads
    instead of the manifest); SQLite does the whole merge (no pyarrow in the merging process)."""
    from loci.kernel import merged_metas

    names = sorted(metas)

    def writer(tmp: Path) -> None:
        con = _connect(tmp)
        con.executescript("""
            CREATE TABLE scopes (id INTEGER PRIMARY KEY, name TEXT, size REAL, updated TEXT);
            CREATE TABLE routing (token TEXT, scope INTEGER, weight REAL);
        """)
        con.executemany("INSERT INTO scopes VALUES (?, ?, ?, ?)", _scope_rows(names, metas))
        for i, name in enumerate(names):
            _attach_vocab(con, scope_dbs[name], i)
        # covering: a question's lookup reads its tokens' rows from the index alone, in scope order
        con.execute("CREATE INDEX routing_token ON routing (token, scope, weight)")
        # a pull replaces one scope's rows without reading the others' (``update_routing_db``)
        con.execute(f"CREATE INDEX {ROUTING_SCOPE_INDEX} ON routing (scope)")
        merged_metas.write(con, metas)
        con.commit()
        con.close()

    write_with(path, writer)


def update_routing_db(path: Path, scope_dbs: dict[str, Path], metas: dict[str, dict],
                      changed: Iterable[str], metas_moved: Iterable[str] = ()) -> bool:
    """Apply only ``changed`` scopes (and any scope no longer in ``metas``) to the existing
    routing.sqlite, in place and in one transaction (a reader sees the old rows or the new
    ones; SQLite's journal undoes a killed write); the other scopes' rows are not touched, so
    the cost grows with what changed, not with the corpus. The metas rows rewritten are those
    of the changed scopes and of ``metas_moved`` (metas read again since the last merge).
    Returns False, writing nothing, when there is no usable file to start from
    (``write_routing_db`` then writes it whole)."""
    from loci.kernel import merged_metas
    from loci.kernel.integrity import connect

    names = sorted(metas)
    try:
        con = connect(path, "rw", timeout=30)
    except sqlite3.DatabaseError:
        return False
    try:
        try:
            old = dict(con.execute("SELECT name, id FROM scopes").fetchall())
            indexed = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        except sqlite3.DatabaseError:
            return False
        if ROUTING_SCOPE_INDEX not in indexed or not merged_metas.has_tables(con):
            return False   # a file from before the index or the metas: written whole once
        stale = (set(changed) & set(names)) | (set(old) - set(names))
        new_id = {n: i for i, n in enumerate(names)}
        fresh = {n: _vocab_rows(scope_dbs[n]) for n in sorted(n for n in names if n in stale or n not in old)}
        con.execute("BEGIN IMMEDIATE")
        for sid in (old[n] for n in stale if n in old):
            con.execute("DELETE FROM routing WHERE scope = ?", (sid,))
        remap = [(old[n], new_id[n]) for n in names if n in old and n not in stale and old[n] != new_id[n]]
        if remap:  # a scope came or went before others in name order: their ids shift
            con.execute("CREATE TEMP TABLE remap (old INTEGER PRIMARY KEY, new INTEGER)")
            con.executemany("INSERT INTO remap VALUES (?, ?)", remap)
            con.execute("UPDATE routing SET scope = (SELECT new FROM remap WHERE old = routing.scope) "
                        "WHERE scope IN (SELECT old FROM remap)")
        con.execute("DELETE FROM scopes")
        con.executemany("INSERT INTO scopes VALUES (?, ?, ?, ?)", _scope_rows(names, metas))
        for name, rows in fresh.items():
            con.executemany("INSERT INTO routing VALUES (?, ?, ?)", ((t, new_id[name], w) for t, w in rows))
        merged_metas.write(con, metas, rewrite=set(fresh) | set(metas_moved))
        con.commit()
    finally:
        con.close()
    return True


def merged_records(path: Path) -> dict[str, dict]:
    """Of each scope routing.sqlite lists, what a merge writes its rows from: its metas row
    (``merged_metas.QUERY_FIELDS``, ``vocab_weight`` among them) and its recency (``updated``), so an
    incremental merge keeps a scope whose meta did not move without reading it. {} for a file
    whose rows this loci would write otherwise (another schema or other fields: read every meta)."""
    from loci.kernel import merged_metas
    from loci.kernel.integrity import connect

    try:
        con = connect(path)
        try:
            if not merged_metas.written_here(merged_metas.read_stamp(con)):
                return {}
            updated = dict(con.execute("SELECT name, updated FROM scopes"))
            metas = merged_metas.read_metas(con)
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return {}
    return {name: {**meta, "updated": updated[name]} for name, meta in metas.items() if name in updated}


def _vocab_rows(scope_db: Path) -> list[tuple[str, float]]:
    from loci.kernel.integrity import connect

    con = connect(scope_db)
    try:
        return con.execute("SELECT token, weight FROM vocab").fetchall()
    finally:
        con.close()


def _scope_rows(names: Sequence[str], metas: dict[str, dict]) -> list[tuple]:
    return [(i, n, float(metas[n].get("vocab_weight", 0.0)) or 1.0, metas[n].get("updated", ""))
            for i, n in enumerate(names)]


def _attach_vocab(con: sqlite3.Connection, scope_db: Path, scope_id: int) -> None:
    con.execute("ATTACH DATABASE ? AS s", (str(scope_db),))
    con.execute("INSERT INTO routing SELECT token, ?, weight FROM s.vocab", (scope_id,))
    con.commit()
    con.execute("DETACH DATABASE s")
