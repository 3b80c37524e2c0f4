"""Project-level facts, each with the file (and line) that shows it: languages, licence,
declared dependencies, marker files, docs and changelog toolchain, CI, tests, type
declarations, translated READMEs.

Enumerative questions ask about these ("which of my projects are Apache-2.0
licensed?", "...built on top of click?", "...not written in Python?", "...ship
py.typed?"), and none of them is a word the code defines. Each fact becomes a
``fact:<token>`` routing entry (held or not) and is kept with its citation in the
scope's meta record, so an enumeration can say why each member is in the set.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from loci.kernel import runtimes
from loci_pipeline.dependencies import declared, dependencies, read_head as _head, runtime_dependencies
from loci_pipeline.paths import path_kind

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".rs": "rust", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".java": "java",
    ".kt": "kotlin", ".rb": "ruby", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp",
    ".cs": "csharp", ".swift": "swift", ".php": "php", ".scala": "scala", ".lua": "lua",
    ".ex": "elixir", ".sh": "shell", ".zig": "zig",
    ".hpp": "cpp", ".hh": "cpp", ".cxx": "cpp", ".kts": "kotlin", ".exs": "elixir", ".hs": "haskell",
    ".ml": "ocaml", ".mli": "ocaml", ".dart": "dart", ".jl": "julia", ".pl": "perl", ".pm": "perl",
    ".erl": "erlang", ".clj": "clojure", ".fs": "fsharp", ".nim": "nim",
}
LICENSES = (
    ("apache", re.compile(r"apache[\s-]*(license)?[\s,]*(version\s*)?2", re.I)),
    ("mit", re.compile(r"\bMIT\b(?:\s+license)?|permission is hereby granted, free of charge", re.I)),
    ("bsd", re.compile(r"\bBSD\b|redistribution and use in source and binary forms", re.I)),
    ("gpl", re.compile(r"\b(?:A|L)?GPL(?:v?\d)?\b|GNU (?:Affero |Lesser )?General Public License", re.I)),
    ("unlicense", re.compile(r"\bunlicense\b|released into the public domain", re.I)),
    ("mpl", re.compile(r"Mozilla Public License", re.I)),
)
FACT_PREFIX = "fact:"
USES_PREFIX = FACT_PREFIX + "uses:"   # also held when the fact is a declared dependency
DEPENDENCY_FREE = "dependency-free"   # installing it pulls in nothing (the router asks for it by this name)
# marker files whose presence anywhere is itself a fact worth asking about
MARKER_FILES = ("py.typed", "dockerfile", "makefile", "justfile", "tox.ini", "noxfile.py", "conftest.py",
                "mkdocs.yml", "setup.py", "pyproject.toml", "package.json", "cargo.toml", "go.mod",
                "requirements.txt", "tsconfig.json", ".pre-commit-config.yaml", "uv.lock", "poetry.lock",
                "citation.cff", "citation")
# the manifest that best shows a language is the project's own (cited before any source file)
LANGUAGE_MANIFESTS = {"python": ("pyproject.toml", "setup.py", "setup.cfg"), "javascript": ("package.json",),
                      "typescript": ("tsconfig.json", "package.json"), "rust": ("Cargo.toml",), "go": ("go.mod",)}
# top-level files of a kind, by name stem (case-insensitive): (fact value, extra words, stems)
KIND_FILES = (("changelog", "", ("changelog", "changes", "history", "news")),
              ("contributing guide", "contributing", ("contributing",)),
              ("code of conduct", "conduct", ("code_of_conduct", "code-of-conduct")),
              ("security policy", "security", ("security",)))
# the other words a marker file goes by (its own name is always one)
MARKER_WORDS = {"py.typed": "typed hints annotations", "citation.cff": "citation", "uv.lock": "uv", "poetry.lock": "poetry", "dockerfile": "docker",
                "mkdocs.yml": "mkdocs", "tox.ini": "tox", "noxfile.py": "nox"}
CI_PATHS = (".github/workflows/", ".travis.yml", ".gitlab-ci.yml", ".circleci/", "azure-pipelines.yml",
            "appveyor.yml", ".cirrus.yml")
TYPE_WORDS = "typescript declarations typings"   # what a question calls shipped .d.ts files
TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__", "spec"})
BENCH_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks"})   # test-kind paths that are no tests
RUST_SOURCES_READ = 50   # Rust sources read for inline tests when no test file shows them
_RUST_TESTS = r"^[ \t]*#\[cfg\(test\)\]"
# a README copy in another language: README.zh-CN.md, Readme_zh-CN.md, README-es.md ...
_TRANSLATED = re.compile(r"^readme[._-]([a-z]{2})(?:[-_][a-z]{2,4})?\.(?:md|rst|txt)$", re.I)
LANGUAGE_NAMES = {"ar": "arabic", "de": "german", "es": "spanish", "fr": "french", "he": "hebrew",
                  "id": "indonesian", "it": "italian", "ja": "japanese", "ko": "korean", "pl": "polish",
                  "pt": "portuguese", "ru": "russian", "tr": "turkish", "uk": "ukrainian", "uz": "uzbek",
                  "zh": "chinese", "vi": "vietnamese", "fa": "persian", "hi": "hindi", "nl": "dutch",
                  "el": "greek", "cs": "czech", "sv": "swedish", "th": "thai", "bn": "bengali"}


def languages(relpaths: Iterable[str], share: float = 0.2) -> list[str]:
    """Languages making up at least ``share`` of the source files."""
    counts = Counter(LANGUAGES[ext] for p in relpaths if (ext := Path(p).suffix.lower()) in LANGUAGES)
    total = sum(counts.values())
    return sorted(lang for lang, n in counts.items() if total and n / total >= share)


_LICENSE_FIELD = re.compile(r"licen[cs]e[\"']?\s*[=:]\s*[\"'{]?\s*(?:text\s*=\s*)?[\"']?([^\"'\n}]+)", re.I)


def license_sources(root: Path, relpaths: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Licence id -> (file, line) of its first sighting: a top-level licence file, or the
    licence field of a top-level manifest."""
    texts = []   # (relpath, text, line of the text's first character)
    for rel in sorted(relpaths):
        name = Path(rel).name.lower()
        if "/" not in rel and name.startswith(("license", "licence", "copying", "unlicense")):
            texts.append((rel, _head(root / rel, 3000), 1))
        elif "/" not in rel and name in ("pyproject.toml", "package.json", "cargo.toml", "setup.cfg", "setup.py"):
            head = _head(root / rel, 20000)
            m = _LICENSE_FIELD.search(head)
            if m:
                texts.append((rel, m.group(1), head.count("\n", 0, m.start()) + 1))
    found: dict[str, tuple[str, int]] = {}
    for rel, text, first in texts:
        for lid, pat in LICENSES:
            m = pat.search(text)
            if m and lid not in found:
                found[lid] = (rel, first + text.count("\n", 0, m.start()))
    return found


