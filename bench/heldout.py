"""A held-out check: 40 labelled questions over 16 published packages nobody tuned on.

    python bench/heldout.py lay-out [--dest DIR]        # the 16 repositories (pip, ~1 min)
    LOCI_HOME=H loci setup DIR -y                        # a home over them (~5 min on 2 cores)
    python bench/eval_folds.py --home H --questions bench/data/heldout-questions.jsonl

The questions (``bench/data/heldout-questions.jsonl``, session 18) were written by helpers who read
only the packages' own files, never loci's code, nor its development questions: named, plain-words
and paraphrased questions, code structure, and questions asked from inside a project, 8 families of
confusable neighbours (tenacity / backoff, arrow / python-dateutil, loguru / structlog, marshmallow /
cattrs ...). ``lay-out`` downloads each package's source distribution at the version the labels
were written against (``PINNED``: evidence lines are line numbers) with the registry's own client
and makes it a git repository of one commit, as ``bench/unrelated_bed.py fetch`` does. Every rule
chosen on the development questions can be read here on repositories that chose nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.unrelated_bed import download, make_repo, unpack  # noqa: E402

QUESTIONS = ROOT / "bench" / "data" / "heldout-questions.jsonl"
DEFAULT_DEST = inputs.CACHE / "heldout"
PINNED = {"arrow": "1.4.0", "backoff": "2.2.1", "cachetools": "8.0.2", "cattrs": "26.2.1", "croniter": "7.0.0",
          "loguru": "0.7.3", "marshmallow": "4.4.0", "more-itertools": "11.2.1", "python-dateutil": "4.0.0",
          "python-dotenv": "1.2.4", "semver": "3.1.2", "sortedcontainers": "2.4.0", "structlog": "26.1.0",
          "tabulate": "0.8.10", "tenacity": "9.2.1", "xmltodict": "1.0.4"}


def lay_out(dest: Path) -> list[str]:
    """Each pinned package a repository ``dest/NAME`` (those already there are kept); the names."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, version in PINNED.items():
        folder = dest / name
        if folder.is_dir():
            continue
        with tempfile.TemporaryDirectory() as dl:
            archive = download("pypi", name, Path(dl), version)
            if archive is None:
                inputs.fail(f"{name}=={version}: no source archive", "check that the package index is reachable")
            unpack(archive, folder)
        make_repo(folder)
        print(f"{name} {version}: {inputs.shown(folder)}", flush=True)
    return list(PINNED)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lay = sub.add_parser("lay-out", help="download and lay out the 16 repositories")
    lay.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="where (default bench/.cache/heldout)")
    args = ap.parse_args(argv)
    names = lay_out(args.dest)
    print(f"{len(names)} repositories in {inputs.shown(args.dest)}; questions: {inputs.shown(QUESTIONS)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
