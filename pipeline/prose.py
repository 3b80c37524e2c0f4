"""Prose cut into pieces: sections on Markdown, reStructuredText and AsciiDoc headings,
and long text split at paragraph, line and character boundaries.

Every function here takes text and returns tuples; nothing reads the disk. A piece is
``(line, heading, text)`` with a 1-based start line.
"""
from __future__ import annotations

import re

Piece = tuple[int, str, str]


# --- splitting long text --------------------------------------------------------------


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


# --- sections on heading boundaries ---------------------------------------------------

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

