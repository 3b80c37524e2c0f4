"""Pure extraction from one file's text: prose sections, docstrings, comment blocks, definitions.

Every function here takes text and returns tuples; nothing reads the disk.
A piece is ``(line, heading, text)`` with a 1-based start line; an episode adds
its chunk kind in front; a definition is ``(name, kind, line)``.
"""
from __future__ import annotations

import ast
import re
import warnings

Piece = tuple[int, str, str]
Episode = tuple[str, int, str, str]
Definition = tuple[str, str, int]

# --- splitting long text ------------------------------------------------------------


def split_long(lines: list[str], first_line: int, max_chars: int) -> list[tuple[int, str]]:
    """Cut lines into pieces of at most max_chars at blank lines (then line, then char
    boundaries); each piece is ``(start line, text)`` with surrounding blank lines dropped."""
    lo, hi = 0, len(lines)
    while lo < hi and not lines[lo].strip():
        lo += 1
    while hi > lo and not lines[hi - 1].strip():
        hi -= 1
    if lo == hi:
        return []
    text = "\n".join(lines[lo:hi])
    if len(text) <= max_chars:
        return [(first_line + lo, text)]
    units: list[tuple[int, int]] = []           # paragraphs as [start, end) line ranges
    start = lo
    for i in range(lo, hi + 1):
        if i == hi or not lines[i].strip():
            if start < i:
                units.append((start, i))
            start = i + 1
    out: list[tuple[int, str]] = []
    cur_start, cur_end, size = -1, -1, 0
    for s, e in units:
        length = sum(len(x) + 1 for x in lines[s:e])
        gap = sum(len(x) + 1 for x in lines[cur_end:s]) if cur_start >= 0 else 0
        if cur_start >= 0 and size + gap + length > max_chars:
            out.append((first_line + cur_start, "\n".join(lines[cur_start:cur_end]).strip("\n")))
            cur_start, gap = -1, 0
        if length > max_chars:                   # one paragraph alone is too long
            out.extend(_split_lines(lines[s:e], first_line + s, max_chars))
            continue
        if cur_start < 0:
            cur_start, size = s, 0
        cur_end, size = e, size + gap + length
    if cur_start >= 0:
        out.append((first_line + cur_start, "\n".join(lines[cur_start:cur_end]).strip("\n")))
    return out


