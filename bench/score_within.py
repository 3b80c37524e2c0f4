"""Score a bed's answers to enumerations within the projects the questions were written about.

"Which of my projects are Apache-2.0 licensed?" has a gold set drawn from the 22 development
repositories. Beside 1,000 other real projects its true answer is larger and unknown (55 of
them carry that licence), so set F1 on a bed counts every right member outside the 22 as a
wrong one. This rescoring keeps, of each enumeration's members, only those inside the
universe (the scopes of the home the questions were labelled on) and scores the rest as
usual: it says whether the 22's members are found and the 22's non-members left out. Nothing
else changes: a routed question's first scope outside the universe is still wrong.

    python bench/score_within.py RESULTS.json --universe-home HOME [--questions Q]

RESULTS.json is what `bench/eval_folds.py --json` wrote on the bed; HOME the labelled home.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.eval_folds import print_folds  # noqa: E402
from loci.query import scoring  # noqa: E402


def within(results: dict, universe: set[str]) -> dict:
    """``results`` with each enumeration's scopes narrowed to ``universe``; other answers as given."""
    out = {}
    for qid, r in results.items():
        if r and r.get("outcome") == "enumerated":
            r = dict(r, scopes=[s for s in r.get("scopes") or () if s in universe])
        out[qid] = r
    return out


def universe_of(home: Path) -> set[str]:
    """The scopes registered in ``home`` (its registry's names)."""
    from loci.kernel.config import Layout
    from loci.kernel.registry import load_registry

    return set(load_registry(Layout(home)).names())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="the --json file of bench/eval_folds.py on the bed")
    ap.add_argument("--universe-home", required=True, help="the home the questions were labelled on")
    ap.add_argument("--questions", help="the labelled questions (default: the development questions)")
    args = ap.parse_args(argv)
    qfile = args.questions or str(Path(__file__).resolve().parent.parent.parent / "shared/corpus/dev-questions.jsonl")
    questions = scoring.load_questions(qfile)
    results = json.loads(Path(args.results).read_text())["results"]
    print_folds(questions, within(results, universe_of(Path(args.universe_home))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
