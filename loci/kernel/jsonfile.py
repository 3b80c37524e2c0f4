"""Read a small hand-editable JSON file: missing is None, damaged is an error naming the file."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable


def read_json(path: Path, error: Callable[[str], Exception], fix: str) -> object | None:
    """The decoded file, None when it does not exist; ``error(message)`` is raised otherwise."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {path} ({exc}); {fix}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON ({exc.msg}, line {exc.lineno}); {fix}") from None
