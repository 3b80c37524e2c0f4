"""Which source files are a project's main modules: the ones a question about its code's layout
is answered with, each by the doc at its top.
"""
from __future__ import annotations

import re
from typing import Mapping

from loci.kernel.lazyre import LazyPattern

MAIN_MODULES = 8   # the modules a question about the code's layout is answered with


def opens_its_file(path: str, heading: str) -> bool:
    """Is a doc at the top of the source file ``path``, headed ``heading``, the file's own (no
    heading, or the module's dotted name: ``jinja2.bccache``, ``click`` for its ``__init__``)
    rather than its first declaration's?"""
    if not heading:
        return True
    folder, _, name = path.rpartition("/")
    stem = name.split(".")[0]
    last = heading.rsplit(".", 1)[-1]
    return last == stem or stem == "__init__" and last == folder.rpartition("/")[2]


_TOOLING_FOLDER = LazyPattern(r"^(?:scripts?|tools?|ci|ci_tools|hack|bench(?:marks?)?|examples?|contrib|build|"
                              r"utils?/scripts)/", re.I)


def main_modules(docs: Mapping[int, tuple[str, str]]) -> list[int]:
    """Of the docs at the top of source files (row -> (path, heading)), the files' own
    (``opens_its_file``) of the main modules, at most
    ``MAIN_MODULES``: one a file, not a shell script, the shallowest first (a package before its
    parts, ``__init__`` and ``lib.rs`` / ``mod.rs`` / ``index`` first in their folder, a private
    ``_module`` last), then by path; the project's tooling (``scripts/``, ``tools/``, ``ci/``...)
    last, and a Python file at the top of the repository (a demo, a setup script) after those in
    folders, unless there are none (a single-module project; Go's package is its top folder)."""
    first: dict[str, int] = {}
    for row, (path, heading) in docs.items():
        if not path.endswith((".sh", ".bash")) and opens_its_file(path, heading):
            first.setdefault(path, row)
    in_folders = any("/" in path and not _TOOLING_FOLDER.match(path) for path in first)

    def order(path: str) -> tuple:
        folder, _, name = path.rpartition("/")
        opening = name.split(".")[0] in ("__init__", "lib", "mod", "main", "index", "doc")
        return (bool(_TOOLING_FOLDER.match(path)), in_folders and not folder and name.endswith(".py"),
                path.count("/"), folder, not opening, name.startswith("_") and not opening, name)

    return [first[p] for p in sorted(first, key=order)][:MAIN_MODULES]
