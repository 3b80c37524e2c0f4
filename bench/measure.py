"""Measuring a subprocess: wall time, exit code, output and peak RSS; plus disk
size, artifact snapshots and percentiles."""
from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TIME_BIN = "/usr/bin/time"


@dataclass
class Measured:
    """One finished (or failed to start / timed out) command."""

    argv: list[str]
    rc: int
    wall_s: float
    peak_rss_kb: int | None
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.rc == 0

    def error_line(self) -> str:
        """The last non-empty line of stderr (or stdout), for a table cell."""
        for text in (self.stderr, self.stdout):
            lines = [l.strip() for l in text.splitlines() if l.strip()]
            if lines:
                return lines[-1][:160]
        return f"exit {self.rc}"


def summed_time(fn, spent: dict, key: str):
    """``fn`` wrapped so that every call adds its wall time to ``spent[key]`` (a stage's share of
    a run, however often it is called)."""
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - start
    return wrapper


def _has_gnu_time() -> bool:
    return os.access(TIME_BIN, os.X_OK)


def run_measured(argv: list[str], *, env: dict | None = None, cwd: str | Path | None = None,
                 timeout: float = 600.0) -> Measured:
    """Run ``argv`` with no stdin; a missing program or a timeout is a failed Measured, never a raise."""
    rss_file = None
    full = list(argv)
    if _has_gnu_time():
        fd, rss_file = tempfile.mkstemp(prefix="bench-rss-")
        os.close(fd)
        full = [TIME_BIN, "-q", "-f", "%M", "-o", rss_file, *argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    try:
        proc = subprocess.run(full, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = 124, _text(exc.stdout), _text(exc.stderr) + f"\ntimed out after {timeout:.0f}s"
    except OSError as exc:
        rc, out, err = 127, "", f"cannot run {argv[0]}: {exc}"
    wall = time.perf_counter() - start
    peak = _read_rss(rss_file)
    if peak is None:
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        # ru_maxrss of children is a running maximum: only a rise is attributable
        peak = after if after > before else None
    return Measured(list(argv), rc, wall, peak, out, err)


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def _read_rss(path: str | None) -> int | None:
    if not path:
        return None
    try:
        text = Path(path).read_text().strip().splitlines()
        Path(path).unlink()
        return int(text[-1]) if text and text[-1].isdigit() else None
    except (OSError, ValueError):
        return None


def dir_size(path: str | Path) -> int:
    """Bytes on disk under ``path`` (allocated blocks), 0 when it does not exist."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += st.st_blocks * 512
    return total


def snapshot(path: str | Path) -> dict[str, int]:
    """Relative file path -> mtime_ns for every file under ``path``."""
    out = {}
    base = Path(path)
    for root, _dirs, files in os.walk(base):
        for name in files:
            full = Path(root) / name
            try:
                out[str(full.relative_to(base))] = full.stat().st_mtime_ns
            except OSError:
                continue
    return out


def changed_files(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """Files that are new or whose mtime moved between two snapshots."""
    return sorted(p for p, m in after.items() if before.get(p) != m)


def scopes_touched(changed: list[str], scope_names: list[str]) -> list[str]:
    """Scope names whose per-scope artifact (file or folder named after the scope) changed."""
    def norm(s: str) -> str:
        return s.lower().replace("-", "_")

    by_norm = {norm(n): n for n in scope_names}
    hit = set()
    for rel in changed:
        for part in Path(rel).parts:
            stem = norm(part.split(".")[0]) if "." in part else norm(part)
            if stem in by_norm:
                hit.add(by_norm[stem])
    return sorted(hit)


def percentile(values: list[float], p: float) -> float | None:
    """Linear-interpolated percentile (numpy's default); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


TAIL_LINES = 15


class ChildFailed(SystemExit):
    """A child process that failed: its command, exit status and last lines of output, as the
    message a script ends with (a SystemExit, so no traceback)."""

    def __init__(self, argv: list[str], rc: int, tail: list[str]):
        self.argv, self.rc, self.tail = list(argv), rc, list(tail)
        shown = " ".join(str(a) for a in argv)
        lines = "\n".join(f"  | {line}" for line in tail) or "  (no output)"
        super().__init__(f"error: `{shown[:200]}` exited {rc}; its last lines:\n{lines}")


def run_checked(argv: list[str], *, env: dict | None = None, cwd: str | Path | None = None,
                stream: bool = False, tail: int = TAIL_LINES) -> str:
    """Run ``argv`` (stdin closed); return its output (stdout and stderr merged). A non-zero exit
    raises ChildFailed with the last ``tail`` lines; ``stream`` also prints every line as it comes."""
    from collections import deque

    try:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as exc:
        raise ChildFailed(argv, 127, [f"cannot run {argv[0]}: {exc}"]) from None
    kept: list[str] = []
    last: deque[str] = deque(maxlen=tail)
    for line in proc.stdout:
        kept.append(line)
        last.append(line.rstrip("\n"))
        if stream:
            print(line, end="", flush=True)
    proc.stdout.close()
    if proc.wait() != 0:
        raise ChildFailed(argv, proc.returncode, [l for l in last if l.strip()])
    return "".join(kept)
