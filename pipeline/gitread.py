"""Run git against a user's repository without ever writing to it.

``--no-optional-locks`` and ``GIT_OPTIONAL_LOCKS=0`` keep ``git status`` from
refreshing ``.git/index`` (and taking ``index.lock``) while loci only reads;
``pipeline.gitenv`` drops the variables a hook sets, so git reads the
repository named and no other.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from pipeline.gitenv import git_env


def run_git(root: Path, *args: str, timeout: float = 60, text: bool = False) -> subprocess.CompletedProcess | None:
    """git ``args`` run read-only in ``root``; None when git is missing or times out."""
    env = git_env(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        return subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args], capture_output=True,
                              env=env, timeout=timeout, check=False, text=text,
                              errors="replace" if text else None)
    except (OSError, subprocess.SubprocessError):
        return None


def git_out(root: Path, *args: str, timeout: float = 60) -> bytes | None:
    """stdout of a read-only git command, or None when git is missing or fails."""
    out = run_git(root, *args, timeout=timeout)
    return out.stdout if out is not None and out.returncode == 0 else None
