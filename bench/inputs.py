"""Where a bench script finds its inputs, from a fresh clone beside ``shared/``:

- the shared folder (``corpus/dev-questions.jsonl``, ``corpus/make-dev-corpus.sh``): ``--shared``,
  else ``$LOCI_SHARED``, else ``../shared`` beside the clone (or beside a folder above it);
- the development corpus: ``--corpus``, else ``bench/.cache/corpus``, laid out on first use by
  ``make-dev-corpus.sh``;
- a built 22-repository home: ``--home``, else ``$LOCI_HOME``, else ``bench/.cache/home-22``, which
  ``python bench/prepare.py`` builds.

A missing input ends the script with one line naming what is missing and the command that makes it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".cache"
DEFAULT_CORPUS = CACHE / "corpus"
DEFAULT_HOME = CACHE / "home-22"
QUESTIONS = Path("corpus") / "dev-questions.jsonl"
CORPUS_SCRIPT = Path("corpus") / "make-dev-corpus.sh"


def shown(path: Path) -> str:
    """``path`` as a reader of this clone would type it: relative to the clone when inside it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def fail(what: str, fix: str) -> "NoReturn":  # noqa: F821
    """One line on stderr (what is missing, the command that makes it), exit status 2."""
    print(f"error: {what}; {fix}", file=sys.stderr)
    raise SystemExit(2)


def shared_dir(option: str | Path | None = None) -> Path:
    """``option``, else ``$LOCI_SHARED``, else ``../shared`` beside the clone, else the nearest
    ``shared`` folder beside a folder above it (a worktree may sit deeper than a clone)."""
    given = option or os.environ.get("LOCI_SHARED")
    if given:
        return Path(given).expanduser().resolve()
    for parent in ROOT.parents:
        if (parent / "shared" / "corpus").is_dir():
            return parent / "shared"
    return ROOT.parent / "shared"


def questions_file(option: str | Path | None = None, shared: str | Path | None = None) -> Path:
    """The labelled questions: ``option``, else ``corpus/dev-questions.jsonl`` of the shared folder."""
    path = Path(option) if option else shared_dir(shared) / QUESTIONS
    if not path.is_file():
        fail(f"no labelled questions at {path}",
             "pass --shared DIR (or set LOCI_SHARED) to the folder holding corpus/dev-questions.jsonl")
    return path


def corpus_script(shared: str | Path | None = None) -> Path:
    script = shared_dir(shared) / CORPUS_SCRIPT
    if not script.is_file():
        fail(f"no {CORPUS_SCRIPT} in {script.parents[1]}",
             "pass --shared DIR (or set LOCI_SHARED) to the folder holding corpus/make-dev-corpus.sh")
    return script


def lay_out_corpus(dest: Path, repos: list[str] | None = None, shared: str | Path | None = None) -> Path:
    """The development corpus in ``dest`` (``make-dev-corpus.sh``; a repository already there is kept)."""
    from bench.measure import run_checked

    run_checked(["bash", str(corpus_script(shared)), str(dest), *(repos or [])])
    return dest


def corpus_dir(option: str | Path | None = None, repos: list[str] | None = None,
               shared: str | Path | None = None) -> Path:
    """A folder holding the development repositories: ``option`` as given (it must hold them), else
    ``bench/.cache/corpus``, laid out here when a repository is missing."""
    names = repos or []
    if option:
        path = Path(option)
        missing = [n for n in names if not (path / n / ".git").exists()]
        if not path.is_dir() or missing:
            fail(f"no development corpus at {path}" + (f" (missing {', '.join(missing)})" if missing else ""),
                 f"make it with: bash {shared_dir(shared) / CORPUS_SCRIPT} {path}")
        return path.resolve()
    return lay_out_corpus(DEFAULT_CORPUS, names, shared)   # idempotent: seconds the first time, then nothing


def home_dir(option: str | Path | None = None, *, built: bool = True) -> Path:
    """A built loci home: ``option``, else ``$LOCI_HOME``, else ``bench/.cache/home-22`` (absolute:
    children may run elsewhere)."""
    path = Path(option or os.environ.get("LOCI_HOME") or DEFAULT_HOME).expanduser()
    if built and not (path / "manifest.json").is_file():
        fix = "build it with: python bench/prepare.py" + ("" if path == DEFAULT_HOME else f" --home {path}")
        fail(f"no built loci home at {shown(path)}", fix)
    return path.resolve()


def add_shared(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--shared", help="the shared folder holding corpus/ (default: $LOCI_SHARED, else "
                                     "../shared beside the clone)")


def add_home(ap: argparse.ArgumentParser, what: str = "a built 22-repository home") -> None:
    ap.add_argument("--home", help=f"{what} (default: $LOCI_HOME, else bench/.cache/home-22, which "
                                   "`python bench/prepare.py` builds)")


def add_corpus(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--corpus", help="a folder of the development repositories (default: bench/.cache/corpus, "
                                     "laid out by shared/corpus/make-dev-corpus.sh on first use)")


def use_home(home: Path) -> Path:
    """Point this process (and the children it starts) at ``home``."""
    os.environ["LOCI_HOME"] = str(home)
    return home


def child_env(home: Path | None = None, **extra: str) -> dict:
    """The environment of a child running this clone's loci, offline, on ``home``."""
    # this clone first; a path already given stays after it (a worktree's shim for ``loci_pipeline``)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOCI_SERVER": "off", "PYTHONPATH": path, **extra}
    if home is not None:
        env["LOCI_HOME"] = str(home)
    return env


def build_home(home: Path, corpus: Path, extra: list[str] | None = None) -> None:
    """``loci setup CORPUS -y`` into ``home``, with this clone's sources."""
    from bench.measure import run_checked

    home.mkdir(parents=True, exist_ok=True)
    run_checked([sys.executable, "-m", "loci", "setup", str(corpus), "-y", "--quiet", *(extra or [])],
                env=child_env(home), cwd=ROOT, stream=True)
    if not (home / "manifest.json").is_file():
        subprocess.run([sys.executable, "-m", "loci", "doctor"], env=child_env(home), cwd=ROOT)
        fail(f"loci setup left no manifest in {shown(home)}", "see the doctor's report above")


def compared_tree(rev: str, work: Path) -> tuple[Path, Path]:
    """(the sources of git revision ``rev`` of this clone, ``.``: this clone as it is; a shim folder
    beside them whose ``loci_pipeline`` is their ``pipeline``), for a bench that runs a baseline
    beside this tree: ``PYTHONPATH=shim:tree`` runs that tree's code even where an editable install
    maps ``loci_pipeline`` to this clone. A revision's sources come from ``git archive`` into
    ``work/tree-REV`` (kept; no checkout touched)."""
    import subprocess

    tree = ROOT if rev == "." else work / f"tree-{rev}"
    if not tree.is_dir():
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=False)
        if archive.returncode != 0:
            tree.rmdir()
            fail(f"no revision {rev!r} in this clone", "give --baseline a commit or branch")
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    shim = work / f"shim-{'this' if rev == '.' else rev}"
    shim.mkdir(parents=True, exist_ok=True)
    if not (shim / "loci_pipeline").is_symlink():
        (shim / "loci_pipeline").symlink_to(tree / "pipeline")
    return tree, shim
