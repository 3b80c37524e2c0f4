"""Project-level facts as routing tokens: license, languages, declared dependencies.

Enumerative questions ask about these ("which of my projects are Apache-2.0
licensed?", "...built on top of click?", "...not written in Python?"), and
none of them is a word the code defines. Each fact becomes a token with a
fixed, prominent weight.
"""
from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Iterable

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".rs": "rust", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".java": "java",
    ".kt": "kotlin", ".rb": "ruby", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp",
    ".cs": "csharp", ".swift": "swift", ".php": "php", ".scala": "scala", ".lua": "lua",
    ".ex": "elixir", ".sh": "shell", ".zig": "zig",
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
# marker files whose presence anywhere is itself a fact worth asking about
MARKER_FILES = ("py.typed", "dockerfile", "makefile", "tox.ini", "noxfile.py", "conftest.py",
                "mkdocs.yml", "setup.py", "pyproject.toml", "package.json", "cargo.toml", "go.mod",
                "requirements.txt", "tsconfig.json", ".pre-commit-config.yaml")
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def languages(relpaths: Iterable[str], share: float = 0.2) -> list[str]:
    """Languages making up at least ``share`` of the source files."""
    counts = Counter(LANGUAGES[ext] for p in relpaths if (ext := Path(p).suffix.lower()) in LANGUAGES)
    total = sum(counts.values())
    return sorted(lang for lang, n in counts.items() if total and n / total >= share)


def license_ids(root: Path, relpaths: Iterable[str]) -> list[str]:
    texts = []
    for rel in relpaths:
        name = Path(rel).name.lower()
        if "/" not in rel and name.startswith(("license", "licence", "copying", "unlicense")):
            texts.append(_head(root / rel, 3000))
        elif "/" not in rel and name in ("pyproject.toml", "package.json", "cargo.toml", "setup.cfg", "setup.py"):
            m = re.search(r"licen[cs]e[\"']?\s*[=:]\s*[\"'{]?\s*(?:text\s*=\s*)?[\"']?([^\"'\n}]+)", _head(root / rel, 20000), re.I)
            if m:
                texts.append(m.group(1))
    found = set()
    for text in texts:
        for lid, pat in LICENSES:
            if pat.search(text):
                found.add(lid)
    if "unlicense" in found:
        found.discard("mit") if not texts else None
    return sorted(found)


def _declared(data: object, path: tuple[str, ...], file: str, problems: list[str] | None) -> list[str]:
    """The names at ``path`` in a decoded manifest: requirement strings from a list, or the keys
    of a table. Anything else (``dependencies = 5``) is skipped and reported in ``problems``."""
    node = data
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    if node is None:
        return []
    if isinstance(node, dict):
        return [k for k in node if isinstance(k, str)]
    if isinstance(node, list) and all(isinstance(v, str) for v in node):
        return node
    if problems is not None:
        problems.append(f"{file}: `{'.'.join(path)}` is not a list or table of names; skipped it")
    return [v for v in node if isinstance(v, str)] if isinstance(node, list) else []


def _table(data: object, *path: str) -> dict:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def dependencies(root: Path, relpaths: Iterable[str], problems: list[str] | None = None) -> list[str]:
    """Names declared as dependencies in the top-level manifests. A value of the wrong type is
    skipped (the rest still counts) and reported, naming the file, in ``problems``."""
    deps: set[str] = set()
    top = {rel for rel in relpaths if "/" not in rel}
    if "pyproject.toml" in top:
        try:
            data = tomllib.loads(_head(root / "pyproject.toml", 200000))
        except tomllib.TOMLDecodeError as exc:
            data = None
            if problems is not None:
                problems.append(f"pyproject.toml is not valid TOML ({exc}); its dependencies were skipped")
        reqs = _declared(data, ("project", "dependencies"), "pyproject.toml", problems)
        for extra in _table(data, "project", "optional-dependencies"):
            reqs += _declared(data, ("project", "optional-dependencies", extra), "pyproject.toml", problems)
        reqs += _declared(data, ("tool", "poetry", "dependencies"), "pyproject.toml", problems)
        deps.update(m.group(1) for r in reqs if (m := _REQ.match(r)))
    if "setup.py" in top:
        text = _head(root / "setup.py", 100000)
        m = re.search(r"install_requires\s*=\s*\[([^\]]*)\]", text, re.S)
        if m:
            deps.update(re.findall(r"[\"']([A-Za-z0-9][A-Za-z0-9._-]*)", m.group(1)))
    for req in ("requirements.txt",):
        if req in top:
            for line in _head(root / req, 50000).splitlines():
                if (m := _REQ.match(line)) and not line.lstrip().startswith(("#", "-")):
                    deps.add(m.group(1))
    if "package.json" in top:
        try:
            data = json.loads(_head(root / "package.json", 200000))
        except (ValueError, RecursionError):
            data = None
        for key in ("dependencies", "peerDependencies"):
            deps.update(_declared(data, (key,), "package.json", problems))
    if "Cargo.toml" in top:
        try:
            data = tomllib.loads(_head(root / "Cargo.toml", 200000))
        except tomllib.TOMLDecodeError:
            data = None
        deps.update(_declared(data, ("dependencies",), "Cargo.toml", problems))
    return sorted(d.lower() for d in deps if d.lower() not in ("python",))


def markers(relpaths: Iterable[str]) -> list[str]:
    names = {Path(p).name.lower() for p in relpaths}
    return sorted(m for m in MARKER_FILES if m in names)


def fact_vocabulary(root: Path, relpaths: list[str], deps: list[str] | None = None) -> Counter:
    """``fact:<token>`` routing entries (weight 1: a fact is held or not) for the scope's
    languages, license, declared dependencies (``deps`` when already read) and marker files."""
    from loci.kernel.tokens import tokenize

    vocab: Counter = Counter()
    facts = [*languages(relpaths), *license_ids(root, relpaths), *(dependencies(root, relpaths) if deps is None else deps),
             *markers(relpaths)]
    for fact in facts:
        for tok in tokenize(fact)[:1] or [fact.lower()]:
            vocab[FACT_PREFIX + tok] = 1
    return vocab


def _head(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""
