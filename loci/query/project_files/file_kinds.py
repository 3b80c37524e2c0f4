"""Which kind of project file a path names, by the file names projects use by convention.

The ``*_NAMES`` are alternatives of a regular expression, to be joined into larger ones; the
patterns match a file's whole name (the path's last part), case-insensitively; a docs build's
files (``loci.kernel.tooling_files``) are told by their paths.
"""
from __future__ import annotations

import re

from loci.kernel.lazyre import LazyPattern
from loci.kernel.tooling_files import DOCS_TOOLING_PATHS

MANIFEST_NAMES = r"pyproject\.toml|setup\.cfg|setup\.py|package\.json|cargo\.toml|go\.mod|composer\.json|gemfile|[\w.-]+\.gemspec"
RUNNER_NAMES = r"makefile|tox\.ini|noxfile\.py|justfile|taskfile\.ya?ml|\.pre-commit-config\.yaml"
LICENCE_NAMES = r"licen[cs]e[\w.-]*|copying[\w.-]*|unlicense|notice[\w.-]*"
DOCS_FOLDER = r"^(?:docs?|documentation)/"

README = LazyPattern(r"^readme(?:\.[\w-]+)?$", re.I)
TOOLING = LazyPattern(r"^(?:" + MANIFEST_NAMES + "|" + RUNNER_NAMES + r")$", re.I)   # files a topic reads beside its own
_DOCS_TOOLING = LazyPattern(r"^(?:" + DOCS_TOOLING_PATHS + r")$", re.I)
MANIFEST = LazyPattern(r"^(?:" + MANIFEST_NAMES + r")$", re.I)
_LICENCE = LazyPattern(r"^(?:" + LICENCE_NAMES + r")$", re.I)


def is_licence(path: str) -> bool:
    """A licence text: a top-level LICENSE/COPYING/NOTICE file, or one in a top-level LICENSES folder."""
    return bool(("/" not in path and _LICENCE.match(path)) or re.match(r"licenses/", path, re.I))


def is_tooling(path: str) -> bool:
    """A manifest's, a task runner's or a docs build's file: a topic reads it beside its own files, each of
    its passages only when it says the topic's key words."""
    return bool(TOOLING.match(path.rsplit("/", 1)[-1]) or _DOCS_TOOLING.match(path))
