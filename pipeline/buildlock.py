"""One build lock per process: taken when the build tasks load, released at exit."""
from __future__ import annotations

import atexit

from loci.kernel.config import Layout
from loci.kernel.atomic import build_lock

_held: dict[str, object] = {}


def hold(layout: Layout) -> None:
    """Take the build lock for the rest of this process (re-entrant); raise LockHeld if busy."""
    key = str(layout.lock)
    if key in _held:
        return
    layout.home.mkdir(parents=True, exist_ok=True)
    cm = build_lock(layout.lock, "index")
    cm.__enter__()
    _held[key] = cm
    atexit.register(release, layout)


def release(layout: Layout) -> None:
    cm = _held.pop(str(layout.lock), None)
    if cm is not None:
        cm.__exit__(None, None, None)
