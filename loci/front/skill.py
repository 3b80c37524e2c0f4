"""The `/loci` agent skill: the packaged SKILL.md and its atomic install.

The skill ships inside the package so it always documents the installed CLI;
``install`` copies it to ``~/.claude/skills/loci/SKILL.md`` (or a given folder).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from loci.kernel.errors import LociError

SKILL_FILE = "SKILL.md"


class SkillError(LociError, RuntimeError):
    """The skill could not be written; the message names the path and the fix."""


def skill_text() -> str:
    """The packaged SKILL.md, verbatim."""
    return resources.files("loci.front").joinpath("skill_data", SKILL_FILE).read_text(encoding="utf-8")


def default_dir() -> Path:
    """Where Claude Code looks for a user-level skill named loci."""
    return Path.home() / ".claude" / "skills" / "loci"


def install(dest: Path | None = None) -> Path:
    """Write the skill to ``dest/SKILL.md`` (default ``default_dir()``) atomically; return the path."""
    from loci.kernel.atomic import write_bytes

    target = Path(dest if dest is not None else default_dir()).expanduser() / SKILL_FILE
    try:
        write_bytes(target, skill_text().encode("utf-8"))
    except OSError as exc:
        raise SkillError(f"cannot write {target} ({exc.strerror or exc}); "
                         "choose a writable folder with --dir, or use --print") from None
    return target
