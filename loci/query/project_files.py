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
from loci.query.grammar import unquoted

_MANIFEST = r"pyproject\.toml|setup\.cfg|setup\.py|package\.json|cargo\.toml|go\.mod|composer\.json|gemfile|[\w.-]+\.gemspec"
_RUNNER = r"makefile|tox\.ini|noxfile\.py|justfile|taskfile\.ya?ml|\.pre-commit-config\.yaml"
_CONTRIB = r"contributing[\w.-]*|hacking[\w.-]*|development[\w.-]*"
# One topic a row: (question words, file names, inside only, key words, README sections). File names are matched
# on the path's last part, case-insensitively. An inside-only topic's words are as often a library's
# subject as a fact about the project: in a question that names the project (rather than being asked
# inside it) they ask about its subject ("how do I test a widget built with widgets?", "set up
# full-text search", "why was X changed?", "security headers"). A topic with README sections holds
# its fact in the README's sections whose heading path says those words ("## Installation" then
# "### From PyPI"), when it has any: those alone, not the whole README, hold it (the whole README only
# for a topic whose files the README is one of: how to install, not how to contribute). A manifest's or a
# runner's passage (``_TOOLING``) holds the fact only when it says one of the topic's key words (a
# setup.cfg's "[egg_info] tag_build" says nothing on the tests); None for a topic given no such file.
_INSTALL_SECTIONS = r"\binstall\w*|\bset(?:ting)?[\s-]*up\b|\bgetting\s+started\b|\bget\s+started\b"
_LICENCE_QUESTION = r"\blicen[cs]e[sd]?\b|\bcopyright\b|\blicensing\b"
_LICENCE_FILES = r"licen[cs]e[\w.-]*|copying[\w.-]*|unlicense|notice[\w.-]*"
# "Contributors" lists people who did, not how to: no section on contributing
_CONTRIB_SECTIONS = (r"\bcontribut(?!ors?\b)\w*|\bdevelop(?:ment|ing|ers?)\b|\bhacking\b|\btest(?:s|ing)?\b|"
                     r"\blint(?:er|ing)?\b|\bcode\s+style\b|\bbuild(?:ing)?\s+from\s+source\b")
# a tooling passage on testing, linting or developing: "test" as a word, not a folder ("./test/templates")
# or part of a name ("[mako_testing]"); tools by their names ("[tool.pytest.ini_options]", "flake8-bugbear");
# "dev" (an extra, a target), not "Development Status" (a classifier)
_TESTS_KEYS = (r"(?<![\w/.])(?:tests?|testing)(?![\w/])|(?<![a-z])(?:testenv|pytest|tox|nox|lint(?:er|ing)?|flake8|ruff|"
               r"black|pylint|mypy|isort|eslint|prettier|pre-commit|coverage|check|format\w*|contribut\w*|"
               r"dev)(?![a-z])")
_DEPENDS_KEYS = r"(?<![a-z])(?:depend|require)\w*|^\s*gem\s"
# a development environment is a contributor's set-up, not a user's install
_DEV_ENV = r"\b(?:dev|development)\s+(?:env\w*|setup|set[\s-]?up)\b|\blocal\s+(?:development|dev)\b"
_BUG_QUESTION = (r"\breport(?:ing)?\s+(?:a\s+|an\s+|the\s+)?(?:bugs?|issues?|problems?|defects?)\b|\bbug\s+reports?\b"
                 r"|\bissue\s+tracker\b|\b(?:file|open|raise|submit)\s+(?:a\s+|an\s+)?(?:bug|issue)s?\b|\bfound\s+a\s+bug\b")
