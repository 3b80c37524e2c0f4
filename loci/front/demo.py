"""A small bundled example: three tiny projects laid out as git repositories."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).parent.parent / "examples" / "demo"
QUESTIONS = (
    "how do I correct a drifting temperature sensor?",
    "which keyboard shortcut forces an autosave?",
    "how are duplicate files found?",
    "how do I install it?",
)
_ENV = {"GIT_AUTHOR_NAME": "loci demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
        "GIT_COMMITTER_NAME": "loci demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}


def make_demo(dest: Path) -> Path:
    """Copy the example projects under ``dest/projects`` and commit each once."""
    projects = Path(dest) / "projects"
    env = {**os.environ, **_ENV}
    for src in sorted(p for p in SOURCE.iterdir() if p.is_dir()):
        target = projects / src.name
        if (target / ".git").exists():
            continue
        shutil.copytree(src, target, dirs_exist_ok=True)
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", f"Start {src.name}"]):
            subprocess.run(["git", "-C", str(target), *args], check=True, capture_output=True, env=env)
    return projects
