"""What answers a question about the project itself: what it is, how it is used, how its code is
laid out, what changed in it, which version it is. Its own words first: the files it describes
itself in (``own_files``), and of them the passages that say it (``about_rows``).
"""
from __future__ import annotations

import re
from typing import Mapping

from loci.kernel.lazyre import LazyPattern
from loci.kernel.markup import prose_words
from loci.query.project_files.changelog import CHANGELOG_FILES, CHANGELOG_ROWS, is_changelog, newest_entry
from loci.query.project_files.file_kinds import DOCS_FOLDER, MANIFEST, README
from loci.query.project_files.versions import stating_version

_VERSION_FILE = LazyPattern(r"^version(?:\.txt)?$", re.I)   # the version alone (loci_pipeline.collect)
_DESCRIBED = LazyPattern(r"""(?im)^\s*["']?(?:description|summary)["']?\s*[=:]""")
_DOCS_INDEX = LazyPattern(DOCS_FOLDER + r"(?:index|readme|intro(?:duction)?|overview)\.(?:md|rst|txt|adoc)$", re.I)
# where a project shows how it is used, best first: a quick start, then usage, a tutorial, examples
_USAGE_NAMES = ("quick[-_]?start|getting[-_]started", "usage|how[-_]to[-_]use|basics?", "tutorial[\\w-]*",
                "examples?")
_DOCS_USAGE = tuple(LazyPattern(DOCS_FOLDER + r"(?:[\w.-]+/)*(?:" + n + r")\.(?:md|rst|txt|adoc)$", re.I)
                    for n in _USAGE_NAMES)
_USAGE_WORDS = (r"(?:usage|examples?|quick\s*start|getting\s+started|get\s+started|how\s+to\s+use|tutorial|"
                r"in\s+a\s+nutshell|synopsis|basic\s+use)")
# a heading that is nothing but those words ("Usage", "A Simple Example", "How to use this repository");
# one that only holds them is about something else ("Remote Key/Value Store Examples")
_USAGE_HEADING = LazyPattern(r"^\W*(?:an?\s+)?(?:simple\s+|basic\s+|quick\s+|short\s+|minimal\s+)?" + _USAGE_WORDS
                             + r"(?:\s+(?:this|the)\s+\w+)?\W*$", re.I)
_LAYOUT_HEADING = LazyPattern(r"\b(?:architecture|(?:project|code|repo(?:sitory)?|source|directory|folder)\s+"
                              r"(?:structure|layout|organi[sz]ation)|internals|modules|components|how\s+it\s+works)\b",
                              re.I)
OPENING_WORDS = 5   # fewer words of prose (a logo, a row of badges, a bare title) open nothing
RECENT_COMMITS = 3  # the newest commits shown for what changed lately
README_ROWS = 300   # the README's sections read for their headings (fd's has 60)
OPENING_ROWS = 4    # a file's first rows where its opening passage of prose is sought


def own_files(prose: Mapping[int, str], is_translation) -> dict[str, list[int]]:
    """The rows of the files a project describes itself in, each file's rows in order: its
    top-level README (not a translated copy), its package manifests (each one's first row; all
    their rows in ``manifest_rows``), its docs index, the docs page that shows how it is used (a
    quick start first), its changelogs (``CHANGELOG_FILES``, the top-level one first), its newest release tag and a
    top-level file holding its version alone (``VERSION``).
    ``prose``: row -> path of the scope's prose chunks (rows in file order)."""
    out: dict[str, list[int]] = {"readme": [], "manifest": [], "manifest_rows": [], "docs_index": [],
                                 "docs_usage": [], "changelog": [], "tag": [], "version_file": []}
    usage: list[tuple[int, str, int]] = []
    changelogs: list[tuple[int, str, int]] = []
    manifests: set[str] = set()
    for row, path in sorted(prose.items()):
        if "/" not in path and README.match(path) and is_translation(path) is None:
            out["readme"].append(row)
        elif path.startswith("tag:"):    # the newest release tag (loci_pipeline.collect.release_tag_chunk)
            out["tag"].append(row)
        elif "/" not in path and _VERSION_FILE.match(path):
            out["version_file"].append(row)
        elif "/" not in path and MANIFEST.match(path):
            if path not in manifests:   # each manifest's first row: where it names and describes
                manifests.add(path)
                out["manifest"].append(row)
            out["manifest_rows"].append(row)
        elif _DOCS_INDEX.match(path):
            out["docs_index"].append(row)
        elif is_changelog(path) and is_translation(path) is None:
            changelogs.append(("/" in path, path, row))
        else:
            rank = next((i for i, p in enumerate(_DOCS_USAGE) if p.match(path)), None)
            if rank is not None:
                usage.append((rank, path, row))
    # the best kind of page, the shallowest, of the newest docs version (docs/v3/ before docs/v1/)
    first_page = min(((rank, path.count("/"), -_docs_version(path), path) for rank, path, _ in usage), default=None)
    out["docs_usage"] = [row for rank, path, row in usage if first_page and path == first_page[-1]]
    logs = sorted({(nested, path) for nested, path, _ in changelogs})[:CHANGELOG_FILES]   # the top-level one first
    out["changelog"] = [row for log in logs for row in [r for nested, path, r in changelogs if (nested, path) == log][:CHANGELOG_ROWS]]
    out["readme"] = out["readme"][:README_ROWS]
    return out