# not "support": a README's "Browser support" says where it runs, not where to report a bug
_BUG_SECTIONS = r"\bbugs?\b|\bissues?\b|\breport(?:s|ing)?\b|\bfeedback\b|\bcontribut(?!ors?\b)\w*"
TOPICS: tuple[tuple[LazyPattern, LazyPattern, bool, LazyPattern | None, LazyPattern | None], ...] = tuple(
    (LazyPattern(q, re.I), LazyPattern(r"^(?:" + f + r")$", re.I), inside_only,
     LazyPattern(keys, re.I | re.M) if keys else None,
     LazyPattern(sections[0], re.I) if sections else None) for q, f, inside_only, keys, *sections in (
        (r"\bdependenc(?:y|ies)\b|\bdepend(?:s)?\s+on\b|\brequirements\b|\bthird[-\s]party\s+packages\b",
         _MANIFEST + r"|requirements[\w.-]*\.(?:txt|in)|go\.sum|pipfile|environment\.ya?ml", False, _DEPENDS_KEYS),
        (_LICENCE_QUESTION,
         _LICENCE_FILES + "|" + _MANIFEST, False, _LICENCE_QUESTION),
        (r"\b(?:python|node(?:\.js)?|rust|go|ruby|php|java|msrv|runtime|language|compiler|toolchain)\b.*"
         r"\bversions?\b|\bversions?\b.*\b(?:support|supports|supported|require|requires|required|need|needs|"
         r"minimum|oldest|newest)\b|\bmsrv\b|\bengines?\b|\brequires?-python\b",
         _MANIFEST + r"|\.python-version|\.nvmrc|rust-toolchain(?:\.toml)?|\.tool-versions", False,
         r"(?<![a-z])(?:python|node|rust|ruby|php|engines|msrv|toolchain|edition)(?![a-z])|^\s*go\s+\d"),
        (r"\btests?\b|\btest\s+suite\b|\blint(?:er|ing)?\b|\bformatter\b|\bcode\s+style\b|\bstyle\s+(?:rules|guide)\b"
         r"|\bpatch(?:es)?\b|\bpull\s+requests?\b|\bPRs?\b|\bcontribut\w*\b|\bverify\s+my\s+changes\b|\bci\b"
         r"|\bnpm\s+(?:test|run)\b|\bmake\s+(?:test|tests|check|lint|all|targets?)\b|\bmakefile\b|\b(?:with|run)\s+make\b"
         r"|\bbuild\s+(?:it|locally|from\s+source)\b|\bformat(?:ting)?\s+(?:the\s+|my\s+)?code\b|" + _DEV_ENV,
         _CONTRIB + "|" + _RUNNER + "|" + _MANIFEST, True, _TESTS_KEYS, _CONTRIB_SECTIONS),
        (r"\bsecurity\b|\bvulnerabilit\w*\b|\bdisclos\w*\b|\bcve\b",
         r"security[\w.-]*|vulnerabilit[\w.-]*", True, None, r"\bsecurity\b|\bvulnerabilit\w*|\bdisclos\w*"),
        (_BUG_QUESTION, _CONTRIB + r"|support[\w.-]*|issue[-_]templates?", True, None, _BUG_SECTIONS),
        (r"\bchange(?:log|s|d)\b|\b(?:latest|last|next|new|newest|recent|previous|upcoming)\s+(?:release|version)s?\b"
         r"|\brelease\s+notes\b|\bwhat'?s\s+new\b|\bhistory\b|\bupgrad\w*\b|\bmigrat\w*\b",
         r"change(?:log|s)[\w.-]*|history[\w.-]*|news[\w.-]*|release[-_]?notes[\w.-]*|upgrading[\w.-]*|migrat\w*",
         True, None),
        (r"\binstall\w*\b|\b(?:set\s*up|setup|get\s+started)\b(?!.*\b(?:dev|develop\w*)\b)",
         r"readme[\w.-]*|install[\w.-]*|getting[-_]started[\w.-]*|quickstart[\w.-]*|" + _MANIFEST, True,
         r"install\w*|(?<![a-z])(?:depend|require)\w*|entry_points|console_scripts|\bscripts\b|\bbin\b|\bpip\b",
         _INSTALL_SECTIONS),
        (r"\bcode\s+of\s+conduct\b|\bconduct\b", r"code[-_]of[-_]conduct[\w.-]*", False, None),
        (r"\bmaintainers?\b|\bauthors?\b|\bcontact\b|\bwho\s+(?:wrote|maintains|owns)\b",
         r"authors[\w.-]*|maintainers[\w.-]*|codeowners|security[\w.-]*|" + _MANIFEST, False,
         r"author\w*|maintainer\w*|e-?mail|contact|owners?\b"),
    ))


