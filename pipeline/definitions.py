"""What a source file defines, by line-anchored regexes, and the table of languages read.

A definition is ``(name, kind, line)`` with a 1-based line. ``LANGUAGES`` maps a file
extension to its definition family and its comment syntax; Python files are read
through ``ast`` in loci_pipeline.comments and reach the regexes here only when they do not parse.
"""
from __future__ import annotations

import re

Definition = tuple[str, str, int]

# --- languages ------------------------------------------------------------------------

_C_LIKE = (("//",), ("/*", "*/"))
_HASH = (("#",), None)
_DASH = (("--",), None)
# extension -> (definition family, comment syntax)
LANGUAGES: dict[str, tuple[str, tuple]] = {
    **{e: ("js", _C_LIKE) for e in ("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts")},
    "go": ("go", _C_LIKE), "rs": ("rust", _C_LIKE),
    **{e: ("java", _C_LIKE) for e in ("java", "kt", "kts", "scala", "cs", "swift", "dart",
                                      "groovy", "gradle")},
    **{e: ("c", _C_LIKE) for e in ("c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm",
                                   "zig", "proto")},
    "php": ("php", _C_LIKE), "css": ("none", ((), ("/*", "*/"))), "scss": ("none", _C_LIKE),
    **{e: ("ruby", _HASH) for e in ("rb", "rake", "gemspec")},
    **{e: ("shell", _HASH) for e in ("sh", "bash", "zsh", "fish", "ksh")},
    **{e: ("elixir", _HASH) for e in ("ex", "exs")},
    **{e: ("none", _HASH) for e in ("pl", "pm", "r", "jl", "tcl", "nim", "cr", "ps1", "cmake",
                                    "tf", "nix")},
    "lua": ("lua", _DASH), "sql": ("none", _DASH), "hs": ("none", _DASH),
    "py": ("python", _HASH), "pyi": ("python", _HASH),
}
_NAMED = {"dockerfile": "none", "rakefile": "ruby", "gemfile": "ruby", "justfile": "none"}


def language(relpath: str) -> str | None:
    """The key into LANGUAGES (a file extension, or a special file name's family) or None."""
    name = relpath.rsplit("/", 1)[-1].lower()
    if name in _NAMED:
        return "rb" if _NAMED[name] == "ruby" else "sh"
    ext = name.rsplit(".", 1)[-1] if "." in name.strip(".") else ""
    return ext if ext in LANGUAGES else None


