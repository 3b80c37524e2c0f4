"""A small bundled example: three tiny projects laid out as git repositories, built in their own home."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).parent.parent / "examples" / "demo"
# (question, the project it is asked from inside, or None): the fourth abstains (which project's
# install?), the fifth is asked as its fix says, from inside a project
QUESTIONS = (
    ("how do I correct a drifting temperature sensor?", None),
    ("which keyboard shortcut forces an autosave?", None),
    ("how are duplicate files found?", None),
    ("how do I install it?", None),
    ("what does this project do?", "weatherlog"),
)
_ENV = {"GIT_AUTHOR_NAME": "loci demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
        "GIT_COMMITTER_NAME": "loci demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}


@dataclass
class DemoResult:
    projects: Path
    home: Path
    index: object                      # loci_pipeline.build.IndexReport
    answers: list[tuple[str, str | None, object]]  # (question, project asked from, loci.query.ask result)


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


def run_demo(dest: Path | None = None) -> DemoResult:
    """Lay out the projects, build them in ``dest/loci-home`` (never the user's home) and ask QUESTIONS."""
    from loci.kernel.config import layout
    from loci.query.ask import ask, open_session
    from loci_pipeline import build
    from loci_pipeline.tasks import BuildContext

    dest = Path(dest) if dest is not None else Path(tempfile.mkdtemp(prefix="loci-demo-"))
    projects = make_demo(dest)
    ctx = BuildContext(layout(dest / "loci-home"))
    build.scan(ctx, [projects], split=False)
    report = build.index(ctx)
    session = open_session(ctx.layout.home)
    return DemoResult(projects, ctx.layout.home, report,
                      [(q, where, ask(session, q, cwd=projects / where if where else None, k=2))
                       for q, where in QUESTIONS])