# What a contributor asks, and the heading of the section of a contributing guide (or any file given
# to the topic) that says it: "Get Started!" says how to contribute and set up for development,
# "Code style" how to lint, "Report Bugs" where to report one. The guide's opening ("Contributions
# are welcome...") and its other sections say the topic's words as often. Not "Tests": that
# section often says how to write them (black's, stamina's), the set-up section how to run them.
ASKED_SECTIONS: tuple[tuple[LazyPattern, LazyPattern], ...] = tuple(
    (LazyPattern(q, re.I), LazyPattern(h, re.I)) for q, h in (
        (r"\bcontribut\w*|" + _DEV_ENV,
         r"\bget(?:ting)?\s+started\b|\bhow\s+to\s+contribute\b|\bworkflow\b|\bset(?:ting)?[\s-]*up\b|\bsetup\b"
         r"|\blocal\s+development\b|\bdevelopment\s+(?:environment|setup)\b|\bdev\s+env\w*"),
        (r"\blint(?:er|ing)?\b|\bformat(?:ter|ting)?\b|\bcode\s+style\b|\bstyle\s+(?:rules|guide)\b",
         r"\blint\w*|\bformat(?:ting|ters?)?\b|\bcode\s+style\b|\bstyle\s+guide\b|^(?:code|style)$"),
        (_BUG_QUESTION, r"\bbugs?\b|\bissues?\b|\breport(?:s|ing)?\b"),
    ))


def asked_sections(question: str) -> re.Pattern | None:
    """The headings of the sections that say what the question asks (``ASKED_SECTIONS``), as one
    pattern; None when it asks none of those."""
    asked = unquoted(question)
    said = [h.pattern for q, h in ASKED_SECTIONS if q.search(asked)]
    return re.compile("|".join(f"(?:{h})" for h in said), re.I) if said else None


def _raised(question: str, named: bool) -> list[tuple[LazyPattern, LazyPattern | None, LazyPattern | None]]:
    """(file names, key words, README sections) of every project-fact topic the question raises; a word it only
    quotes raises none ("types 'instal' instead of 'install'")."""
    asked = unquoted(question)
    return [(files, keys, sections) for words, files, inside_only, keys, sections in TOPICS
            if words.search(asked) and not (named and inside_only)]


def fact_file_patterns(question: str, *, named: bool = False) -> list[re.Pattern]:
    """The file-name patterns of every project-fact topic the question raises (``named``: about
    a project the question names, not one it is asked inside: the inside-only topics left out)."""
    return [files for files, _, _ in _raised(question, named)]


def fact_rows(question: str, prose: Mapping[int, str], read, *, named: bool = False) -> tuple[set[int], set[int]]:
    """The rows of ``prose`` (row -> path) that hold the fact the question asks for: the rows of
    the files named for it (``is_fact_file``), and of a README the sections its topic names
    (``TOPICS``; ``read``: rows -> their chunks, for their headings and text); a README without
    such a section counts whole when it is one of the topic's files ("how do I install it?"), not
    otherwise ("how do I contribute?"). Only the project's own README counts (not one of a
    subfolder: an example's, an algorithm's "Primality Test"). A manifest's or runner's passage counts
    only when it says one of the topic's key words; a passage that only includes another file
    (``only_includes``) never: it says nothing of its own. Also which of them are such
    sections when no file is given to the topic (a CONTRIBUTING, an INSTALL; a manifest or a runner
    is no such file): then the README's own heading says where the answer is (``search.rank``
    opens with the best of them)."""
    out: set[int] = set()
    headed: set[int] = set()
    asked = asked_sections(question)
    for files, keys, sections in _raised(question, named):
        held = {i for i, path in prose.items() if is_fact_file(path, [files])
                and not (sections is not None and "/" in path and _README.match(path.rsplit("/", 1)[-1]))}
        held -= _saying_nothing(held, prose, read, keys)
        readmes = {i for i, path in prose.items() if sections is not None and _README.match(path)}
        out.update(held - readmes)
        own = {i for i in held - readmes if not _TOOLING.match(prose[i].rsplit("/", 1)[-1])}
        if asked is not None:   # in the files given to the topic, the section headed for what is asked
            for rows in _by_file(own, prose).values():
                headed.update(sections_saying(asked, read(rows)))
        for rows in _by_file(readmes, prose).values():
            said = sections_saying(sections, read(rows))
            headed.update(() if own else said)
            out.update(said or [i for i in rows if i in held])
    return out, headed


