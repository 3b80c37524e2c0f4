"""The build as doit's DAG, measured on loci's built home (after bench_tool):

- ``python -m loci.dodo`` (doit alone) and ``loci update`` with nothing changed;
- routing.sqlite after the same one-file edit, rebuilt by doit in one home and by
  ``loci update`` in a copy of it: byte-identical or not;
- a commit in one repository with the hook installed: the ``git commit`` wall time,
  and how long until ``loci ask`` answers from the committed text.

Alone, on copies (the home and the repositories it registers are copied first, so the
originals are never edited; the copied registry is pointed at the copied repositories):

    python bench/dag.py [--home HOME] [--corpus CORPUS] [--work DIR] [--reuse]

HOME defaults to ``$LOCI_HOME``, else ``bench/.cache/home-22`` (``python bench/prepare.py`` builds
it over ``bench/.cache/corpus``, CORPUS's default); the copies go to ``bench/.cache/dag-work``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # run as a script: the checkout's bench package and loci
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import run_measured
from bench.tools import Tool, parse_json

COMMIT_LIMIT_S = 0.2
ANSWER_LIMIT_S = 10.0
NOOP_LIMIT_S = 1.0
NEW_TEXT = ("\n## Telemetry\n\nThe flibbertigibbet quasar harmonizer calibrates zanzibar pelican "
            "telemetry before every voyage.\n")
QUESTION = "how does the flibbertigibbet quasar harmonizer calibrate zanzibar pelican telemetry?"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def _dodo(tool: Tool, neutral: Path, home: Path | None = None):
    env = tool.env() if home is None else {**tool.env(), "LOCI_HOME": str(home)}
    return run_measured([str(tool.python), "-m", "loci.dodo"], env=env, cwd=neutral, timeout=tool.timeout)


def _fresh_word() -> str:
    """A made-up word no repository holds yet, so each run waits for its own commit to be indexed
    (a word an earlier run committed would be answerable at once)."""
    import random

    return "zorb" + "".join(random.choice("bcdfghjklmnpqrstvwxz") for _ in range(8))


def _answered(tool: Tool, neutral: Path, word: str) -> bool:
    m = tool.run(("ask", "--json", "--no-cwd", f"{QUESTION} {word}"), neutral, timeout=120)
    obj = parse_json(m.stdout) if m.ok else None
    blocks = (obj or {}).get("blocks", [])
    return any(word in (e.get("text") or "") for b in blocks for e in b.get("episodes", []))


def _wait_for_hook(log: Path, runs: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text(errors="replace").count("loci hook: done") >= runs:
            return True
        time.sleep(0.2)
    return False


def copy_home(home: Path, to: Path) -> None:
    """A copy of a home without its warm engine's socket and lock (``$LOCI_HOME/run``: they belong
    to that process, and a socket cannot be copied)."""
    root = Path(home)
    shutil.copytree(root, to, symlinks=True, ignore=lambda folder, names: ["run"] if Path(folder) == root else [])


def bench_dag(tool: Tool, repos: list[str], neutral: Path, log=print) -> dict:
    """The rows above, as values (a failed step is an ``error`` entry, never raised)."""
    out: dict = {}
    log(f"  [{tool.key}] doit vs loci update, nothing changed")
    tool.run(("update", "--quiet"), neutral)  # settle
    doit = _dodo(tool, neutral)
    update = tool.run(("update", "--quiet"), neutral)
    out["noop"] = {"doit_s": doit.wall_s if doit.ok else None, "update_s": update.wall_s if update.ok else None,
                   "error": None if doit.ok and update.ok else (doit.error_line() or update.error_line())}

    log(f"  [{tool.key}] the same edit rebuilt by doit and by loci update")
    twin = tool.home.parent / f"{tool.home.name}-twin"
    shutil.rmtree(twin, ignore_errors=True)
    copy_home(tool.home, twin)
    target = tool.corpus / repos[-1] / "README.md"
    target.write_text(target.read_text(errors="replace") + "\nA bench edit: lighthouse keepers.\n")
    update = tool.run(("update", "--quiet"), neutral)
    doit = _dodo(tool, neutral, home=twin)
    same = (tool.home / "routing.sqlite").read_bytes() == (twin / "routing.sqlite").read_bytes()
    out["identical"] = {"identical": same, "doit_s": doit.wall_s, "update_s": update.wall_s,
                        "error": None if doit.ok and update.ok else (doit.error_line() or update.error_line())}
    shutil.rmtree(twin, ignore_errors=True)

    repo = tool.corpus / repos[0]
    log(f"  [{tool.key}] a commit in {repos[0]} with the hook installed")
    installed = tool.run(("hook", "install", str(repo)), neutral)
    if not installed.ok:
        out["hook"] = {"error": installed.error_line()}
        return out
    hook_log = tool.home / "logs" / "hooks.log"
    runs_before = hook_log.read_text(errors="replace").count("loci hook: done") if hook_log.exists() else 0
    readme = repo / "README.md"
    word = _fresh_word()
    readme.write_text((readme.read_text(errors="replace") if readme.exists() else "")
                      + NEW_TEXT.rstrip("\n") + f" The {word} log keeps every reading.\n")
    env = {**tool.env(), **GIT_ENV}
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], env=env, check=False, capture_output=True)
    start = time.monotonic()
    commit = run_measured(["git", "-C", str(repo), "commit", "-qm", "bench: telemetry notes"], env=env,
                          cwd=neutral, timeout=60)
    answered_s = None
    while time.monotonic() - start < 6 * ANSWER_LIMIT_S:
        if _answered(tool, neutral, word):
            answered_s = time.monotonic() - start
            break
        time.sleep(0.2)
    _wait_for_hook(hook_log, runs_before + 1, 300)
    tool.run(("hook", "uninstall", str(repo)), neutral)
    out["hook"] = {"commit_s": commit.wall_s if commit.ok else None, "answered_s": answered_s,
                   "error": None if commit.ok else commit.error_line()}
    return out


def _s(v) -> str:
    return "failed" if v is None else f"{v:.2f} s"


def dag_section(rows: dict | None) -> str:
    """The markdown the bench appends to its results."""
    if not rows:
        return ""
    noop, same, hook = rows.get("noop", {}), rows.get("identical", {}), rows.get("hook", {})
    lines = ["", "## The build as doit's DAG (loci only)", "",
             "| measure | loci | target |", "|---|---|---|",
             f"| `python -m loci.dodo` (doit alone), nothing changed | {_s(noop.get('doit_s'))} | < {NOOP_LIMIT_S:g} s |",
             f"| `loci update`, nothing changed | {_s(noop.get('update_s'))} | – |",
             f"| routing.sqlite after the same one-file edit, doit vs `loci update` | "
             f"{'byte-identical' if same.get('identical') else 'different'} "
             f"(doit {_s(same.get('doit_s'))} in a copied home, whose .doit.db names the original's files, "
             f"so each is hashed once; update {_s(same.get('update_s'))}) | byte-identical |",
             f"| `git commit` wall time, hook installed | {_s(hook.get('commit_s'))} | < {COMMIT_LIMIT_S:g} s |",
             f"| commit -> answerable by `loci ask` (hook in the background; includes the last "
             f"`loci ask` itself) | {_s(hook.get('answered_s'))} | < {ANSWER_LIMIT_S:g} s |"]
    errors = [f"{k}: {v['error']}" for k, v in rows.items() if v.get("error")]
    lines += [f"\n{e}" for e in errors]
    return "\n".join(lines) + "\n"


def copied_setup(home: Path, corpus: Path, work: Path) -> tuple[Path, Path, list[str]]:
    """A copy of ``home`` whose registry names a copy of ``corpus`` (git's index refreshed in
    each copied repository, so `git status` there is as cheap as in the original)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    new_home, new_corpus = work / "home", work / "corpus"
    shutil.copytree(corpus, new_corpus, symlinks=True)
    copy_home(home, new_home)
    for repo in sorted(p for p in new_corpus.iterdir() if (p / ".git").exists()):
        subprocess.run(["git", "-C", str(repo), "update-index", "-q", "--refresh"], capture_output=True, check=False)
    registry = new_home / "scopes.json"
    text = registry.read_text(encoding="utf-8")
    registry.write_text(text.replace(json.dumps(str(corpus.resolve()))[1:-1],
                                     json.dumps(str(new_corpus))[1:-1]), encoding="utf-8")
    (new_home / "owners.json").unlink(missing_ok=True)  # keyed by the original paths
    repos = sorted(s["name"] for s in json.loads(registry.read_text())["scopes"])
    return new_home, new_corpus, repos


