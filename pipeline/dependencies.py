"""Which dependencies a scope's top-level manifests declare, and on which line.

``loci_pipeline.facts`` (a scope's facts) and ``loci_pipeline.references`` (what it uses of other
scopes) both read them; this module is what they share, so neither imports the other.
"""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Iterable, Sequence

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
DEPENDENCY_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "package.json", "Cargo.toml",
                    "go.mod")


def read_head(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


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
            data = tomllib.loads(read_head(root / "pyproject.toml", 200000))
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
        text = read_head(root / "setup.py", 100000)
        m = re.search(r"install_requires\s*=\s*\[([^\]]*)\]", text, re.S)
        if m:
            deps.update(re.findall(r"[\"']([A-Za-z0-9][A-Za-z0-9._-]*)", m.group(1)))
    for req in ("requirements.txt",):
        if req in top:
            for line in read_head(root / req, 50000).splitlines():
                if (m := _REQ.match(line)) and not line.lstrip().startswith(("#", "-")):
                    deps.add(m.group(1))
    if "package.json" in top:
        try:
            data = json.loads(read_head(root / "package.json", 200000))
        except (ValueError, RecursionError):
            data = None
        for key in ("dependencies", "peerDependencies"):
            deps.update(_declared(data, (key,), "package.json", problems))
    if "Cargo.toml" in top:
        try:
            data = tomllib.loads(read_head(root / "Cargo.toml", 200000))
        except tomllib.TOMLDecodeError:
            data = None
        deps.update(_declared(data, ("dependencies",), "Cargo.toml", problems))
    return sorted(d.lower() for d in deps if d.lower() not in ("python",))


def runtime_dependencies(root: Path, relpaths: Iterable[str]) -> list[str] | None:
    """What installing the project always or sometimes pulls in (not extras, not dev tools),
    from the top-level manifest; None when no manifest says (or it computes them)."""
    top = {rel for rel in relpaths if "/" not in rel}
    if "pyproject.toml" in top:
        try:
            data = tomllib.loads(read_head(root / "pyproject.toml", 200000))
        except tomllib.TOMLDecodeError:
            data = {}
        if isinstance(data.get("project"), dict) and \
                "dependencies" not in _declared(data, ("project", "dynamic"), "pyproject.toml", None):
            return _declared(data, ("project", "dependencies"), "pyproject.toml", None)
    if "setup.py" in top:
        m = re.search(r"install_requires\s*=\s*\[([^\]]*)\]", read_head(root / "setup.py", 100000), re.S)
        return re.findall(r"[\"']([^\"']+)", m.group(1)) if m else []
    if "package.json" in top:
        try:
            return _declared(json.loads(read_head(root / "package.json", 200000)), ("dependencies",), "package.json", None)
        except (ValueError, RecursionError):
            return None
    if "Cargo.toml" in top:
        try:
            return _declared(tomllib.loads(read_head(root / "Cargo.toml", 200000)), ("dependencies",), "Cargo.toml", None)
        except tomllib.TOMLDecodeError:
            return None
    return None


def declared(root: Path, relpaths: Iterable[str], names: Sequence[str] | None = None) -> list[tuple[str, str, int]]:
    """(dependency, manifest path, line) for each dependency the top-level manifests declare
    (``names``: those dependencies when the caller has already read them)."""
    names = dependencies(root, relpaths) if names is None else names
    texts = {}
    for rel in DEPENDENCY_FILES:
        try:
            texts[rel] = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    out = []
    for name in names:
        pat = re.compile(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", re.I)
        where = next(((rel, i + 1) for rel, lines in texts.items() for i, line in enumerate(lines)
                      if pat.search(line)), None)
        if where:
            out.append((name, *where))
    return out
