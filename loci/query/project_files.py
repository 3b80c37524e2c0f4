"""Where a project keeps the facts about itself, by convention.

A question about the project itself ("what license is this under?", "how do I run
the tests here?", "what's the oldest Python version it supports?") is answered by
the files every project keeps for that: the licence file, the package manifest,
CONTRIBUTING, SECURITY, the changelog, the task runner's file. Their words rarely
match the question's ("requires-python", "engines", "xo && ava"), so ranking by
words alone leaves them out of the first five. A closed table: a topic either
appears in the question or not.

A question about what the project is, how it is used, what changed in it or which
version it is (``grammar.about_project``) is answered by the passages the project
says that in (``about_rows``): its README's opening or usage section, its manifest,
its docs index or quick start, its changelog's newest entry, its newest commits.
"""
from __future__ import annotations

import re
from typing import Mapping

from loci.kernel.lazyre import LazyPattern
from loci.kernel.markup import prose_words

_MANIFEST = r"pyproject\.toml|setup\.cfg|setup\.py|package\.json|cargo\.toml|go\.mod|composer\.json|gemfile|[\w.-]+\.gemspec"
_RUNNER = r"makefile|tox\.ini|noxfile\.py|justfile|taskfile\.ya?ml|\.pre-commit-config\.yaml"
_CONTRIB = r"contributing[\w.-]*|hacking[\w.-]*|development[\w.-]*"
# One topic a row: (question words, file names, inside only). File names are matched on the path's
# last part, case-insensitively. An inside-only topic's words are as often a library's subject as a
# fact about the project: in a question that names the project (rather than being asked inside it)
# they ask about its subject ("how do I test a widget built with widgets?", "set up full-text
# search", "why was X changed?", "security headers").
TOPICS: tuple[tuple[LazyPattern, LazyPattern, bool], ...] = tuple(
    (LazyPattern(q, re.I), LazyPattern(r"^(?:" + f + r")$", re.I), inside_only) for q, f, inside_only in (
        (r"\bdependenc(?:y|ies)\b|\bdepend(?:s)?\s+on\b|\brequirements\b|\bthird[-\s]party\s+packages\b",
         _MANIFEST + r"|requirements[\w.-]*\.(?:txt|in)|go\.sum|pipfile|environment\.ya?ml", False),
        (r"\blicen[cs]e[sd]?\b|\bcopyright\b|\blicensing\b",
         r"licen[cs]e[\w.-]*|copying[\w.-]*|unlicense|notice[\w.-]*|" + _MANIFEST, False),
        (r"\b(?:python|node(?:\.js)?|rust|go|ruby|php|java|msrv|runtime|language|compiler|toolchain)\b.*"
         r"\bversions?\b|\bversions?\b.*\b(?:support|supports|supported|require|requires|required|need|needs|"
         r"minimum|oldest|newest)\b|\bmsrv\b|\bengines?\b|\brequires?-python\b",
         _MANIFEST + r"|\.python-version|\.nvmrc|rust-toolchain(?:\.toml)?|\.tool-versions", False),
        (r"\btests?\b|\btest\s+suite\b|\blint(?:er|ing)?\b|\bformatter\b|\bcode\s+style\b|\bstyle\s+(?:rules|guide)\b"
         r"|\bpatch(?:es)?\b|\bpull\s+requests?\b|\bPRs?\b|\bcontribut\w*\b|\bverify\s+my\s+changes\b|\bci\b"
         r"|\bnpm\s+(?:test|run)\b|\bmake\b|\bbuild\s+(?:it|locally|from\s+source)\b",
         _CONTRIB + "|" + _RUNNER + "|" + _MANIFEST, True),
        (r"\bsecurity\b|\bvulnerabilit\w*\b|\bdisclos\w*\b|\bcve\b",
         r"security[\w.-]*|vulnerabilit[\w.-]*", True),
        (r"\bchange(?:log|s|d)\b|\b(?:latest|last|next|new|newest|recent|previous|upcoming)\s+(?:release|version)s?\b"
         r"|\brelease\s+notes\b|\bwhat'?s\s+new\b|\bhistory\b|\bupgrad\w*\b|\bmigrat\w*\b",
         r"change(?:log|s)[\w.-]*|history[\w.-]*|news[\w.-]*|release[-_]?notes[\w.-]*|upgrading[\w.-]*|migrat\w*",
         True),
        (r"\binstall\w*\b|\bset\s*up\b|\bsetup\b|\bget\s+started\b",
         r"readme[\w.-]*|install[\w.-]*|getting[-_]started[\w.-]*|quickstart[\w.-]*|" + _MANIFEST, True),
        (r"\bcode\s+of\s+conduct\b|\bconduct\b", r"code[-_]of[-_]conduct[\w.-]*", False),
        (r"\bmaintainers?\b|\bauthors?\b|\bcontact\b|\bwho\s+(?:wrote|maintains|owns)\b",
         r"authors[\w.-]*|maintainers[\w.-]*|codeowners|security[\w.-]*|" + _MANIFEST, False),
    ))


