"""Progress a log can read: one line at least every ``interval`` seconds while a build runs.

On a terminal the CLI draws rich bars (``cli_common.bar_progress``); anywhere else
(a CI log, a pipe, a file) ``LogProgress`` writes plain lines such as

    loci setting up: 12/44 tasks (0.8/s, ETA 40 s); embedding black: 1200/2634 texts (45/s, ETA 32 s) [elapsed 51 s]

(the time since the build began, so a log read later shows where the time went).

It is a ``loci_pipeline.tasks.Progress`` (the reporter a BuildContext carries) and
prints when an event arrives and the last line is ``interval`` old, and from a
heartbeat thread when no event arrives for that long (loading a model, one big
graphify run), so a log is never silent for longer than the interval.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO

from loci_pipeline.tasks import Progress

LOG_INTERVAL = 10.0  # seconds between two lines, at most


def _eta(remaining: float, rate: float) -> str:
    if rate <= 0:
        return "ETA ?"
    seconds = remaining / rate
    if seconds < 90:
        return f"ETA {seconds:.0f} s"
    return f"ETA {seconds / 60:.0f} min"


def _elapsed(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"


def _rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


class LogProgress(Progress):
    """Plain progress lines on ``out``; ``clock`` and ``heartbeat`` are there for tests."""

    def __init__(self, label: str, out: TextIO | None = None, *, interval: float = LOG_INTERVAL,
                 clock: Callable[[], float] = time.monotonic, heartbeat: bool = True):
        self.label, self.out, self.interval, self.clock = label, out or sys.stderr, interval, clock
        self.total = self.done = 0
        self.born = self.began = self.last = clock()
        self.running: dict[str, float] = {}   # task -> when it started
        self.encodings: dict[str, tuple[int, int, float, int]] = {}  # scope -> done, total, since, done then
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._heartbeat = heartbeat

    # --- the build's events ------------------------------------------------------------------

    def planned(self, total: int) -> None:
        with self._lock:
            self.total, self.done, self.running = total, 0, {}
            self.began = self.clock()
        self._start()
        if total:
            self._emit(force=True)

    def started(self, task: str) -> None:
        with self._lock:
            self.running[task] = self.clock()
        self._emit()

    def finished(self, task: str) -> None:
        with self._lock:
            self.done += 1
            if self.done > self.total:  # tasks made after the plan (create_after): the size is unknown
                self.total = 0
            self.running.pop(task, None)
            scope = task.split(":", 1)[-1]
            self.encodings.pop(scope, None) if task.startswith("vectors:") else None
        self._emit(force=self.total > 0 and self.done >= self.total)

    def encoding(self, scope: str, done: int, total: int) -> None:
        with self._lock:
            now = self.clock()
            _, _, since, first = self.encodings.get(scope, (0, total, now, done))
            self.encodings[scope] = (done, total, since, first)
        self._emit()

    # --- lines ----------------------------------------------------------------------------------

    def active(self) -> bool:
        return ((self.total > 0 and self.done < self.total) or bool(self.running)
                or any(d < t for d, t, _, _ in self.encodings.values()))

    def line(self) -> str:
        now = self.clock()
        parts = []
        if self.total:
            rate = _rate(self.done, now - self.began)
            parts.append(f"{self.done}/{self.total} tasks ({rate:.2g}/s, {_eta(self.total - self.done, rate)})")
        else:  # tasks made once the scan ran (doit's create_after) are not counted up front
            parts.append(f"{self.done} tasks done")
        if self.running and not self.encodings:
            task, since = max(self.running.items(), key=lambda kv: kv[1])
            parts[-1] += f", running {task} ({now - since:.0f} s)"
        for scope, (done, total, since, first) in self.encodings.items():
            if done >= total:   # finished: the line shows the encodings still running
                continue
            rate = _rate(done - first, now - since)
            parts.append(f"embedding {scope}: {done}/{total} texts ({rate:.0f}/s, {_eta(total - done, rate)})")
        return f"loci {self.label}: " + "; ".join(parts) + f" [elapsed {_elapsed(now - self.born)}]"

    def tick(self, slack: float = 0.0) -> None:
        """What the heartbeat does: a line if the build is running and the last one is old
        (``slack``: the heartbeat's own period, so no silence outlasts the interval)."""
        self._emit(slack=slack)

    def _emit(self, force: bool = False, slack: float = 0.0) -> None:
        with self._lock:
            now = self.clock()
            if not (force or (self.active() and now - self.last >= self.interval - slack)):
                return
            self.last = now
            text = self.line()
        self.out.write(text + "\n")
        self.out.flush()

    def _start(self) -> None:
        if not self._heartbeat or self._thread is not None:
            return

        period, stop = min(0.5, self.interval / 4), self._stop

        def beat() -> None:
            while not stop.wait(period):
                self.tick(slack=period)

        self._thread = threading.Thread(target=beat, name="loci-progress", daemon=True)
        self._thread.start()

    def idle(self) -> None:
        """The run ended: the heartbeat thread stops (the next ``planned`` starts another)."""
        self.close()

    def close(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2)
        self._stop = threading.Event()


def log_progress(label: str) -> LogProgress:
    """The reporter a build gets when its output is not a terminal."""
    return LogProgress(label, interval=LOG_INTERVAL)
