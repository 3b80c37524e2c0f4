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


def dependencies(root: Path, relpaths: Iterable[str]) -> list[str]:
    """Names declared as dependencies in the top-level manifests."""
    deps: set[str] = set()
    top = {rel for rel in relpaths if "/" not in rel}
    if "pyproject.toml" in top:
        try:
            data = tomllib.loads(_head(root / "pyproject.toml", 200000))
            proj = data.get("project", {})
            reqs = list(proj.get("dependencies", []))
            for extra in proj.get("optional-dependencies", {}).values():
                reqs.extend(extra)
            poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
            reqs.extend(poetry)
            deps.update(m.group(1) for r in reqs if (m := _REQ.match(str(r))))
        except (tomllib.TOMLDecodeError, OSError, AttributeError):
            pass
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
            for key in ("dependencies", "peerDependencies"):
                deps.update(data.get(key, {}) or {})
        except (ValueError, AttributeError):
            pass
    if "Cargo.toml" in top:
        try:
            data = tomllib.loads(_head(root / "Cargo.toml", 200000))
            deps.update(data.get("dependencies", {}))
        except (tomllib.TOMLDecodeError, OSError):
            pass
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
