"""A pulled scope's stores that stay in the remote store until a question needs them.

`loci pull` (without ``--all``) brings each scope's map: what the router and the second
opinion's first pass read (its meta, its routing vocabulary, its vector summaries, its
references). It leaves the rest (the query file, the chunk and symbol-label vectors, the
multilingual store) where the bundle is published, and records here where each is and its sha256 and size from the
bundle's manifest. The first question that opens the scope fetches its query file and chunk
vectors (``ensure``; the second opinion's shortlist several at once, ``ensure_all``),
verifies each against the record, installs them (the query file last: its presence is what
"cached" means) and evicts the least recently used cached scopes beyond the cap
(``LOCI_CACHE_MB``, default ``CACHE_MB``); its symbol-label vectors come the first time a
question reads them (``ensure_role``); its multilingual store when a question in another
language measures it (``ensure_all`` of ``FOREIGN_ROLES``). A scope's fetch may take ``fetch_seconds()``
(``LOCI_FETCH_SECONDS``; a ``loci.kernel.transfers.Transfer``, which the warm engine's watchdog
reads: waiting on it is not a hang). A scope that cannot be fetched is answered without,
with a one-line note (a ``FetchNote``) that carries why, as the fetch found it: ``DAMAGED``,
``MISSING``, ``UNREACHABLE`` or ``LOCAL``.

Both sides use this module: the pull writes the records (``write_record``) and the query side
reads them. It imports neither ``pipeline`` nor ``loci.query``.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from loci.kernel.config import Layout, safe_name
from loci.kernel.envnumber import env_number

CACHE_MB = 2048            # default cap on the fetched stores of mapped scopes (LOCI_CACHE_MB)
CACHE_GRACE_SECONDS = 30   # a scope used this recently is never evicted (another question reads it)
FETCH_SCOPES = 4           # scopes fetched at once (``ensure_all``): each its files together, so 12 streams at most
FETCH_SECONDS = 120        # default time a scope's fetch may take before it is given up (LOCI_FETCH_SECONDS)
# what stays remote until a question needs it (the multilingual store: one in another language)
TERRITORY_ROLES = ("query", "vectors", "label_vectors", "multilingual")
# what a scope's fetch brings (``ensure``): what the second opinion measures a shortlisted scope by;
# the symbol labels only a scope answered from reads come when it first does (``ensure_role``)
EAGER_ROLES = ("query", "vectors")
# what the second opinion's read of a scope brings: its chunk vectors, whose manifest names the
# translated copies it leaves out; the query file comes only if the scope is answered from
# (or its vectors were published before they named their copies)
READ_ROLES = ("vectors",)
# a foreign question's read of a scope: its multilingual store (``loci.query.multilingual``)
FOREIGN_ROLES = ("multilingual",)
VECTOR_KEYS = {"vectors": "hash", "label_vectors": "label", "multilingual": "hash"}

# why a store could not be fetched, set where the fetch finds out (``FetchFailure``):
DAMAGED = "damaged"          # the published copy is bad: its checksum or size, or it does not read as what it is
MISSING = "missing"          # the store answers, the file is not in it
UNREACHABLE = "unreachable"  # the store or its file cannot be read (no such folder, network, S3, permission)
LOCAL = "local"              # the home could not take it (its disk, its permissions)

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class FetchFailure(RuntimeError):
    """A store that could not be fetched: the one-line message, and ``reason``, why."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class FetchNote(str):
    """The one-line note of a scope answered without its stores, as any note is read, and
    ``reason``: why its fetch failed (``DAMAGED``, ``MISSING``, ``UNREACHABLE`` or ``LOCAL``)."""

    reason: str

    def __new__(cls, text: str, reason: str):
        note = super().__new__(cls, text)
        note.reason = reason
        return note

    def __reduce__(self):
        return FetchNote, (str(self), self.reason)


def record_path(layout: Layout, scope: str) -> Path:
    """Where a mapped scope's stores are published, with their checksums."""
    return layout.map_record(scope)


def vocab_db(layout: Layout, scope: str) -> Path:
    """A mapped scope's routing vocabulary (an SQLite ``vocab`` table, what routing merges)."""
    return layout.map_vocab(scope)


def _used_path(layout: Layout, scope: str) -> Path:
    return layout.map_used(scope)


def read_record(layout: Layout, scope: str) -> dict | None:
    try:
        data = json.loads(record_path(layout, scope).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("files"), list) else None


