"""Where a project keeps the facts about itself, by convention.

A question about the project itself ("what license is this under?", "how do I run
the tests here?", "what's the oldest Python version it supports?") is answered by
the files every project keeps for that: the licence file, the package manifest,
CONTRIBUTING, SECURITY, the changelog, the task runner's file. Their words rarely
match the question's ("requires-python", "engines", "xo && ava"), so ranking by
words alone leaves them out of the first five. A closed table: a topic either
appears in the question or not; no thresholds here.
"""
from __future__ import annotations

import re

from loci.kernel.lazyre import LazyPattern
from loci.kernel.markup import prose_words

_MANIFEST = r"pyproject\.toml|setup\.cfg|setup\.py|package\.json|cargo\.toml|go\.mod|composer\.json|gemfile|[\w.-]+\.gemspec"
_RUNNER = r"makefile|tox\.ini|noxfile\.py|justfile|taskfile\.ya?ml|\.pre-commit-config\.yaml"
_CONTRIB = r"contributing[\w.-]*|hacking[\w.-]*|development[\w.-]*"

# (question words, file names) - file names matched on the path's last part, case-insensitively
TOPICS: tuple[tuple[LazyPattern, LazyPattern], ...] = tuple(
    (LazyPattern(q, re.I), LazyPattern(r"^(?:" + f + r")$", re.I)) for q, f in (
        (r"\blicen[cs]e[sd]?\b|\bcopyright\b|\blicensing\b",
         r"licen[cs]e[\w.-]*|copying[\w.-]*|unlicense|notice[\w.-]*|" + _MANIFEST),
        (r"\b(?:python|node(?:\.js)?|rust|go|ruby|php|java|msrv|runtime|language|compiler|toolchain)\b.*"
         r"\bversions?\b|\bversions?\b.*\b(?:support|supports|supported|require|requires|required|need|needs|"
         r"minimum|oldest|newest)\b|\bmsrv\b|\bengines?\b|\brequires?-python\b",
         _MANIFEST + r"|\.python-version|\.nvmrc|rust-toolchain(?:\.toml)?|\.tool-versions"),
        (r"\btests?\b|\btest\s+suite\b|\blint(?:er|ing)?\b|\bformatter\b|\bcode\s+style\b|\bstyle\s+(?:rules|guide)\b"
         r"|\bpatch(?:es)?\b|\bpull\s+requests?\b|\bPRs?\b|\bcontribut\w*\b|\bverify\s+my\s+changes\b|\bci\b"
         r"|\bnpm\s+(?:test|run)\b|\bmake\b|\bbuild\s+(?:it|locally|from\s+source)\b",
         _CONTRIB + "|" + _RUNNER + "|" + _MANIFEST),
        (r"\bsecurity\b|\bvulnerabilit\w*\b|\bdisclos\w*\b|\bcve\b",
         r"security[\w.-]*|vulnerabilit[\w.-]*"),
        (r"\bchange(?:log|s|d)\b|\b(?:latest|last|next|new|newest|recent|previous|upcoming)\s+(?:release|version)s?\b"
         r"|\brelease\s+notes\b|\bwhat'?s\s+new\b|\bhistory\b|\bupgrad\w*\b|\bmigrat\w*\b",
         r"change(?:log|s)[\w.-]*|history[\w.-]*|news[\w.-]*|release[-_]?notes[\w.-]*|upgrading[\w.-]*|migrat\w*"),
        (r"\binstall\w*\b|\bset\s*up\b|\bsetup\b|\bget\s+started\b",
         r"readme[\w.-]*|install[\w.-]*|getting[-_]started[\w.-]*|quickstart[\w.-]*|" + _MANIFEST),
        (r"\bcode\s+of\s+conduct\b|\bconduct\b", r"code[-_]of[-_]conduct[\w.-]*"),
        (r"\bmaintainers?\b|\bauthors?\b|\bcontact\b|\bwho\s+(?:wrote|maintains|owns)\b",
         r"authors[\w.-]*|maintainers[\w.-]*|codeowners|security[\w.-]*|" + _MANIFEST),
    ))


def fact_file_patterns(question: str) -> list[re.Pattern]:
    """The file-name patterns of every project-fact topic the question raises."""
    return [files for words, files in TOPICS if words.search(question)]


def is_fact_file(path: str, patterns: list[re.Pattern]) -> bool:
    """Does the file, or a folder it sits in (``docs/contributing/the_basics.md``), hold the fact?"""
    parts = path.split("/")
    return any(p.match(part) for part in parts for p in patterns)


# --- what the project is: its own description, for "what does this project do?" ------------

_README = LazyPattern(r"^readme(?:\.[\w-]+)?$", re.I)
_MANIFESTS = LazyPattern(r"^(?:pyproject\.toml|package\.json|cargo\.toml|setup\.cfg|composer\.json|[\w.-]+\.gemspec)$", re.I)
_DESCRIBED = LazyPattern(r"""(?im)^\s*["']?(?:description|summary)["']?\s*[=:]""")
_DOCS_INDEX = LazyPattern(r"^(?:docs?|documentation)/(?:index|readme|intro(?:duction)?|overview)\.(?:md|rst|txt|adoc)$", re.I)
OPENING_WORDS = 8   # fewer words of prose (a logo, a row of badges) open nothing


def opening_candidates(prose: dict[int, str], is_translation, per_file: int = 4) -> list[list[int]]:
    """Rows that may open the project's description, by where they come from, in the order they
    are shown: the top-level README's first rows, the package manifest's, the docs index's first
    rows. ``prose``: row -> path of the scope's prose chunks (rows in file order)."""
    readme, manifest, docs = [], [], []
    for row, path in sorted(prose.items()):
        if "/" not in path and _README.match(path) and is_translation(path) is None:
            readme.append(row)
        elif "/" not in path and _MANIFESTS.match(path):
            manifest.append(row)
        elif _DOCS_INDEX.match(path):
            docs.append(row)
    return [readme[:per_file], manifest[:1], docs[:per_file]]


def opening_rows(candidates: list[list[int]], texts: dict[int, str]) -> list[int]:
    """The project's own description, first to last: the README's first passage of prose, the
    manifest when it states a description, the docs index's first passage of prose."""
    readme, manifest, docs = candidates
    out = [next((r for r in readme if prose_words(texts.get(r, "")) >= OPENING_WORDS), None),
           next((r for r in manifest if _DESCRIBED.search(texts.get(r, ""))), None),
           next((r for r in docs if prose_words(texts.get(r, "")) >= OPENING_WORDS), None)]
    return [r for r in out if r is not None]
