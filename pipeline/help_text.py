"""The help text a command-line program gives its flags, read out of its source.

A flag's fullest documentation is often a string, not a comment: clap's
``long_help = "By default, fd does not descend into symlinked directories..."``, click's and
argparse's ``help="..."``, urfave/cli's ``Usage: "..."``, cobra's ``Short:``/``Long:``. Such a
string is what a user reads in ``--help``, so it answers how-to questions in the user's own words.

``help_strings(text)`` finds a help-like keyword (``HELP_KEYS``) given a string literal with
``=`` or ``:``, joins the literal's pieces (adjacent literals, ``+``, a backslash at the end of a
line) and returns ``(line, flags, text)``: the keyword's 1-based line, the flags it documents as a
user types them (``flags_of``: "--follow, -L"; the passage's heading) and the text as the user
reads it. Strings of fewer than ``MIN_WORDS`` words (``help="Port"``, a ``"{} {}"`` template)
say nothing a name does not. Pure: text in, tuples out.
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


def help_strings(text: str) -> list[tuple[int, str, str]]:
    """(1-based line of the keyword or call, the flags it documents, the help text with its
    whitespace made single) for every help-like keyword given a string literal, and every
    commander-style call (``.option('-p, --port', 'port number')``, ``.description('...')``), of
    ``MIN_WORDS`` words or more, in the order they are written."""
    found = sorted([*_keyword_helps(text), *_call_helps(text)])[:MAX_HELP]
    out: list[tuple[int, str, str]] = []
    line, counted = 1, 0
    for at, flags, body in found:
        line += text.count("\n", counted, at)
        counted = at
        out.append((line, flags, body))
    return out


def _said(raw: str) -> str | None:
    """The help text as read, or None when it is too short to say more than a name."""
    body = " ".join(raw.split())
    return body if len(_WORD.findall(body)) >= MIN_WORDS else None   # "Port", "{} {} {}"


def _keyword_helps(text: str):
    """(offset, flags, text) of each help-like keyword given a string (``help="..."``, ``Usage:``)."""
    pos, n = 0, 0
    while n < MAX_HELP and (m := _KEY.search(text, pos)) is not None:
        got = _joined(text, m.end())
        pos = m.end() if got is None else got[1]
        body = _said(got[0]) if got is not None else None
        if body is not None:
            n += 1
            yield m.start(), flags_of(text, m.start(), got[1]), body


# commander.js and its kin: the flags first, the help second; a command's description alone
_OPTION_CALL = re.compile(r"(?:\.(?:option|requiredOption)|\bnew\s+Option)\(\s*")
_DESCRIPTION_CALL = re.compile(r"\.description\(\s*")
_COMMA = re.compile(r"\s*,\s*")


def _call_helps(text: str):
    """(offset, flags, text) of each ``.option(flags, help)`` and ``.description(help)`` call."""
    n = 0
    for pattern, with_flags in ((_OPTION_CALL, True), (_DESCRIPTION_CALL, False)):
        for m in pattern.finditer(text):
            if n >= MAX_HELP:
                return
            line_start = text.rfind("\n", 0, m.start()) + 1
            if text[line_start:m.start()].lstrip().startswith(("*", "//", "#")):
                continue      # a call shown in a doc comment's example, not the program's own
            flags, at = "", m.end()
            if with_flags:
                first = _literal(text, at)
                if first is None or not first[0].lstrip().startswith("-"):
                    continue
                comma = _COMMA.match(text, first[1])
                if comma is None:
                    continue
                flags, at = " ".join(first[0].split()), comma.end()
            got = _joined(text, at)
            body = _said(got[0]) if got is not None else None
            if body is not None:
                n += 1
                yield m.start(), flags, body


_OPENERS, _CLOSERS = "([{", ")]}"
_FLAG = re.compile(r"--?[A-Za-z][\w-]*(?:/--?[A-Za-z][\w-]*)?")
_STRING = re.compile(r"""(["'])((?:(?!\1)[^\\\n])*)\1""")
_NAME_FIELD = re.compile(r"""\b(?:Name|name)\s*[:=]\s*["']([A-Za-z][\w-]*)["']""")
_CLAP_LONG = re.compile(r"""(?<![\w.])long(?:\s*=\s*"([\w-]+)")?(?=\s*[,)])""")
_CLAP_SHORT = re.compile(r"""(?<![\w.])short(?:\s*=\s*'(\w)')?(?=\s*[,)])""")
_FIELD = re.compile(r"\s*(?:#\[[^\n]*\n\s*)*(?:pub(?:\([^)]*\))?\s+)?(\w+)\s*:")
SPAN = 500    # characters looked at either side of a keyword for its call or attribute
MAX_HELP = 1000   # help texts read from one file: more is generated data, and each costs a walk


def _span(text: str, start: int, end: int) -> tuple[int, int]:
    """The call, struct literal or attribute around ``text[start:end]``: from its opening bracket
    to its closing one (strings are not read for brackets; a help text's own are skipped)."""
    lo, hi = max(0, start - SPAN), min(len(text), end + SPAN)
    opener = _unmatched(text, range(start - 1, lo - 1, -1), _CLOSERS, _OPENERS)
    closer = _unmatched(text, range(end, hi), _OPENERS, _CLOSERS)
    return (lo if opener is None else opener + 1), (hi if closer is None else closer)


def _unmatched(text: str, places, deeper: str, shallower: str) -> int | None:
    """The first of ``places`` (walked in their order) holding a bracket of ``shallower`` that no
    bracket of ``deeper`` met before it balances."""
    depth = 0
    for i in places:
        if text[i] in deeper:
            depth += 1
        elif text[i] in shallower:
            if depth == 0:
                return i
            depth -= 1
    return None


def _top_level(part: str) -> str:
    """``part`` without what nested brackets hold (a command's ``help_option_names=["-h"]`` is not
    the command's flag)."""
    out, depth = [], 0
    for c in part:
        if c in _OPENERS:
            depth += 1
        elif c in _CLOSERS:
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def flags_of(text: str, start: int, end: int) -> str:
    """The flags a help text at ``text[start:end]`` documents, as a user types them: the flag
    strings of its call (click, argparse), its ``Name:`` (urfave/cli), or clap's ``long`` and
    ``short`` with the field the attribute is on; "" when none is found."""
    lo, hi = _span(text, start, end)
    around = _top_level(text[lo:start]) + " " + _top_level(text[end:hi])
    flags = [s for _q, s in _STRING.findall(around) if _FLAG.fullmatch(s)]
    if not flags:
        flags = ["--" + n for n in _NAME_FIELD.findall(around)][:1]
    if not flags and (_CLAP_LONG.search(around) or _CLAP_SHORT.search(around)):
        after = hi + 1 + text.startswith("]", hi + 1)       # past the attribute's ")]"
        field = _FIELD.match(text, after)
        name = field.group(1) if field else ""
        long, short = _CLAP_LONG.search(around), _CLAP_SHORT.search(around)
        if long and (long.group(1) or name):
            flags.append("--" + (long.group(1) or name.replace("_", "-")))
        if short and (short.group(1) or name):
            flags.append("-" + (short.group(1) or name[0]))
    return ", ".join(dict.fromkeys(flags))