def write_record(layout: Layout, scope: str, source: str, folder: str, files: list[dict],
                 embedding: dict | None, model: str | None, multilingual: dict | None = None) -> None:
    """``files``: each store left remote, ``{"role", "path", "sha256", "size"}``; ``embedding``:
    the manifest's model and dimension, which the vectors must be of; ``model``: the home's
    model id, under which they are stored here; ``multilingual``: the manifest's model and
    dimension of the multilingual store."""
    from loci.kernel.atomic import write_json

    write_json(record_path(layout, scope), {"scope": scope, "source": source, "folder": folder,
                                            "files": files, "embedding": embedding, "model": model,
                                            **({"multilingual": multilingual} if multilingual else {})})


def _dest(layout: Layout, rec: dict, role: str) -> Path:
    """Where a recorded store goes in the home (a vector store's name, the query file)."""
    if role == "query":
        return layout.query_db(rec["scope"])
    if role == "vectors":
        return layout.vectors(rec["model"], rec["scope"])
    if role == "label_vectors":
        return layout.label_vectors(rec["model"], rec["scope"])
    if role == "multilingual":
        from loci.kernel.vectorstore import multilingual_vectors

        return multilingual_vectors(layout, rec["scope"])
    raise ValueError(f"a store of role {role!r} is not fetched")


def forget(layout: Layout, scope: str) -> None:
    """The scope is no longer mapped (pulled whole, or gone): its record, vocabulary and stamp go."""
    for path in (record_path(layout, scope), vocab_db(layout, scope), _used_path(layout, scope)):
        path.unlink(missing_ok=True)


def mapped_scopes(layout: Layout) -> list[str]:
    """Every scope pulled as a map (its stores fetched or not), by the name its record has."""
    folder = layout.map_dir
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            name = json.loads(path.read_text(encoding="utf-8")).get("scope")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(name, str):
            out.append(name)
    return out


def is_cached(layout: Layout, scope: str) -> bool:
    return layout.query_db(scope).is_file()


def state(layout: Layout, scope: str) -> str | None:
    """"mapped" (stores remote), "cached" (fetched), or None for a scope pulled whole or built here."""
    if not record_path(layout, scope).is_file():
        return None
    return "cached" if is_cached(layout, scope) else "mapped"


def _files(layout: Layout, rec: dict) -> list[Path]:
    """Every local file the record's stores become (a vector store is a matrix and its manifest)."""
    return [p for f in rec["files"] for p in _dest_files(layout, rec, f["role"])]


def _dest_files(layout: Layout, rec: dict, role: str) -> tuple[Path, ...]:
    """The local files a store of ``role`` becomes, the one written last last."""
    from loci.kernel.vectorstore import vector_files

    dest = _dest(layout, rec, role)
    return vector_files(dest) if role in VECTOR_KEYS else (dest,)


def cached_bytes(layout: Layout, scope: str) -> int:
    rec = read_record(layout, scope)
    return sum(p.stat().st_size for p in _files(layout, rec) if p.is_file()) if rec else 0


def cap_bytes() -> int:
    """The cap on fetched stores: ``LOCI_CACHE_MB`` (megabytes; 0 caches nothing), else ``CACHE_MB``."""
    return int(env_number("LOCI_CACHE_MB", CACHE_MB, zero=True) * (1 << 20))


def fetch_seconds() -> float:
    """How long one scope's fetch may take: ``LOCI_FETCH_SECONDS``, else ``FETCH_SECONDS``. A
    question waits that long for a slow link (the warm engine too: a fetch in flight is not a
    hang); past it the scope is answered without its stores, with a note."""
    return env_number("LOCI_FETCH_SECONDS", FETCH_SECONDS)