def fact_file_patterns(question: str, *, named: bool = False) -> list[re.Pattern]:
    """The file-name patterns of every project-fact topic the question raises (``named``: about
    a project the question names, not one it is asked inside: the inside-only topics left out)."""
    return [files for words, files, inside_only in TOPICS if words.search(question) and not (named and inside_only)]


def is_fact_file(path: str, patterns: list[re.Pattern]) -> bool:
    """Does the file, or a folder it sits in (``docs/contributing/the_basics.md``), hold the fact?"""
    parts = path.split("/")
    return any(p.match(part) for part in parts for p in patterns)


# --- what the project is and how it is used: its own words first --------------------------

_README = LazyPattern(r"^readme(?:\.[\w-]+)?$", re.I)
_MANIFESTS = LazyPattern(r"^(?:" + _MANIFEST + r")$", re.I)
_DESCRIBED = LazyPattern(r"""(?im)^\s*["']?(?:description|summary)["']?\s*[=:]""")
_DOCS = r"^(?:docs?|documentation)/"
_DOCS_INDEX = LazyPattern(_DOCS + r"(?:index|readme|intro(?:duction)?|overview)\.(?:md|rst|txt|adoc)$", re.I)
# where a project shows how it is used, best first: a quick start, then usage, a tutorial, examples
_USAGE_NAMES = ("quick[-_]?start|getting[-_]started", "usage|how[-_]to[-_]use|basics?", "tutorial[\\w-]*",
                "examples?")
_DOCS_USAGE = tuple(LazyPattern(_DOCS + r"(?:[\w.-]+/)*(?:" + n + r")\.(?:md|rst|txt|adoc)$", re.I)
                    for n in _USAGE_NAMES)
_USAGE_WORDS = (r"(?:usage|examples?|quick\s*start|getting\s+started|get\s+started|how\s+to\s+use|tutorial|"
                r"in\s+a\s+nutshell|synopsis|basic\s+use)")
# a heading that is nothing but those words ("Usage", "A Simple Example", "How to use this repository");
# one that only holds them is about something else ("Remote Key/Value Store Examples")
_USAGE_HEADING = LazyPattern(r"^\W*(?:an?\s+)?(?:simple\s+|basic\s+|quick\s+|short\s+|minimal\s+)?" + _USAGE_WORDS
                             + r"(?:\s+(?:this|the)\s+\w+)?\W*$", re.I)
_CHANGELOG_NAME = r"(?:change(?:log|s)|history|news|release[-_]?notes)"
_CHANGELOG_TOP = LazyPattern(r"^" + _CHANGELOG_NAME + r"(?:\.[\w-]+)?$", re.I)
_CHANGELOG_DOCS = LazyPattern(_DOCS + r"(?:[\w.-]+/)*" + _CHANGELOG_NAME + r"[\w.-]*\.(?:md|rst|txt|adoc)$", re.I)
# where a changelog's entry begins: a version number, a date, or the not-yet-released section
_ENTRY_HEADING = LazyPattern(r"\d+\.\d+|\d{4}-\d{2}-\d{2}|\bunreleased\b|\bupcoming\b"
                             # the sections inside an entry (keep-a-changelog's and the usual others): the
                             # first one in the file belongs to the newest entry, whose heading may hold no prose
                             r"|^(?:added|changed|deprecated|removed|fixed|security|features?|bug\s*fixes|"
                             r"breaking(?:\s+changes?)?|improvements?|enhancements?|performance|other|"
                             r"documentation|deprecations?|new\s+features?)\s*:?$", re.I)
