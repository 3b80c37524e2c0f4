"""Commit hooks that keep a repository's scopes fresh: opt-in, chained, reversible.

``install`` writes post-commit, post-merge and post-checkout hooks that start
``python -m loci.dodo --wait index:<scope>...`` in the background (the git
command returns at once), logging to ``<home>/logs/hooks.log``. A hook that
was already there is kept beside ours (``<hook>.loci-prev``), run first, and
its exit status is the hook's, so loci never blocks or fails a git command;
``uninstall`` puts it back. The build side drops the repository-locating git
variables the hook inherits (loci_pipeline.gitenv), so every fingerprint reads its
own repository.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from loci.kernel.config import Layout
from loci.kernel.errors import LociError

HOOKS = ("post-commit", "post-merge", "post-checkout")
MARK = "# loci hook: managed by `loci hook install`; `loci hook uninstall` restores what was here"
PREV = ".loci-prev"


class HookError(LociError):
    """A repository's hooks cannot be managed; the message names it and the fix."""


@dataclass(frozen=True)
class HookState:
    repo: Path
    hook: str
    state: str          # "loci", "loci+chained", "absent", "other"
    scopes: tuple[str, ...] = ()


def _git(repo: Path, *args: str) -> str:
    from loci_pipeline.gitenv import git_env

    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=git_env(),
                          check=False, timeout=30)
    if proc.returncode != 0:
        raise HookError(f"{repo} is not a git repository ({proc.stderr.strip() or 'git failed'}); "
                        "pass the folder of a repository")
    return proc.stdout.strip()


def repo_root(path: Path) -> Path:
    return Path(_git(Path(path).expanduser(), "rev-parse", "--show-toplevel")).resolve()


def hooks_dir(repo: Path) -> Path:
    """Where git runs this repository's hooks from (honours core.hooksPath), refused when shared."""
    path = Path(_git(repo, "rev-parse", "--git-path", "hooks"))
    path = (repo / path if not path.is_absolute() else path).resolve()
    common = Path(_git(repo, "rev-parse", "--git-common-dir"))
    common = (repo / common if not common.is_absolute() else common).resolve()
    if common not in path.parents and path != common:
        raise HookError(f"{repo}: core.hooksPath points at {path}, shared beyond this repository; "
                        "loci will not write there (unset core.hooksPath, or call "
                        "`python -m loci.dodo index:SCOPE` from your own hook)")
    return path


def scopes_of(layout: Layout, repo: Path) -> tuple[str, ...]:
    """The registered scopes that live in ``repo`` (the repository itself, or its split packages)."""
    from loci.kernel.registry import load_registry

    names = []
    for scope in load_registry(layout).scopes:
        path = Path(scope.path).resolve()
        if path == repo or repo in path.parents:
            names.append(scope.name)
    return tuple(sorted(names))


def registered_repos(layout: Layout, names=None) -> list[Path]:
    """Every registered scope's repository, once each (``names``: only those scopes', and only
    those still on disk; a pulled scope has none)."""
    from loci.kernel.registry import load_registry

    out: list[Path] = []
    for scope in load_registry(layout).scopes:
        if names is not None and (scope.name not in names or scope.kind == "pulled"
                                  or not Path(scope.path).is_dir()):
            continue
        try:
            top = repo_root(Path(scope.path))
        except (HookError, OSError):
            continue
        if top not in out:
            out.append(top)
    return out


def unhook_unregistered(layout: Layout, repos) -> list[Path]:
    """Uninstall loci's hooks from those of ``repos`` no registered scope lives in any more; the
    repositories whose hooks went."""
    from loci.kernel.registry import load_registry

    left = [Path(s.path).resolve() for s in load_registry(layout).scopes if s.kind != "pulled"]
    out = []
    for repo in repos:   # a scope left in its folder (the registry's paths: no git call per scope)
        if any(p == repo or repo in p.parents for p in left) \
                or not any(st.state.startswith("loci") for st in status([repo], layout)):
            continue
        uninstall([repo])
        out.append(repo)
    return out


