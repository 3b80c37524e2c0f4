"""The warm engine's memory over the labelled questions, in one process: resident MB after the
session is warmed, after the first question, every 50 questions and after all of them, with
what its byte budget holds (docs/decisions/engine.md, "Memory").

    LOCI_HOME=HOME python bench/engine_memory.py [--questions FILE] [--budget-mb N] [--latency]

``--latency`` instead times ``Engine.answer`` on 20 spread questions without a cwd, asked twice
(the second pass measures what the byte budget kept), and prints each pass's p50 and max.

Each question is answered as `loci route --json` and `loci ask --json` would be by the engine
(``Engine.answer``), with the question's cwd (a scope name) as that scope's registered path.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from loci.front.engine_client import engine_environment  # noqa: E402  (standard library only)

# the engine in this process encodes as the started engine does: with its BLAS threads, set
# before numpy loads (a user's OPENBLAS_NUM_THREADS is kept, as the engine keeps it)
os.environ["OPENBLAS_NUM_THREADS"] = engine_environment()["OPENBLAS_NUM_THREADS"]

from bench import inputs  # noqa: E402


def resident_mb(kind: str = "VmRSS") -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith(kind + ":"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, help="the labelled questions (default: "
                    "corpus/dev-questions.jsonl of --shared)")
    inputs.add_shared(ap)
    ap.add_argument("--budget-mb", type=float, help="the byte budget (default: Params.engine_cache_bytes)")
    ap.add_argument("--latency", action="store_true")
    ap.add_argument("--one-shot-heap", action="store_true",
                    help="fix glibc's thresholds as a one-shot process does (oneshot._return_big_buffers); "
                         "the engine's process leaves them dynamic and trims after each reply")
    ap.add_argument("--arena-per-thread", action="store_true",
                    help="skip the engine's allocator set-up (engine_server.one_heap): glibc's arena per "
                         "thread and pyarrow's own pool, as before session 9")
    args = ap.parse_args(argv)
    from loci.front.engine_server import _trim_heap, one_heap
    from loci.query.engine import Engine

    if not args.arena_per_thread:
        one_heap()   # as the engine's process does, first
    if args.one_shot_heap:
        from loci.front.oneshot import _return_big_buffers

        _return_big_buffers()
    engine = Engine(cache_bytes=int(args.budget_mb * 2**20) if args.budget_mb else None)
    session = engine.session()
    qfile = inputs.questions_file(args.questions, args.shared)
    rows = [json.loads(x) for x in qfile.read_text().splitlines() if x.strip()]
    if args.latency:
        return latency(engine, rows)

    def line(label: str) -> None:
        print(f"{label:>16}: {resident_mb():6.1f} MB resident, {resident_mb('RssAnon'):6.1f} MB anonymous, "
              f"{engine.cached_bytes() / 2**20:6.1f} MB in the byte budget", flush=True)

    line("warmed")
    paths = {s.name: s.path for s in session.registry.scopes}
    for i, row in enumerate(rows, 1):
        q = {"question": row["question"], "cwd": paths.get(row["cwd"]) if row.get("cwd") else None}
        engine.answer("route", q, True)
        engine.answer("ask", q, True)
        _trim_heap()   # as the engine's process does after each reply
        if i == 1 or i % 50 == 0 or i == len(rows):
            line(f"{i} questions")
    return 0


def latency(engine, rows: list[dict]) -> int:
    import statistics
    import time

    from bench.oneshot import spread

    qs = [r["question"] for r in spread([r for r in rows if not r.get("cwd")], 20)]
    for op in ("route", "ask"):
        for n in (1, 2):
            times = []
            for q in qs:
                start = time.perf_counter()
                engine.answer(op, {"question": q, "cwd": None}, True)
                times.append(time.perf_counter() - start)
            print(f"{op} pass {n}: p50 {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
