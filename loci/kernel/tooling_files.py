"""The files a project runs its tests or builds its docs with, by the names projects give them.

Both sides share these: the build reads them as the project's notes (``loci_pipeline.collect``), so
that the query side's topics on running the tests and building the docs cite them
(``loci.query.project_files``). Patterns match a path from the repository's top, case-insensitively.
"""
from __future__ import annotations

import re

from loci.kernel.lazyre import LazyPattern

# MkDocs' and Read the Docs' configuration, and Sphinx's in the docs folder (its conf.py, its Makefile's "make html")
DOCS_TOOLING_PATHS = r"mkdocs\.ya?ml|\.readthedocs\.ya?ml|docs?/conf\.py|docs?/makefile"
# nox's sessions, then the docs build's files: what the build reads as notes beside the manifests, tox.ini and Makefile
TOOLING_NOTES = LazyPattern(r"^(?:noxfile\.py|" + DOCS_TOOLING_PATHS + r")$", re.I)