def license_ids(root: Path, relpaths: Iterable[str]) -> list[str]:
    return sorted(license_sources(root, relpaths))


def markers(relpaths: Iterable[str]) -> list[str]:
    names = {Path(p).name.lower() for p in relpaths}
    return sorted(m for m in MARKER_FILES if m in names)


@dataclass(frozen=True)
class Fact:
    """One thing a project is or has, and where that shows."""

    kind: str        # language | license | dependency | file | docs | ci | tests | types | translation
    value: str       # what is held, as a reader would say it
    source: str      # the file that shows it, relative to the scope's root
    line: int        # its line there (1 when the file itself is the evidence)
    words: str = ""  # further words a question may use for it ("d.ts": "typescript declarations typings")

    def tokens(self) -> list[str]:
        """The routing tokens a question matches this fact by: a one-word value's first token
        (``apache``, ``sqlite-utils``, ``py.typed``; a phrase's words are too common, "code of
        conduct"), then every word of ``words``."""
        from loci.kernel.tokens import tokenize

        if self.kind == "runtime":   # made whole by loci.kernel.runtimes: "python-3.9", "node-min-20"
            return self.words.split()
        out = [] if " " in self.value else tokenize(self.value)[:1] or [self.value.lower()]
        for tok in tokenize(self.words):
            if tok not in out:
                out.append(tok)
        return out

    def to_json(self) -> dict:
        return {**asdict(self), "tokens": self.tokens()}


def _first(relpaths: list[str], test) -> str | None:
    """The shallowest path passing ``test`` (the top-level one when there is one)."""
    return min((p for p in relpaths if test(p)), key=lambda p: (p.count("/"), p), default=None)


def _line_of(root: Path, rel: str, pattern: str, missing: int = 1) -> int:
    """The line of ``pattern``'s first match in the file, ``missing`` where it has none."""
    head = _head(root / rel, 200000)
    m = re.search(pattern, head, re.M)
    return head.count("\n", 0, m.start()) + 1 if m else missing


