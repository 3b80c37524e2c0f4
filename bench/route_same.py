"""Route (or ask) every labelled question one-shot style and print one JSON line each, so two
versions of the code can be diffed on the same home (a speed change must not move an answer).

    PYTHONPATH=$OLD python bench/route_same.py --home $H [--ask] > old.jsonl
    PYTHONPATH=. python bench/route_same.py --home $H [--ask] > new.jsonl
    diff old.jsonl new.jsonl

(``$OLD`` another checkout, ``$H`` a built home; the home defaults to ``$LOCI_HOME``, else
``bench/.cache/home-22``, and the questions to ``corpus/dev-questions.jsonl`` of ``--shared``.)

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

import inputs  # noqa: E402  (bench/inputs.py, beside this script: PYTHONPATH names the code compared)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, help="the labelled questions (default: "
                    "corpus/dev-questions.jsonl of --shared)")
    inputs.add_shared(ap)
    inputs.add_home(ap)
    ap.add_argument("--ask", action="store_true", help="run `ask` (routing and the answer blocks)")
    ap.add_argument("--fast", action="store_true")
    args = ap.parse_args(argv)
    from loci.query.ask import ask, open_session, route_question

    qfile = inputs.questions_file(args.questions, args.shared)
    inputs.use_home(inputs.home_dir(args.home))
    rows = [json.loads(line) for line in qfile.read_text().splitlines() if line.strip()]
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
