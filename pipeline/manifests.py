"""Package names a directory declares in its manifests, which become scope aliases."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path


def manifest_names(directory: Path) -> list[str]:
    """Package names declared in the manifests at the top of ``directory``."""
    names: list[str] = []

    def toml(file: str, *keys: tuple[str, ...]) -> None:
        try:
            data = tomllib.loads((directory / file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return
        for path in keys:
            node: object = data
            for key in path:
                node = node.get(key) if isinstance(node, dict) else None
            if isinstance(node, str):
                names.append(node)

    toml("pyproject.toml", ("project", "name"), ("tool", "poetry", "name"))
    toml("Cargo.toml", ("package", "name"))
    try:
        setup = (directory / "setup.py").read_text(encoding="utf-8", errors="replace")[:200_000]
        match = re.search(r"""\bname\s*=\s*['"]([^'"]+)['"]""", setup)
        if match:
            names.append(match.group(1))
    except OSError:
        pass
    try:
        package = json.loads((directory / "package.json").read_text(encoding="utf-8"))
        name = package.get("name") if isinstance(package, dict) else None
        if isinstance(name, str) and name:
            names.append(name)
            if name.startswith("@") and "/" in name:
                names.append(name.split("/", 1)[1])
    except (OSError, UnicodeDecodeError, ValueError):
        pass
    try:
        gomod = (directory / "go.mod").read_text(encoding="utf-8", errors="replace")
        match = re.search(r"^\s*module\s+(\S+)", gomod, re.M)
        if match:
            segments = match.group(1).strip('"').split("/")
            if len(segments) > 1 and re.fullmatch(r"v\d+", segments[-1]):
                segments.pop()
            names.append(segments[-1])
    except OSError:
        pass
    return names