def _split_lines(lines: list[str], first_line: int, max_chars: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    buf_line, size = first_line, 0
    for offset, line in enumerate(lines):
        if buf and size + len(line) + 1 > max_chars:
            out.append((buf_line, "\n".join(buf)))
            buf, size = [], 0
        if not buf:
            buf_line = first_line + offset
        if len(line) > max_chars:                 # a single enormous line
            out.extend((first_line + offset, line[i:i + max_chars])
                       for i in range(0, len(line), max_chars))
            continue
        buf.append(line)
        size += len(line) + 1
    if buf:
        out.append((buf_line, "\n".join(buf)))
    return out


# --- prose: sections on heading boundaries --------------------------------------------

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_NOT_PARAGRAPH = re.compile(r" {4}|\t| {0,3}(?:[-*+>]\s|\d+[.)]\s|[|<])")
_RST_ADORN = re.compile(r"([!-/:-@\[-`{-~])\1+[ \t]*")
_ADOC = re.compile(r"(={1,6})[ \t]+(\S.*?)[ \t]*")


def _md_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(start index, lines the heading spans, heading text) outside fenced code and front matter."""
    out: list[tuple[int, int, str]] = []
    fence = ""
    i = 0
    if lines and lines[0].rstrip() == "---":               # YAML front matter
        for j in range(1, min(len(lines), 200)):
            if lines[j].rstrip() in ("---", "..."):
                i = j + 1
                break
    prev_heading = -1
    for i in range(i, len(lines)):
        line = lines[i].rstrip("\r")
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line[m.end():].strip():
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        m = _ATX.fullmatch(line)
        if m:
            out.append((i, 1, (m.group(2) or "").strip()))
            prev_heading = i
            continue
        if i > 0 and _SETEXT.fullmatch(line) and prev_heading != i - 1:
            above = lines[i - 1].rstrip("\r")
            if above.strip() and not _NOT_PARAGRAPH.match(above) and not _SETEXT.fullmatch(above):
                out.append((i - 1, 2, above.strip()))
                prev_heading = i
    return out


def _rst_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    n = len(lines)
    i = 0
    while i < n - 1:
        title = lines[i].rstrip()
        under = lines[i + 1].rstrip()
        if title.strip() and _RST_ADORN.fullmatch(under) and not _RST_ADORN.fullmatch(title) \
                and len(under) >= min(len(title.strip()), 3):
            above = lines[i - 1].rstrip() if i > 0 else ""
            if above and above[0] == under[0] and _RST_ADORN.fullmatch(above):
                out.append((i - 1, 3, title.strip()))
                i += 2
                continue
            if not title[0].isspace() and not above.strip() and not title.startswith(".. "):
                out.append((i, 2, title.strip()))
                i += 2
                continue
        i += 1
    return out


def _adoc_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    fence = False
    for i, line in enumerate(lines):
        line = line.rstrip()
        if line in ("----", "```", "...."):
            fence = not fence
        elif not fence and (m := _ADOC.fullmatch(line)):
            out.append((i, 1, m.group(2)))
    return out


_HEADINGS = {"md": _md_headings, "rst": _rst_headings, "adoc": _adoc_headings}


def sections(text: str, fmt: str, max_chars: int, default_heading: str = "",
             first_line: int = 1) -> list[Piece]:
    """Prose cut on heading boundaries (fmt: md, rst, adoc or plain), each section verbatim.

    A section whose body is empty is dropped; one longer than max_chars is split at
    paragraphs, every piece keeping the section's heading and its own start line.
    """
    lines = text.split("\n")
    heads = _HEADINGS[fmt](lines) if fmt in _HEADINGS else []
    bounds = [(0, 0, default_heading)] + heads
    out: list[Piece] = []
    for k, (start, span, heading) in enumerate(bounds):
        end = bounds[k + 1][0] if k + 1 < len(bounds) else len(lines)
        if end <= start or not any(x.strip() for x in lines[start + span:end]):
            continue
        for line, piece in split_long(lines[start:end], first_line + start, max_chars):
            out.append((line, heading, piece))
    return out


# --- comment syntax -------------------------------------------------------------------

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


_PRAGMA = re.compile(r"(?i)\s*(?:!|-\*-|vim?:|noqa|type:|pragma|pylint:|fmt:|mypy:|isort:|"
                     r"eslint|@ts-|tslint:|prettier-ignore|istanbul|c8 |go:|\+build|nolint|"
                     r"#?region|#?endregion|shellcheck|rubocop:|frozen_string_literal|spdx-|"
                     r"coverage:|cspell:)")
_LICENSE = re.compile(r"(?i)licen[sc]e|copyright|\(c\) \d|spdx")
MIN_SINGLE_LINE = 40


def _line_blocks(lines: list[str], markers: tuple[str, ...], block: tuple[str, str] | None,
                 skip: set[int]):
    """Yield (start index, content lines aligned 1:1 with source lines, is_doc)."""
    i, n = 0, len(lines)
    while i < n:
        s = lines[i].lstrip()
        if block and s.startswith(block[0]) and i not in skip:
            opener, closer = block
            is_doc = s.startswith(("/**", "/*!")) and not s.startswith("/**/")
            body = s[len(opener):].lstrip("*!")
            content: list[str] = []
            j = i
            while True:
                pos = body.find(closer)
                if pos >= 0:
                    content.append(body[:pos].rstrip())
                    break
                content.append(body.rstrip())
                j += 1
                if j >= n:
                    break
                body = lines[j].rstrip()
                if body.lstrip().startswith("*") and not body.lstrip().startswith(closer):
                    body = body.lstrip()[1:]
                    body = body[1:] if body.startswith(" ") else body
            rest = [c for c in content[1:] if c.strip()]
            cut = min((len(c) - len(c.lstrip()) for c in rest), default=0)
            first = content[0][1:] if content[0].startswith(" ") else content[0]
            yield i, [first] + [c[cut:] for c in content[1:]], is_doc
            i = j + 1
            continue
        marker = next((m for m in markers if s.startswith(m)), None) if markers else None
        if marker is None or i in skip:
            i += 1
            continue
        start, content, is_doc = i, [], False
        while i < n and i not in skip:
            s = lines[i].lstrip()
            if not s.startswith(marker):
                break
            body = s.lstrip(marker[0])
            if marker == "//" and s.startswith(("///", "//!")):
                is_doc = True
            body = body[1:] if body.startswith("!") and marker == "//" else body
            content.append((body[1:] if body.startswith(" ") else body).rstrip())
            i += 1
        yield start, content, is_doc


def _license_header(lines: list[str], start: int, content: list[str]) -> bool:
    """The file's first comment, preceded only by blank/shebang lines, naming a licence."""
    before = all(not x.strip() or x.startswith("#!") for x in lines[:start])
    return before and _LICENSE.search("\n".join(content[:6])) is not None


def comment_episodes(text: str, ext: str, max_chars: int, *, attach: dict[int, str] | None = None,
                     owner: list[str] | None = None, skip: set[int] | None = None) -> list[Episode]:
    """Comment blocks of 2+ lines, or of one line of 40+ chars, or right above a definition.

    ``attach`` maps a 1-based line to the definition starting there (its name becomes the
    heading of a block right above it); ``owner`` gives the enclosing definition per line.
    A leading block that names a licence or copyright is license boilerplate and is skipped.
    """
    _family, (markers, block) = LANGUAGES[ext]
    lines = text.split("\n")
    attach = attach or {}
    skip = set(skip or ())
    if lines and lines[0].startswith("#!"):
        skip.add(0)
    out: list[Episode] = []
    for n, (start, content, is_doc) in enumerate(_line_blocks(lines, markers, block, skip)):
        if n == 0 and _license_header(lines, start, content):
            continue
        words = [c for c in content if c.strip()]
        if not words or (len(words) == 1 and _PRAGMA.match(words[0])):
            continue
        nxt = start + len(content)
        while nxt < len(lines) and nxt - start - len(content) < 4 and (nxt + 1) not in attach \
                and lines[nxt].lstrip().startswith(("@", "#[", "[")):
            nxt += 1
        heading = attach.get(nxt + 1, "")
        if not (len(words) >= 2 or len(words[0].strip()) >= MIN_SINGLE_LINE or heading):
            continue
        if not heading and owner is not None and start + 1 < len(owner):
            heading = owner[start + 1]
        fmt = "md" if is_doc and len("\n".join(content)) > max_chars else "plain"
        pieces = sections("\n".join(content), fmt, max_chars, heading, start + 1)
        for k, (line, sub, piece) in enumerate(pieces):     # the first piece starts at the opener
            out.append(("comment", start + 1 if k == 0 else line, sub, piece))
    return out


# --- Python through ast ---------------------------------------------------------------


def module_name(relpath: str) -> str:
    """``src/pkg/mod.py`` -> ``pkg.mod``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = relpath.split("/")
    if len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


_COMPOUND = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While,
             *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


class _PyWalker:
    def __init__(self, n_lines: int, max_chars: int) -> None:
        self.episodes: list[Episode] = []
        self.defs: list[Definition] = []
        self.starts: dict[int, str] = {}
        self.owner = [""] * (n_lines + 2)
        self.max_chars = max_chars

    def docstring(self, node, heading: str, line: int) -> None:
        doc = ast.get_docstring(node, clean=True)
        if not doc or not doc.strip():
            return
        raw = node.body[0].value.value.split("\n")
        raw[0] = raw[0].lstrip()
        lead = next((k for k, x in enumerate(raw) if x.strip()), 0)   # cleandoc drops these
        base = node.body[0].lineno + lead
        pieces = split_long(doc.split("\n"), base, self.max_chars)
        for k, (pline, piece) in enumerate(pieces):
            self.episodes.append(("docstring", line if k == 0 else pline, heading, piece))

    def body(self, stmts, prefix: str, in_class: bool, in_func: bool) -> None:
        for node in stmts:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}.{node.name}" if prefix else node.name
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                self.starts[first] = qual
                end = min(node.end_lineno or node.lineno, len(self.owner) - 1)
                self.owner[node.lineno:end + 1] = [qual] * (end + 1 - node.lineno)
                is_class = isinstance(node, ast.ClassDef)
                if not in_func:
                    kind = "class" if is_class else ("method" if in_class else "function")
                    self.defs.append((node.name, kind, node.lineno))
                    if qual != node.name:
                        self.defs.append((qual, kind, node.lineno))
                self.docstring(node, qual, node.lineno)
                self.body(node.body, qual, is_class, in_func or not is_class)
            elif isinstance(node, _COMPOUND):
                for field in ("body", "orelse", "finalbody"):
                    self.body(getattr(node, field, []) or [], prefix, in_class, in_func)
                for handler in getattr(node, "handlers", []) or []:
                    self.body(handler.body, prefix, in_class, in_func)
            elif not in_func and not in_class and _is_type_alias(node):
                name = node.name.id if hasattr(node, "name") else node.target.id
                self.defs.append((name, "type", node.lineno))


def _is_type_alias(node) -> bool:
    if type(node).__name__ == "TypeAlias":
        return True
    return (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and getattr(node.annotation, "id", getattr(node.annotation, "attr", "")) == "TypeAlias")


_PY_LEX = re.compile(r"#[^\n]*|(\"\"\"|\'\'\'|\"|\')")


def string_lines(text: str) -> set[int]:
    """0-based indices of the lines after the first of every multi-line Python string
    (a '#' there is text, not a comment). A small lexer: far cheaper than walking the AST."""
    out: set[int] = set()
    pos, line, counted = 0, 0, 0
    while (m := _PY_LEX.search(text, pos)) is not None:
        quote = m.group(1)
        if quote is None:                       # a comment: skip to the end of its line
            pos = m.end()
            continue
        i = m.end()
        while True:
            j = text.find(quote, i) if len(quote) == 3 else _short_end(text, i, quote)
            if j < 0:
                j = len(text)
                break
            backslashes = len(text[i:j]) - len(text[i:j].rstrip("\\"))
            if len(quote) == 1 or backslashes % 2 == 0:
                break
            i = j + 1
        line += text.count("\n", counted, m.start())
        last = line + text.count("\n", m.start(), j)
        out.update(range(line + 1, last + 1))
        line, counted, pos = last, j, j + len(quote)
    return out


def _short_end(text: str, i: int, quote: str) -> int:
    """End of a one-quote string: the closing quote not escaped, or the end of the line."""
    while True:
        j, nl = text.find(quote, i), text.find("\n", i)
        if nl >= 0 and (j < 0 or nl < j) and not (nl > 0 and text[nl - 1] == "\\"):
            return nl
        if j < 0:
            return -1
        k = j
        while k > i and text[k - 1] == "\\":
            k -= 1
        if (j - k) % 2 == 0:
            return j
        i = j + 1


def python_source(text: str, relpath: str, max_chars: int
                  ) -> tuple[list[Episode], list[Definition]] | None:
    """Docstrings (headed by qualified name, at the def line), comment blocks and definitions
    of a Python file; None when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines_n = text.count("\n") + 1
    module = module_name(relpath)
    walker = _PyWalker(lines_n, max_chars)
    walker.defs.append((module, "module", 1))
    if tree.body and ast.get_docstring(tree):
        walker.docstring(tree, module, tree.body[0].lineno)
    walker.body(tree.body, "", False, False)
    episodes = walker.episodes + comment_episodes(
        text, "py", max_chars, attach=walker.starts, owner=walker.owner, skip=string_lines(text))
    return episodes, walker.defs


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


def source_episodes(text: str, relpath: str, ext: str, max_chars: int
                    ) -> tuple[list[Episode], list[Definition]]:
    """Docstrings/comment blocks and definitions of a source file (Python through ast,
    falling back to comment syntax and regexes when it does not parse)."""
    if LANGUAGES[ext][0] == "python":
        parsed = python_source(text, relpath, max_chars)
        if parsed is not None:
            return parsed
    defs = regex_definitions(text, ext)
    if LANGUAGES[ext][0] == "python":
        defs.insert(0, (module_name(relpath), "module", 1))
    return comment_episodes(text, ext, max_chars, attach=attach_map(defs)), defs
