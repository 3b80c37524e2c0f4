"""How much redaction masks on real repositories: chunks with masked spans, per kind and
per repository, and a sample of what was masked so each can be judged a secret or not.

    python -m bench.redaction [DIR] [--sample N] [--seed S]

DIR (default /work/corpus) holds one repository per folder. Each is collected exactly as
the build does (whole files and commit messages redacted before chunking); the sample
re-reads the masked files and commits and prints the original spans, cut to 70 characters.
"""
from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from pipeline.collect import collect_scope
from pipeline.redact import secrets_in

_MARK = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
SHOWN = 70


def repositories(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def masked_kinds(text: str) -> set[str]:
    return set(_MARK.findall(text))


def original(repo: Path, path: str) -> str:
    """The raw text a chunk was cut from: a file of the repository or a commit message."""
    if path.startswith("commit:"):
        out = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%s%n%n%b", path[7:]],
                             capture_output=True, text=True, errors="replace", check=False)
        return out.stdout
    full = Path(path) if Path(path).is_absolute() else repo / path
    try:
        return full.read_text(errors="replace")
    except OSError:
        return ""


def measure(root: Path) -> tuple[list[tuple[str, int, Counter]], Counter, list[tuple[str, str]], float]:
    """Per repository (name, chunks, chunks masked per kind), totals, masked (repo, path), seconds."""
    rows, totals, where = [], Counter(), []
    start = time.perf_counter()
    for repo in repositories(root):
        got = collect_scope(repo.name, repo)
        per_kind: Counter = Counter()
        for chunk in got.chunks:
            kinds = masked_kinds(chunk.text + "\n" + chunk.heading)
            per_kind.update(kinds)
            if kinds:
                totals["chunks_masked"] += 1
                where.append((repo.name, chunk.path))
        totals["chunks"] += len(got.chunks)
        totals.update({f"kind:{k}": v for k, v in per_kind.items()})
        rows.append((repo.name, len(got.chunks), per_kind))
    return rows, totals, where, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default="/work/corpus", type=Path)
    ap.add_argument("--sample", type=int, default=40, help="masked spans to print (default 40)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not args.root.is_dir():
        print(f"bench.redaction: {args.root} is not a directory; pass a folder of repositories",
              file=sys.stderr)
        return 2
    rows, totals, where, seconds = measure(args.root)
    print(f"{'repository':24} {'chunks':>7} {'masked':>7}  kinds")
    for name, n, per_kind in rows:
        masked = sum(1 for r, _ in where if r == name)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(per_kind.items()))
        print(f"{name:24} {n:>7} {masked:>7}  {kinds}")
    print(f"{'total':24} {totals['chunks']:>7} {totals['chunks_masked']:>7}  "
          f"({totals['chunks_masked'] / max(totals['chunks'], 1):.2%} of chunks; collected in {seconds:.1f} s)")
    for key in sorted(k for k in totals if k.startswith("kind:")):
        print(f"  chunks with {key[5:]}: {totals[key]}")
    spans = []
    for repo_name, path in sorted(set(where)):
        for kind, value in secrets_in(original(args.root / repo_name, path)):
            spans.append((repo_name, path, kind, value))
    random.Random(args.seed).shuffle(spans)
    print(f"\nsample of {min(args.sample, len(spans))} of {len(spans)} masked spans in those files/commits:")
    for repo_name, path, kind, value in sorted(spans[:args.sample]):
        shown = value.replace("\n", "\\n")
        shown = shown if len(shown) <= SHOWN else shown[:SHOWN - 3] + "..."
        print(f"  {repo_name}/{path}  [{kind}]  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
