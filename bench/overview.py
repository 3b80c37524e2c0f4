"""Does "what does this project do?" open with the project's own description?

    python bench/overview.py --corpus DIR [--home $HOME_22] [--questions Q ...]

Asks each question (four plain ways of asking what a project is, by default) from inside every
repository folder under ``--corpus`` whose name is a scope of the home, as `loci ask` does from
a checkout, and counts the answers whose first passage is the project's top-level README. A
project describes itself there; the other files a question about "this project" matches
(CONTRIBUTING, the code of conduct, the licence) say how to work on it, not what it is. Prints
one line per answer that does not open with the README, then the count.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.stamp import stamp  # noqa: E402

QUESTIONS = ("what does this project do?", "what is this project for?", "what is this?",
             "what problem does this library solve?")


def opens_with_readme(blocks: list[dict], scope: str) -> bool:
    mine = [b for b in blocks if b["scope"] == scope]
    first = (mine[0].get("episodes") or [{}])[0] if mine else {}
    path = str(first.get("source") or "")
    return "/" not in path and path.lower().startswith("readme")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap)
    ap.add_argument("--corpus", required=True, help="a folder holding each repository under its scope's name")
    ap.add_argument("--questions", nargs="+", default=list(QUESTIONS), help="the questions asked in each folder")
    args = ap.parse_args(argv)
    from loci.query.ask import ask, open_session

    home = inputs.use_home(inputs.home_dir(args.home))
    print(stamp(f"home {inputs.shown(home)}"))
    session = open_session(keep_full_index=True)
    corpus = Path(args.corpus)
    scopes = [s for s in session.indexed() if (corpus / s).is_dir()]
    if not scopes:
        inputs.fail(f"no folder under {corpus} is named as a scope of the home",
                    "pass --corpus the folder the home's repositories were registered from")
    opened = total = 0
    for scope in scopes:
        for question in args.questions:
            res = ask(session, question, cwd=corpus / scope).to_json()
            total += 1
            if opens_with_readme(res["blocks"], scope):
                opened += 1
                continue
            first = [(e["source"], e["line"]) for b in res["blocks"] for e in b.get("episodes", [])[:1]]
            print(f"  {scope}: {question!r} -> {res['outcome']} {first}")
    print(f"{opened} of {total} answers open with the project's README ({len(scopes)} projects)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