def scope_facts(root: Path, relpaths: list[str], deps: list[str] | None = None) -> list[Fact]:
    """Every fact of one scope, with its citation; ``deps`` when the declared dependencies were read."""
    paths = sorted(relpaths)
    top = {p.lower(): p for p in paths if "/" not in p}
    facts: list[Fact] = []
    for lang in languages(paths):
        manifest = next((top[m.lower()] for m in LANGUAGE_MANIFESTS.get(lang, ()) if m.lower() in top), None)
        source = manifest or _first(paths, lambda p: LANGUAGES.get(Path(p).suffix.lower()) == lang)
        facts.append(Fact("language", lang, source or "", 1))
    for lid, (rel, line) in sorted(license_sources(root, paths).items()):
        facts.append(Fact("license", lid, rel, line))
    deps = dependencies(root, paths) if deps is None else deps
    cited = {name: (rel, line) for name, rel, line in declared(root, paths, deps)}
    for dep in deps:
        rel, line = cited.get(dep, ("", 0))
        facts.append(Fact("dependency", dep, rel, line))
    if runtime_dependencies(root, paths) == []:
        manifest = next(m for m in ("pyproject.toml", "setup.py", "package.json", "cargo.toml") if m in top)
        facts.append(Fact("dependency-free", DEPENDENCY_FREE, top[manifest], 1))
    for marker in markers(paths):
        rel = _first(paths, lambda p, m=marker: Path(p).name.lower() == m)
        facts.append(Fact("file", marker, rel or "", 1, MARKER_WORDS.get(marker, "")))
    for value, words, stems in KIND_FILES:
        rel = next((p for low, p in top.items() if low.split(".")[0] in stems), None)
        if rel:
            facts.append(Fact("file", value, rel, 1, words))
    facts += _toolchain(root, paths, top)
    facts += runtime_facts(root, top)
    facts += changelog_mentions(root, next((f.source for f in facts if f.value == "changelog"), None))
    for rel in paths:
        m = _TRANSLATED.match(Path(rel).name) if rel.count("/") <= 1 else None
        name = LANGUAGE_NAMES.get(m.group(1).lower()) if m else None
        if name and not any(f.kind == "translation" and f.value == name for f in facts):
            facts.append(Fact("translation", name, rel, 1, "translation"))
    return facts


_MENTION = re.compile(r"\b(python|pypy|node(?:\.js)?|rust|go|django|flask)\s+v?(\d+\.\d+)\b", re.I)


_PYTHON_RANGE = (("pyproject.toml", r'^requires-python\s*=\s*["\']([^"\']+)["\']'),
                 ("setup.cfg", r"^python_requires\s*=\s*(.+?)\s*$"),
                 ("setup.py", r'python_requires\s*=\s*["\']([^"\']+)["\']'))
_CLASSIFIER = r"Programming Language :: Python :: (\d+\.\d+)\b"
_NODE_ENGINE = r'"engines"\s*:\s*\{[^}]*?"node"\s*:\s*"([^"]+)"'


def runtime_facts(root: Path, top: dict[str, str]) -> list[Fact]:
    """The Python and Node versions the top-level manifests declare (``loci.kernel.runtimes``):
    a range where there is one, else the Python classifiers; cited at the line that says it."""
    texts = {m: _head(root / top[m], 200000) for m in ("pyproject.toml", "setup.cfg", "setup.py", "package.json")
             if m in top}   # each manifest read once

    def found(manifest: str, pattern: str, flags=re.M) -> tuple[str, str, int] | None:
        """(the captured value, the manifest, the line it is on) or None."""
        text = texts.get(manifest, "")
        m = re.search(pattern, text, flags)
        return (m.group(1), top[manifest], text.count("\n", 0, m.start(1)) + 1) if m else None

    def fact(runtime: str, value: str, rel: str, line: int, lines: list) -> Fact:
        return Fact("runtime", f"{runtime} {value}", rel, line, " ".join(runtimes.runtime_tokens(runtime, lines)))

    out = []
    python = next((hit for hit in (found(m, p) for m, p in _PYTHON_RANGE) if hit), None)
    if python:
        spec, rel, line = python
        out.append(fact("python", spec, rel, line, runtimes.admitted("python", spec)))
    else:
        for manifest in ("pyproject.toml", "setup.cfg", "setup.py"):
            listed = re.findall(_CLASSIFIER, texts.get(manifest, ""))
            lines = sorted({tuple(map(int, v.split("."))) for v in listed} & set(runtimes.WINDOWS["python"]))
            if lines:
                first = found(manifest, _CLASSIFIER)
                out.append(fact("python", ", ".join(".".join(map(str, ln)) for ln in lines), top[manifest],
                                first[2] if first else 1, lines))
                break
    node = found("package.json", _NODE_ENGINE, re.S)
    if node:
        spec, rel, line = node
        out.append(fact("node", spec, rel, line, runtimes.admitted("node", spec)))
    return [f for f in out if f.words]


