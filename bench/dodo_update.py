"""``python -m loci.dodo`` against ``loci update`` after the same kind of one-file commit.

For each round: commit one edited file in one repository, run ``loci update`` with its
output going to a file; commit again, run ``python -m loci.dodo`` the same way. Reports
each run's wall time, CPU time, the longest stretch with no new output in the file
(what a CI log reader waits through), and the no-change run of each. Run it on COPIES
(it commits into REPO):

    python bench/dodo_update.py --home $HOME_COPY --repo $CORPUS_COPY/click [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def commit_one_file(repo: Path, n: int) -> None:
    """Append a line to the README (or the first tracked Markdown file) and commit it."""
    target = next((p for p in (repo / "README.md", repo / "README.rst") if p.exists()), None)
    if target is None:
        target = repo / "NOTES.md"
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(f"\nBench note {n}: the zanzibar pelican telemetry {time.time_ns()}.\n")
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "-C", str(repo), "add", target.name], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", f"bench note {n}"], check=True, env=env)


def timed(argv: list[str], env: dict) -> dict:
    """Run ``argv`` with stdout and stderr to a file; wall, CPU and the longest silence in it."""
    with tempfile.NamedTemporaryFile("w+b", suffix=".log", delete=False) as out:
        path = Path(out.name)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(path, "wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        size, last, silence = 0, start, 0.0
        while proc.poll() is None:
            time.sleep(0.05)
            now, grown = time.perf_counter(), path.stat().st_size
            if grown != size:
                size, last = grown, now
            silence = max(silence, now - last)
    wall = time.perf_counter() - start
    silence = max(silence, wall - (last - start)) if path.stat().st_size == size else silence
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = path.read_text(errors="replace")
    path.unlink()
    return {"rc": proc.returncode, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "longest_silence_s": round(silence, 2), "lines": len(text.splitlines()), "tail": text[-300:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--repo", type=Path, required=True, help="a registered repository (a copy: it is committed into)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print the end of each run's output")
    args = ap.parse_args(argv)
    env = {**os.environ, "LOCI_HOME": str(args.home), "HF_HUB_OFFLINE": "1"}
    update = [sys.executable, "-m", "loci", "update"]
    dodo = [sys.executable, "-m", "loci.dodo"]
    rows = []
    timed(update, env)  # settle: both start from a home that is up to date
    for n in range(args.rounds):
        for name, cmd in (("loci update", update), ("python -m loci.dodo", dodo)):
            commit_one_file(args.repo, n)
            row = {"run": name, "round": n, **timed(cmd, env)}
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "tail"}), flush=True)
        if args.verbose:
            print(row["tail"], flush=True)
    for name, cmd in (("loci update (no change)", update), ("python -m loci.dodo (no change)", dodo)):
        row = {"run": name, **timed(cmd, env)}
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "tail"}), flush=True)
        if args.verbose:
            print(row["tail"], flush=True)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
