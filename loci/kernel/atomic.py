"""Atomic writes and the advisory build lock.

Every artifact is written to a temp file in the same directory and moved into
place with ``os.replace``, so a reader sees the old file or the new one, never
a torn one. The build lock records the holder's pid; a lock whose holder is
dead is broken, a live one makes the second build refuse.
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


def write_json(target: Path, obj: Any) -> None:
    write_bytes(target, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def write_with(target: Path, writer: Callable[[Path], None]) -> None:
    """Call ``writer(tmp_path)`` and move the result into place atomically."""
    with atomic_path(target) as tmp:
        writer(tmp)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno == errno.EPERM
    return True


@contextmanager
def build_lock(path: Path, what: str = "build") -> Iterator[None]:
    """Hold the advisory lock at ``path`` for the duration; refuse if a live process has it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = read_lock(path)
            if holder and _pid_alive(int(holder.get("pid", 0))) and int(holder["pid"]) != os.getpid():
                raise LockHeld(
                    f"another loci {holder.get('what', 'build')} is running (pid {holder['pid']}); "
                    f"wait for it to finish, or remove {path} if that process is gone"
                ) from None
            try:  # the holder is dead (or it is us, re-entering after a crash): break it
                path.unlink()
            except FileNotFoundError:
                pass
            continue
        with os.fdopen(fd, "w") as fh:
            json.dump({"pid": os.getpid(), "what": what}, fh)
        break
    else:
        raise LockHeld(f"could not take the build lock at {path}")
    try:
        yield
    finally:
        try:
            holder = read_lock(path)
            if holder and int(holder.get("pid", -1)) == os.getpid():
                path.unlink()
        except FileNotFoundError:
            pass


def read_lock(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text() or "{}")
    except (FileNotFoundError, ValueError):
        return {}