def changelog_mentions(root: Path, changelog: str | None) -> list[Fact]:
    """Each "<runtime> <version>" the changelog mentions ("Python 3.14", "Node 18.0"), cited at
    its first mention; a question matches it by the version ("changelog mentions Python 3.14")."""
    if not changelog:
        return []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(_head(root / changelog, 2_000_000).splitlines(), 1):
        for m in _MENTION.finditer(line):
            seen.setdefault((m.group(1).lower().removesuffix(".js"), m.group(2)), number)
    return [Fact("changelog", f"{name} {version}", changelog, line, version)
            for (name, version), line in seen.items()]


def _toolchain(root: Path, paths: list[str], top: dict[str, str]) -> list[Fact]:
    """Docs and changelog toolchain, CI, tests and shipped type declarations."""
    out = []
    conf = _first(paths, lambda p: p.endswith("conf.py") and p.split("/")[0] in ("doc", "docs"))
    if conf:
        out.append(Fact("docs", "sphinx", conf, 1))
    if "mkdocs.yml" in top:
        out.append(Fact("docs", "mkdocs", top["mkdocs.yml"], 1))
    for manifest in ("pyproject.toml", "towncrier.toml"):
        if manifest in top and re.search(r"^\[tool\.towncrier\]", _head(root / top[manifest], 200000), re.M):
            out.append(Fact("docs", "towncrier", top[manifest], _line_of(root, top[manifest], r"^\[tool\.towncrier\]")))
            break
    man = _first(paths, lambda p: re.search(r"\.[1-8]$", p) is not None and "/" in p)
    if man:
        out.append(Fact("docs", "man page", man, 1, "man manpage"))
    ci = _first(paths, lambda p: p.startswith(CI_PATHS))
    if ci:
        out.append(Fact("ci", "ci", ci, 1))
    tests = tested_at(root, paths)
    if tests:
        out.append(Fact("tests", "tests", *tests))
    dts = _first(paths, lambda p: p.endswith(".d.ts") and "node_modules" not in p)
    if "package.json" in top and re.search(r'"(types|typings)"\s*:', _head(root / top["package.json"], 200000)):
        rel = top["package.json"]
        out.append(Fact("types", "d.ts", rel, _line_of(root, rel, r'"(types|typings)"\s*:'), TYPE_WORDS))
    elif dts:
        out.append(Fact("types", "d.ts", dts, 1, TYPE_WORDS))
    return out


def tested_at(root: Path, paths: list[str]) -> tuple[str, int] | None:
    """Where the project's tests show: a file of a top-level test folder, else the shallowest test
    file by its language's convention (``paths.path_kind``: ``foo_test.go`` beside the code,
    ``*.test.js``, ``*.spec.ts``, ``test_*.py``, ``src/tests/``; a benchmark is no test), else a Rust
    source holding ``#[cfg(test)]``, at that line (of the shallowest ``RUST_SOURCES_READ``)."""
    top = _first(paths, lambda p: p.split("/")[0].lower() in TEST_DIRS)
    found = top or _first(paths, lambda p: path_kind(p) == "test" and not BENCH_DIRS & set(p.lower().split("/")[:-1]))
    if found:
        return found, 1
    rust = sorted((p for p in paths if p.endswith(".rs") and path_kind(p) == "source"),
                  key=lambda p: (p.count("/"), p))[:RUST_SOURCES_READ]
    return next(((p, line) for p in rust if (line := _line_of(root, p, _RUST_TESTS, 0))), None)


def fact_vocabulary(root: Path, relpaths: list[str], deps: list[str] | None = None,
                    facts: list[Fact] | None = None) -> Counter:
    """``fact:<token>`` routing entries (weight 1: a fact is held or not) for every fact of the
    scope (``facts`` when already read)."""
    vocab: Counter = Counter()
    for fact in scope_facts(root, relpaths, deps) if facts is None else facts:
        for tok in fact.tokens():
            vocab[FACT_PREFIX + tok] = 1
            if fact.kind == "dependency":
                vocab[USES_PREFIX + tok] = 1
    return vocab
