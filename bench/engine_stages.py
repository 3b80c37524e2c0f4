"""Where a warm `loci route` / `loci ask` spends its wall time (docs/decisions/engine.md, "Where a
warm question's time goes").

    python bench/engine_stages.py --home HOME_COPY [--questions 20] [--runs 15] [--checkout .]

Two parts, on the same spread questions without a cwd as ``bench/oneshot.py``:

- **the client**, whole processes run as a user runs them (``bench.oneshot.plain_python``),
  alternated ``--runs`` times, p50 and min: a bare interpreter with and without ``site``; the
  console script's imports up to the socket; a warm `route --fast` (the engine's share is a
  lexical route of ~1-3 ms) and the warm `route`/`ask` of one question asked again (its encoding
  cached), so what is left above the bare interpreter is the client's own path;
- **the engine**, in this process: one ``Engine`` on the home (warmed as the engine warms), each
  question answered as `route --json` then `ask --json` (as the bench asks them), each stage
  timed by wrapping the function that does it: the question's encoding (``BertEncoder.encode``),
  the lexical route (``router.route``), the second opinion's affinities (``affinities``, less
  the encoding inside it), each scope's search (``search_block``, run in threads by ``ask``:
  summed), the payload for text (``engine.plain``; ``--json`` builds it in ``to_json``, inside the
  total) and the printed text (``printed``).
  Also one connection's round trip (``status``) to a running engine of the home, if one runs.

Use a copy of a home: the client part starts an engine in it (and stops it at the end).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from loci.front.engine_client import engine_environment  # noqa: E402  (standard library only)

# the engine in this process encodes as the started engine does: with its BLAS threads, set
# before numpy loads (a user's OPENBLAS_NUM_THREADS is kept, as the engine keeps it)
os.environ["OPENBLAS_NUM_THREADS"] = engine_environment()["OPENBLAS_NUM_THREADS"]

from bench import inputs  # noqa: E402
from bench.oneshot import engine, plain_python, spread, warm_up  # noqa: E402
from bench.stamp import stamp  # noqa: E402
from bench.measure import summed_time  # noqa: E402
from bench.tools import OFFLINE  # noqa: E402


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:6.1f} ms (min {min(values) * 1000:5.1f})" if values else "-"


def client_part(loci: str, env: dict, question: str, runs: int) -> None:
    py = str(Path(loci).parent / "python")
    cmds = {
        "python -S -c pass (no site)": [py, "-S", "-c", "pass"],
        "python -c pass (site)": [py, "-c", "pass"],
        "import loci.front.cli": [py, "-c", "import loci.front.cli"],
        "+ client imports": [py, "-c", "import loci.front.cli, loci.front.oneshot, loci.front.engine_client, "
                             "loci.kernel.home, zlib, _socket"],
        "warm route --fast": [loci, "route", "--fast", "--json", "--no-cwd", question],
        "warm route (encoding cached)": [loci, "route", "--json", "--no-cwd", question],
        "warm ask (encoding cached)": [loci, "ask", "--json", "--no-cwd", question],
        "in-process route --fast": [loci, "route", "--fast", "--no-server", "--json", "--no-cwd", question],
    }
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(runs):
        for label, argv in cmds.items():
            start = time.perf_counter()
            subprocess.run(argv, env=env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[label].append(time.perf_counter() - start)
    print(f"client, whole processes, {runs} runs alternated, p50 (min):")
    for label, values in times.items():
        print(f"  {label:32s} {ms(values)}")
    sys.path.insert(0, env["PYTHONPATH"])
    from loci.front import engine_client

    rtt = []
    for _ in range(runs * 4):
        start = time.perf_counter()
        engine_client.request(env["LOCI_HOME"], {"proto": engine_client.PROTOCOL, "op": "status"})
        rtt.append(time.perf_counter() - start)
    print(f"  {'one status round trip':32s} {ms(rtt)}")


def engine_part(home: str, questions: list[str]) -> None:
    os.environ["LOCI_HOME"] = home
    from loci.front import oneshot
    from loci.query import ask as ask_mod
    from loci.query import engine as engine_mod
    from loci.query.engine import Engine
    from loci.query.semantic import BertEncoder
    from loci.query.semantic_search import SemanticSide

    spent: dict[str, float] = defaultdict(float)

    def timed(owner, name: str, label: str):
        setattr(owner, name, summed_time(getattr(owner, name), spent, label))

    timed(BertEncoder, "encode", "encode the question")
    timed(ask_mod, "route", "lexical route")
    timed(SemanticSide, "affinities", "second opinion (with its encoding)")
    timed(ask_mod, "search_block", "search the scopes (summed over threads)")
    timed(engine_mod, "plain", "payload")
    timed(oneshot, "printed", "printed text")
    eng = Engine()
    eng.session()
    rows: dict[str, dict[str, list[float]]] = {op: defaultdict(list) for op in ("route", "ask")}
    for q in questions:
        for op in ("route", "ask"):
            spent.clear()
            start = time.perf_counter()
            payload = eng.answer(op, {"question": q, "cwd": None}, True)
            oneshot.printed(op, payload, as_json=True)
            total = time.perf_counter() - start
            for label, value in spent.items():
                rows[op][label].append(value)
            rows[op]["total (answer + printed)"].append(total)
    print(f"engine, in this process, {len(questions)} questions, route then ask each, per question: mean, "
          f"p50, max (a stage a question skips counts 0; the means add up to the total's):")
    labels = ["encode the question", "lexical route", "second opinion (with its encoding)",
              "search the scopes (summed over threads)", "payload", "printed text", "total (answer + printed)"]
    for op in ("route", "ask"):
        print(f"  {op}:")
        for label in labels:
            values = rows[op].get(label, [])
            values = values + [0.0] * (len(questions) - len(values))
            print(f"    {label:42s} {statistics.mean(values) * 1000:6.1f} {statistics.median(values) * 1000:6.1f} "
                  f"{max(values) * 1000:6.1f} ms")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap, "a copy of a built home (an engine is started in it)")
    ap.add_argument("--checkout", type=Path, default=ROOT)
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--questions-file", type=Path)
    inputs.add_shared(ap)
    args = ap.parse_args(argv)
    home = str(inputs.home_dir(args.home))
    rows = [json.loads(x) for x in inputs.questions_file(args.questions_file, args.shared).read_text().splitlines()
            if x.strip()]
    qs = [r["question"] for r in spread([r for r in rows if not r.get("cwd")], args.questions)]
    print(stamp())
    env = {**os.environ, **OFFLINE, "LOCI_HOME": home, "PYTHONPATH": str(args.checkout.resolve())}
    env.pop("LOCI_SERVER", None)
    loci = plain_python()
    exe = [loci]
    engine(exe, env, "stop")
    warm_up(exe, env, "warm up")
    subprocess.run([loci, "ask", "--json", "--no-cwd", qs[0]], env=env, cwd="/", capture_output=True)
    client_part(loci, env, qs[0], args.runs)
    engine(exe, env, "stop")
    engine_part(home, qs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