def log_path(layout: Layout) -> Path:
    return layout.hooks_log


def script(layout: Layout, scopes: Sequence[str]) -> str:
    """The hook: run the previous hook, then start the build in the background and return its status."""
    import loci
    from loci_pipeline.gitenv import LOCAL_VARS

    q = shlex.quote
    package_parent = str(Path(loci.__file__).resolve().parent.parent)  # the code that installed it
    targets = " ".join(q(f"index:{s}") for s in scopes)
    log = log_path(layout)
    return f"""#!/bin/sh
{MARK}
status=0
if [ -x "$0{PREV}" ]; then "$0{PREV}" "$@"; status=$?; fi
mkdir -p {q(str(log.parent))} 2>/dev/null
(
  unset {" ".join(sorted(LOCAL_VARS))}
  export LOCI_HOME={q(str(layout.home))}
  export PYTHONPATH={q(package_parent)}${{PYTHONPATH:+:$PYTHONPATH}}
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $(basename "$0") in $(pwd): {targets}"
  {q(sys.executable)} -m loci.dodo --wait {targets}
  echo "loci hook: done (exit $?)"
) </dev/null >>{q(str(log))} 2>&1 &
exit $status
"""


def _is_ours(path: Path) -> bool:
    try:
        return MARK in path.read_text(errors="replace")
    except OSError:
        return False


def _write_executable(path: Path, text: str) -> None:
    from loci.kernel.atomic import write_bytes

    write_bytes(path, text.encode())
    path.chmod(0o755)


def install(layout: Layout, repos: Sequence[Path]) -> list[HookState]:
    """Install (or refresh) the three hooks in each repository; an existing hook is chained."""
    out = []
    for given in repos:
        repo = repo_root(given)
        scopes = scopes_of(layout, repo)
        if not scopes:
            raise HookError(f"{repo} holds no registered scope; run `loci add {shlex.quote(str(repo))}` (or `loci scan`) first")
        folder = hooks_dir(repo)
        folder.mkdir(parents=True, exist_ok=True)
        for hook in HOOKS:
            path, prev = folder / hook, folder / (hook + PREV)
            if path.exists() and not _is_ours(path):
                if prev.exists():
                    raise HookError(f"{path} is not loci's but {prev.name} exists too; move one of them "
                                    "away, then run `loci hook install` again")
                os.replace(path, prev)
            _write_executable(path, script(layout, scopes))
        out += status([repo], layout)
    return out


def uninstall(repos: Sequence[Path]) -> list[HookState]:
    """Remove loci's hooks and put back what was there before."""
    out = []
    for given in repos:
        repo = repo_root(given)
        folder = hooks_dir(repo)
        for hook in HOOKS:
            path, prev = folder / hook, folder / (hook + PREV)
            if not _is_ours(path):
                out.append(HookState(repo, hook, "other" if path.exists() else "absent"))
                continue
            if prev.exists():
                os.replace(prev, path)
                out.append(HookState(repo, hook, "other"))
            else:
                path.unlink()
                out.append(HookState(repo, hook, "absent"))
    return out


def status(repos: Sequence[Path], layout: Layout | None = None) -> list[HookState]:
    out = []
    for given in repos:
        repo = repo_root(given)
        folder = hooks_dir(repo)
        for hook in HOOKS:
            path = folder / hook
            if _is_ours(path):
                state = "loci+chained" if (folder / (hook + PREV)).exists() else "loci"
                scopes = tuple(t.split(":", 1)[1] for t in shlex.split(_command_line(path)) if t.startswith("index:"))
                out.append(HookState(repo, hook, state, scopes))
            else:
                out.append(HookState(repo, hook, "other" if path.exists() else "absent"))
    return out


def _command_line(path: Path) -> str:
    for line in path.read_text(errors="replace").splitlines():
        if "-m loci.dodo" in line:
            return line.split("-m loci.dodo", 1)[1]
    return ""
