"""Which repository a working directory is a checkout of, read from its git config (no git process).

A pulled scope has no folder on this machine, but its bundle names the repository it was built
from (``origin.repository``). A question asked from inside one's own clone of that repository is
about that scope: ``remote_keys`` reads the clone's remotes and ``repository_key`` puts both
spellings of an address (``https://host/owner/name.git``, ``git@host:owner/name``) in one form.
"""
from __future__ import annotations

import re
from pathlib import Path

MAX_DEPTH = 40    # folders walked up from the working directory looking for .git
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_SCP = re.compile(r"^(?:[^@/:]+@)?([^/:]+):(?!//)(.+)$")   # git@host:owner/name
_URL = re.compile(r"^\s*url\s*=\s*(\S+)\s*$")


def repository_key(url: str | None) -> str | None:
    """``host/owner/name`` in lower case: no scheme, user, port-less scp colon, ``.git`` or
    trailing slash; None for an empty address."""
    text = (url or "").strip()
    if not text:
        return None
    if _SCHEME.match(text):
        text = _SCHEME.sub("", text)
        text = text.split("@", 1)[1] if "@" in text.split("/", 1)[0] else text
    else:
        scp = _SCP.match(text)
        if scp:
            text = f"{scp.group(1)}/{scp.group(2)}"
    text = text.rstrip("/")
    text = text[:-4] if text.endswith(".git") else text
    return text.lower() or None


def git_config(start: Path) -> Path | None:
    """The config file of the git checkout holding ``start`` (a worktree's ``.git`` file followed
    to its common folder); None outside any checkout."""
    here = Path(start)
    for folder in [here, *here.parents][:MAX_DEPTH]:
        dot = folder / ".git"
        if dot.is_dir():
            return dot / "config"
        if dot.is_file():
            try:
                line = dot.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            gitdir = (folder / line.split(":", 1)[1].strip()).resolve()
            common = gitdir / "commondir"
            try:
                base = (gitdir / common.read_text().strip()).resolve() if common.is_file() else gitdir
            except OSError:
                base = gitdir
            return base / "config"
    return None


def remote_keys(start: Path) -> set[str]:
    """The ``repository_key`` of every remote of the checkout holding ``start`` (empty when none)."""
    config = git_config(start)
    if config is None:
        return set()
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    keys, in_remote = set(), False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_remote = stripped.lower().startswith("[remote ")
            continue
        m = _URL.match(line) if in_remote else None
        key = repository_key(m.group(1)) if m else None
        if key:
            keys.add(key)
    return keys
