"""Questions about a project asked from inside it, across a home: what each answer opens with.

    python bench/inside_probe.py --home HOME --checkouts DIR [--scope NAME ...] [--k 3] [--json OUT]

For every scope of ``HOME`` (or those named) whose checkout is ``DIR/<scope>``, asks the ten
questions of ``QUESTIONS`` with ``loci ask --json`` from that folder (in-process, no warm engine)
and prints the first ``--k`` citations of each answer, then one count: how many answers to a
question that asks no licence hold a licence text among them (a licence answers only the licence
question; docs/decisions/answer-ranking.md, section 19). Run it with two checkouts of loci
(``PYTHONPATH``) on the same home to compare what they open with.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

QUESTIONS = ("What does this project do?", "How do I install it?", "How do I run the tests?",
             "What license is this under?", "What changed recently?", "How do I use this?",
             "What are the main modules here?", "How do I contribute?", "What version is this?",
             "What does it depend on?")
LICENCE_TEXT = re.compile(r"^(?:licen[cs]e|copying|unlicense)[\w.-]*:\d+$", re.I)


def opens_with(home: str, checkout: Path, question: str, k: int) -> list[str] | None:
    """The first ``k`` citations of the answer asked from ``checkout``; None when it failed."""
    env = {**os.environ, "LOCI_HOME": home, "LOCI_SERVER": "off"}
    run = subprocess.run([sys.executable, "-m", "loci", "ask", "--json", "--k", str(k), question],
                         cwd=checkout, env=env, capture_output=True, text=True)
    try:
        blocks = json.loads(run.stdout).get("blocks") or []
    except json.JSONDecodeError:
        return None
    return [f"{e['source']}:{e['line']}" for b in blocks for e in b.get("episodes", [])][:k]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--checkouts", required=True, type=Path, help="one folder per scope name")
    ap.add_argument("--scope", action="append", default=[])
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    registry = json.loads((Path(args.home) / "scopes.json").read_text())
    scopes = args.scope or sorted(entry["name"] for entry in registry.get("scopes", ()))
    rows, licensed, asked = [], 0, 0
    for scope in scopes:
        checkout = args.checkouts / scope
        if not checkout.is_dir():
            continue
        for question in QUESTIONS:
            cited = opens_with(args.home, checkout, question, args.k)
            rows.append({"scope": scope, "question": question, "cited": cited})
            print(f"{scope} | {question} | {cited}", flush=True)
            if cited is not None and "license" not in question.lower():
                asked += 1
                licensed += any(LICENCE_TEXT.match(c) for c in cited)
    print(f"{licensed} of {asked} answers to a question that asks no licence hold a licence text in their first {args.k}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "licensed": licensed, "asked": asked}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
