"""How much redaction masks on real repositories: chunks with masked spans, per kind and
per repository, and a sample of what was masked so each can be judged a secret or not.

    python -m bench.redaction [DIR] [--sample N] [--seed S] [--against REV]

DIR (default ``bench/.cache/corpus``, laid out by ``shared/corpus/make-dev-corpus.sh`` on first use,
``bench/inputs.py``) holds one repository per folder. Each is collected exactly as
the build does (whole files and commit messages redacted before chunking). Besides the
chunks, it counts every span masked in the collected texts (code included, most of which
never becomes a chunk) and prints a sample of the original spans, cut to 70 characters.
``--against REV`` also runs the redactor of git revision REV over the same collected texts, in
the same run: the spans each masks (those only one masks listed) and the time each takes.
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

import loci_pipeline.collect
from bench import inputs
from loci_pipeline.redact import redact, secrets_in

_MARK = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
SHOWN = 70
ROUNDS = 3


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
    saved = loci_pipeline.collect.redact
    loci_pipeline.collect.redact = redact_and_record
    try:
        yield
    finally:
        loci_pipeline.collect.redact = saved


def measure(root: Path) -> tuple[list[tuple[str, int, int, Counter]], Counter, list[tuple[str, str, str]], float]:
    """Per repository (name, chunks, chunks masked, chunks masked per kind), totals,
    (repo, kind, original) of every masked span, seconds spent collecting (recording included)."""
    rows, totals, spans = [], Counter(), []
    seconds = 0.0
    for repo in repositories(root):
        found: list[tuple[str, str]] = []
        with recording(found):
            start = time.perf_counter()
            got = loci_pipeline.collect.collect_scope(repo.name, repo)
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


def redactor_at(rev: str):
    """``redact`` as it was at git revision ``rev`` (its module and keyblocks loaded apart)."""
    import subprocess
    import tempfile

    root, tmp = Path(__file__).resolve().parents[1], Path(tempfile.mkdtemp(prefix="redact-"))
    for name in ("redact", "keyblocks"):
        src = subprocess.run(["git", "-C", str(root), "show", f"{rev}:pipeline/{name}.py"],
                             capture_output=True, text=True, check=True).stdout
        (tmp / f"rev_{name}.py").write_text(src.replace("from loci_pipeline.keyblocks import", "from rev_keyblocks import"))
    sys.path.insert(0, str(tmp))
    import rev_redact

    return rev_redact.redact, rev_redact.secrets_in


def compare(root: Path, rev: str) -> None:
    """Spans masked and seconds spent by REV's redactor and this one, over the same texts."""
    texts: list[str] = []
    saved = loci_pipeline.collect.redact
    loci_pipeline.collect.redact = lambda text: (texts.append(text), saved(text))[1]
    try:
        for repo in repositories(root):
            loci_pipeline.collect.collect_scope(repo.name, repo)
    finally:
        loci_pipeline.collect.redact = saved
    old_redact, old_spans = redactor_at(rev)
    seconds: dict[str, float] = {}
    for _round in range(ROUNDS):          # alternated, the best of each: a shared machine is noisy
        for label, fn in ((rev, old_redact), ("this tree", redact)):
            start = time.perf_counter()
            for text in texts:
                fn(text)
            seconds[label] = min(seconds.get(label, float("inf")), time.perf_counter() - start)
    t_old, t_new = seconds[rev], seconds["this tree"]
    old = Counter(s for t in texts for s in old_spans(t))
    new = Counter(s for t in texts for s in secrets_in(t))
    print(f"\n{len(texts)} collected texts: {rev} masks {sum(old.values())} spans in {t_old:.2f} s, "
          f"this tree {sum(new.values())} in {t_new:.2f} s (ratio {t_new / t_old:.2f})")
    for label, only in ((f"only {rev}", old - new), ("only this tree", new - old)):
        for (kind, value), n in sorted(only.items()):
            print(f"  {label}: [{kind}] {value[:SHOWN]!r} x{n}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", type=Path, help="a folder of repositories (default: the dev corpus)")
    inputs.add_shared(ap)
    ap.add_argument("--sample", type=int, default=40, help="masked spans to print (default 40)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--against", metavar="REV", help="compare with the redactor of this git revision")
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
    if args.against:
        compare(args.root, args.against)
    return 0


if __name__ == "__main__":
    sys.exit(main())
