"""How much redaction masks on real repositories: chunks with masked spans, per kind and
per repository, and a sample of what was masked so each can be judged a secret or not.

    python -m bench.redaction [DIR] [--sample N] [--seed S]

DIR (default ``bench/.cache/corpus``, laid out by ``shared/corpus/make-dev-corpus.sh`` on first use,
``bench/inputs.py``) holds one repository per folder. Each is collected exactly as
the build does (whole files and commit messages redacted before chunking). Besides the
chunks, it counts every span masked in the collected texts (code included, most of which
never becomes a chunk) and prints a sample of the original spans, cut to 70 characters.
"""
from __future__ import annotations

import argparse
import contextlib
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

import pipeline.collect
from bench import inputs
from pipeline.redact import redact, secrets_in

_MARK = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
SHOWN = 70


def repositories(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def masked_kinds(text: str) -> set[str]:
    return set(_MARK.findall(text))


@contextlib.contextmanager
def recording(spans: list[tuple[str, str]]):
    """While active, the collector's redaction also appends (kind, original) to ``spans``."""
    def redact_and_record(text: str):
        spans.extend(secrets_in(text))
        return redact(text)
    saved = pipeline.collect.redact
    pipeline.collect.redact = redact_and_record
    try:
        yield
    finally:
        pipeline.collect.redact = saved


def measure(root: Path) -> tuple[list[tuple[str, int, int, Counter]], Counter, list[tuple[str, str, str]], float]:
    """Per repository (name, chunks, chunks masked, chunks masked per kind), totals,
    (repo, kind, original) of every masked span, seconds spent collecting (recording included)."""
    rows, totals, spans = [], Counter(), []
    seconds = 0.0
    for repo in repositories(root):
        found: list[tuple[str, str]] = []
        with recording(found):
            start = time.perf_counter()
            got = pipeline.collect.collect_scope(repo.name, repo)
            seconds += time.perf_counter() - start
        spans += [(repo.name, kind, value) for kind, value in found]
        per_kind: Counter = Counter()
        masked = 0
        for chunk in got.chunks:
            kinds = masked_kinds(chunk.text + "\n" + chunk.heading)
            per_kind.update(kinds)
            masked += bool(kinds)
        totals.update({"chunks": len(got.chunks), "chunks_masked": masked})
        totals.update({f"kind:{k}": v for k, v in per_kind.items()})
        rows.append((repo.name, len(got.chunks), masked, per_kind))
    return rows, totals, spans, seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", type=Path, help="a folder of repositories (default: the dev corpus)")
    inputs.add_shared(ap)
    ap.add_argument("--sample", type=int, default=40, help="masked spans to print (default 40)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.root is None:
        args.root = inputs.corpus_dir(shared=args.shared)
    if not args.root.is_dir():
        print(f"bench.redaction: {args.root} is not a directory; pass a folder of repositories",
              file=sys.stderr)
        return 2
    rows, totals, spans, seconds = measure(args.root)
    print(f"{'repository':24} {'chunks':>7} {'masked':>7}  kinds")
    for name, n, masked, per_kind in rows:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(per_kind.items()))
        print(f"{name:24} {n:>7} {masked:>7}  {kinds}")
    print(f"{'total':24} {totals['chunks']:>7} {totals['chunks_masked']:>7}  "
          f"({totals['chunks_masked'] / max(totals['chunks'], 1):.2%} of chunks; collected in {seconds:.1f} s)")
    for key in sorted(k for k in totals if k.startswith("kind:")):
        print(f"  chunks with {key[5:]}: {totals[key]}")
    print(f"spans masked in collected texts (code included): {len(spans)}  "
          + ", ".join(f"{k} {v}" for k, v in sorted(Counter(k for _, k, _ in spans).items())))
    random.Random(args.seed).shuffle(spans)
    print(f"\nsample of {min(args.sample, len(spans))} of {len(spans)} masked spans:")
    for repo_name, kind, value in sorted(spans[:args.sample]):
        shown = value.replace("\n", "\\n")
        shown = shown if len(shown) <= SHOWN else shown[:SHOWN - 3] + "..."
        print(f"  {repo_name:16} [{kind}]  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
