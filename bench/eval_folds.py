"""Score the labelled questions on a built home, per fold, through the same path as `loci ask`.

    python bench/eval_folds.py [--home H] [--questions FILE | --shared DIR] [--misses] [--answers] [--fast] [--json OUT]

The home defaults to ``$LOCI_HOME``, else ``bench/.cache/home-22`` (``python bench/prepare.py``
builds it); the questions to ``corpus/dev-questions.jsonl`` of the shared folder (``bench/inputs.py``).

Prints overall and per-family figures for all questions, fold A (tuned) and fold B (untuned).
``top1_answered`` is top-1 that also counts a first scope other than the gold one whose first five
passages hold every answer term of the label (``loci.query.scoring``): beside many other scopes,
how much of the loss is a neighbour that answers.
``--answers`` lists the questions routed to a gold scope whose answer is not among the first
five: the evidence wanted, the five passages given (kind, source, score) and where the first
hit ranks when twenty are asked for.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.folds import fold_of, score_folds  # noqa: E402
from bench.stamp import stamp  # noqa: E402
from loci.query import evalgen, scoring  # noqa: E402
from loci.query.ask import open_session  # noqa: E402

COLS = ("n", "top1", "set_f1", "abstain_precision", "abstain_recall", "hit5", "hit5_routed", "top1_answered")


def _row(name: str, m: dict) -> str:
    cells = [str(m["n"])] + [scoring.fmt_pct(m[k]) for k in COLS[1:]]
    return f"| {name} | " + " | ".join(cells) + " |"


def print_folds(questions: list[dict], results: dict) -> dict:
    """Print the per-family table of all questions, fold A and fold B; return the reports as dicts."""
    out = {}
    for fold, rep in score_folds(questions, results).items():
        out[fold] = rep.as_dict()
        print(f"\n### {fold} ({rep.overall.n} questions)\n")
        print("| family | " + " | ".join(COLS) + " |")
        print("|---" * (len(COLS) + 1) + "|")
        print(_row("**all**", out[fold]["overall"]))
        for fam, m in sorted(out[fold]["families"].items()):
            print(_row(fam, m))
    return out


DEEP_K = 20


def _gold_blocks(question: dict, result: dict | None) -> list[dict]:
    gold = set(question["gold_scopes"])
    return [b for b in (result or {}).get("blocks") or () if b.get("scope") in gold]


def answer_misses(session, questions: list[dict], results: dict, checkouts=None) -> list[str]:
    """For each question routed to a gold scope but missing hit@5: what it wanted, the five
    answers given (kind, source, score) and where its first hit ranks when twenty are asked for."""
    from loci.query.ask import ask

    report = scoring.score(questions, results)
    by_id = {q["id"]: q for q in questions}
    lines = []
    for s in report.questions:
        q = by_id[s.id]
        if s.hit5 is not False or not _gold_blocks(q, results.get(s.id)):
            continue
        need_all = q["mode"] == "one"
        deep = ask(session, q["question"], cwd=evalgen._cwd_of(session, q.get("cwd"), checkouts), k=DEEP_K).to_json()
        lines.append(f"\n## {s.id} [{s.family}] fold {fold_of(q)}: {q['question']}")
        lines.append(f"   wants {q.get('evidence')} terms {q.get('answer_terms')}")
        for block in _gold_blocks(q, deep):
            ev = [scoring.parse_evidence(e) for e in q.get("evidence") or ()]
            ev = [e for e in ev if e.scope == block["scope"]]
            ranks = scoring.hit_ranks(block, ev, list(q.get("answer_terms") or ()), need_all, DEEP_K)
            lines.append(f"   [{block['scope']}] first hit in {DEEP_K}: episode {ranks[0]}, structure {ranks[1]}")
            for i, ep in enumerate(block["episodes"][:max(5, (ranks[0] or 0) + 1)]):
                text = " ".join(str(ep.get("text") or "").split())[:90]
                lines.append(f"     {i:>2} {ep['score']:.3f} {ep['kind']:<9} {ep['source']}:{ep['line']}  {text}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", help="the labelled questions (default: corpus/dev-questions.jsonl of --shared)")
    inputs.add_shared(ap)
    inputs.add_home(ap)
    ap.add_argument("--misses", action="store_true", help="list the questions routed wrongly")
    ap.add_argument("--answers", action="store_true",
                    help="list the questions routed to a gold scope whose answer is not in the first five, "
                         "with the evidence wanted, the five given and where the first hit ranks in twenty")
    ap.add_argument("--json", help="write the per-fold reports and results here")
    ap.add_argument("--fast", action="store_true", help="as `ask --fast`: words only, no vectors (what the "
                    "second opinion and semantic ranking are worth)")
    ap.add_argument("--checkouts", metavar="DIR", help="a folder holding a clone of each repository under its "
                    "scope's name: a question asked from a pulled scope is asked from its clone there, as a "
                    "team member asks from their own (default: a pulled scope has no folder, so it abstains)")
    args = ap.parse_args(argv)
    try:
        questions = scoring.load_questions(inputs.questions_file(args.questions, args.shared))
    except ValueError as exc:
        inputs.fail(str(exc), "pass --questions FILE of labelled questions (the dev-questions.jsonl format)")
    home = inputs.use_home(inputs.home_dir(args.home))
    print(stamp(f"home {inputs.shown(home)}"))
    session = open_session(keep_full_index=True)
    report, results, notes = evalgen.run_labelled(session, questions, fast=args.fast, checkouts=args.checkouts)
    out = print_folds(questions, results)
    for note in notes:
        print(f"note: {note}")
    if args.misses:
        for w in evalgen.labelled_misses(report, results, questions):
            got = w["outcome"] + (f" {', '.join(w['scopes'])}" if w["scopes"] else "")
            want = "abstain" if w["mode"] == "abstain" else ", ".join(w["gold"])
            print(f"  {w['id']} [{w['family']}]: {w['question']}\n      wanted {want}, got {got}")
    if args.answers:
        for line in answer_misses(session, questions, results, args.checkouts):
            print(line)
    if args.json:
        Path(args.json).write_text(json.dumps({"reports": out, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
