"""Run git against a user's repository without ever writing to it.

``--no-optional-locks`` and ``GIT_OPTIONAL_LOCKS=0`` keep ``git status`` from
refreshing ``.git/index`` (and taking ``index.lock``) while loci only reads.
Repository-locating variables are dropped, so a hook's ``GIT_DIR`` cannot send
git to another repository than the one named.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

LOCATING_VARS = frozenset(
    "GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_CONFIG GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT "
    "GIT_OBJECT_DIRECTORY GIT_DIR GIT_WORK_TREE GIT_IMPLICIT_WORK_TREE GIT_GRAFT_FILE "
    "GIT_INDEX_FILE GIT_NO_REPLACE_OBJECTS GIT_REPLACE_REF_BASE GIT_PREFIX GIT_NAMESPACE "
    "GIT_INTERNAL_SUPER_PREFIX GIT_SHALLOW_FILE GIT_COMMON_DIR".split())


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LOCATING_VARS}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return env


def run_git(root: Path, *args: str, timeout: float = 60, text: bool = False) -> subprocess.CompletedProcess | None:
    """git ``args`` run read-only in ``root``; None when git is missing or times out."""
    try:
        return subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args], capture_output=True,
                              env=git_env(), timeout=timeout, check=False, text=text,
                              errors="replace" if text else None)
    except (OSError, subprocess.SubprocessError):
        return None


def git_out(root: Path, *args: str, timeout: float = 60) -> bytes | None:
    """stdout of a read-only git command, or None when git is missing or fails."""
    out = run_git(root, *args, timeout=timeout)
    return out.stdout if out is not None and out.returncode == 0 else None
