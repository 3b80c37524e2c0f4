"""Who owns a repository, read from git: the global identity, the remote's org and the
authors of recent commits.

Decisions (tested in tests/test_scan.py): the owner is ``me`` when your identity
authored any of the last LOG_DEPTH commits, or the remote's org is your user name;
else ``vendor:<org>`` when a remote names an org; else ``unknown`` (no remote, and only
other people's commits or no commit at all: nothing to judge by), which implies no group.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence


LOG_DEPTH = 200


@dataclass(frozen=True)
class Identity:
    """Who "me" is: the global git user. Either field may be unknown."""

    email: str | None = None
    name: str | None = None

    def authored(self, email: str, name: str) -> bool:
        return bool(self.email and email.strip().lower() == self.email.strip().lower()
                    or self.name and name.strip().lower() == self.name.strip().lower())


def _git(path: Path, *args: str) -> subprocess.CompletedProcess | None:
    from loci_pipeline.gitread import run_git

    return run_git(path, *args, timeout=30, text=True)


def read_identity() -> Identity:
    """The global git identity (``git config --global user.email`` / ``user.name``)."""
    def get(key: str) -> str | None:
        out = _git(Path.home(), "config", "--global", key)
        if out is None or out.returncode != 0:
            return None
        return out.stdout.strip() or None
    return Identity(email=get("user.email"), name=get("user.name"))


_SCP = re.compile(r"^(?:[\w.+-]+@)?[\w.-]+:(?!//)(?P<path>[^\\]+)$")


def remote_org(url: str) -> str | None:
    """The org of ``git@host:org/repo.git`` or ``https://host/org/repo``; None for local paths."""
    url = url.strip()
    if "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme == "file":
            return None
        path = rest.split("/", 1)[1] if "/" in rest else ""
    else:
        match = _SCP.match(url)
        if not match or url.startswith(("/", ".", "~")):
            return None
        path = match.group("path")
    parts = [p for p in path.split("/") if p]
    return parts[0].lower() if len(parts) >= 2 else None


def classify_owner(remote: str | None, authors: Sequence[tuple[str, str]], identity: Identity) -> str:
    """``me`` | ``vendor:<org>`` | ``unknown`` from the remote URL and recent (email, name) authors."""
    if any(identity.authored(email, name) for email, name in authors):
        return "me"
    org = remote_org(remote) if remote else None
    if org and identity.name and org == identity.name.strip().lower():
        return "me"
    if org:
        return f"vendor:{org}"
    return "unknown"   # no remote, and no commit of yours (or none at all: nothing to judge by)


def unknown_owner_reason(identity: Identity, repo: Path | None = None) -> str:
    """Why an owner is ``unknown``, in words (``loci scan`` and ``loci groups infer`` say it)."""
    if repo is not None and not (repo / ".git").exists():
        return "not the top of a git repository"
    if repo is not None and not head_of(repo):
        return "no commits yet and no remote: nothing to judge the owner by"
    if not (identity.email or identity.name):
        return ("no remote, and no git identity to know your commits by: "
                "`git config --global user.email YOU` and `loci groups infer` again")
    return "no remote, and the recent commits are not yours"


def _remote_url(repo: Path, problems: list[str]) -> str | None:
    out = _git(repo, "config", "--get-regexp", r"^remote\..*\.url$")
    if out is None:
        problems.append(f"{repo}: git could not be run, so its owner is unknown")
        return None
    if out.returncode not in (0, 1):  # 1 = no remote at all
        problems.append(f"{repo}: git refused to read it ({_first_line(out.stderr)})")
        return None
    remotes = {}
    for line in out.stdout.splitlines():
        key, _, url = line.partition(" ")
        remotes[key[len("remote."):-len(".url")]] = url
    return remotes.get("origin") or next(iter(remotes.values()), None)


def _log(repo: Path) -> tuple[list[tuple[str, str]], str]:
    """The (email, name) authors of the last LOG_DEPTH commits, and HEAD's commit ("" for none)."""
    out = _git(repo, "log", f"-{LOG_DEPTH}", "--format=%H%x09%ae%x09%an")
    if out is None or out.returncode != 0:  # includes a repository with no commits yet
        return [], ""
    rows = [line.split("\t", 2) for line in out.stdout.splitlines() if line.count("\t") >= 2]
    return [(email, name) for _h, email, name in rows], (rows[0][0] if rows else "")


def _authors(repo: Path) -> list[tuple[str, str]]:
    return _log(repo)[0]


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or ["no message"])[0]


def head_of(repo: Path) -> str:
    """The commit HEAD names ("" with no commit yet, or when git cannot read it)."""
    out = _git(repo, "rev-parse", "--verify", "-q", "HEAD")
    return out.stdout.strip() if out is not None and out.returncode == 0 else ""


def owner_of(repo: Path, identity: Identity, problems: list[str], memo: dict | None = None) -> str:
    """The remote URL and the authors of the last LOG_DEPTH commits decide. ``memo`` (path ->
    [key, owner]) skips reading the authors again while HEAD, the remote and the identity stay."""
    return owner_and_head(repo, identity, problems, memo)[0]


def owner_and_head(repo: Path, identity: Identity, problems: list[str],
                   memo: dict | None = None) -> tuple[str, str]:
    """``owner_of`` and ``head_of`` in one pass (the scan keeps HEAD in the registry: what tells
    a repository that moved from a new one)."""
    if not (repo / ".git").exists():
        return "unknown", ""
    remote = _remote_url(repo, problems)
    if memo is None:
        authors, head = _log(repo)
        return classify_owner(remote, authors, identity), head
    head = head_of(repo)
    if not head:   # no commit yet: no authors to read (nor a memo to keep)
        return classify_owner(remote, [], identity), head
    key = "|".join([head, remote or "", identity.email or "", identity.name or ""])
    key = hashlib.sha1(key.encode()).hexdigest()  # kept in owners.json: a remote URL may hold a token
    known = memo.get(str(repo))
    if isinstance(known, list) and len(known) == 2 and known[0] == key:
        return known[1], head
    owner = classify_owner(remote, _authors(repo), identity)
    memo[str(repo)] = [key, owner]
    return owner, head
