"""Every labelled question through loci's warm engine and in-process: the `--json` outputs must be
byte-identical; and the engine's resident memory after all of them.

    python bench/engine_same.py --home HOME_COPY [--checkout .] [--ask-only | --route-only] [--limit N]

Each question (with ``--cwd`` its scope's registered path when it has one, else ``--no-cwd``) is
run as `loci route --json` and `loci ask --json` twice, as a user runs them (the installed
console script, ``bench.oneshot.plain_python``): once answered by the engine (started by one
warm-up question first) and once with ``--no-server``. Prints the number of differing answers
(and the first few), then the engine's status. Use a copy of a home: the engine writes its
socket and log into it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.oneshot import engine, plain_python, warm_up  # noqa: E402
from bench.tools import OFFLINE  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, type=Path)
    ap.add_argument("--checkout", type=Path, default=ROOT)
    ap.add_argument("--questions", type=Path, help="the labelled questions (default: "
                    "corpus/dev-questions.jsonl of --shared)")
    inputs.add_shared(ap)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--route-only", action="store_true")
    ap.add_argument("--ask-only", action="store_true")
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in inputs.questions_file(args.questions, args.shared).read_text().splitlines() if line.strip()]
    rows = rows[: args.limit] if args.limit else rows
    paths = {s["name"]: s["path"] for s in json.loads((args.home / "scopes.json").read_text())["scopes"]}
    env = {**os.environ, **OFFLINE, "LOCI_HOME": str(args.home), "PYTHONPATH": str(args.checkout.resolve())}
    env.pop("LOCI_SERVER", None)
    exe = [plain_python()]
    ops = [op for op in ("route", "ask") if not (op == "ask" and args.route_only or op == "route" and args.ask_only)]
    engine(exe, env, "stop")
    warm_up(exe, env, "warm up")
    differ, failed = [], 0
    for row in rows:
        where = ["--cwd", paths[row["cwd"]]] if row.get("cwd") in paths else ["--no-cwd"]
        for op in ops:
            argv_ = [*exe, op, "--json", *where, "--", row["question"]]
            warm = subprocess.run(argv_, env=env, cwd="/", capture_output=True, text=True, timeout=300)
            cold = subprocess.run([*argv_[:3], "--no-server", *argv_[3:]], env=env, cwd="/",
                                  capture_output=True, text=True, timeout=300)
            if warm.returncode or cold.returncode:
                failed += 1
            if (warm.stdout, warm.returncode) != (cold.stdout, cold.returncode):
                differ.append((row["id"], op))
    info = engine(exe, env, "status")
    n = len(rows) * len(ops)
    print(f"{n} answers ({len(rows)} questions x {', '.join(ops)}): {len(differ)} differ between the engine "
          f"and in-process; {failed} failed")
    for qid, op in differ[:10]:
        print(f"  differs: {qid} {op}")
    print(f"engine: {info.get('questions')} questions answered, {info.get('sessions')} session(s), "
          f"{info.get('rss_mb')} MB resident ({info.get('rss_anon_mb')} MB anonymous), "
          f"{info.get('cached_mb')} MB in its byte budget")
    engine(exe, env, "stop")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
