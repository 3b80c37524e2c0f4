"""Make the inputs the bench scripts default to, from a fresh clone beside ``shared/``.

    python bench/prepare.py [--shared DIR] [--corpus DIR] [--home DIR] [--repos a,b] [--no-embed]

Lays out the development corpus (``shared/corpus/make-dev-corpus.sh``, default
``bench/.cache/corpus``) and builds a loci home over it with this clone's sources (``loci setup
CORPUS -y``, default ``bench/.cache/home-22``; on 2 cores about ten minutes, most of it the cold
embed). A home already built is left as it is (``--rebuild`` starts it again).
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_shared(ap)
    ap.add_argument("--corpus", type=Path, default=inputs.DEFAULT_CORPUS,
                    help="where the repositories are laid out (default bench/.cache/corpus)")
    ap.add_argument("--home", type=Path, default=inputs.DEFAULT_HOME,
                    help="the home to build (default bench/.cache/home-22)")
    ap.add_argument("--repos", default="", help="comma list of repositories (default: all 22)")
    ap.add_argument("--no-embed", action="store_true", help="lexical only: no vectors, no calibration")
    ap.add_argument("--rebuild", action="store_true", help="remove the home first")
    args = ap.parse_args(argv)
    repos = [r for r in args.repos.split(",") if r]
    corpus = inputs.lay_out_corpus(args.corpus, repos, args.shared)
    print(f"corpus: {inputs.shown(corpus)}", flush=True)
    if args.rebuild:
        shutil.rmtree(args.home, ignore_errors=True)
    if (args.home / "manifest.json").is_file():
        print(f"home: {inputs.shown(args.home)} (already built; --rebuild to start again)")
        return 0
    inputs.build_home(args.home, corpus, ["--no-embed", "--no-calibrate"] if args.no_embed else [])
    print(f"home: {inputs.shown(args.home)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
