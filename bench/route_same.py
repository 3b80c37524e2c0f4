"""Route (or ask) every labelled question one-shot style and print one JSON line each, so two
versions of the code can be diffed on the same home (a speed change must not move an answer).

    LOCI_HOME=H PYTHONPATH=OLD python bench/route_same.py [--ask] > old.jsonl
    LOCI_HOME=H PYTHONPATH=NEW python bench/route_same.py [--ask] > new.jsonl
    diff old.jsonl new.jsonl

Each question gets a fresh session, as a `loci route` process does; a question's ``cwd``
(a scope name) is that scope's registered path.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # as the CLI runs: one BLAS thread

QUESTIONS = Path("/work/shared/corpus/dev-questions.jsonl")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--ask", action="store_true", help="run `ask` (routing and the answer blocks)")
    ap.add_argument("--fast", action="store_true")
    args = ap.parse_args(argv)
    from loci.query.ask import ask, open_session, route_question

    rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    paths = {s.name: s.path for s in open_session().registry.scopes}
    for row in rows:
        session = open_session()
        cwd = paths.get(row["cwd"]) if row.get("cwd") else None
        if args.ask:
            out = ask(session, row["question"], cwd=cwd, fast=args.fast).to_json()
        else:
            out = route_question(session, row["question"], cwd=cwd, fast=args.fast).to_json()
        print(json.dumps({"id": row["id"], **out}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