_VERSIONED = LazyPattern(r"""(?im)^\s*["']?version["']?\s*[=:]""")
OPENING_WORDS = 5   # fewer words of prose (a logo, a row of badges, a bare title) open nothing
CHANGELOG_ROWS = 12  # a changelog's first rows read: its newest entries (changelogs list newest first)
RECENT_COMMITS = 3  # the newest commits shown for what changed lately
README_ROWS = 300   # the README's sections read for their headings (fd's has 60)
OPENING_ROWS = 4    # a file's first rows where its opening passage of prose is sought


def is_changelog(path: str) -> bool:
    """A changelog: a top-level CHANGES/HISTORY/NEWS/release-notes file, or one under the docs."""
    return bool(("/" not in path and _CHANGELOG_TOP.match(path)) or _CHANGELOG_DOCS.match(path))


def own_files(prose: Mapping[int, str], is_translation) -> dict[str, list[int]]:
    """The rows of the files a project describes itself in, each file's rows in order: its
    top-level README (not a translated copy), its package manifests (each one's first row), its
    docs index, the docs page that shows how it is used (a quick start first), its changelog
    (the top-level one first) and its newest release tag.
    ``prose``: row -> path of the scope's prose chunks (rows in file order)."""
    out: dict[str, list[int]] = {"readme": [], "manifest": [], "docs_index": [], "docs_usage": [], "changelog": [],
                                 "tag": []}
    usage: list[tuple[int, str, int]] = []
    changelogs: list[tuple[int, str, int]] = []
    manifests: set[str] = set()
    for row, path in sorted(prose.items()):
        if "/" not in path and _README.match(path) and is_translation(path) is None:
            out["readme"].append(row)
        elif path.startswith("tag:"):    # the newest release tag (loci_pipeline.collect.release_tag_chunk)
            out["tag"].append(row)
        elif "/" not in path and _MANIFESTS.match(path):
            if path not in manifests:   # each manifest's first row: where it names and describes
                manifests.add(path)
                out["manifest"].append(row)
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
    first_log = min(((nested, path) for nested, path, _ in changelogs), default=None)   # the top-level one first
    out["changelog"] = [row for nested, path, row in changelogs if (nested, path) == first_log][:CHANGELOG_ROWS]
    out["readme"] = out["readme"][:README_ROWS]
    return out


def rows_read(kind: str, files: dict[str, list[int]]) -> list[int]:
    """The rows ``about_rows`` reads for ``kind``: what a search fetches for it, no more."""
    opening = files["readme"][:OPENING_ROWS]
    wanted = {"overview": opening + files["manifest"] + files["docs_index"][:OPENING_ROWS],
              "usage": files["readme"] + files["docs_usage"][:OPENING_ROWS],
              "version": files["manifest"] + files["tag"] + files["changelog"]}.get(kind, files["changelog"])
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
    it?): the first manifest that states a version, the newest release tag, then that newest entry."""
    def text(r: int) -> str:
        return str((rows.get(r) or {}).get("text") or "")

    def first_prose(candidates: list[int]) -> int | None:
        return next((r for r in candidates[:OPENING_ROWS] if prose_words(text(r)) >= OPENING_WORDS), None)

    def manifest_stating(key) -> int | None:
        return next((r for r in files["manifest"] if key.search(text(r))), None)   # setup.cfg may state none

    opening = first_prose(files["readme"])
    if kind in ("changes", "recent", "version"):
        log = files["changelog"]
        start = next((i for i, r in enumerate(log) if _ENTRY_HEADING.search(str((rows.get(r) or {}).get("heading") or ""))), 0)
        newest = [r for r in log[start:] if prose_words(text(r)) >= OPENING_WORDS][:2]
        commits = files.get("commits", [])
        if kind == "changes":
            return newest or commits
        if kind == "recent":
            return commits + newest[:1]
        manifest = manifest_stating(_VERSIONED)
        return ([manifest] if manifest is not None else []) + files["tag"][:1] + newest[:1]
    if kind == "overview":
        out = [opening, manifest_stating(_DESCRIBED), first_prose(files["docs_index"])]
    else:
        sections = [r for r in files["readme"] if _USAGE_HEADING.match(str((rows.get(r) or {}).get("heading") or ""))]
        out = sections[:1] + [first_prose(files["docs_usage"])] + sections[1:2] + [opening]
    return list(dict.fromkeys(r for r in out if r is not None))