def _saying_nothing(rows: set[int], prose: Mapping[int, str], read, keys: re.Pattern | None) -> set[int]:
    """Of ``rows``, those that hold no fact of their own: a passage that only includes another file,
    a manifest's or runner's passage without the topic's ``keys``."""
    if not rows:
        return set()
    chunks = read(sorted(rows))
    out = set()
    for i in rows:
        row = chunks.get(i) or {}
        text = str(row.get("heading") or "") + "\n" + str(row.get("text") or "")
        tooling = _TOOLING.match(prose[i].rsplit("/", 1)[-1])
        if only_includes(str(row.get("text") or "")) or (tooling and not (keys and keys.search(text))):
            out.add(i)
    return out


# a directive that puts another file's text here: reStructuredText's include, mkdocs' snippets,
# markdown-include's; the include's options on the lines below it
_INCLUDE = re.compile(r"^(?:\.\.\s+(?:include|literalinclude)::.*|-{2}8<-{2}\s*[\"'].*|\{!.*!\}|:[\w-]+:.*)$")


_RST_TARGET = re.compile(r"^\.\.\s+_[^:]+:\s*$")   # ".. _contributing:", a label for links to what follows


def only_includes(text: str) -> bool:
    """Is the passage nothing but the directives that include another file (and a heading or a link
    label over them)?"""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    said = False
    for n, line in enumerate(lines):
        title = n + 1 < len(lines) and _ADORNMENT.match(lines[n + 1])
        if _ATX.match(line) or _ADORNMENT.match(line) or title or _RST_TARGET.match(line):
            continue
        if not _INCLUDE.match(line):
            return False
        said = said or not line.startswith(":")
    return said


def _by_file(rows, prose: Mapping[int, str]) -> dict[str, list[int]]:
    """``rows`` grouped by their file, each file's in row order."""
    out: dict[str, list[int]] = {}
    for i in sorted(rows):
        out.setdefault(prose[i], []).append(i)
    return out


def sections_saying(words: re.Pattern, rows: Mapping[int, dict]) -> list[int]:
    """The rows (of one file) whose heading path says ``words``, in row order."""
    return [i for i, path in sorted(heading_paths(rows).items()) if any(words.search(h) for h in path)]


# a heading's markup at the start of a passage: "## Title", or a title over (and under) a line of one
# punctuation character (Markdown's setext, reStructuredText's adornments)
_ATX = re.compile(r"^ {0,3}(#{1,6})\s")
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
SECTION_GAP = 3   # this many lines between two passages hide a section left out (a heading with no text)


def heading_paths(rows: Mapping[int, dict]) -> dict[int, tuple[str, ...]]:
    """Each passage's heading path, the headings it sits under then its own, for the passages of
    one file (``rows``: row -> its line, heading and text). A heading's level is read from its
    markup (``#`` marks; in Markdown an ``=`` underline is level 1, ``-`` level 2; otherwise each
    adornment's level is its order of first appearance, as reStructuredText reads it). A section
    with no text of its own is no passage: where the lines between two passages hide one
    (``SECTION_GAP``), its heading is unknown, and no passage after it claims a parent before it."""
    order = sorted(rows, key=lambda i: int(rows[i].get("line") or 0))
    markdown = any(str(rows[i].get("path") or "").lower().endswith((".md", ".markdown", ".mdx")) for i in order)
    styles: list[tuple[str, bool]] = []
    stack: list[tuple[int, str]] = []
    out: dict[int, tuple[str, ...]] = {}
    end, last_heading = None, None
    for i in order:
        row = rows[i]
        line, heading, text = int(row.get("line") or 0), str(row.get("heading") or ""), str(row.get("text") or "")
        if end is not None and line - end > SECTION_GAP:
            stack = []
        level = _heading_level(text.split("\n", 3), markdown, styles)
        if level is None and heading == last_heading and stack:
            pass                              # a long section's next piece: the same path
        elif level is None:
            stack = [(0, heading)]
        else:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
        out[i] = tuple(h for _, h in stack)
        end, last_heading = line + text.rstrip().count("\n"), heading
    return out


