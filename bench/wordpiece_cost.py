"""What a one-shot question pays to tokenise: ``loci.query.wordpiece`` against the ``tokenizers`` library.

    python bench/wordpiece_cost.py [--rounds 5] [--questions N]

Each round starts a fresh process per tokenizer (alternated), which imports it, loads the
packaged model's vocabulary and tokenises the development questions one at a time, as
``loci ask`` does; it reports the wall time of import + load, of the tokenising, and the
growth of the process's resident memory (VmRSS) over both. The ids of the two must agree.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, sys, time

def rss():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmRSS")) / 1024

from loci.query.semantic import packaged_model_path
path, questions = packaged_model_path(), json.loads(sys.stdin.read())
before, t0 = rss(), time.perf_counter()
if sys.argv[1] == "wordpiece":
    from loci.query import wordpiece
    tok = wordpiece.load_from_vocab(path, 256)
    encode = tok.encode
else:
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256)
    encode = lambda q: tok.encode(q).ids
t1 = time.perf_counter()
ids = [encode(q) for q in questions]
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "tokenise_s": t2 - t1, "rss_mb": rss() - before, "ids": ids}))
"""


def one(kind: str, questions: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, kind], input=json.dumps(questions), text=True,
                         capture_output=True, check=True, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return json.loads(out.stdout)


def main(argv=None) -> int:
    from bench.stamp import stamp

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--questions", type=int, default=0, help="the first N development questions (default all)")
    args = ap.parse_args(argv)
    from bench import inputs

    rows = [json.loads(line) for line in inputs.questions_file().read_text().splitlines() if line.strip()]
    questions = [r["question"] for r in rows][:args.questions or None]
    print(stamp(f"{len(questions)} development questions"))
    runs: dict[str, list[dict]] = {"wordpiece": [], "tokenizers": []}
    for _ in range(args.rounds):
        for kind, got in runs.items():
            got.append(one(kind, questions))
    wp, lib = runs["wordpiece"], runs["tokenizers"]
    same = sum(a == b for a, b in zip(wp[0]["ids"], lib[0]["ids"]))
    print(f"ids equal for {same}/{len(questions)} questions\n")
    print("| tokenizer | import + load (median) | tokenising all (median) | RSS growth (median) |")
    print("|---|---|---|---|")
    for kind, got in runs.items():
        med = {k: statistics.median(r[k] for r in got) for k in ("load_s", "tokenise_s", "rss_mb")}
        print(f"| {kind} | {med['load_s'] * 1000:.0f} ms | {med['tokenise_s'] * 1000:.1f} ms | {med['rss_mb']:.1f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
