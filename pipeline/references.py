"""What a scope provides (its package names) and what it references (imports, declared
dependencies), each with a path and line; ``pipeline/uses.py`` matches them across scopes.

Pure over texts, except ``declared`` and ``provided``, which read a scope's top-level
manifests (the same ones ``facts`` and ``manifests`` read).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from loci_pipeline.manifests import manifest_names
from loci_pipeline.paths import path_kind

_PY = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([A-Za-z_]\w*))", re.M)
_JS = re.compile(r"""(?:\bfrom[ \t]*|\brequire\([ \t]*|\bimport\([ \t]*|^[ \t]*import[ \t]+)['"]([^'"]+)['"]""",
                 re.M)
_RS = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:use|extern[ \t]+crate)[ \t]+(?:::)?([A-Za-z_]\w*)", re.M)
_RS_LOCAL = frozenset({"crate", "self", "super", "std", "core", "alloc"})
JS_EXTS = frozenset({"js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"})


def normalise(name: str) -> str:
    """One spelling for a package name: case and the - _ . separators do not matter."""
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def _js_package(spec: str) -> str | None:
    spec = spec.removeprefix("node:")
    if spec.startswith((".", "/")) or not spec:
        return None
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") and len(parts) > 1 else parts[0]


def imports(text: str, ext: str) -> list[tuple[str, int]]:
    """(module or package name, first line) of each distinct top-level import in a source file."""
    found: dict[str, int] = {}
    if ext == "py":
        hits = ((m.group(1) or m.group(2), m.start()) for m in _PY.finditer(text))
    elif ext in JS_EXTS:
        hits = ((_js_package(m.group(1)), m.start()) for m in _JS.finditer(text))
    elif ext == "rs":
        hits = ((m.group(1), m.start()) for m in _RS.finditer(text) if m.group(1) not in _RS_LOCAL)
    else:
        return []
    for name, at in hits:
        if name and name not in found:
            found[name] = text.count("\n", 0, at) + 1
    return sorted(found.items(), key=lambda kv: kv[1])




# folders every project may have: a package by that name says nothing about who uses whom
NOT_A_NAME = frozenset({"tests", "test", "testing", "docs", "doc", "examples", "example", "scripts",
                        "bench", "benchmarks", "tools", "src", "lib", "utils", "build"})


def provided(root: Path, relpaths: Iterable[str]) -> list[tuple[str, str, int]]:
    """(name, path, line) the scope is known by to others: manifest package names and its
    top-level Python packages (a folder with ``__init__.py``, at the root or under ``src/``)."""
    out = [(name, "manifest", 0) for name in manifest_names(root) if normalise(name) not in NOT_A_NAME]
    for rel in relpaths:
        parts = rel.split("/")
        if parts[-1] == "__init__.py" and (len(parts) == 2 or len(parts) == 3 and parts[0] == "src") \
                and parts[-2].lower() not in NOT_A_NAME and path_kind(rel) == "source":
            out.append((parts[-2], rel, 1))
    return out
