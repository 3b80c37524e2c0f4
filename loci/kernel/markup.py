"""Decoration in prose: what a reader skips to reach the words (logos, badges, HTML wrappers).

A README often opens with a centred logo, a row of badges and the links behind them before its
first sentence. ``without_decoration`` takes those out for display and for counting words of
prose; ``without_links`` also drops where links point, for counting words only. Pure text in,
text out; the stored passage is never changed.
"""
from __future__ import annotations

import re

from loci.kernel.lazyre import LazyPattern

# an HTML tag, a markdown image (a badge inside a link leaves "[](target)"), an empty link, an
# rst substitution reference (|Build-Status|), an rst directive's line and its options' lines
_DECORATION = LazyPattern(r"<[^>]*>|!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]|\[\s*\]\([^)]*\)|\[\s*\]\[[^\]]*\]"
                          r"|\|[^|\s][^|\n]*\||^\s*\.\.\s+[\w-]+::.*$|^\s+:\w[\w-]*:.*$", re.M)
_LINKS = LazyPattern(r"\]\([^)]*\)|\]\[[^\]]*\]|https?://\S+|^\s*\[[^\]]*\]:.*$", re.M)
_WORD = LazyPattern(r"[A-Za-z]{3,}")


def without_decoration(text: str) -> str:
    """``text`` less its decoration, whitespace kept as it was around what remains (twice: a badge's
    image out of its link leaves the link empty)."""
    return _DECORATION.sub(" ", _DECORATION.sub(" ", text))


def prose_words(text: str) -> int:
    """Words of running prose in ``text`` once its decoration and link targets are gone."""
    return len(_WORD.findall(_LINKS.sub(" ", without_decoration(text))))
