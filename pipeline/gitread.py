"""Run git against a user's repository without ever writing to it.

``--no-optional-locks`` and ``GIT_OPTIONAL_LOCKS=0`` keep ``git status`` from
refreshing ``.git/index`` (and taking ``index.lock``) while loci only reads;
``loci_pipeline.gitenv`` drops the variables a hook sets, so git reads the
repository named and no other.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from loci_pipeline.gitenv import git_env


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


STATUS_ARGS = ("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--", ".")


def read_status(root: Path) -> bytes | None:
    """``git status`` of the directory ``root`` (porcelain v2, NUL-separated, with the branch
    header), read once and shared by every fingerprint of a run; None outside git."""
    out = run_git(root, *STATUS_ARGS)
    return out.stdout if out is not None and out.returncode == 0 else None


_FIELDS = {b"1": 8, b"2": 9, b"u": 10}  # space-separated fields before the path, by record type


def status_entries(status: bytes):
    """(record, path relative to the repository's top, is_submodule) for each changed or
    untracked entry of ``read_status``'s output; a rename's original path is skipped."""
    records = status.split(b"\0")
    skip = False
    for rec in records:
        if skip:
            skip = False
            continue
        if not rec or rec.startswith(b"#"):
            continue
        kind = rec[:1]
        if kind in _FIELDS:
            fields = rec.split(b" ", _FIELDS[kind])
            yield rec, fields[-1], fields[2].startswith(b"S")
            skip = kind == b"2"  # the original path follows as its own NUL-separated item
        elif kind in b"?!":
            yield rec, rec[2:], False
