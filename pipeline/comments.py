"""Docstrings and comment blocks of a source file, with its definitions alongside.

Every function here takes text and returns tuples; nothing reads the disk. An episode
is ``(chunk kind, line, heading, text)`` with a 1-based start line; a definition is
``(name, kind, line)`` (see loci_pipeline.definitions).
"""
from __future__ import annotations

import ast
import bisect
import re
import threading
import warnings

from loci_pipeline.definitions import LANGUAGES, Definition, attach_map, module_name, regex_definitions
from loci_pipeline.prose import sections, split_long

Episode = tuple[str, int, str, str]

# --- comment blocks -------------------------------------------------------------------

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


ATTRIBUTE_LINES = 12   # lines of attributes (decorators, #[...], [..]) looked past between a comment and its item


def _past_attributes(lines: list[str], i: int, attach: dict[int, str]) -> int:
    """The first line from ``i`` that is not an attribute: ``@decorator``, ``#[arg(...)]`` or
    ``[Attr]``, one spread over several lines included (its brackets read until they balance)."""
    end = min(len(lines), i + ATTRIBUTE_LINES)
    while i < end and (i + 1) not in attach and lines[i].lstrip().startswith(("@", "#[", "[")):
        depth = 0
        while i < end:
            depth += sum(lines[i].count(c) for c in "([{") - sum(lines[i].count(c) for c in ")]}")
            i += 1
            if depth <= 0:
                break
    return i


def _license_header(lines: list[str], start: int, content: list[str]) -> bool:
    """The file's first comment, preceded only by blank/shebang lines, naming a licence."""
    before = all(not x.strip() or x.startswith("#!") for x in lines[:start])
    return before and _LICENSE.search("\n".join(content[:6])) is not None


# a field of a struct, interface or record on the line a comment documents (indented: inside the
# type's block), by language family; Go's statements are told apart by their keywords
_FIELD_LINE = {
    "go": re.compile(r"^\s+([A-Za-z_]\w*)\s+(?:\*|\[|[A-Za-z_])"),
    "rust": re.compile(r"^\s+(?:pub(?:\([^)]*\))?\s+)?([a-z_]\w*)\s*:(?!:)"),
    "js": re.compile(r"^\s+(?:(?:readonly|public|private|protected|static|declare)\s+)*([A-Za-z_$][\w$]*)\??\s*:(?!:)"),
}
_GO_KEYWORDS = frozenset({"return", "if", "for", "go", "defer", "var", "const", "type", "func", "switch", "case",
                          "select", "else", "break", "continue", "goto", "package", "import", "fallthrough",
                          "default", "range", "map", "chan", "struct", "interface"})


def field_heading(line: str, family: str, types: list[tuple[int, str]], number: int) -> str:
    """The field ``line`` (1-based ``number``) declares, qualified by the nearest type defined above
    it (``types``: (line, name), sorted): "Command.ReadArgsFromStdin"; "" when it declares none."""
    pattern = _FIELD_LINE.get(family)
    m = pattern.match(line) if pattern else None
    if m is None or (family == "go" and m.group(1) in _GO_KEYWORDS):
        return ""
    at = bisect.bisect_left(types, (number, "")) - 1     # the last type defined above the line
    owner = types[at][1] if at >= 0 else ""
    return f"{owner}.{m.group(1)}" if owner else m.group(1)


def comment_episodes(text: str, ext: str, max_chars: int, *, attach: dict[int, str] | None = None,
                     owner: list[str] | None = None, skip: set[int] | None = None,
                     types: list[tuple[int, str]] = ()) -> list[Episode]:
    """Comment blocks of 2+ lines, or of one line of 40+ chars, or right above a definition, or
    a doc comment (``///``, ``/** */``) of any length: a flag's or field's one-line doc is its
    documentation (fd's ``/// Follow symbolic links`` above ``pub follow: bool``).

    ``attach`` maps a 1-based line to the definition starting there (its name becomes the
    heading of a block right above it); ``owner`` gives the enclosing definition per line; a
    block right above a field of a type (``types``: where each is defined) is headed by the field
    (``field_heading``). A leading block that names a licence or copyright is license boilerplate
    and is skipped.
    """
    family, (markers, block) = LANGUAGES[ext]
    types = sorted(types)
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
        nxt = _past_attributes(lines, start + len(content), attach)
        heading = attach.get(nxt + 1, "")
        field = field_heading(lines[nxt], family, types, nxt + 1) \
            if not heading and owner is None and nxt < len(lines) else ""
        # Go writes an exported field's doc as a plain // line (godoc); elsewhere a field's plain
        # one-line comment is a note, its /// or /** */ the doc
        go_doc = family == "go" and field.rsplit(".", 1)[-1][:1].isupper()
        if not (is_doc or go_doc or len(words) >= 2 or len(words[0].strip()) >= MIN_SINGLE_LINE or heading):
            continue
        heading = heading or field
        if not heading and owner is not None and start + 1 < len(owner):
            heading = owner[start + 1]
        fmt = "md" if is_doc and len("\n".join(content)) > max_chars else "plain"
        pieces = sections("\n".join(content), fmt, max_chars, heading, start + 1)
        for k, (line, sub, piece) in enumerate(pieces):     # the first piece starts at the opener
            out.append(("comment", start + 1 if k == 0 else line, sub, piece))
    return out


# --- Python through ast ---------------------------------------------------------------

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


# CPython 3.11 counts the depth of the tree it builds per interpreter, not per thread: two
# threads parsing at once (doit indexes several scopes in threads) can raise "SystemError: AST
# constructor recursion depth mismatch" (python/cpython#106905) and fail a scope's index. The
# tree is built holding the GIL anyway, so one parse at a time costs next to nothing.
_PARSING = threading.Lock()


def parse_python(text: str) -> ast.Module | None:
    """The module's tree, or None when it does not parse (or the parser fails on it)."""
    try:
        with _PARSING, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return None


def python_source(text: str, relpath: str, max_chars: int
                  ) -> tuple[list[Episode], list[Definition]] | None:
    """Docstrings (headed by qualified name, at the def line), comment blocks and definitions
    of a Python file; None when it does not parse."""
    tree = parse_python(text)
    if tree is None:
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


def source_episodes(text: str, relpath: str, ext: str, max_chars: int, *, cheap: bool = False
                    ) -> tuple[list[Episode], list[Definition]]:
    """Docstrings/comment blocks and definitions of a source file (Python through ast,
    falling back to comment syntax and regexes when it does not parse). ``cheap`` skips
    the parse (test and fixture code: its docstrings rank low and its names barely route)."""
    if LANGUAGES[ext][0] == "python" and not cheap:
        parsed = python_source(text, relpath, max_chars)
        if parsed is not None:
            return parsed
    defs = regex_definitions(text, ext)
    if LANGUAGES[ext][0] == "python":
        defs.insert(0, (module_name(relpath), "module", 1))
    types = [(line, name) for name, kind, line in defs if kind in ("class", "type") and "." not in name]
    return comment_episodes(text, ext, max_chars, attach=attach_map(defs), types=types), defs
