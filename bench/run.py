"""Measure loci against the reference loci-mem 0.6.0, side by side, in one run.

    python bench/run.py            # full run: the 22 repositories, every question (under 30 minutes on 2 cores)
    python bench/run.py --quick    # 3 small repositories (both folds), a question subset, one bed
    python bench/run.py --vectors-from bench/.cache/loci-last   # reuse the last run's vectors

Accuracy is reported on all questions and per fold of ``bench/folds.py`` (A tuned, B untuned).
loci runs from this checkout's sources (``PYTHONPATH``), whichever ``loci`` the venv installed.
Nothing to prepare: each tool's corpus copy is laid out by ``shared/corpus/make-dev-corpus.sh`` and
its home built in a work folder (temporary, or ``--work DIR``, kept); the reference is installed
once into ``bench/.cache/ref-venv``. Shared data: ``--shared``, else ``$LOCI_SHARED``, else
``../shared`` beside the clone.

Rewrites the generated part of bench/RESULTS.md (between its ``bench/run.py`` markers; the text
around them is kept) with the commit, date, machine and load average of the run, and writes the
raw figures to bench/.cache/last-run.json. A run on a machine whose load average is above its
number of cores does not start, and one that rises above it while measuring writes only the raw
figures, unless ``--force-load`` (the results then say so).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs, reference  # noqa: E402
from bench.dag import bench_dag, dag_section  # noqa: E402
from bench.folds import FOLD_A, FOLD_B  # noqa: E402
from bench.measure import ChildFailed  # noqa: E402
from bench.report import merged_results, render, scrubbed, stamped  # noqa: E402
from bench.stamp import LoadWatch, cores, git_sha, machine, now  # noqa: E402
from bench.runner import bench_synth, bench_tool, synth_beds  # noqa: E402
from bench.tools import loci_tool, reference_tool  # noqa: E402
from loci.query.scoring import load_questions  # noqa: E402

ALL_REPOS = sorted(FOLD_A | FOLD_B)
QUICK_REPOS = ["chalk", "rank_bm25", "walkdir"]   # fold A and fold B, three languages
CACHE = ROOT / "bench" / ".cache"


def subset(questions: list[dict], repos: list[str], limit: int | None) -> list[dict]:
    """Questions answerable within ``repos`` (abstentions always), at most ``limit`` per family."""
    keep, per_family = [], {}
    for q in questions:
        if q.get("cwd") and q["cwd"] not in repos or not set(q["gold_scopes"]) <= set(repos):
            continue
        if limit is not None and per_family.get(q["family"], 0) >= limit:
            continue
        per_family[q["family"]] = per_family.get(q["family"], 0) + 1
        keep.append(q)
    return keep


def source_digest() -> str:
    """A hash of the project's Python sources, to tell whether they changed during the run."""
    h = hashlib.sha1()
    for path in sorted([*ROOT.glob("loci/**/*.py"), *ROOT.glob("pipeline/**/*.py")]):
        h.update(path.as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="3 repositories, a question subset, one small bed")
    p.add_argument("--repos", default=None, help="comma list of repositories (default: all 22; quick: 3)")
    p.add_argument("--tools", default="loci,reference", help="comma list: loci, reference")
    p.add_argument("--loci-bin", type=Path, default=Path(sys.executable).parent,
                   help="folder holding the project's `loci` (default: this python's)")
    p.add_argument("--scales", default=None, help="synthetic bed sizes (default 25,100,500; quick 25)")
    p.add_argument("--no-synth", action="store_true")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    inputs.add_shared(p)
    p.add_argument("--work", type=Path, default=None,
                   help="work here and keep it (corpus copies, homes, beds; default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    p.add_argument("--force-load", action="store_true",
                   help="run and write the results although the load average is above the number of cores "
                        "(the results say so)")
    p.add_argument("--vectors-from", type=Path, default=None,
                   help="a loci home (e.g. bench/.cache/loci-last) whose vectors seed loci's home: the "
                        "cold embed then encodes only the chunks not found there (said in RESULTS.md)")
    return p.parse_args(argv)


def load_refusal(watch: LoadWatch, when: str) -> str:
    return (f"load average {watch.peak:.1f} {when} is above this machine's {cores()} cores: timings measured "
            "now are noise. Run again on a quiet machine, or pass --force-load (the results then say so)")


