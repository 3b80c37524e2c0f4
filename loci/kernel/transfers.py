"""Transfers in flight in this process: a mapped scope's stores being fetched from where they are
published (``loci.kernel.territory``), each with a deadline it stops at.

The warm engine's watchdog and its status read them (``now``, ``waited``): a question waiting on
the network takes no CPU and reads nothing from storage, which the watchdog would otherwise take
for a hang; it is not one while its fetch is within its time (docs/decisions/engine.md).
Standard library only, and of that only ``threading`` and ``time``.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

# past its deadline a transfer may still be reading its last block (it stops at the next one):
# as long as the S3 client's own request timeout (loci.kernel.remote.REQUEST_TIMEOUT)
GRACE = 30.0


class Overdue(TimeoutError):
    """A transfer that has passed its deadline (``Transfer.check``)."""


class Transfer:
    """One transfer: since when (``time.monotonic``), until when, the bytes it has brought."""

    def __init__(self, deadline: float):
        self.since = time.monotonic()
        self.deadline = deadline
        self.bytes = 0

    def moved(self, size: int) -> None:
        with _guard:
            self.bytes += size
            _state["bytes"] += size

    def check(self) -> None:
        """Overdue once the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise Overdue(f"not fetched within {self.deadline - self.since:.0f} s "
                               f"({self.bytes / 2**20:.1f} MB came)")


@dataclass(frozen=True)
class InFlight:
    """What is being fetched now: ``scopes`` (one transfer each), ``bytes`` so far, ``for_s`` since the oldest began,
    ``left_s`` until the last deadline (negative past it), ``timely``: whether one is within its
    deadline and ``GRACE``, so that waiting on it is not a hang."""

    scopes: int
    bytes: int
    for_s: float
    left_s: float
    timely: bool


_guard = threading.Lock()
_active: set[Transfer] = set()
_state = {"bytes": 0, "waited": 0.0, "busy_since": 0.0}   # bytes ever moved; seconds with one in flight


@contextmanager
def track(seconds: float):
    """A Transfer in flight for the block's duration, due within ``seconds``."""
    transfer = Transfer(time.monotonic() + seconds)
    with _guard:
        if not _active:
            _state["busy_since"] = transfer.since
        _active.add(transfer)
    try:
        yield transfer
    finally:
        with _guard:
            _active.discard(transfer)
            if not _active:
                _state["waited"] += time.monotonic() - _state["busy_since"]


def now() -> InFlight | None:
    """The transfers in flight (None when there is none)."""
    at = time.monotonic()
    with _guard:
        if not _active:
            return None
        since = min(t.since for t in _active)
        last = max(t.deadline for t in _active)
        return InFlight(len(_active), sum(t.bytes for t in _active), at - since, last - at, at <= last + GRACE)


def moved() -> int:
    """Bytes every transfer of this process has brought so far."""
    return _state["bytes"]


def waited() -> float:
    """Seconds this process has spent with a transfer in flight, so far."""
    with _guard:
        return _state["waited"] + (time.monotonic() - _state["busy_since"] if _active else 0.0)