def rows_read(kind: str, files: dict[str, list[int]]) -> list[int]:
    """The rows ``about_rows`` reads for ``kind``: what a search fetches for it, no more."""
    opening = files["readme"][:OPENING_ROWS]
    wanted = {"overview": opening + files["manifest"] + files["docs_index"][:OPENING_ROWS],
              "usage": files["readme"] + files["docs_usage"][:OPENING_ROWS],
              "layout": files["readme"] + files.get("modules", []),
              "version": files["manifest_rows"] + files["version_file"] + files["tag"] + files["changelog"]}.get(kind, files["changelog"])
    return sorted(set(wanted))


def _docs_version(path: str) -> int:
    """The version a versioned docs folder names (``docs/v3/...`` -> 3), else 0."""
    return max((int(m) for m in re.findall(r"(?:^|/)v(\d+)(?=/)", path)), default=0)


def about_rows(kind: str, files: dict[str, list[int]], rows: dict[int, dict]) -> list[int]:
    """What answers a question about the project itself, first to last (``rows``: row -> its
    chunk, heading and text). "overview" (what is it?): the README's first passage of prose, the
    first manifest that states a description, the docs index's first passage of prose. "usage" (how
    do I use it?): the README's first section on usage (a quick start, an example, "how to use"),
    the docs' quick start (or usage, tutorial, examples page), the README's second such section,
    then its opening. "changes" (what is new?): the changelog's newest entry, its first two passages
    of prose from the first heading that holds a version, a date or "unreleased" (changelogs list
    the newest first), else the newest commits. "recent" (what changed lately?): the newest
    commits (``files["commits"]``), then the changelog's newest entry. "version" (which version is
    it?): the first manifest that states a version (the passage holding its version key,
    ``stating_version``), the file holding the version alone, the newest release tag, then that
    newest entry."""
    def text(r: int) -> str:
        return str((rows.get(r) or {}).get("text") or "")

    def first_prose(candidates: list[int]) -> int | None:
        return next((r for r in candidates[:OPENING_ROWS] if prose_words(text(r)) >= OPENING_WORDS), None)

    def manifest_stating(key) -> int | None:
        return next((r for r in files["manifest"] if key.search(text(r))), None)   # setup.cfg may state none

    opening = first_prose(files["readme"])
    if kind in ("changes", "recent", "version"):
        newest = [r for r in newest_entry(files["changelog"], rows) if prose_words(text(r)) >= OPENING_WORDS][:2]
        commits = files.get("commits", [])
        if kind == "changes":
            return newest or commits
        if kind == "recent":
            return commits + newest[:1]
        manifest = stating_version(files["manifest_rows"], rows)
        return ([manifest] if manifest is not None else []) + files["version_file"][:1] + files["tag"][:1] + newest[:1]
    if kind == "layout":   # the README's own section on it, then each main module's own words
        said = [r for r in files["readme"] if _LAYOUT_HEADING.search(str((rows.get(r) or {}).get("heading") or ""))]
        out = said[:2] + list(files.get("modules", []))
    elif kind == "overview":
        out = [opening, manifest_stating(_DESCRIBED), first_prose(files["docs_index"])]
    else:
        sections = [r for r in files["readme"] if _USAGE_HEADING.match(str((rows.get(r) or {}).get("heading") or ""))]
        out = sections[:1] + [first_prose(files["docs_usage"])] + sections[1:2] + [opening]
    return list(dict.fromkeys(r for r in out if r is not None))
