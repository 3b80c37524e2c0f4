"""Where a passage sits in its file: the headings it sits under (read from their markup), and
whether it says anything of its own or only includes another file.
"""
from __future__ import annotations

import re
from typing import Mapping

from loci.kernel.lazyre import LazyPattern

# a heading's markup at the start of a passage: "## Title", or a title over (and under) a line of one
# punctuation character (Markdown's setext, reStructuredText's adornments)
_ATX = re.compile(r"^ {0,3}(#{1,6})\s")
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
SECTION_GAP = 3   # this many lines between two passages hide a section left out (a heading with no text)


def heading_paths(rows: Mapping[int, dict]) -> dict[int, tuple[str, ...]]:
    """Each passage's heading path, the headings it sits under then its own, for the passages of
    one file (``rows``: row -> its line, heading and text). A heading's level is read from its
    markup (``#`` marks; in Markdown an ``=`` underline is level 1, ``-`` level 2; otherwise each
    adornment's level is its order of first appearance, as reStructuredText reads it). A section
    with no text of its own is no passage: where the lines between two passages hide one
    (``SECTION_GAP``), its heading is unknown, and no passage after it claims a parent before it."""
    order = sorted(rows, key=lambda i: int(rows[i].get("line") or 0))
    markdown = any(str(rows[i].get("path") or "").lower().endswith((".md", ".markdown", ".mdx")) for i in order)
    styles: list[tuple[str, bool]] = []
    stack: list[tuple[int, str]] = []
    out: dict[int, tuple[str, ...]] = {}
    end, last_heading = None, None
    for i in order:
        row = rows[i]
        line, heading, text = int(row.get("line") or 0), str(row.get("heading") or ""), str(row.get("text") or "")
        if end is not None and line - end > SECTION_GAP:
            stack = []
        level = _heading_level(text.split("\n", 3), markdown, styles)
        if level is None and heading == last_heading and stack:
            pass                              # a long section's next piece: the same path
        elif level is None:
            stack = [(0, heading)]
        else:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
        out[i] = tuple(h for _, h in stack)
        end, last_heading = line + text.rstrip().count("\n"), heading
    return out


def _heading_level(lines: list[str], markdown: bool, styles: list[tuple[str, bool]]) -> int | None:
    """The level of the heading a passage opens with (its first lines), None when it opens with
    none; ``styles`` are the adornments seen so far in the file, first seen first (appended to)."""
    atx = _ATX.match(lines[0])
    if atx:
        return len(atx.group(1))
    over = _ADORNMENT.match(lines[0])
    under = _ADORNMENT.match(lines[2 if over else 1]) if len(lines) > (2 if over else 1) else None
    if not under or (over and over.group(1) != under.group(1)):
        return None
    style = (under.group(1), bool(over))
    if markdown and not over and style[0] in "=-":
        return 1 if style[0] == "=" else 2
    if style not in styles:
        styles.append(style)
    return styles.index(style) + 1


def sections_saying(words: re.Pattern, rows: Mapping[int, dict]) -> list[int]:
    """The rows (of one file) whose heading path says ``words``, in row order."""
    return [i for i, path in sorted(heading_paths(rows).items()) if any(words.search(h) for h in path)]


# a directive that puts another file's text here: reStructuredText's include, mkdocs' snippets,
# markdown-include's; the include's options on the lines below it
_INCLUDE = LazyPattern(r"^(?:\.\.\s+(?:include|literalinclude)::.*|-{2}8<-{2}\s*[\"'].*|\{!.*!\}|:[\w-]+:.*)$")


_RST_TARGET = LazyPattern(r"^\.\.\s+_[^:]+:\s*$")   # ".. _contributing:", a label for links to what follows


def only_includes(text: str) -> bool:
    """Is the passage nothing but the directives that include another file (and a heading or a link
    label over them)?"""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    said = False
    for n, line in enumerate(lines):
        title = n + 1 < len(lines) and _ADORNMENT.match(lines[n + 1])
        if _ATX.match(line) or _ADORNMENT.match(line) or title or _RST_TARGET.match(line):
            continue
        if not _INCLUDE.match(line):
            return False
        said = said or not line.startswith(":")
    return said
