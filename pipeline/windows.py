"""A chunk longer than the encoder reads, also encoded as windows over its tail.

The build encodes a chunk cut to ``Params.embed_max_tokens`` word pieces; on the 22 development
repositories 30% of the labelled evidence lines that sit in a chunk sit past that cut, where no
vector ever saw them (docs/decisions/answer-ranking.md, section 7). A longer chunk therefore
also gets windows: each starts ``overlap`` word pieces before the last one ended (at the start
of that line when it is near), carries the chunk's heading as context, and is stored under
``window_key(chunk hash, digest of its text)``; the query side scores a passage by its closest
row (``loci.query.semantic.Passages``). Pure but for ``WordPieces``, which reads the
model's tokenizer.
"""
from __future__ import annotations

import bisect
import hashlib
from pathlib import Path
from typing import Protocol

from loci.kernel.vectorstore import window_key

DIGEST = 12   # hex digits of a window text's sha1 in its key


class Reach(Protocol):
    """How far an encoder reads: ``width`` word pieces of a text (special tokens apart), and
    where each word piece of a text starts (character offsets, in order)."""

    width: int

    def starts(self, texts: list[str]) -> list[list[int]]: ...


class WordPieces:
    """The reach of a BERT encoder cut at ``max_tokens`` (its two special tokens included)."""

    def __init__(self, tokenizer_json: Path, max_tokens: int):
        self._path, self._tokenizer = Path(tokenizer_json), None   # read at the first ``starts``
        self.width = max_tokens - 2

    def starts(self, texts: list[str]) -> list[list[int]]:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(self._path))
            self._tokenizer.no_truncation()
            self._tokenizer.no_padding()
        got = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [[a for a, _ in e.offsets] for e in got]


def windows(text: str, starts: list[int], width: int, overlap: int,
            heading: str = "", heading_pieces: int = 0) -> list[str]:
    """The windows after the first (which is the chunk as the encoder cuts it) that together
    reach the end of ``text``; none when the text fits in ``width`` word pieces or ``overlap`` is 0.

    Each window holds ``heading`` (``heading_pieces`` word pieces) on its own line, then as many
    of the text's word pieces as still fit, starting ``overlap`` pieces before the last window's
    end, or at the start of that line when it is no more than ``overlap // 2`` pieces earlier.
    """
    n = len(starts)
    if overlap <= 0 or width <= 0 or n <= width:
        return []
    overlap = min(overlap, width // 4)
    prefix, room = (f"{heading}\n", width - heading_pieces) if heading else ("", width)
    if room < 2 * overlap + 1:   # a heading too long to repeat: the windows go without it
        prefix, room = "", width
    out: list[str] = []
    covered = width   # word pieces the windows so far have read
    while covered < n:
        start = covered - overlap
        line = bisect.bisect_left(starts, text.rfind("\n", 0, starts[start]) + 1)
        if start - overlap // 2 <= line < start:
            start = line
        end = start + room
        body = text[starts[start]:starts[end] if end < n else len(text)].strip()
        out.append(prefix + body)
        covered = end
    return out


def chunk_windows(rows: list[tuple[str, str, str]], reach: Reach, overlap: int) -> dict[str, str]:
    """Window key -> window text for the chunks ``rows`` (hash, text, heading) longer than
    ``reach.width``, each distinct hash once, in the rows' order."""
    if overlap <= 0:
        return {}
    seen: set[str] = set()
    long_rows = []
    for h, text, heading in rows:
        if h not in seen and len(text) > reach.width:   # a word piece holds at least one character
            seen.add(h)
            long_rows.append((h, text, (heading or "").strip()))
    if not long_rows:
        return {}
    pieces = reach.starts([t for _, t, _ in long_rows])
    headings = sorted({hd for _, _, hd in long_rows if hd})
    heading_pieces = dict(zip(headings, (len(s) for s in reach.starts(headings)))) if headings else {}
    out: dict[str, str] = {}
    for (h, text, heading), starts in zip(long_rows, pieces):
        for window in windows(text, starts, reach.width, overlap, heading, heading_pieces.get(heading, 0)):
            digest = hashlib.sha1(window.encode("utf-8", "replace")).hexdigest()[:DIGEST]
            out.setdefault(window_key(h, digest), window)
    return out
