"""The build lock, held by the process that runs the tasks, around the run only.

``hold`` is re-entrant (counted): the runner takes it before doit starts and the
task reporter takes it again when a run begins, so a run started by plain
``doit`` is covered too; ``doit list``/``info`` never reach either.
"""
from __future__ import annotations

import atexit

from loci.kernel.atomic import build_lock
from loci.kernel.config import Layout

_held: dict[str, list] = {}   # lock path -> [context manager, depth]


def hold(layout: Layout) -> None:
    """Take the build lock (again); raise LockHeld if another live process has it."""
    key = str(layout.lock)
    if key in _held:
        _held[key][1] += 1
        return
    layout.home.mkdir(parents=True, exist_ok=True)
    cm = build_lock(layout.lock, "build")
    cm.__enter__()
    _held[key] = [cm, 1]
    atexit.register(_release_all, key)


def release(layout: Layout) -> None:
    """Undo one ``hold``; the lock file goes when the last one is undone."""
    key = str(layout.lock)
    entry = _held.get(key)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] <= 0:
        _release_all(key)


def _release_all(key: str) -> None:
    entry = _held.pop(key, None)
    if entry is not None:
        entry[0].__exit__(None, None, None)
