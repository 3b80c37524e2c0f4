"""Held-out checks: labelled questions over published packages nobody tuned on, in three sets.

    python bench/heldout.py lay-out [--set 2] [--dest DIR]   # the set's repositories (~1 min)
    LOCI_HOME=H loci setup DIR -y                             # a home over them (~5 min on 2 cores)
    python bench/eval_folds.py --home H --questions bench/data/heldout[2]-questions.jsonl

Set 1 (``heldout-questions.jsonl``, session 18): 40 questions over 16 Python packages, 8 pairs of
confusable neighbours (tenacity / backoff, arrow / python-dateutil, loguru / structlog ...): named,
plain-words and paraphrased questions, code structure, and questions asked from inside a project.
Set 2 (``heldout2-questions.jsonl``, session 19): 53 questions over 13 packages from both
registries, JavaScript and Python side by side (chokidar / watchdog, kleur / colorama, yargs /
minimist ...), with the families set 1 lacks: why-questions, questions in other languages,
enumerations over the whole set, and questions that must abstain (off-topic, or "this project"
with no folder to tell which).
Set 3 (``heldout3-questions.jsonl``, session 24): 56 questions over 12 packages, 6 npm / PyPI pairs
(stamina / p-retry, mako / ejs, strictyaml / js-yaml, dateparser / dayjs, diskcache / lru-cache,
wcmatch / micromatch), with set 2's families and more paraphrases and questions asked from inside a
project.

The questions were written by helpers who read only the packages' own files, never loci's code,
nor its development questions. ``lay-out`` downloads each package at the version its labels were
written against (``SETS``: evidence lines are line numbers) with the registry's own client (pip's
source distribution, npm's published tarball) and makes it a git repository of one commit, as
``bench/unrelated_bed.py fetch`` does. Every rule chosen on the development questions can be read
here on repositories that chose nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.unrelated_bed import download, make_repo, unpack  # noqa: E402


@dataclass(frozen=True)
class HeldOutSet:
    questions: Path
    pinned: dict[str, tuple[str, str]]   # folder (scope) name -> (registry, version)
    dest: Path


def _pypi(**versions: str) -> dict[str, tuple[str, str]]:
    return {name.replace("_", "-"): ("pypi", v) for name, v in versions.items()}


def _npm(**versions: str) -> dict[str, tuple[str, str]]:
    return {name.replace("_", "-"): ("npm", v) for name, v in versions.items()}


SETS = {
    "1": HeldOutSet(ROOT / "bench" / "data" / "heldout-questions.jsonl", _pypi(
        arrow="1.4.0", backoff="2.2.1", cachetools="8.0.2", cattrs="26.2.1", croniter="7.0.0", loguru="0.7.3",
        marshmallow="4.4.0", more_itertools="11.2.1", python_dateutil="4.0.0", python_dotenv="1.2.4",
        semver="3.1.2", sortedcontainers="2.4.0", structlog="26.1.0", tabulate="0.8.10", tenacity="9.2.1",
        xmltodict="1.0.4"), inputs.CACHE / "heldout"),
    "2": HeldOutSet(ROOT / "bench" / "data" / "heldout2-questions.jsonl", {
        **_npm(chokidar="6.0.0", kleur="4.1.5", yargs="18.2.0", minimist="1.2.8", filesize="11.0.30",
               env_paths="4.0.0", pino="10.4.0"),
        **_pypi(watchdog="7.1.0", colorama="0.4.6", filelock="3.19.1", portalocker="3.2.0", humanize="4.13.0",
                platformdirs="4.3.8")}, inputs.CACHE / "heldout-2"),
    "3": HeldOutSet(ROOT / "bench" / "data" / "heldout3-questions.jsonl", {
        **_npm(p_retry="7.1.1", ejs="7.0.2", js_yaml="4.1.0", dayjs="1.11.23", lru_cache="11.5.4",
               micromatch="4.0.8"),
        **_pypi(stamina="26.1.0", mako="1.4.3", strictyaml="1.7.3", dateparser="1.5.0", diskcache="5.6.3",
                wcmatch="12.0.3")}, inputs.CACHE / "heldout-3"),
}


def lay_out(dest: Path, pinned: dict[str, tuple[str, str]] = SETS["1"].pinned) -> list[str]:
    """Each pinned package a repository ``dest/NAME`` (those already there are kept); the names."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, (registry, version) in pinned.items():
        folder = dest / name
        if folder.is_dir():
            continue
        with tempfile.TemporaryDirectory() as dl:
            archive = download(registry, name, Path(dl), version)
            if archive is None:
                index = "package index" if registry == "pypi" else "npm registry"
                inputs.fail(f"{name}=={version}: no source archive", f"check that the {index} is reachable")
            unpack(archive, folder)
        make_repo(folder)
        print(f"{name} {version}: {inputs.shown(folder)}", flush=True)
    return list(pinned)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lay = sub.add_parser("lay-out", help="download and lay out one set's repositories")
    lay.add_argument("--set", choices=sorted(SETS), default="1", help="which set (default 1: 16 Python packages)")
    lay.add_argument("--dest", type=Path, help="where (default bench/.cache/heldout, set N bench/.cache/heldout-N)")
    args = ap.parse_args(argv)
    chosen = SETS[args.set]
    dest = args.dest or chosen.dest
    names = lay_out(dest, chosen.pinned)
    print(f"{len(names)} repositories in {inputs.shown(dest)}; questions: {inputs.shown(chosen.questions)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
