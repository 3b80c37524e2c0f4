"""loci_pipeline.windows: a chunk longer than the encoder reads is also encoded as windows."""
from __future__ import annotations

import re

from loci.kernel.vectorstore import chunk_of, window_key, window_owner
from loci_pipeline.windows import chunk_windows, windows


class Words:
    """A reach of whole words: an encoder that reads the first ``width`` words of a text."""

    def __init__(self, width: int):
        self.width = width
        self.asked: list[list[str]] = []

    def starts(self, texts):
        self.asked.append(list(texts))
        return [[m.start() for m in re.finditer(r"\S+", t)] for t in texts]


def word_starts(text: str) -> list[int]:
    return Words(0).starts([text])[0]


def numbered(n: int, per_line: int = 100) -> str:
    words = [f"w{i}" for i in range(n)]
    return "\n".join(" ".join(words[i:i + per_line]) for i in range(0, n, per_line))


def test_a_text_the_encoder_reads_whole_has_no_windows():
    text = numbered(10)
    assert windows(text, word_starts(text), width=10, overlap=2) == []


def test_no_overlap_means_no_windows():
    text = numbered(50)
    assert windows(text, word_starts(text), width=10, overlap=0) == []


def test_the_windows_reach_the_end_of_a_long_text_each_overlapping_the_last():
    text = numbered(30)
    got = windows(text, word_starts(text), width=10, overlap=2)
    assert got[0].split()[0] == "w8"            # the first window (the chunk as cut) read w0..w9
    assert got[-1].split()[-1] == "w29"
    for before, after in zip(got, got[1:]):
        assert before.split()[-2:] == after.split()[:2]
    assert all(len(w.split()) <= 10 for w in got)


def test_each_window_carries_the_heading_and_holds_only_what_fits_beside_it():
    text = numbered(30)
    got = windows(text, word_starts(text), width=10, overlap=2, heading="Install notes", heading_pieces=2)
    assert all(w.startswith("Install notes\n") for w in got)
    assert all(len(w.split()) <= 10 for w in got)
    assert got[-1].split()[-1] == "w29"


def test_a_window_starts_at_its_line_when_the_line_begins_just_before_the_overlap():
    text = numbered(40, per_line=11)          # lines start at w0, w11, w22, ...
    got = windows(text, word_starts(text), width=16, overlap=4)
    assert got[0].split()[0] == "w11"         # the overlap starts at w12, its line one word earlier


def test_a_window_cuts_mid_line_when_its_line_began_long_before():
    text = numbered(40, per_line=7)           # w12's line began at w7, more than overlap // 2 earlier
    got = windows(text, word_starts(text), width=16, overlap=4)
    assert got[0].split()[0] == "w12"


def test_a_heading_too_long_to_repeat_is_left_out_of_the_windows():
    text = numbered(30)
    got = windows(text, word_starts(text), width=10, overlap=2, heading="a very long heading", heading_pieces=8)
    assert got and not any("heading" in w for w in got)


def test_chunk_windows_keys_each_window_to_its_chunk_once_per_distinct_chunk():
    long_text, short = numbered(30), "short text"
    reach = Words(10)
    got = chunk_windows([("h1", long_text, ""), ("h2", short, ""), ("h1", long_text, "")], reach, overlap=2)
    assert got and {window_owner(k) for k in got} == {"h1"}
    assert reach.asked[0] == [long_text]      # a text shorter than the width in characters is never read
    assert list(got.values()) == windows(long_text, word_starts(long_text), 10, 2)


def test_a_window_key_names_its_chunk_and_a_chunk_key_names_none():
    key = window_key("abc", "0123")
    assert window_owner(key) == "abc" and chunk_of(key) == "abc"
    assert window_owner("abc") is None and chunk_of("abc") == "abc"
