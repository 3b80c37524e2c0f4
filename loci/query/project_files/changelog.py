"""A project's changelog: which file is one, and where its newest entry begins."""
from __future__ import annotations

import re
from typing import Mapping

from loci.kernel.lazyre import LazyPattern
from loci.query.project_files.file_kinds import DOCS_FOLDER

_CHANGELOG_NAME = r"(?:change(?:log|s)|history|news|release[-_]?notes)"
_CHANGELOG_TOP = LazyPattern(r"^" + _CHANGELOG_NAME + r"(?:\.[\w-]+)?$", re.I)
_CHANGELOG_DOCS = LazyPattern(DOCS_FOLDER + r"(?:[\w.-]+/)*" + _CHANGELOG_NAME + r"[\w.-]*\.(?:md|rst|txt|adoc)$", re.I)
# where a changelog's entry begins: a version number, a date, or the not-yet-released section
_ENTRY_HEADING = LazyPattern(r"\d+\.\d+|\d{4}-\d{2}-\d{2}|\bunreleased\b|\bupcoming\b"
                             # the sections inside an entry (keep-a-changelog's and the usual others): the
                             # first one in the file belongs to the newest entry, whose heading may hold no prose
                             r"|^(?:added|changed|deprecated|removed|fixed|security|features?|bug\s*fixes|"
                             r"breaking(?:\s+changes?)?|improvements?|enhancements?|performance|other|"
                             r"documentation|deprecations?|new\s+features?)\s*:?$", re.I)
CHANGELOG_ROWS = 12  # a changelog's first rows read: its newest entries (changelogs list newest first)
CHANGELOG_FILES = 2  # the changelogs read, the top-level one first: one may only point to the other


def is_changelog(path: str) -> bool:
    """A changelog: a top-level CHANGES/HISTORY/NEWS/release-notes file, or one under the docs."""
    return bool(("/" not in path and _CHANGELOG_TOP.match(path)) or _CHANGELOG_DOCS.match(path))


def newest_entry(log: list[int], rows: Mapping[int, dict]) -> list[int]:
    """The rows of the changelog from its newest entry on (from the first heading that holds a
    version, a date or "unreleased"): of ``log``'s files (``CHANGELOG_FILES``, the top-level one first)
    the first that has such an entry; one that has none ("MOVED, see docs/changelog.rst") gives way,
    and is read from its start only when none has."""
    files: dict[str, list[int]] = {}
    for r in log:
        files.setdefault(str((rows.get(r) or {}).get("path") or ""), []).append(r)
    for part in files.values():
        start = next((i for i, r in enumerate(part) if _ENTRY_HEADING.search(str((rows.get(r) or {}).get("heading") or ""))), None)
        if start is not None:
            return part[start:]
    return next(iter(files.values()), [])
