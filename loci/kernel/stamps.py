"""What a set of files looked like, as one comparable string (their sizes and mtimes)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, TypeVar

K = TypeVar("K")


def file_stat(path: Path) -> os.stat_result | None:
    """The file's stat, None when it cannot be read (missing)."""
    try:
        return os.stat(path)
    except OSError:
        return None


def stats_state(named: Iterable[tuple[str, os.stat_result | None]]) -> str:
    """``files_state`` of stats already taken (``file_stat``)."""
    return ";".join(f"{name}={st.st_size}:{st.st_mtime_ns}" if st is not None else f"{name}=none"
                    for name, st in named)


def files_state(named: Iterable[tuple[str, Path]]) -> str:
    """``name=size:mtime_ns`` for each (name, path), ``name=none`` for a missing file: a build
    step whose inputs still give the same string has nothing new to read."""
    return stats_state((name, file_stat(path)) for name, path in named)


def existing(paths: Mapping[K, Path]) -> set[K]:
    """The keys of those ``paths`` that exist, from one listing of each folder they are in (not a
    stat each: a merge over a thousand scopes asks this of every scope's files)."""
    by_folder: dict[str, list[tuple[K, str]]] = {}
    for key, path in paths.items():
        folder, name = os.path.split(os.fspath(path))
        by_folder.setdefault(folder, []).append((key, name))
    out: set[K] = set()
    for folder, wanted in by_folder.items():
        try:
            with os.scandir(folder) as listing:
                names = {entry.name for entry in listing}
        except OSError:
            continue
        out.update(key for key, name in wanted if name in names)
    return out
