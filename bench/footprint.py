"""Footprint rows for the bench: what the home holds on disk, and how often a build speaks in a log.

    python bench/footprint.py [HOME] [--reference-home DIR] [-- loci index --force]

HOME defaults to ``$LOCI_HOME``, else ``bench/.cache/home-22`` (``python bench/prepare.py``).

``home_rows`` sizes each top-level part of a home; ``progress_gaps`` runs a build
command with its output piped (not a terminal), stamps every line it writes and
returns the longest silence. Both are small functions bench/run.py can call.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

if __name__ == "__main__":  # run as a script: the checkout's bench package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def tree_bytes(path: Path) -> int:
    """Bytes on disk under ``path`` (allocated blocks, as `du` counts them)."""
    path = Path(path)
    if path.is_file():
        return path.stat().st_blocks * 512
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def home_rows(home: Path, reference: Path | None = None) -> list[tuple[str, str]]:
    """(part, size) for each top-level entry of ``home``, then the total and, given the
    reference's home, the ratio."""
    home = Path(home)
    rows = [(p.name, f"{tree_bytes(p) / 1e6:.1f} MB") for p in sorted(home.iterdir())]
    total = tree_bytes(home)
    rows.append(("**total**", f"{total / 1e6:.1f} MB"))
    if reference is not None:
        ref = tree_bytes(reference)
        rows.append(("reference home", f"{ref / 1e6:.1f} MB ({total / max(ref, 1):.2f}x)"))
    return rows


def progress_gaps(argv: list[str], env: dict | None = None, cwd: str | None = None) -> tuple[float, int, float]:
    """Run ``argv`` with stdout and stderr piped; (longest silence in seconds, lines, wall seconds)."""
    start = time.monotonic()
    stamps: list[float] = []
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, cwd=cwd)

    def drain(stream) -> None:
        for _ in stream:
            stamps.append(time.monotonic())

    readers = [threading.Thread(target=drain, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)]
    for r in readers:
        r.start()
    proc.wait()
    for r in readers:
        r.join()
    proc.stdout.close()
    proc.stderr.close()
    end = time.monotonic()
    points = [start, *sorted(stamps), end]
    return max(b - a for a, b in zip(points, points[1:])), len(stamps), end - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home", nargs="?", help="a built home (default: $LOCI_HOME, else bench/.cache/home-22)")
    ap.add_argument("--reference-home")
    ap.add_argument("command", nargs="*", help="a build command to time the silences of (after --)")
    args = ap.parse_args(argv)
    from bench.inputs import home_dir

    args.home = str(home_dir(args.home))
    print("| part | size |\n|---|---|")
    for part, size in home_rows(Path(args.home), Path(args.reference_home) if args.reference_home else None):
        print(f"| {part} | {size} |")
    if args.command:
        gap, lines, wall = progress_gaps(args.command, {"LOCI_HOME": args.home})
        print(f"\n`{' '.join(args.command)}` with its output piped: {lines} lines in {wall:.1f} s, "
              f"longest silence {gap:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
