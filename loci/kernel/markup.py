"""Decoration in prose: what a reader skips to reach the words (logos, badges, HTML wrappers).

A README often opens with a centred logo, a row of badges and the links behind them before its
first sentence. ``without_decoration`` takes those out for display and for counting words of
prose; ``without_links`` also drops where links point, for counting words only. Pure text in,
text out; the stored passage is never changed.
"""
from __future__ import annotations

import re

from loci.kernel.lazyre import LazyPattern

# the HTML elements a README wraps its prose, logos and badges in: "<username>" or "<name>.yaml" is
# a placeholder the text means, and is kept
_HTML_TAGS = ("a|abbr|b|blockquote|br|center|code|dd|del|details|div|dl|dt|em|figcaption|figure|font|h[1-6]|hr|"
              "i|img|ins|kbd|li|ol|p|picture|pre|s|samp|section|small|source|span|strike|strong|sub|summary|sup|"
              "svg|path|table|tbody|td|tfoot|th|thead|tr|tt|u|ul|var|video")
# an HTML tag or comment, a markdown image (a badge inside a link leaves "[](target)"), an empty
# link, an rst substitution reference (|Build-Status|), an rst directive's line and its options' lines
_DECORATION = LazyPattern(r"</?(?i:" + _HTML_TAGS + r")(?:\s[^<>]*)?/?>|<!--[\s\S]*?-->|!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]|\[\s*\]\([^)]*\)|\[\s*\]\[[^\]]*\]"
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
