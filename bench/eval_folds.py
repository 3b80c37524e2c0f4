"""Score the labelled questions on a built home, per fold, through the same path as `loci ask`.

    LOCI_HOME=/path/to/home python bench/eval_folds.py [--questions FILE] [--misses] [--json OUT]

Prints overall and per-family figures for all questions, fold A (tuned) and fold B (untuned).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.folds import score_folds, shared_dir  # noqa: E402
from loci.query import evalgen, scoring  # noqa: E402
from loci.query.ask import open_session  # noqa: E402

DEFAULT_QUESTIONS = shared_dir() / "corpus" / "dev-questions.jsonl"
COLS = ("n", "top1", "set_f1", "abstain_precision", "abstain_recall", "hit5")


def _row(name: str, m: dict) -> str:
    cells = [str(m["n"])] + [scoring.fmt_pct(m[k]) for k in COLS[1:]]
    return f"| {name} | " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", default=str(DEFAULT_QUESTIONS))
    ap.add_argument("--misses", action="store_true", help="list the questions routed wrongly")
    ap.add_argument("--json", help="write the per-fold reports and results here")
    args = ap.parse_args(argv)
    questions = scoring.load_questions(args.questions)
    session = open_session(keep_full_index=True)
    report, results, notes = evalgen.run_labelled(session, questions)
    out = {}
    for fold, rep in score_folds(questions, results).items():
        out[fold] = rep.as_dict()
        print(f"\n### {fold} ({rep.overall.n} questions)\n")
        print("| family | " + " | ".join(COLS) + " |")
        print("|---" * (len(COLS) + 1) + "|")
        print(_row("**all**", out[fold]["overall"]))
        for fam, m in sorted(out[fold]["families"].items()):
            print(_row(fam, m))
    for note in notes:
        print(f"note: {note}")
    if args.misses:
        for w in evalgen.labelled_misses(report, results, questions):
            got = w["outcome"] + (f" {', '.join(w['scopes'])}" if w["scopes"] else "")
            want = "abstain" if w["mode"] == "abstain" else ", ".join(w["gold"])
            print(f"  {w['id']} [{w['family']}]: {w['question']}\n      wanted {want}, got {got}")
    if args.json:
        Path(args.json).write_text(json.dumps({"reports": out, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
