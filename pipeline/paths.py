"""Classify a repository-relative path by what kind of code it holds.

The kind travels with every chunk and every routing token, so ranking can
weigh a word found in a test fixture below the same word in shipped code.
"""
from __future__ import annotations

import re

PATH_KINDS = ("source", "test", "fixture", "example", "vendored", "generated", "docs")

_VENDORED = {"vendor", "vendored", "third_party", "thirdparty", "third-party", "external",
             "extern", "_vendor", "node_modules", "site-packages", "bower_components"}
_GENERATED = {"dist", "build", "_build", "out", "target", "generated", "gen", "_site",
              "coverage", "htmlcov", "site"}
_FIXTURE = {"fixtures", "fixture", "testdata", "test_data", "test-data", "__snapshots__",
            "snapshots", "data"}
_TEST = {"test", "tests", "testing", "spec", "specs", "__tests__", "e2e", "benchmarks", "bench"}
_EXAMPLE = {"example", "examples", "sample", "samples", "demo", "demos", "tutorial",
            "tutorials", "cookbook"}
_DOCS = {"doc", "docs", "documentation", "man", "guide", "guides"}
_TEST_FILE = re.compile(r"(^test_.*|.*_test\.\w+$|.*\.test\.\w+$|.*\.spec\.\w+$|^conftest\.py$|^test\.\w+$|.*-test\.\w+$|.*\.test-d\.ts$)")
_PROSE_EXTENSIONS = (".md", ".rst", ".txt", ".adoc")
_GENERATED_FILE = re.compile(r".*(\.min\.(js|css)$|_pb2\.py$|\.pb\.go$|\.generated\.\w+$|\.lock$)")


# how much each source of routing vocabulary counts (loci_pipeline.index), before the path-kind weight
DEFINITION_WEIGHT = 1.0
PATH_WEIGHT = 0.5
PROSE_WEIGHT = 0.35
# a type stub (``sessions.pyi``, ``index.d.ts``) declares names another file defines: a stub
# package repeats a library's every name, and "where is X defined?" means the library. A name a
# stub declares weighs as a passing mention in prose does.
DECLARATION_FACTOR = PROSE_WEIGHT / DEFINITION_WEIGHT
_DECLARATION_FILE = re.compile(r".*(\.pyi|\.d\.ts|\.d\.mts|\.d\.cts)$")


def symbol_weight(relpath: str, kind: str, params) -> float:
    """How much a name defined in ``relpath`` (of path ``kind``) counts toward routing: the path
    kind's weight, a declaration's share of it in a type stub."""
    weight = params.path_weight(kind)
    return weight * DECLARATION_FACTOR if weight and _DECLARATION_FILE.match(relpath.lower()) else weight


def path_kind(relpath: str) -> str:
    """One of PATH_KINDS for a '/'-separated path relative to the repository root."""
    parts = [p.lower() for p in relpath.replace("\\", "/").split("/") if p]
    if not parts:
        return "source"
    dirs, name = parts[:-1], parts[-1]
    if any(d in _VENDORED for d in dirs):
        return "vendored"
    if any(d in _GENERATED for d in dirs) or _GENERATED_FILE.match(name):
        return "generated"
    in_test = any(d in _TEST for d in dirs)
    if in_test and any(d in _FIXTURE for d in dirs):
        return "fixture"
    if any(d in ("fixtures", "testdata", "__snapshots__") for d in dirs):
        return "fixture"
    if in_test or _TEST_FILE.match(name):
        return "test"
    if any(d in _EXAMPLE for d in dirs):
        return "example"
    prose = name.endswith(_PROSE_EXTENSIONS)
    if any(d in _DOCS for d in dirs):
        # code in the documentation illustrates the project (a snippet, a tutorial's script, the
        # docs' own build config), as an examples/ folder's does: it defines no API of the project
        return "docs" if prose else "example"
    if prose:
        return "docs"
    return "source"
