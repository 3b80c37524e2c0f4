"""Which repository a working directory is a checkout of, read from its git files (no git process).

A pulled scope has no folder on this machine, but its bundle names the repository it was built
from (``origin.repository``). A question asked from inside one's own clone of that repository is
about that scope: ``remote_keys`` reads the clone's remotes and ``repository_key`` puts both
spellings of an address (``https://host/owner/name.git``, ``git@host:owner/name``) in one form;
``head_commit`` reads the commit it has checked out (a clone without that remote, a mirror, at
the very commit a bundle was built from is a copy of that scope).
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


def checkout_root(start: Path) -> Path | None:
    """The folder of the checkout holding ``start`` (the nearest one up with a ``.git``), or None."""
    here = Path(start)
    return next((f for f in [here, *here.parents][:MAX_DEPTH] if (f / ".git").exists()), None)


def git_dirs(start: Path) -> tuple[Path, Path] | None:
    """(the git folder, its common folder) of the checkout holding ``start``: the same folder for
    a plain clone; a worktree's ``.git`` file followed to its own folder and to the repository's
    common one. None outside any checkout."""
    folder = checkout_root(start)
    if folder is not None:
        dot = folder / ".git"
        if dot.is_dir():
            return dot, dot
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
            return gitdir, base
    return None


_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def head_commit(start: Path) -> str | None:
    """The commit checked out in the checkout holding ``start`` (its ``HEAD``, a branch followed
    through its ref file or ``packed-refs``), read from the files; None when it cannot be."""
    dirs = git_dirs(start)
    return _head(*dirs) if dirs else None


def _head(gitdir: Path, common: Path) -> str | None:
    try:
        head = (gitdir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if _SHA.match(head):
        return head
    if not head.startswith("ref:"):
        return None
    ref = head[4:].strip()
    if ".." in ref or not ref.startswith("refs/"):
        return None
    for base in (gitdir, common):
        try:
            value = (base / ref).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        return value if _SHA.match(value) else None
    try:
        packed = (common / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in packed.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == ref and _SHA.match(parts[0]):
            return parts[0]
    return None


def remote_keys(start: Path) -> set[str]:
    """The ``repository_key`` of every remote of the checkout holding ``start`` (empty when none)."""
    dirs = git_dirs(start)
    return _remotes(dirs[1] / "config") if dirs else set()


def identity(start: Path) -> tuple[set[str], str | None]:
    """``remote_keys`` and ``head_commit`` of the checkout holding ``start``, found once."""
    dirs = git_dirs(start)
    return (_remotes(dirs[1] / "config"), _head(*dirs)) if dirs else (set(), None)


def _remotes(config: Path) -> set[str]:
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