def _lock(scope: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(scope, threading.Lock())


def ensure(layout: Layout, scope: str) -> str | None:
    """Make a mapped scope's stores local (fetched, verified, installed; nothing to do for a
    cached scope or one pulled whole); returns None, or a one-line note when they cannot be
    fetched (the question is then answered without this scope)."""
    return ensure_all(layout, [scope]).get(scope)


def ensure_all(layout: Layout, scopes, roles=EAGER_ROLES) -> dict[str, str]:
    """``ensure`` for several scopes (of their stores of ``roles``: ``READ_ROLES`` for the second
    opinion's read): those not here yet are fetched ``FETCH_SCOPES`` at a time (copying and
    hashing release the GIL), each verified and installed on its own, so one that fails leaves
    the others; then one eviction pass keeps them all. Returns a one-line note for each scope
    that could not be fetched."""
    todo = []
    for scope in dict.fromkeys(scopes):
        rec = read_record(layout, scope)
        if rec is None:
            continue
        if _missing(layout, rec, roles):
            todo.append((scope, rec))
        else:
            _touch(layout, scope)
    if not todo:
        return {}
    if len(todo) == 1:
        got = [_ensure_one(layout, *todo[0], roles)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(FETCH_SCOPES, len(todo))) as pool:
            got = list(pool.map(lambda item: _ensure_one(layout, *item, roles), todo))
    evict(layout, keep={scope for scope, _ in todo})
    return {scope: note for (scope, _), note in zip(todo, got) if note}


def _missing(layout: Layout, rec: dict, roles) -> tuple[str, ...]:
    """The stores of ``roles`` the record names and the home lacks (the query file's presence is
    what "cached" means; a vector store's is its manifest, written last)."""
    recorded = {f["role"] for f in rec["files"]}
    return tuple(r for r in roles if r in recorded and not _dest_files(layout, rec, r)[-1].is_file())


def _ensure_one(layout: Layout, scope: str, rec: dict, roles=EAGER_ROLES) -> str | None:
    with _lock(scope):
        missing = _missing(layout, rec, roles)   # another thread of this process may have fetched them
        if missing:
            what = "its stores" if "query" in missing else f"its {' and '.join(r.replace('_', ' ') for r in missing)}"
            note = _fetched(layout, scope, rec, missing, what, "answered without it")
            if note:
                return note
        _touch(layout, scope)   # before the eviction pass: what it fetched counts against the cap
    return None


def ensure_role(layout: Layout, scope: str, role: str) -> str | None:
    """A cached mapped scope's store of ``role`` that its fetch left remote (a role not in
    ``EAGER_ROLES``: the symbol labels), fetched the first time a question reads it; None, or
    a one-line note when it cannot be (the scope then answers without it). Nothing for any
    other scope."""
    rec = read_record(layout, scope)
    if rec is None or not any(f["role"] == role for f in rec["files"]):
        return None
    with _lock(scope):
        if not is_cached(layout, scope) or _dest_files(layout, rec, role)[-1].is_file():
            return None
        note = _fetched(layout, scope, rec, (role,), f"its {role.replace('_', ' ')}", "answered without them")
    if note is None:
        evict(layout, keep={scope})
    return note


def _fetched(layout: Layout, scope: str, rec: dict, roles, what: str, without: str) -> FetchNote | None:
    """``_fetch`` of ``roles``; a one-line note naming ``what`` when it fails, with the reason
    the fetch gave (``LOCAL`` for a failure it did not classify: installing it in the home)."""
    try:
        _fetch(layout, rec, roles)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        from loci.kernel.remote import short

        return FetchNote(f"{scope}: {what} could not be fetched from {rec.get('source')} ({short(exc)[:200]}); "
                         f"{without}", exc.reason if isinstance(exc, FetchFailure) else LOCAL)
    return None


def _touch(layout: Layout, scope: str) -> None:
    path = _used_path(layout, scope)
    try:
        path.touch()
        os.utime(path)
    except OSError:
        pass   # a read-only home still answers; its cache order is left as it is


def _fetch(layout: Layout, rec: dict, roles=TERRITORY_ROLES) -> None:
    """The stores of ``rec`` of ``roles`` copied into a staging folder in the home, each checked
    against its size and sha256 (and a vector table against its schema), then moved into
    place, the query file last; all within ``fetch_seconds()`` (a ``transfers.Transfer``, which
    the warm engine's watchdog reads). A FetchFailure says why one could not be: the store not
    opened or a file not read from it, or not within that time (``UNREACHABLE``), a file not in
    it (``MISSING``), a file that is not what the manifest names (``DAMAGED``)."""
    from loci.kernel.transfers import track

    with track(fetch_seconds()) as transfer:
        _fetch_within(layout, rec, roles, transfer)


def _fetch_within(layout: Layout, rec: dict, roles, transfer) -> None:
    import posixpath
    import shutil
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from loci.kernel.remote import RemoteError, copy_counted, open_remote, short
    from loci.kernel.transfers import Overdue

    try:
        remote = open_remote(rec["source"])
    except (RemoteError, OSError) as exc:
        raise FetchFailure(short(exc), UNREACHABLE) from None
    layout.home.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".fetch-", dir=layout.home))
    try:
        def one(f: dict) -> tuple[dict, Path]:
            where = f"{remote.url}/{rec['folder']}/{f['path']}"
            target = stage / posixpath.basename(f["path"])
            try:
                copied, digest = copy_counted(remote.fs, posixpath.join(remote.base, rec["folder"], f["path"]),
                                              int(f["size"]), target, transfer)
            except FileNotFoundError:
                raise FetchFailure(f"{where} is missing", MISSING) from None
            except Overdue as exc:   # the S3 client's own errors name the file, this does not
                raise FetchFailure(f"{where} {exc}; a slow link?", UNREACHABLE) from None
            except OSError as exc:
                raise FetchFailure(short(exc), UNREACHABLE) from None
            if copied != f["size"] or digest != f["sha256"]:
                raise FetchFailure(f"{where} does not match its sha256 in the manifest (damaged or replaced; "
                                   f"`loci pull` takes the published version again)", DAMAGED)
            return f, target

        files = [f for f in rec["files"] if f["role"] in roles]
        with ThreadPoolExecutor(max_workers=len(files) or 1) as pool:
            got = list(pool.map(one, files))
        moves = []
        for f, path in got:
            dest = _dest(layout, rec, f["role"])
            if f["role"] in VECTOR_KEYS:
                moves.extend(_vector_moves(stage, f, path, dest, rec))
            else:
                _check_query_file(path, f"{remote.url}/{rec['folder']}/{f['path']}")
                moves.append((path, dest))
        moves.sort(key=lambda m: m[1] == layout.query_db(rec["scope"]))   # the query file last
        for src, dest in moves:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _check_query_file(path: Path, where: str) -> None:
    from loci.kernel.integrity import sqlite_problem

    found = sqlite_problem(path, thorough=True)
    if found:
        raise FetchFailure(f"{where} is {found}", DAMAGED)


