"""Which version a project is: the version key in its manifest's own table, and the line a
passage is cited at for that question.
"""
from __future__ import annotations

import re
from typing import Mapping

from loci.kernel.lazyre import LazyPattern
from loci.query.project_files.file_kinds import MANIFEST

_VERSIONED = LazyPattern(r"""(?im)^\s*["']?version["']?\s*[=:]""")
_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
# the tables a manifest states its own version in (pyproject's [project] or [tool.poetry], Cargo's
# [package], setup.cfg's [metadata]); "" is the top, before any table (package.json, setup.py)
OWN_TABLES = frozenset({"", "project", "tool.poetry", "package", "workspace.package", "metadata"})


def _tabled(text: str, table: str):
    """(line number, line, the TOML table it sits in) for each line of a manifest's text that is no
    table header; ``table``: the one the text begins in."""
    for number, line in enumerate(text.split("\n"), 1):
        header = _TABLE.match(line)
        if header and not line.lstrip().startswith(("[\"", "['")):   # a table, not an array of strings
            table = header.group(1).strip().strip("\"'").lower()
        else:
            yield number, line, table
    yield len(text.split("\n")) + 1, "", table   # where the text ends: its last table


def version_line(text: str, table: str = "") -> int | None:
    """The line (1 for the text's first) of the version key in a manifest's own table
    (``OWN_TABLES``: not ``[tool.hatch] version = "{version}"``), None when it states none;
    ``table``: the table the text begins in."""
    return next((n for n, line, t in _tabled(text, table) if t in OWN_TABLES and _VERSIONED.match(line)), None)


def stating_version(manifest_rows: list[int], rows: Mapping[int, dict]) -> int | None:
    """The first manifest passage holding the manifest's own version key (``version_line``), each
    manifest's passages read in order (a table begun in one passage goes on in the next)."""
    tables: dict[str, str] = {}
    for r in manifest_rows:
        row = rows.get(r) or {}
        path, text = str(row.get("path") or ""), str(row.get("text") or "")
        table = tables.get(path, "")
        if version_line(text, table) is not None:
            return r
        tables[path] = list(_tabled(text, table))[-1][2]   # the table it ends in
    return None


def cited_line(kind: str | None, row: Mapping) -> int:
    """The line a passage is cited at for a question about the project of ``kind``: a top-level
    manifest's, for which version it is, at its version key (the passage begins at the file's
    start, the key lines below); any other at the passage's first line."""
    line = int(row.get("line") or 0)
    path = str(row.get("path") or "")
    if kind != "version" or "/" in path or not MANIFEST.match(path):
        return line
    at = version_line(str(row.get("text") or ""))
    return line + at - 1 if at else line
