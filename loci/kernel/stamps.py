"""What a set of files looked like, as one comparable string (their sizes and mtimes)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


def files_state(named: Iterable[tuple[str, Path]]) -> str:
    """``name=size:mtime_ns`` for each (name, path), ``name=none`` for a missing file: a build
    step whose inputs still give the same string has nothing new to read."""
    parts = []
    for name, path in named:
        try:
            st = os.stat(path)
            parts.append(f"{name}={st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}=none")
    return ";".join(parts)
