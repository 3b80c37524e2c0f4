"""The directory a question is asked from, as the CLI's ``--cwd`` and the MCP tool's ``cwd`` give it:
one reading for both front ends (stdlib only: the one-shot CLI imports it)."""
from __future__ import annotations

import os


def here() -> str | None:
    """This process's working directory; None when it was removed (a deleted checkout or worktree)."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def asked_from(cwd: str, label: str) -> str:
    """``cwd`` made absolute (``~`` expanded, a relative path taken from here); a UsageError when
    it names no directory, or is relative and here is gone. ``label`` names the option in the message."""
    from loci.kernel.errors import UsageError

    path = os.path.expanduser(os.fspath(cwd))
    if not os.path.isabs(path):
        base = here()
        if base is None:
            raise UsageError(f"{label} {cwd}: a relative path, and the current directory no longer exists; "
                             "give an absolute path")
        path = os.path.join(base, path)
    if not os.path.isdir(path):
        raise UsageError(f"{label} {cwd}: no such directory")
    return path