def main(argv=None) -> int:
    from bench import inputs
    from bench.stamp import stamp
    from bench.tools import loci_tool

    ap = argparse.ArgumentParser(description="doit alone, loci update and the commit hook, on copies")
    inputs.add_home(ap, "a built home (left untouched)")
    ap.add_argument("--corpus", type=Path, help="the repositories it registers (left untouched; default "
                                                "bench/.cache/corpus)")
    inputs.add_shared(ap)
    ap.add_argument("--work", type=Path, default=inputs.CACHE / "dag-work", help="where the copies go "
                                                                                  "(default bench/.cache/dag-work)")
    ap.add_argument("--reuse", action="store_true", help="use the copies an earlier run left in --work")
    args = ap.parse_args(argv)
    if args.reuse and (args.work / "home" / "scopes.json").is_file():
        home, corpus = args.work / "home", args.work / "corpus"
        repos = sorted(s["name"] for s in json.loads((home / "scopes.json").read_text())["scopes"])
    else:
        source_home = inputs.home_dir(args.home)
        source_corpus = inputs.corpus_dir(args.corpus, shared=args.shared)
        home, corpus, repos = copied_setup(source_home, source_corpus, args.work)
    print(stamp(f"copies in {inputs.shown(args.work)}"))
    checkout = Path(__file__).resolve().parent.parent
    tool = loci_tool(Path(sys.executable).parent, home, corpus, source=checkout)
    neutral = args.work / "neutral"
    neutral.mkdir(exist_ok=True)
    print(dag_section(bench_dag(tool, repos, neutral)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
