"""Private key blocks, found in a whole text however their lines are indented, prefixed
(``#``, ``*``, ``//``, quotes) or escaped (``\n`` in JSON).

The BEGIN line becomes the marker; every base64 run, dash and header word up to the END
line is deleted, while line breaks, ``\n`` escapes, quotes and comment marks stay, so
the text keeps its line count (and usually its syntax). With no END, or with no BEGIN
(a bare ``MII...`` body, a PuTTY key's ``Private-Lines``), the block runs over the lines that still look like key material.
"""
from __future__ import annotations

import re
from typing import Callable

Span = tuple[int, int]
TAIL_MIN = 8                 # a mixed-case last line this long counts as key material

_KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_HEADERS = re.compile(r"-----(?:BEGIN|END)[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# DER openings of key bodies: RSA/PKCS#8 (MII...), EC SEC1 (P-256, P-384, P-521), PKCS#8 EC
# and Ed25519 -- each followed by 40 more base64 characters
_DER_OPENINGS = "MII|MHcCAQEE|MIGkAgEBBD|MIHcAgEBBE|MIGHAgEA|MIG2AgEA|MIHuAgEA|MC4CAQAw"
HEADLESS_NEEDLES = ("mii", "mhccaqee", "migkagebbd", "mihcagebbe", "mighagea", "mig2agea", "mihuagea",
                    "mc4caqaw", "b3blbnnzac1rzxktdje", "private-lines")
_KEY_HEADLESS = re.compile(r"(?<![A-Za-z0-9+/])(?:" + _DER_OPENINGS + r")[A-Za-z0-9+/]{40}"
                           r"|b3BlbnNzaC1rZXktdjE|Private-Lines:[ \t]*\d{1,3}")   # a PuTTY key's private half
_KEY_WIPE = re.compile(r"\\[nrt]|[A-Za-z0-9+/=-]++")
_KEY_LINE = re.compile(r"[A-Za-z0-9+/=]{16}")
_KEY_HEADER = re.compile(r"[^A-Za-z]{0,16}(?:Proc-Type|DEK-Info|Comment|Version|Encryption"
                         r"|Public-Lines|Private-Lines|Private-MAC)[ \t]*:")
_KEY_TAIL = re.compile(r"[^A-Za-z0-9+/=]{0,16}(?P<run>[A-Za-z0-9+/]{2,64}={0,2})(?:\\n)?[^A-Za-z0-9+/=]{0,16}")
_KEY_BLOCK_MAX = 64 * 1024


def _wipe(segment: str) -> str:
    """The segment without its header lines' words, base64 runs and dashes."""
    segment = _KEY_HEADERS.sub("", segment)
    return _KEY_WIPE.sub(lambda m: m.group(0) if m.group(0)[0] == "\\" else "", segment)


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _key_material(line: str) -> bool:
    return _KEY_LINE.search(line) is not None or _KEY_HEADER.match(line) is not None


def _last_key_line(line: str) -> bool:
    """The short last line of a key body: one base64 run that is padded or mixed."""
    m = _KEY_TAIL.fullmatch(line.rstrip("\r"))
    if m is None:
        return False
    run = m.group("run")
    return run.endswith("=") or any(c.isdigit() or c in "+/" for c in run) or (
        len(run) >= TAIL_MIN and not run.islower() and not run.isupper())


def _body_end(text: str, pos: int) -> int:
    """Where a key body with no END line stops: the rest of the line at ``pos``, every
    following line of key material (a blank line may come before more), and one short
    last line; never more than _KEY_BLOCK_MAX characters."""
    end, stop = _line_end(text, pos), min(len(text), pos + _KEY_BLOCK_MAX)
    while end < stop:
        nxt = _line_end(text, end + 1)
        line = text[end + 1:nxt]
        if _key_material(line):
            end = nxt
        elif not line.strip() and nxt < len(text) and _KEY_LINE.search(text, nxt + 1, _line_end(text, nxt + 1)):
            end = nxt
        else:
            return nxt if _last_key_line(line) else end
    return min(end, stop)


def mask_key_blocks(text: str, marker: str, on_block: Callable[[str], None]) -> str:
    """``text`` with each private key block (BEGIN ... END, a BEGIN with its body, or a bare
    body) replaced by ``marker`` and its lines emptied; ``on_block`` gets each block's text."""
    out: list[str] = []
    pos, end = 0, None
    if "PRIVATE KEY" in text:
        while (begin := _KEY_BEGIN.search(text, pos)) is not None:
            if end is not None and end.start() < begin.end():
                end = None
            if end is None:
                end = _KEY_END.search(text, begin.end(), begin.end() + _KEY_BLOCK_MAX)
            stop = end.end() if end is not None else _body_end(text, begin.end())
            pos = _mask_block(text, pos, begin.span(), stop, out, marker, on_block)
        out.append(text[pos:])
        text, out, pos = "".join(out), [], 0
    for head in _KEY_HEADLESS.finditer(text):
        if head.start() < pos or "-----BEGIN" in text[max(0, head.start() - 200):head.start()]:
            continue                  # inside a masked block, or a certificate's body
        pos = _mask_block(text, pos, head.span(), _body_end(text, head.end()), out, marker, on_block)
    out.append(text[pos:])
    return "".join(out)


def _mask_block(text: str, pos: int, head: Span, stop: int, out: list[str], marker: str,
                on_block: Callable[[str], None]) -> int:
    """Append text[pos:stop] to ``out`` with the block from head[0] masked; return stop."""
    out += (text[pos:head[0]], marker, _wipe(text[head[1]:stop]))
    on_block(text[head[0]:stop])
    return stop
