"""Who owns a repository, read from git: the global identity, the remote's org and the
authors of recent commits.

Decisions (tested in tests/test_scan.py): the owner is ``me`` when your identity
authored any of the last LOG_DEPTH commits, or the remote's org is your user name;
else ``vendor:<org>`` when a remote names an org; else ``me`` for a repository with no
commits yet (you just made it); else ``unknown`` (no remote, only other people's
commits), which implies no group.
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
    return "me" if not authors else "unknown"


def unknown_owner_reason(identity: Identity, repo: Path | None = None) -> str:
    """Why an owner is ``unknown``, in words (``loci scan`` and ``loci groups infer`` say it)."""
    if repo is not None and not (repo / ".git").exists():
        return "not the top of a git repository"
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


def _authors(repo: Path) -> list[tuple[str, str]]:
    out = _git(repo, "log", f"-{LOG_DEPTH}", "--format=%ae%x09%an")
    if out is None or out.returncode != 0:  # includes a repository with no commits yet
        return []
    return [tuple(line.split("\t", 1)) for line in out.stdout.splitlines() if "\t" in line]  # type: ignore[misc]


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or ["no message"])[0]


def owner_of(repo: Path, identity: Identity, problems: list[str], memo: dict | None = None) -> str:
    """The remote URL and the authors of the last LOG_DEPTH commits decide. ``memo`` (path ->
    [key, owner]) skips reading the authors again while HEAD, the remote and the identity stay."""
    if not (repo / ".git").exists():
        return "unknown"
    remote = _remote_url(repo, problems)
    if memo is None:
        return classify_owner(remote, _authors(repo), identity)
    head = _git(repo, "rev-parse", "--verify", "-q", "HEAD")
    key = "|".join([head.stdout.strip() if head is not None else "", remote or "",
                    identity.email or "", identity.name or ""])
    key = hashlib.sha1(key.encode()).hexdigest()  # kept in owners.json: a remote URL may hold a token
    known = memo.get(str(repo))
    if isinstance(known, list) and len(known) == 2 and known[0] == key:
        return known[1]
    owner = classify_owner(remote, _authors(repo), identity)
    memo[str(repo)] = [key, owner]
    return owner
