"""What a figure is measured at: the clone's commit, the date, the machine and its load average."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git_sha(root: Path = ROOT) -> str:
    """The short commit of ``root``, with `` + uncommitted changes`` when tracked files differ."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "no commit yet"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head.stdout.strip() + (" + uncommitted changes" if dirty else "")


def machine() -> str:
    ram = "?"
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB RAM"
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cores()} cores ({cpu}), {ram}"


def cores() -> int:
    return os.cpu_count() or 1


def load() -> float:
    """The one-minute load average (0.0 where the system does not report one)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def stamp(extra: str = "") -> str:
    """One line to print above a script's figures: commit, date, machine, load average."""
    line = f"measured at loci {git_sha()}, {now()}, {machine()}, load average {load():.1f}"
    return line + (f"; {extra}" if extra else "")


class LoadWatch:
    """The highest one-minute load average seen while measuring: at each ``sample`` call and, once
    ``watch`` has started it, every ``every`` seconds in a background thread. A figure measured
    above the number of cores is noise (the machine is shared)."""

    def __init__(self, limit: float | None = None, every: float = 10.0):
        self.limit = float(cores()) if limit is None else limit
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()

    def watch(self) -> "LoadWatch":
        def loop():
            while not self._stop.wait(self.every):
                self.sample()
        threading.Thread(target=loop, name="load-watch", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def sample(self) -> float:
        value = load()
        self.samples.append(value)
        return value

    @property
    def peak(self) -> float:
        return max(self.samples, default=0.0)

    @property
    def over(self) -> bool:
        return self.peak > self.limit

    def describe(self) -> str:
        if not self.samples:
            return "not sampled"
        return (f"{self.samples[0]:.1f} at the start, {self.peak:.1f} at most, {self.samples[-1]:.1f} at the end "
                f"({len(self.samples)} samples; {cores()} cores)")