def _vector_moves(stage: Path, f: dict, parquet: Path, dest: Path, rec: dict) -> list[tuple[Path, Path]]:
    """The vector table checked and written as the home's store (matrix, then manifest); one
    that does not read as a table of the manifest's model is ``DAMAGED`` (a system call's
    failure, which has an errno, is the home's: writing the store)."""
    from loci.kernel.remote import short
    from loci.kernel.vectorfiles import store_from_checked_parquet
    from loci.kernel.vectorstore import matrix_path, meta_path

    store = stage / f"{f['role']}.store"
    model = rec.get("multilingual" if f["role"] == "multilingual" else "embedding") or {}
    where = f"{rec['source']}/{rec['folder']}/{f['path']}"
    try:
        found = store_from_checked_parquet(parquet, store, VECTOR_KEYS[f["role"]], model)
    except (OSError, ValueError, KeyError) as exc:   # pyarrow's ArrowInvalid is a ValueError
        if getattr(exc, "errno", None):
            raise
        found = f"is unreadable ({short(exc)})"
    if found:
        raise FetchFailure(f"{where} {found}", DAMAGED)
    return [(matrix_path(store), matrix_path(dest)), (meta_path(store), meta_path(dest))]


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def evict(layout: Layout, keep: set[str] = frozenset(), cap: int | None = None,
          grace: float = CACHE_GRACE_SECONDS) -> list[str]:
    """Remove the fetched stores of the least recently used mapped scopes until what is
    cached fits ``cap`` (``cap_bytes()``); never ``keep`` nor a scope used in the last
    ``grace`` seconds. Returns the scopes evicted (their file names), oldest first. Reads
    only the scopes that were used (a stamp each), not every scope of the home."""
    import time

    cap = cap_bytes() if cap is None else cap
    now = time.time()
    keep = {safe_name(s) for s in keep}
    folder = layout.map_dir
    cached = []
    for stamp in folder.glob("*.used") if folder.is_dir() else ():
        try:
            rec = json.loads(stamp.with_suffix(".json").read_text(encoding="utf-8"))
            used = stamp.stat().st_mtime
        except (OSError, ValueError):
            continue
        if not rec.get("scope") or not isinstance(rec.get("files"), list):
            continue
        query = layout.query_db(rec["scope"])
        sizes = {p: _size(p) for p in _files(layout, rec) if p.is_file()}
        files = [p for p, size in sizes.items() if size is not None]   # another pass may have removed one
        if not files:   # nothing fetched (or all evicted): a map alone
            continue
        cached.append((used, stamp.stem, query, files, sum(sizes[p] for p in files)))
    total = sum(c[4] for c in cached)
    out = []
    for used, name, query, files, size in sorted(cached, key=lambda c: (c[0], c[1])):
        if total <= cap:
            break
        if name in keep or now - used < grace:
            continue
        files.sort(key=lambda p: p != query)   # the query file first: then the scope reads as mapped
        for path in files:
            path.unlink(missing_ok=True)
        total -= size
        out.append(name)
    return out
