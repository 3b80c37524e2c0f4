"""Shared fixtures: tiny git repositories in tmp_path and a per-test LOCI_HOME."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def make_repo(root: Path, files: dict[str, str], message: str = "initial commit") -> Path:
    """A git repository at ``root`` holding ``files``, committed once."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return root


@pytest.fixture
def loci_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "loci-home"
    monkeypatch.setenv("LOCI_HOME", str(home))
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    return home
