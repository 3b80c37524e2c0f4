"""The help text a command-line program gives its flags, read out of its source.

A flag's fullest documentation is often a string, not a comment: clap's
``long_help = "By default, fd does not descend into symlinked directories..."``, click's and
argparse's ``help="..."``, urfave/cli's ``Usage: "..."``, cobra's ``Short:``/``Long:``. Such a
string is what a user reads in ``--help``, so it answers how-to questions in the user's own words.

``help_strings(text)`` finds a help-like keyword (``HELP_KEYS``) given a string literal with
``=`` or ``:``, joins the literal's pieces (adjacent literals, ``+``, a backslash at the end of a
line) and returns ``(line, text)`` pairs: the keyword's 1-based line and the text as the user
reads it. Strings of fewer than ``MIN_WORDS`` words (``help="Port"``, a ``"{} {}"`` template)
say nothing a name does not. Pure: text in, pairs out.
"""
from __future__ import annotations

import re

HELP_KEYS = ("help", "long_help", "about", "long_about", "usage", "Usage", "UsageText",
             "description", "Description", "Short", "Long")
MIN_WORDS = 3

_KEY = re.compile(r"(?<![\w.])(?:%s)\s*(?::(?!:)|=(?!=))\s*" % "|".join(HELP_KEYS))
_QUOTES = ('"""', "'''", '"', "'", "`")
_JOINERS = re.compile(r"(?:\s|\+|\\\n)*")
_WORD = re.compile(r"[^\W\d_]{2,}")
_ESCAPES = {"n": "\n", "t": " ", '"': '"', "'": "'", "\\": "\\", "`": "`"}


def _literal(text: str, i: int) -> tuple[str, int] | None:
    """The string literal starting at ``i`` (its body, escapes read) and the index after it."""
    quote = next((q for q in _QUOTES if text.startswith(q, i)), None)
    if quote is None:
        return None
    j, out = i + len(quote), []
    while j < len(text):
        if text.startswith(quote, j):
            return "".join(out), j + len(quote)
        c = text[j]
        if c == "\n" and len(quote) == 1 and quote != "`":
            return None                               # an unclosed one-line string: not a literal
        if c == "\\" and quote != "`" and j + 1 < len(text):
            nxt = text[j + 1]
            if nxt == "\n":                           # Rust's and Python's line continuation
                j += 2
                while j < len(text) and text[j] in " \t":
                    j += 1
                continue
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            j += 2
            continue
        out.append(c)
        j += 1
    return None


def _joined(text: str, i: int) -> tuple[str, int] | None:
    """The literals from ``i`` on that make one string (``"a" "b"``, ``"a" + "b"``)."""
    first = _literal(text, i)
    if first is None:
        return None
    parts, end = [first[0]], first[1]
    while True:
        k = _JOINERS.match(text, end).end()
        nxt = _literal(text, k)
        if nxt is None:
            return "".join(parts), end
        parts.append(nxt[0])
        end = nxt[1]


def help_strings(text: str) -> list[tuple[int, str]]:
    """(1-based line of the keyword, the help text with its whitespace made single) for every
    help-like keyword given a string literal of ``MIN_WORDS`` words or more."""
    out: list[tuple[int, str]] = []
    pos, line, counted = 0, 1, 0
    while (m := _KEY.search(text, pos)) is not None:
        got = _joined(text, m.end())
        pos = m.end() if got is None else got[1]
        if got is None:
            continue
        body = " ".join(got[0].split())
        if len(_WORD.findall(body)) < MIN_WORDS:   # "Port", "{} {} {}": a name or a template
            continue
        line += text.count("\n", counted, m.start())
        counted = m.start()
        out.append((line, body))
    return out
