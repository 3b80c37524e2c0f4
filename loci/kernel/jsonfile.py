"""Read a small JSON state file: missing is None, damaged is an error naming the file and its fix."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable


def read_json(path: Path, error: Callable[[str], Exception], fix: str) -> object | None:
    """The decoded file, None when it does not exist; ``error(message)`` is raised when it cannot
    be read or decoded, or holds ``null``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {path} ({exc}); {fix}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON ({exc.msg}, line {exc.lineno}); {fix}") from None
    except RecursionError:
        raise error(f"{path} is nested too deeply to be a loci file; {fix}") from None
    if obj is None:  # every state file holds an object; `null` is damage, not absence
        raise error(f"{path} holds null, not an object; {fix}")
    return obj


def read_state(path: Path, kind) -> object | None:
    """A state file checked against its schema (``loci.kernel.schemas``); None when it does not exist.

    A file that cannot be decoded or breaks the schema raises StateError naming it and the
    command that rebuilds it."""
    from loci.kernel.schemas import StateError, check

    fix = f"run `{kind.fix}` to rebuild it"
    obj = read_json(path, lambda msg: StateError(msg, Path(path), kind.fix), fix)
    return None if obj is None else check(obj, kind, Path(path))


def read_state_or_none(path: Path, kind) -> object | None:
    """``read_state`` for a caller that treats a damaged file as absent (it gets rebuilt)."""
    from loci.kernel.schemas import StateError

    try:
        return read_state(path, kind)
    except StateError:
        return None
