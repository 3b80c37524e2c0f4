"""Which topics a question about a project raises (its install, tests, licence, changelog...), and
which sections of a contributing guide it asks for.

A closed table (``TOPICS``): a topic either appears in the question or not.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from loci.kernel.lazyre import LazyPattern
from loci.kernel.tooling_files import DOCS_TOOLING_PATHS
from loci.query.grammar import unquoted
from loci.query.project_files.file_kinds import LICENCE_NAMES, MANIFEST_NAMES, RUNNER_NAMES


class Topic(NamedTuple):
    """One row of ``TOPICS``, its patterns compiled (on first use)."""
    words: LazyPattern
    files: LazyPattern
    inside_only: bool
    keys: LazyPattern | None
    sections: LazyPattern | None
    keyed: bool


def _topic(words: str, files: str, inside_only: bool, keys: str | None, sections: str | None = None,
           keyed: bool = False) -> Topic:
    return Topic(LazyPattern(words, re.I), LazyPattern(r"^(?:" + files + r")$", re.I), inside_only,
                 LazyPattern(keys, re.I | re.M) if keys else None, LazyPattern(sections, re.I) if sections else None,
                 keyed)


_CONTRIB = r"contributing[\w.-]*|hacking[\w.-]*|development[\w.-]*|dev[-_]?readme[\w.-]*"   # doit's DEV-README
_DEV_FILES = _CONTRIB + "|" + RUNNER_NAMES + "|" + MANIFEST_NAMES   # a contributor's: the guides, runners, manifests
# One topic a row: (question words, file names, inside only, key words, README sections, keyed). File names are
# matched on the path's last part or a folder's (one with a slash on the whole path), case-insensitively. An
# inside-only topic's words are as often a library's subject as a fact about the project: in a question that
# names the project (rather than being asked inside it) they ask about its subject ("how do I test a widget
# built with widgets?", "set up full-text search", "why was X changed?", "security headers"). A topic with
# README sections holds its fact in the README's sections whose heading path says those words ("## Installation"
# then "### From PyPI"), when it has any: those alone, not the whole README, hold it (the whole README only for
# a topic whose files the README is one of: how to install, not how to contribute). A manifest's or a runner's
# passage (``file_kinds.TOOLING``) holds the fact only when it says one of the topic's key words (a setup.cfg's
# "[egg_info] tag_build" says nothing on the tests); None for a topic given no such file. A keyed topic is one
# section of a guide, not the guide's whole subject (building the docs, running the tests; not how to contribute):
# every passage of its files (a contributing guide's too) and of its README sections holds its fact only when it
# says one of its key words.
_INSTALL_SECTIONS = r"\binstall\w*|\bset(?:ting)?[\s-]*up\b|\bgetting\s+started\b|\bget\s+started\b"
_LICENCE_QUESTION = r"\blicen[cs]e[sd]?\b|\bcopyright\b|\blicensing\b"
# "Contributors" lists people who did, not how to: no section on contributing
_CONTRIB_SECTIONS = (r"\bcontribut(?!ors?\b)\w*|\bdevelop(?:ment|ing|ers?)\b|\bhacking\b|\btest(?:s|ing)?\b|"
                     r"\blint(?:er|ing)?\b|\bcode\s+style\b|\bbuild(?:ing)?\s+from\s+source\b")
# a passage on running the tests or the linters: "test" as a word, not a folder ("./test/templates") or part
# of a name ("[mako_testing]"); the tools by their names ("[tool.pytest.ini_options]", "flake8-bugbear"); a
# code style; verifying changes, CI; a check target or script, not "check" in prose ("check the tracker");
# not "format" alone ("entries follow this format")
_CHECKS_KEYS = (r"(?<![\w/.])(?:tests?|testing)(?![\w/])"
                r"|(?<![a-z])(?:testenv|pytest|unittest|tox|nox|lint(?:ers?|ing)?|flake8|ruff|black|pylint|mypy|isort"
                r"|eslint|prettier|pre-commit|coverage|formatt(?:ers?|ing))(?![a-z])"
                r"|\bcode\s+style\b|\bverif(?:y|ies|ying|ication)\b|\bcontinuous\s+integration\b|(?<![\w/.-])CI(?![\w/-])"
                r"|^\s*[\"']?check[\"']?\s*:|\b(?:make|run|just)\s+check\b")
# a tooling passage on developing: also "contribute" and "dev" (an extra, a target), not "Development
# Status" (a classifier)
_DEV_KEYS = _CHECKS_KEYS + r"|(?<![a-z])(?:contribut\w*|dev|format\w*|check)(?![a-z])"
_DEPENDS_KEYS = r"(?<![a-z])(?:depend|require)\w*|^\s*gem\s"
# a development environment is a contributor's set-up, not a user's install
_DEV_ENV = r"\b(?:dev|development)\s+(?:env\w*|setup|set[\s-]?up)\b|\blocal\s+(?:development|dev)\b"
# running the tests or the linters: one section of a contributing guide (a keyed topic), where how to
# contribute (patches, pull requests, a development set-up, the Makefile) is a guide's whole subject
_CHECKS_QUESTION = (r"\btests?\b|\btest\s+suite\b|\blint(?:er|ing)?\b|\bformatter\b|\bcode\s+style\b"
                    r"|\bstyle\s+(?:rules|guide)\b|\bverify\s+my\s+changes\b|\bci\b|\bnpm\s+test\b"
                    r"|\bmake\s+(?:test|tests|check|lint)\b|\bformat(?:ting)?\s+(?:the\s+|my\s+)?code\b")
# a guide's section on running them: not "Tests" or "Testing" alone, which often says how to write them
_RUN_TESTS_SECTIONS = (r"\brun(?:ning)?\s+(?:the\s+|a\s+|an\s+|all\s+)?(?:unit\s+|single\s+)?tests?\b"
                       r"|\btest(?:s|ing)?\s+and\s+lint\w*|\blint\w*\s+and\s+test\w*|\bunit\s+tests\b"
                       r"|\btest\s+(?:suite|environments?)\b")
_BUG_QUESTION = (r"\breport(?:ing)?\s+(?:a\s+|an\s+|the\s+)?(?:bugs?|issues?|problems?|defects?)\b|\bbug\s+reports?\b"
                 r"|\bissue\s+tracker\b|\b(?:file|open|raise|submit)\s+(?:a\s+|an\s+)?(?:bug|issue)s?\b|\bfound\s+a\s+bug\b")
# not "support": a README's "Browser support" says where it runs, not where to report a bug
_BUG_SECTIONS = r"\bbugs?\b|\bissues?\b|\breport(?:s|ing)?\b|\bfeedback\b|\bcontribut(?!ors?\b)\w*"
# building the project's own docs: a verb of building on "the docs" (the project's: "the", "its", "X's";
# "generate documentation for my commands" asks about a library's subject), docs built "locally", "the
# docs build", or a docs tool's command
_DOCS_VERBS = r"\b(?:build|make|generate|render|compile|preview|serve|run)\w*\s+"
_DOCS_QUESTION = (_DOCS_VERBS + r"(?:the|its|their|[\w.-]+'s)\s+(?:(?!own\b)\w+\s+)?(?:docs?|documentation)\b|"
                  + _DOCS_VERBS + r"(?:docs?|documentation)\s+locally\b|\b(?:docs?|documentation)\s+build(?:s|ing)?\b"
                  r"|\bsphinx-build\b|\bmkdocs\s+(?:build|serve)\b|\bmake\s+html\b|\btox\s+-e\s+docs\b")
# a passage on the docs: "docs" as a word, not a path ("docs/", "https://docs.example.org"), "documentation"
# but not a manifest's link key ("Documentation = ..."), or the docs tools by name; a README's section on
# building them, not its "Documentation" link
_DOCS_KEYS = (r"sphinx[\w-]*|mkdocs|\bmake\s+html\b|(?<![\w/.-])docs?(?![\w/.-])"
              r"|\bdocument(?:ation|ing)\b(?![\"']?\s*[=:])")
_DOCS_SECTIONS = (r"\b(?:build\w*|mak(?:e|ing)|generat\w*|render\w*|preview\w*|writ(?:e|ing)|contribut\w*)\b.*"
                  r"\b(?:docs?|documentation)\b|\b(?:docs?|documentation)\s+(?:build\w*|contribut\w*|development)\b")

TOPICS: tuple[Topic, ...] = tuple(_topic(*row) for row in (
        (r"\bdependenc(?:y|ies)\b|\bdepend(?:s)?\s+on\b|\brequirements\b|\bthird[-\s]party\s+packages\b",
         MANIFEST_NAMES + r"|requirements[\w.-]*\.(?:txt|in)|go\.sum|pipfile|environment\.ya?ml", False, _DEPENDS_KEYS),
        (_LICENCE_QUESTION,
         LICENCE_NAMES + "|" + MANIFEST_NAMES, False, _LICENCE_QUESTION),
        (r"\b(?:python|node(?:\.js)?|rust|go|ruby|php|java|msrv|runtime|language|compiler|toolchain)\b.*"
         r"\bversions?\b|\bversions?\b.*\b(?:support|supports|supported|require|requires|required|need|needs|"
         r"minimum|oldest|newest)\b|\bmsrv\b|\bengines?\b|\brequires?-python\b",
         MANIFEST_NAMES + r"|\.python-version|\.nvmrc|rust-toolchain(?:\.toml)?|\.tool-versions", False,
         r"(?<![a-z])(?:python|node|rust|ruby|php|engines|msrv|toolchain|edition)(?![a-z])|^\s*go\s+\d"),
        (_CHECKS_QUESTION, _DEV_FILES, True, _CHECKS_KEYS, _CONTRIB_SECTIONS, True),
        (r"\bpatch(?:es)?\b|\bpull\s+requests?\b|\bPRs?\b|\bcontribut\w*\b|\bnpm\s+run\b|\bmake\s+(?:all|targets?)\b"
         r"|\bmakefile\b|\b(?:with|run)\s+make\b|\bbuild\s+(?:it|locally|from\s+source)\b|" + _DEV_ENV,
         _DEV_FILES, True, _DEV_KEYS, _CONTRIB_SECTIONS),
        (r"\bsecurity\b|\bvulnerabilit\w*\b|\bdisclos\w*\b|\bcve\b",
         r"security[\w.-]*|vulnerabilit[\w.-]*", True, None, r"\bsecurity\b|\bvulnerabilit\w*|\bdisclos\w*"),
        (_BUG_QUESTION, _CONTRIB + r"|support[\w.-]*|issue[-_]templates?", True, None, _BUG_SECTIONS),
        (r"\bchange(?:log|s|d)\b|\b(?:latest|last|next|new|newest|recent|previous|upcoming)\s+(?:release|version)s?\b"
         r"|\brelease\s+notes\b|\bwhat'?s\s+new\b|\bhistory\b|\bupgrad\w*\b|\bmigrat\w*\b",
         r"change(?:log|s)[\w.-]*|history[\w.-]*|news[\w.-]*|release[-_]?notes[\w.-]*|upgrading[\w.-]*|migrat\w*",
         True, None),
        (r"\binstall\w*\b|\b(?:set\s*up|setup|get\s+started)\b(?!.*\b(?:dev|develop\w*)\b)",
         r"readme[\w.-]*|install[\w.-]*|getting[-_]started[\w.-]*|quickstart[\w.-]*|" + MANIFEST_NAMES, True,
         r"install\w*|(?<![a-z])(?:depend|require)\w*|entry_points|console_scripts|\bscripts\b|\bbin\b|\bpip\b",
         _INSTALL_SECTIONS),
        (_DOCS_QUESTION, _DEV_FILES + r"|(?:docs?|documentation)/readme[\w.-]*|" + DOCS_TOOLING_PATHS,
         False, _DOCS_KEYS, _DOCS_SECTIONS, True),
        (r"\bcode\s+of\s+conduct\b|\bconduct\b", r"code[-_]of[-_]conduct[\w.-]*", False, None),
        (r"\bmaintainers?\b|\bauthors?\b|\bcontact\b|\bwho\s+(?:wrote|maintains|owns)\b",
         r"authors[\w.-]*|maintainers[\w.-]*|codeowners|security[\w.-]*|" + MANIFEST_NAMES, False,
         r"author\w*|maintainer\w*|e-?mail|contact|owners?\b"),
    ))


# What a contributor asks, and the heading of the section of a contributing guide (or any file given
# to the topic) that says it: "Get Started!" says how to contribute and set up for development,
# "Code style" how to lint, "Report Bugs" where to report one. The guide's opening ("Contributions
# are welcome...") and its other sections say the topic's words as often. "Running the tests", not
# "Tests" alone: that section often says how to write them (black's, stamina's).
ASKED_SECTIONS: tuple[tuple[LazyPattern, LazyPattern], ...] = tuple(
    (LazyPattern(q, re.I), LazyPattern(h, re.I)) for q, h in (
        (r"\bcontribut\w*|" + _DEV_ENV,
         r"\bget(?:ting)?\s+started\b|\bhow\s+to\s+contribute\b|\bworkflow\b|\bset(?:ting)?[\s-]*up\b|\bsetup\b"
         r"|\blocal\s+development\b|\bdevelopment\s+(?:environment|setup)\b|\bdev\s+env\w*"),
        (r"\blint(?:er|ing)?\b|\bformat(?:ter|ting)?\b|\bcode\s+style\b|\bstyle\s+(?:rules|guide)\b",
         r"\blint\w*|\bformat(?:ting|ters?)?\b|\bcode\s+style\b|\bstyle\s+guide\b|^(?:code|style)$"),
        (_BUG_QUESTION, r"\bbugs?\b|\bissues?\b|\breport(?:s|ing)?\b"),
        (r"\btests?\b|\btest\s+suite\b|\bnpm\s+test\b|\bmake\s+(?:test|tests|check)\b", _RUN_TESTS_SECTIONS),
        (_DOCS_QUESTION, r"\bdoc(?:s|umentation|umenting)\b|\bsphinx\b|\bmkdocs\b"),
    ))


def asked_sections(question: str) -> re.Pattern | None:
    """The headings of the sections that say what the question asks (``ASKED_SECTIONS``), as one
    pattern; None when it asks none of those."""
    asked = unquoted(question)
    said = [h.pattern for q, h in ASKED_SECTIONS if q.search(asked)]
    return re.compile("|".join(f"(?:{h})" for h in said), re.I) if said else None


def raised(question: str, named: bool) -> list[Topic]:
    """Every project-fact topic the question raises; a word it only quotes raises none ("types
    'instal' instead of 'install'")."""
    asked = unquoted(question)
    return [t for t in TOPICS if t.words.search(asked) and not (named and t.inside_only)]


def fact_file_patterns(question: str, *, named: bool = False) -> list[re.Pattern]:
    """The file-name patterns of every project-fact topic the question raises (``named``: about
    a project the question names, not one it is asked inside: the inside-only topics left out)."""
    return [t.files for t in raised(question, named)]


_LICENCE_WORDS = LazyPattern(_LICENCE_QUESTION, re.I)


def asks_about_licence(question: str) -> bool:
    """Does the question raise the licence topic ("what license is this under?", "copyright")?"""
    return bool(_LICENCE_WORDS.search(question))