def main(argv=None) -> int:
    args = parse_args(argv)
    started, digest = time.time(), source_digest()
    watch = LoadWatch()
    if watch.sample() > watch.limit and not args.force_load:
        print(f"error: {load_refusal(watch, 'now')}", file=sys.stderr)
        return 2
    qfile = inputs.questions_file(None, args.shared)
    inputs.corpus_script(args.shared)
    repos = [r.strip() for r in args.repos.split(",") if r.strip()] if args.repos else \
        (QUICK_REPOS if args.quick else ALL_REPOS)
    questions = subset(load_questions(qfile), repos, 3 if args.quick else None)
    scales = [int(x) for x in (args.scales or ("25" if args.quick else "25,100,500")).split(",") if x]
    wanted = {t.strip() for t in args.tools.split(",") if t.strip()}
    work = args.work.resolve() if args.work else Path(tempfile.mkdtemp(prefix="loci-bench-"))
    neutral = work / "neutral"
    neutral.mkdir(parents=True, exist_ok=True)
    watch.watch()

    def log(msg: str) -> None:
        watch.sample()
        print(msg, flush=True)

    log(f"bench: {len(repos)} repositories, {len(questions)} questions, work folder {work}")

    tools, ref_version = [], None
    if "loci" in wanted:
        inputs.lay_out_corpus(work / "loci" / "corpus", repos, args.shared)
        tools.append(loci_tool(args.loci_bin, work / "loci" / "home", work / "loci" / "corpus", source=ROOT))
        if args.vectors_from:
            shutil.copytree(args.vectors_from / "vectors", work / "loci" / "home" / "vectors", dirs_exist_ok=True)
    if "reference" in wanted:
        try:
            ref_bin = reference.ensure_venv(CACHE / "ref-venv", log)
            ref_version = reference.REF_VERSION
            inputs.lay_out_corpus(work / "reference" / "corpus", repos, args.shared)
            tools.append(reference_tool(ref_bin, work / "reference" / "home",
                                        work / "reference" / "corpus", ref_version))
        except (RuntimeError, ChildFailed, subprocess.CalledProcessError, OSError) as exc:
            log(f"reference not available: {exc}")

    runs, dag_rows = {}, None
    for tool in tools:
        log(f"{tool.label}:")
        runs[tool.key] = bench_tool(tool, questions, repos, neutral, log)
        if tool.key == "loci":
            dag_rows = bench_dag(tool, repos, neutral, log)

    synth = []
    if not args.no_synth and tools:
        beds = synth_beds(work / "synth", scales, overlap=0.3, breadth_skew=0.5,
                          n_questions=12 if args.quick else 30)
        for n, (bed, qs) in beds.items():
            for tool in tools:
                synth.append(bench_synth(tool, work / "synth" / f"{tool.key}-home-{n}", n, bed, qs,
                                         neutral, cli_sample=8 if args.quick else 20, log=log))
    watch.sample()
    watch.stop()

    command = "python bench/run.py" + ("" if argv is None and len(sys.argv) <= 1 else
                                       " " + shlex.join(argv if argv is not None else sys.argv[1:]))
    commit = git_sha()
    meta = {
        "commit": commit,
        "date": now(),
        "machine": machine(),
        "load average": watch.describe() + (" — **above the number of cores: timings are noise**"
                                             if watch.over else ""),
        "versions": f"python {platform.python_version()}; loci {commit}; "
                    f"loci-mem {ref_version or 'not installed'}; {reference.graphify_pin()}",
        "command": f"`{command}`",
        "corpus": f"{len(repos)} repositories: {', '.join(repos)} "
                  f"({len(questions)} questions from dev-questions.jsonl)",
        "run time": f"{(time.time() - started) / 60:.1f} min",
    }
    if args.vectors_from:
        meta["vectors"] = (f"seeded from {inputs.shown(args.vectors_from)}: the cold `embed` encodes only "
                           "the chunks not found there")
    if source_digest() != digest:
        meta["warning"] = ("loci's sources changed during this run: its rows mix versions, and "
                           "a rebuild may have been caused by the change")
    CACHE.mkdir(parents=True, exist_ok=True)
    raw = {"meta": meta, "runs": {k: r.as_dict() for k, r in runs.items()},
           "results": {k: r.results for k, r in runs.items()},
           "synth": [asdict(s) for s in synth], "dag": dag_rows}
    (CACHE / "last-run.json").write_text(json.dumps(raw, indent=1, default=str), encoding="utf-8")
    loci_vectors = work / "loci" / "home" / "vectors"
    if loci_vectors.is_dir():  # for a later --vectors-from bench/.cache/loci-last
        shutil.rmtree(CACHE / "loci-last", ignore_errors=True)
        shutil.copytree(loci_vectors, CACHE / "loci-last" / "vectors")
    if watch.over and not args.force_load:
        print(f"error: {load_refusal(watch, 'while measuring')}. {inputs.shown(args.out)} not written; "
              f"the raw figures are in {inputs.shown(CACHE / 'last-run.json')}", file=sys.stderr)
        code = 3
    else:
        block = stamped(scrubbed(render(meta, runs, synth, dag_section(dag_rows)), work),
                        f"measured at loci {commit}, {meta['date']}, load average up to {watch.peak:.1f}")
        old = args.out.read_text(encoding="utf-8") if args.out.exists() else None
        args.out.write_text(merged_results(block, old), encoding="utf-8")
        log(f"wrote {inputs.shown(args.out)} in {meta['run time']}")
        code = 0
    if not (args.keep or args.work):
        shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
