"""Is a derived file whole? Cheap checks that read a file's frame, not its contents.

Each ``*_problem`` returns None for a sound file and a short reason otherwise
("truncated: 4096 of 16384 bytes"). They need neither numpy nor pyarrow, so a
build step can ask them in its ``uptodate`` check and doctor can ask them for
every scope: a torn or emptied file is found by what it holds, not its mtime.
(Vector stores check themselves: ``loci.query.semantic.stored_vectors``.)
"""
from __future__ import annotations

import os
import sqlite3
import struct
from pathlib import Path

from loci.kernel.config import Layout

SQLITE_MAGIC = b"SQLite format 3\x00"
PARQUET_MAGIC = b"PAR1"


def sqlite_uri(path: Path, mode: str = "ro") -> str:
    """A ``file:`` URI for ``path`` with every special character quoted (``#``, ``?``, ``%``)."""
    from urllib.parse import quote

    return f"file:{quote(str(Path(path).resolve()))}?mode={mode}"


def connect(path: Path, mode: str = "ro", **kwargs) -> sqlite3.Connection:
    """Open an SQLite file by URI, so a home whose path holds ``#``, ``?`` or ``%`` still works."""
    return sqlite3.connect(sqlite_uri(path, mode), uri=True, **kwargs)


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def sqlite_problem(path: Path, thorough: bool = False, *, open_db: bool = True) -> str | None:
    """A missing, truncated or unopenable SQLite file; ``thorough`` also runs ``PRAGMA quick_check``.
    ``open_db=False`` reads the header alone (magic and page count against the size): what a
    no-change build checks of every scope, where opening each database would dominate."""
    size = _size(path)
    if size is None:
        return "missing"
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if len(head) < 100 or not head.startswith(SQLITE_MAGIC):
        return "not an SQLite database (empty or overwritten)"
    page = struct.unpack(">H", head[16:18])[0]
    page = 65536 if page == 1 else page
    pages, counter, valid_for = struct.unpack(">I", head[28:32])[0], head[24:28], head[92:96]
    if pages and counter == valid_for and page * pages > size:
        return f"truncated: {size} of {page * pages} bytes"
    if not open_db:
        return None
    try:
        con = connect(path)
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if thorough:
                verdict = con.execute("PRAGMA quick_check").fetchone()
                if verdict and verdict[0] != "ok":
                    return f"corrupt ({verdict[0]})"
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return f"unreadable ({exc})"
    return None


def parquet_problem(path: Path) -> str | None:
    """A missing, emptied or truncated Parquet file (its magic bytes and footer length)."""
    size = _size(path)
    if size is None:
        return "missing"
    if size < 12:
        return f"truncated: {size} bytes"
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            fh.seek(size - 8)
            tail = fh.read(8)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    footer = struct.unpack("<I", tail[:4])[0]
    if head != PARQUET_MAGIC or tail[4:] != PARQUET_MAGIC or footer + 12 > size:
        return "truncated or overwritten (no Parquet footer)"
    return None


# ---- what each build step leaves behind

def scope_index_problems(layout: Layout, name: str, *, open_db: bool = True) -> list[tuple[Path, str]]:
    """The files one scope's index step writes that are missing or damaged (``open_db``: see
    ``sqlite_problem``)."""
    from loci.kernel.jsonfile import read_state
    from loci.kernel.schemas import META_FILE, StateError

    out = [(p, why) for p, why in (
        (layout.chunks(name), parquet_problem(layout.chunks(name))),
        (layout.vocab(name), parquet_problem(layout.vocab(name))),
        (layout.refs(name), parquet_problem(layout.refs(name))),
        (layout.query_db(name), sqlite_problem(layout.query_db(name), open_db=open_db)),
        # the structure tables exist only for a scope with a code graph: checked when present
        *((p, parquet_problem(p)) for p in (layout.symbols(name), layout.calls(name)) if p.exists()),
    ) if why]
    try:
        if read_state(layout.meta(name), META_FILE) is None:
            out.append((layout.meta(name), "missing"))
    except StateError as exc:
        out.append((layout.meta(name), str(exc)))
    return out


def home_index_problems(layout: Layout, *, open_db: bool = True) -> list[tuple[Path, str]]:
    """The whole-home files the routing step writes (routing.sqlite, uses.parquet, manifest.json)."""
    from loci.kernel.jsonfile import read_state
    from loci.kernel.schemas import MANIFEST_FILE, StateError

    out = [(p, why) for p, why in ((layout.routing_db, sqlite_problem(layout.routing_db, open_db=open_db)),
                                   (layout.uses, parquet_problem(layout.uses))) if why]
    try:
        if read_state(layout.manifest, MANIFEST_FILE) is None:
            out.append((layout.manifest, "missing"))
    except StateError as exc:
        out.append((layout.manifest, str(exc)))
    return out


def set_aside_if_damaged(path: Path) -> str | None:
    """Move a damaged SQLite file to ``<name>.damaged`` so the next writer starts afresh; the
    note to show, or None when the file is sound or absent. For files that only cache work
    (doit's build state): losing one makes the next build redo its steps, nothing more."""
    path = Path(path)
    why = sqlite_problem(path, thorough=True) if path.exists() else None
    if why is None:
        return None
    aside = path.with_name(path.name + ".damaged")
    os.replace(path, aside)
    return f"{path} was {why}; moved it to {aside.name} and rebuilding every step"