def _heading_level(lines: list[str], markdown: bool, styles: list[tuple[str, bool]]) -> int | None:
    """The level of the heading a passage opens with (its first lines), None when it opens with
    none; ``styles`` are the adornments seen so far in the file, first seen first (appended to)."""
    atx = _ATX.match(lines[0])
    if atx:
        return len(atx.group(1))
    over = _ADORNMENT.match(lines[0])
    under = _ADORNMENT.match(lines[2 if over else 1]) if len(lines) > (2 if over else 1) else None
    if not under or (over and over.group(1) != under.group(1)):
        return None
    style = (under.group(1), bool(over))
    if markdown and not over and style[0] in "=-":
        return 1 if style[0] == "=" else 2
    if style not in styles:
        styles.append(style)
    return styles.index(style) + 1


def is_fact_file(path: str, patterns: list[re.Pattern]) -> bool:
    """Does the file, or a folder it sits in (``docs/contributing/the_basics.md``), hold the fact?"""
    parts = path.split("/")
    return any(p.match(part) for part in parts for p in patterns)


# --- what the project is and how it is used: its own words first --------------------------

_README = LazyPattern(r"^readme(?:\.[\w-]+)?$", re.I)
_TOOLING = LazyPattern(r"^(?:" + _MANIFEST + "|" + _RUNNER + r")$", re.I)   # files a topic reads beside its own
_MANIFESTS = LazyPattern(r"^(?:" + _MANIFEST + r")$", re.I)
_VERSION_FILE = LazyPattern(r"^version(?:\.txt)?$", re.I)   # the version alone (loci_pipeline.collect)
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
_LAYOUT_HEADING = LazyPattern(r"\b(?:architecture|(?:project|code|repo(?:sitory)?|source|directory|folder)\s+"
                              r"(?:structure|layout|organi[sz]ation)|internals|modules|components|how\s+it\s+works)\b",
                              re.I)
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
CHANGELOG_FILES = 2  # the changelogs read, the top-level one first: one may only point to the other
RECENT_COMMITS = 3  # the newest commits shown for what changed lately
README_ROWS = 300   # the README's sections read for their headings (fd's has 60)
OPENING_ROWS = 4    # a file's first rows where its opening passage of prose is sought


_LICENCE_TOP = LazyPattern(r"^(?:" + _LICENCE_FILES + r")$", re.I)
_LICENCE_WORDS = LazyPattern(_LICENCE_QUESTION, re.I)


def is_licence(path: str) -> bool:
    """A licence text: a top-level LICENSE/COPYING/NOTICE file, or one in a top-level LICENSES folder."""
    return bool(("/" not in path and _LICENCE_TOP.match(path)) or re.match(r"licenses/", path, re.I))


def asks_about_licence(question: str) -> bool:
    """Does the question raise the licence topic ("what license is this under?", "copyright")?"""
    return bool(_LICENCE_WORDS.search(question))


def is_changelog(path: str) -> bool:
    """A changelog: a top-level CHANGES/HISTORY/NEWS/release-notes file, or one under the docs."""
    return bool(("/" not in path and _CHANGELOG_TOP.match(path)) or _CHANGELOG_DOCS.match(path))


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
        if "/" not in path and _README.match(path) and is_translation(path) is None:
            out["readme"].append(row)
        elif path.startswith("tag:"):    # the newest release tag (loci_pipeline.collect.release_tag_chunk)
            out["tag"].append(row)
        elif "/" not in path and _VERSION_FILE.match(path):
            out["version_file"].append(row)
        elif "/" not in path and _MANIFESTS.match(path):
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


# --- which version it is: the manifest's own version key --------------------------------------

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
    if kind != "version" or "/" in path or not _MANIFESTS.match(path):
        return line
    at = version_line(str(row.get("text") or ""))
    return line + at - 1 if at else line
