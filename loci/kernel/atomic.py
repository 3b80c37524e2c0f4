"""Atomic writes and the advisory build lock.

Every artifact is written to a temp file in the same directory and moved into
place with ``os.replace``, so a reader sees the old file or the new one, never
a torn one. The build lock records the holder's pid and start time; a lock
whose holder is dead (or whose pid was reused) is broken, a live one makes the
second build refuse. Registry edits hold an OS file lock instead.
"""
from __future__ import annotations

import errno
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from loci.kernel.errors import LociError


_UMASK = os.umask(0)
os.umask(_UMASK)


class LockHeld(LociError, RuntimeError):
    """Another live process holds the build lock."""


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temp path beside ``target``; on success move it into place."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; artifacts get the usual mode
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_bytes(target: Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def write_json(target: Path, obj: Any, *, compact: bool = False) -> None:
    """``obj`` as JSON, indented; ``compact`` for a file that grows with the corpus (one line:
    json's C encoder writes it, about ten times faster than the indenting one)."""
    if compact:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    else:
        text = json.dumps(obj, indent=2, sort_keys=True)
    write_bytes(target, (text + "\n").encode())


def write_with(target: Path, writer: Callable[[Path], None]) -> None:
    """Call ``writer(tmp_path)`` and move the result into place atomically."""
    with atomic_path(target) as tmp:
        writer(tmp)


def ensure_writable(home: Path) -> None:
    """Make the home directory if needed and check a file can be created in it; a StoreError
    naming it and the fix otherwise. The probe has a name of its own (commands running side by
    side must not remove each other's) and is gone when this returns."""
    from loci.kernel.errors import StoreError

    home = Path(home)
    try:
        home.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=home)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise StoreError(f"cannot write to {home} ({exc.strerror or exc}); "
                         f"set LOCI_HOME to a writable directory") from None


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, from /proc); None where unknown."""
    from loci.kernel.procfs import proc_fields

    try:
        return int((proc_fields(pid) or [])[19])
    except (ValueError, IndexError):
        return None


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno == errno.EPERM
    return True


def holder_alive(holder: dict | None) -> bool:
    """Whether the process a lock names still runs: its pid is alive and, when the lock
    recorded a start time, that pid still belongs to the process that started then
    (a reused pid does not)."""
    if not holder:
        return False
    pid = holder["pid"]
    if not _pid_alive(pid):
        return False
    started = holder.get("start")
    return started is None or process_start(pid) in (None, started)


_HELD: dict[str, int] = {}  # lock path -> nesting depth in this process


def _create_with(path: Path, data: bytes) -> bool:
    """Create ``path`` holding ``data`` in one step (never seen empty); False if it exists."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(tmp)


@contextmanager
def build_lock(path: Path, what: str = "build") -> Iterator[None]:
    """Hold the advisory lock at ``path`` for the duration; refuse if a live process has it.

    The lock records the holder's pid and start time. A lock whose holder is dead, whose
    pid now belongs to another process, or which is damaged (it names no holder) is broken.
    Re-entering in the process that holds it is allowed."""
    path = Path(path)
    key = str(path.resolve()) if path.parent.exists() else str(path)
    if _HELD.get(key):
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    me = {"pid": os.getpid(), "what": what, "start": process_start(os.getpid())}
    for _ in range(3):
        if _create_with(path, json.dumps(me).encode()):
            break
        _refuse_if_held(path, read_lock(path))
        # the holder is gone, its pid was reused, or the file is damaged: break it, one process at
        # a time, reading the holder again under that lock (a rival may have broken it first and
        # holds a fresh lock by now: removing it would run two builds at once)
        with file_lock(path.with_name(path.name + ".break")):
            _refuse_if_held(path, read_lock(path))
            try:
                path.unlink()
            except FileNotFoundError:
                pass
    else:
        raise LockHeld(f"could not take the build lock at {path}; remove it if no loci build is running")
    key = str(path.resolve())
    _HELD[key] = 1
    try:
        yield
    finally:
        _HELD.pop(key, None)
        holder = read_lock(path)
        if holder and holder["pid"] == os.getpid():
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def _refuse_if_held(path: Path, holder: dict | None) -> None:
    """LockHeld when ``holder`` (the lock at ``path``) is another live process."""
    if holder_alive(holder) and holder["pid"] != os.getpid():
        raise LockHeld(
            f"another loci {holder.get('what', 'build')} is running (pid {holder['pid']}); "
            f"wait for it to finish, or remove {path} if that process is gone"
        ) from None


def read_lock(path: Path) -> dict | None:
    """The lock's holder ``{"pid", "what", "start"}``; None when there is no lock or it names
    no holder (empty, not JSON, or of the wrong shape: ``.build.lock`` holding a list)."""
    from loci.kernel.schemas import LOCK, problem

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError, RecursionError):
        return None
    return data if problem(data, LOCK) is None else None


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive OS lock on ``path`` (waiting for it); released when the process dies."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