def module_name(relpath: str) -> str:
    """``src/pkg/mod.py`` -> ``pkg.mod``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = relpath.split("/")
    if len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


# --- definitions by regex, for everything that is not Python --------------------------

_MODS = r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|partial|open|" \
        r"data|inner|override|virtual|async|suspend|inline|mutating|readonly|export|default|" \
        r"fileprivate|synchronized|native|extern|unsafe|const|case|annotation|enum|declare)\s+)"
_ID = r"[A-Za-z_$][\w$]*"
_RULES: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "js": [
        (re.compile(rf"\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*({_ID})"), "function"),
        (re.compile(rf"\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+({_ID})"), "class"),
        (re.compile(rf"\s*(?:export\s+)?(?:declare\s+)?(?:interface|enum|const\s+enum)\s+({_ID})"), "type"),
        (re.compile(rf"\s*(?:export\s+)?(?:declare\s+)?type\s+({_ID})\s*(?:<.*>)?\s*="), "type"),
        (re.compile(rf"\s*(?:export\s+)?(?:const|let|var)\s+({_ID})\s*(?::[^=]+)?=\s*(?:async\s+)?"
                    rf"(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|{_ID}\s*=>)"), "function"),
        (re.compile(rf"\s*(?:module\.)?exports\.({_ID})\s*="), "function"),
        (re.compile(rf"\s+(?:(?:static|async|get|set|public|private|protected|readonly|override)\s+)*"
                    rf"(?!(?:if|for|while|switch|catch|function|return|with)\b)({_ID})\s*\([^)]*\)"
                    r"\s*(?::\s*[^{]+)?\{\s*$"), "method"),
    ],
    "go": [
        (re.compile(r"func\s+\(\s*\w*\s*\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*(\w+)"), "method"),
        (re.compile(r"func\s+(\w+)"), "function"),
        (re.compile(r"type\s+(\w+)(?:\[[^\]]*\])?\s+struct\b"), "class"),
        (re.compile(r"type\s+(\w+)"), "type"),
    ],
    "rust": [
        (re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?"
                    r"(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)"), "function"),
        (re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|union)\s+(\w+)"), "class"),
        (re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?(?:enum|trait|type)\s+(\w+)"), "type"),
        (re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)"), "module"),
        (re.compile(r"\s*macro_rules!\s*(\w+)"), "function"),
    ],
    "java": [
        (re.compile(rf"\s*{_MODS}*(?:class|struct|record|object)\s+(\w+)"), "class"),
        (re.compile(rf"\s*{_MODS}*(?:interface|enum|protocol|trait|extension|typealias)\s+(\w+)"), "type"),
        (re.compile(rf"\s*{_MODS}*(?:fun|func|def)\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)"), "function"),
        (re.compile(rf"\s*{_MODS}+(?:<[^>]*>\s*)?[\w<>\[\],.?\s]*?\b(\w+)\s*\("), "function"),
    ],
    "c": [
        (re.compile(r"(?:typedef\s+)?(?:struct|class|union)\s+(\w+)\s*(?:\{|:[^:]|$)"), "class"),
        (re.compile(r"(?:typedef\s+)?enum\s+(?:class\s+)?(\w+)\s*(?:\{|:|$)"), "type"),
        (re.compile(r"(?!(?:if|while|for|switch|return|else|typedef|do)\b)[A-Za-z_][\w\s\*&:<>,]*?"
                    r"[\s\*&]\**([A-Za-z_][\w:~]*)\s*\([^;]*$"), "function"),
    ],
    "php": [
        (re.compile(r"\s*(?:(?:public|private|protected|static|abstract|final)\s+)*function\s+(\w+)"), "function"),
        (re.compile(r"\s*(?:(?:abstract|final)\s+)*class\s+(\w+)"), "class"),
        (re.compile(r"\s*(?:interface|trait|enum)\s+(\w+)"), "type"),
    ],
    "ruby": [
        (re.compile(r"\s*def\s+(?:self\.)?([\w?!=]+)"), "function"),
        (re.compile(r"\s*class\s+([\w:]+)"), "class"),
        (re.compile(r"\s*module\s+([\w:]+)"), "module"),
    ],
    "shell": [(re.compile(r"\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)"), "function"),
              (re.compile(r"\s*function\s+([A-Za-z_][\w-]*)"), "function")],
    "lua": [(re.compile(r"\s*(?:local\s+)?function\s+([\w.:]+)"), "function")],
    "elixir": [(re.compile(r"\s*defmodule\s+([\w.]+)"), "module"),
               (re.compile(r"\s*defp?\s+(\w+)"), "function")],
    "python": [(re.compile(r"\s*(?:async\s+)?def\s+(\w+)"), "function"),
               (re.compile(r"\s*class\s+(\w+)"), "class")],
}
_CONTAINER = re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?impl\b(.*)")
_CONTAINER_KINDS = ("class", "type")


def _impl_target(rest: str) -> str:
    rest = rest.strip()
    if rest.startswith("<"):                      # impl<T: Foo<U>> ...
        depth = 0
        for k, ch in enumerate(rest):
            depth += ch == "<"
            depth -= ch == ">"
            if depth == 0:
                rest = rest[k + 1:]
                break
    if " for " in rest:
        rest = rest.split(" for ", 1)[1]
    m = re.search(r"[A-Za-z_]\w*", rest.replace("dyn ", " ").replace("mut ", " "))
    return m.group(0) if m else ""


def regex_definitions(text: str, ext: str) -> list[Definition]:
    """What a non-Python file defines, by line-anchored regexes; methods (a function
    indented under a class, impl or trait) also appear as ``Container.method``."""
    family = LANGUAGES[ext][0] if ext in LANGUAGES else "none"
    rules = _RULES.get(family)
    if not rules:
        return []
    out: list[Definition] = []
    containers: list[tuple[int, str]] = []          # (indent, name)
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", "#", "*", "/*", "--")):
            continue
        indent = len(line) - len(line.lstrip())
        while containers and indent <= containers[-1][0]:
            containers.pop()
        m = _CONTAINER.match(line) if family == "rust" else None
        if m:
            containers.append((indent, _impl_target(m.group(1))))
            continue
        for rx, kind in rules:
            m = rx.match(line)
            if not m:
                continue
            if kind == "method" and family == "js" and not containers:
                break
            if family == "go" and kind == "method":
                out += [(m.group(2), "method", number),
                        (f"{m.group(1)}.{m.group(2)}", "method", number)]
            elif kind in ("function", "method") and containers:
                out += [(m.group(1), "method", number),
                        (f"{containers[-1][1]}.{m.group(1)}", "method", number)]
            else:
                out.append((m.group(1), kind, number))
                if kind in _CONTAINER_KINDS and stripped[-1:] in ("{", ":") \
                        or family == "ruby" and kind in ("class", "module"):
                    containers.append((indent, m.group(1)))
            break
    return out


def attach_map(defs: list[Definition]) -> dict[int, str]:
    """Line -> the most qualified name defined there."""
    out: dict[int, str] = {}
    for name, _kind, line in defs:
        if line not in out or name.count(".") > out[line].count("."):
            out[line] = name
    return out

