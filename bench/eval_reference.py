"""Score the reference loci-mem 0.6.0 on labelled questions, as bench/eval_folds.py scores loci.

    python bench/eval_reference.py --questions FILE --checkouts DIR [--work DIR] [--no-build] [--json OUT]

``--checkouts`` holds one repository per scope, under the scope's name (``bench/heldout.py
lay-out`` makes them); the reference's ``graphs`` step writes its graphify output inside them, so
pass a copy. A home is built over them in ``--work`` (kept; default a temporary folder) with
``bench/tools.py``'s reference build steps (scan, graphs, index, calibrate; its embeddings are
skipped: they download a model), then every question is asked through its CLI as ``bench/run.py``
asks it (``bench/runner.py``): ``ask --fast -k 5`` for the scored answer (routing and passages,
translated into loci's contract by ``bench/reference.py``) and ``route`` beside it; a question
asked from inside a project is asked with ``--cwd`` its checkout. Prints eval_folds.py's
per-family tables (all, fold A, fold B), the build's wall times, and the questions whose command
failed or whose ``route`` outcome differs from its ``ask``'s.
``--no-build`` reuses the home already in ``--work``.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs, reference  # noqa: E402
from bench.eval_folds import print_folds  # noqa: E402
from bench.runner import StepResult, _query  # noqa: E402
from bench.tools import Tool, parse_json, reference_tool  # noqa: E402
from loci.query import scoring  # noqa: E402

CACHE = ROOT / "bench" / ".cache"


def build_home(tool: Tool, neutral: Path, log=print) -> dict[str, StepResult]:
    """The tool's build steps in order, each timed; a failed step stops the build."""
    tool.home.mkdir(parents=True, exist_ok=True)
    steps = {}
    for step in tool.build:
        steps[step.name] = StepResult.of(tool.run(step.args, neutral))
        log(f"  {step.name}: {steps[step.name].wall_s:.1f} s" +
            ("" if steps[step.name].ok else f" FAILED {steps[step.name].error}"))
        if not steps[step.name].ok:
            break
    return steps


def _routing(result: dict | None) -> tuple | None:
    return None if result is None else (result.get("outcome"), tuple(result.get("scopes") or ()))


def ask_all(tool: Tool, questions: list[dict], neutral: Path, log=print) -> tuple[dict, dict, list[str]]:
    """Every question through ``ask`` (scored) and ``route``, as bench/run.py asks them.
    Returns (ask results by id, route results by id, notes on failures and disagreements)."""
    answers, routes, notes = {}, {}, []
    for i, q in enumerate(questions, 1):
        runs, answers[q["id"]] = _query(tool, q, neutral, timed=True)
        route = runs["route"]
        obj = parse_json(route.stdout) if route.ok else None
        routes[q["id"]] = tool.translate(obj) if obj is not None else None
        for kind, m in runs.items():
            if not m.ok:
                notes.append(f"{q['id']}: {kind} failed, exit {m.rc}: {m.error_line()}")
            elif parse_json(m.stdout) is None:
                notes.append(f"{q['id']}: {kind} printed no JSON")
        a, r = _routing(answers[q["id"]]), _routing(routes[q["id"]])
        if a is not None and r is not None and a != r:
            notes.append(f"{q['id']}: route says {r[0]} {list(r[1])}, ask says {a[0]} {list(a[1])}")
        if i % 10 == 0:
            log(f"  {i}/{len(questions)} questions")
    return answers, routes, notes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", required=True, help="the labelled questions (dev-questions.jsonl format)")
    ap.add_argument("--checkouts", required=True, type=Path,
                    help="a folder with one repository per scope, named as the scope (a copy: graphs writes in it)")
    ap.add_argument("--work", type=Path, help="build the reference's home here and keep it (default: a temporary folder)")
    ap.add_argument("--no-build", action="store_true", help="reuse the home already built in --work")
    ap.add_argument("--ref-venv", type=Path, default=CACHE / "ref-venv",
                    help="the reference's venv (installed there once when missing)")
    ap.add_argument("--json", help="write the per-fold reports, the build's steps and the per-question results here")
    args = ap.parse_args(argv)
    try:
        questions = scoring.load_questions(args.questions)
    except (ValueError, OSError) as exc:
        inputs.fail(str(exc), "pass --questions FILE of labelled questions (the dev-questions.jsonl format)")
    checkouts = args.checkouts.resolve()
    if not checkouts.is_dir():
        inputs.fail(f"{checkouts}: no such folder", "pass --checkouts DIR holding one repository per scope")
    if args.no_build and not args.work:
        inputs.fail("--no-build needs --work", "pass the --work folder of an earlier run")
    work = args.work.resolve() if args.work else Path(tempfile.mkdtemp(prefix="loci-ref-eval-"))
    neutral = work / "neutral"
    neutral.mkdir(parents=True, exist_ok=True)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    tool = reference_tool(reference.ensure_venv(args.ref_venv, log), work / "home", checkouts,
                          reference.REF_VERSION)
    started = time.time()
    build = {}
    if not args.no_build:
        log(f"{tool.label}: building {tool.home} over {checkouts} (skipped: {', '.join(tool.skipped)})")
        build = build_home(tool, neutral, log)
        if not all(s.ok for s in build.values()):
            inputs.fail("the reference's build failed", "see the step above; its home is in " + str(tool.home))
    built = time.time()
    log(f"{tool.label}: {len(questions)} questions through ask --fast -k 5 and route")
    answers, routes, notes = ask_all(tool, questions, neutral, log)
    asked = time.time()

    print(f"{tool.label}, home {tool.home}, checkouts {checkouts}, {len(questions)} questions "
          f"(build {built - started:.0f} s, questions {asked - built:.0f} s)")
    out = print_folds(questions, answers)
    for note in notes:
        print(f"note: {note}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "tool": tool.label, "checkouts": str(checkouts), "home": str(tool.home),
            "build": {k: asdict(v) for k, v in build.items()}, "skipped": tool.skipped,
            "build_s": built - started, "questions_s": asked - built,
            "reports": out, "results": answers, "routes": routes, "notes": notes}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
