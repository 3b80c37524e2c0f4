"""Remove credentials from collected text, and name the files that are never opened.

``redact(text)`` returns the text with each secret replaced by ``[REDACTED:<kind>]``
and a Counter of what was removed. It is idempotent, keeps the words around a
secret (key names, quotes, ``Bearer``, a URL's scheme, user and host) and cannot
backtrack catastrophically: every quantifier that could is bounded or possessive.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

KINDS = ("aws-access-key", "aws-secret-key", "github-token", "slack-token", "google-api-key",
         "stripe-key", "openai-key", "anthropic-key", "private-key-block", "jwt",
         "url-credentials", "bearer-token", "secret-assignment")

MARKER = "[REDACTED:{}]"
_SEEN = "[REDACTED:"


# --- files that exist to hold secrets -------------------------------------------------

_SECRET_NAMES = frozenset({".dev.vars", "credentials.json", ".netrc", "_netrc", ".pgpass"})
_SECRET_PREFIXES = (".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "secrets.")
_SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".env")


def is_secret_file(relpath: str) -> bool:
    """True when the file's name (any depth, any case) marks it as a store of secrets."""
    name = relpath.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    return (name in _SECRET_NAMES or name.startswith(_SECRET_PREFIXES)
            or name.endswith(_SECRET_SUFFIXES))


# --- what a value must look like ------------------------------------------------------

_TEMPLATE = re.compile(r"""(?x)
    \$\{.*          # ${ENV}, ${{ secrets.X }}
  | \$[A-Za-z_]\w*  # $ENV
  | \{.*\}          # {{ var }}, {password}
  | %\(\w+\)s | %s  # printf-style slots
  | <.*>            # <your-token>
  | [xX*#.\-_•]+    # masks: xxx, ****, ...
  | [A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+   # the NAME of an environment variable
  | (?i:none|null|nil|undefined|true|false)
  | (?:os\.environ|process\.env)(?:[.\[].*)? | (?:os\.getenv|getenv|env|ENV)[(\[].*
""")
_PLACEHOLDER_WORDS = ("your", "placeholder", "changeme", "change_me", "change-me", "replaceme",
                      "replace_me", "replace-me", "redacted", "example", "dummy", "xxxx")
_GENERIC = frozenset({"password", "passwd", "pass", "pwd", "secret", "secretkey", "token", "apikey",
                      "accesstoken", "authtoken", "clientsecret", "privatekey", "credentials",
                      "hunter2", "letmein"})   # compared with "_" and "-" removed
_ATTRIBUTE_PATH = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_SNAKE_NAME = re.compile(r"[A-Za-z]+(?:_[A-Za-z]+)+\d{0,2}")


def _placeholder(value: str) -> bool:
    """True for template slots, masks, env references and stock example values."""
    low = value.lower()
    return (_SEEN in value or low.replace("_", "").replace("-", "") in _GENERIC or _TEMPLATE.fullmatch(value) is not None
            or any(word in low for word in _PLACEHOLDER_WORDS))


def _random_looking(value: str) -> bool:
    """Letters mixed with digits or symbols, or long mixed case that changes case often."""
    letters = sum(c.isalpha() for c in value)
    if not letters:
        return False
    if letters < len(value) and any(c.isdigit() or c in "+/=!@#$%^&*~" for c in value):
        return True
    upper = sum(c.isupper() for c in value)
    if len(value) < 16 or not 0 < upper < letters:
        return False
    changes = sum(a.isupper() != b.isupper() for a, b in zip(value, value[1:]))
    return changes >= 0.3 * len(value)


def _token_value(value: str) -> bool:
    """An opaque credential of at least 8 characters that is not a placeholder."""
    return len(value) >= 8 and not _placeholder(value) and _random_looking(value)


def _assigned_value(value: str, quoted: bool) -> bool:
    """Quoted: any 8+ non-space characters; bare: also no code reference and random-looking."""
    if len(value) < 8 or _placeholder(value):
        return False
    if quoted:
        return True
    if _ATTRIBUTE_PATH.fullmatch(value) or _SNAKE_NAME.fullmatch(value):
        return False
    return _random_looking(value)


# --- the rules, applied in order --------------------------------------------------------
#
# Each pattern opens with a literal so the regex engine can skip ahead to candidates
# (a leading look-behind or alternation would make it try every position). Rules marked
# ``lower`` run over a lower-cased copy of the text (same length, same offsets) and
# read the original text only to judge and replace the value.

Span = tuple[int, int]
Pick = Callable[[re.Match[str], str], "Span | None"]


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]          # lower-case; the rule is skipped unless one occurs
    pick: Pick
    lower: bool = False


def _group(name: str, accept: Callable[[str], bool] | None = None) -> Pick:
    """Replace the named group unless it is a marker already or ``accept`` refuses it."""
    def pick(m: re.Match[str], src: str) -> Span | None:
        start, end = m.span(name)
        value = src[start:end]
        if _SEEN in value or (accept is not None and not accept(value)):
            return None
        return start, end
    return pick


def _fenced(literal: str, rest: str) -> str:
    """``literal`` + ``rest`` as group ``v``, refused when a word character precedes it.

    The check follows the literal, so the engine still skips straight to the literal."""
    lit = re.escape(literal)
    return rf"(?P<v>{lit}(?<![A-Za-z0-9_]{lit}){rest})"


def _url_password(m: re.Match[str], src: str) -> Span | None:
    start, end = m.span("v")
    return None if _placeholder(src[start:end]) else (start, end)


_AWS_BEFORE = re.compile(r"aws[_. -]?\Z")
_AWS_VALUE = _group("v")


def _aws_secret(m: re.Match[str], src: str) -> Span | None:
    """The 40-character value after ``secret access key`` or ``aws secret key``."""
    if m.group("access") is None and not _AWS_BEFORE.search(m.string, max(0, m.start() - 4), m.start()):
        return None
    return _AWS_VALUE(m, src)


def _assignment(m: re.Match[str], src: str) -> Span | None:
    """The value assigned to a secret-shaped name, quoted (8+ characters) or bare (also random)."""
    low, start = m.string, m.start()
    if low.startswith("key", start) and not _KEY_PREFIX.search(low, max(0, start - 12), start):
        return None                          # a bare "key" names nothing secret
    if m.start("qv") >= 0:
        start, end = m.span("qv")
        return (start, end) if _assigned_value(src[start:end], True) else None
    start, end = m.span("uv")
    trimmed = src[start:end].rstrip(".:!?")   # sentence punctuation after a bare value stays
    return (start, start + len(trimmed)) if _assigned_value(trimmed, False) else None


def _rule(kind: str, pattern: str, needles: tuple[str, ...], pick: Pick, lower: bool = False) -> _Rule:
    return _Rule(kind, re.compile(pattern), needles, pick, lower)


_B64URL = r"[A-Za-z0-9_-]"
_SEP = r"""["'`]?[ \t]*(?:=>|:=|={1,3}|:)[ \t]*"""
_KEY_WORD = (r"(?:pass(?:word|wd|phrase)|secret(?:[_.-]?key)?|key|token|credentials?)"
             r"(?:[_.-]?(?:base|value|b64|base64|hex))?")
_KEY_PREFIX = re.compile(r"(?:api|private|access|auth|encryption|signing|master|client)[_.-]?\Z")
_ANNOTATION = r""":[ \t]*(?:str|bytes|secretstr|optional\[str\]|str[ \t]*\|[ \t]*none)[ \t]*="""

_RULES = (
    _rule("anthropic-key", _fenced("sk-ant-", r"[A-Za-z0-9_-]{20,}+"), ("sk-ant-",),
          _group("v", _random_looking)),
    _rule("openai-key", _fenced("sk-", r"(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+"),
          ("sk-",), _group("v", _random_looking)),
    _rule("github-token", _fenced("gh", r"[pousr]_[A-Za-z0-9]{30,}+"), ("gh",), _group("v")),
    _rule("github-token", _fenced("github_pat_", r"\w{40,}+"), ("github_pat_",), _group("v")),
    _rule("slack-token", _fenced("xox", r"[abeposr]-\d++-[0-9A-Za-z-]{8,}+"), ("xox",), _group("v")),
    _rule("slack-token", _fenced("xapp-", r"\d++-[0-9A-Za-z-]{8,}+"), ("xapp-",), _group("v")),
    _rule("slack-token", r"hooks\.slack\.com/services/(?P<v>T[0-9A-Z]++/B[0-9A-Z]++/[0-9A-Za-z]++)",
          ("hooks.slack.com",), _group("v")),
    *(_rule("stripe-key", _fenced(prefix, r"(?:live|test)_[0-9A-Za-z]{16,}+"), ("_live_", "_test_"),
            _group("v")) for prefix in ("sk_", "rk_", "pk_")),
    _rule("stripe-key", _fenced("whsec_", r"[0-9A-Za-z]{24,}+"), ("whsec_",), _group("v")),
    _rule("google-api-key", _fenced("AIza", _B64URL + r"{35}(?![\w-])"), ("aiza",), _group("v")),
    _rule("google-api-key", _fenced("GOCSPX-", _B64URL + r"{28}(?![\w-])"), ("gocspx-",), _group("v")),
    _rule("google-api-key", _fenced("ya29.", r"[0-9A-Za-z_-]{20,}+"), ("ya29.",), _group("v")),
    _rule("aws-access-key", _fenced("A", r"(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"),
          ("akia", "asia", "abia", "acca", "a3t"), _group("v")),
    _rule("jwt", _fenced("eyJ", _B64URL + r"{8,}+\." + _B64URL + r"{8,}+\." + _B64URL + r"{10,}+"),
          ("eyj",), _group("v")),
    _rule("url-credentials", r"://(?<=[A-Za-z0-9+.-]://)[^\s:/@'\"`<>]{0,256}+:"
          r"(?P<v>[^\s/'\"`<>]{1,256})@(?=[\w\[.-])", ("://",), _url_password),
    # the rest match the lower-cased copy
    _rule("aws-secret-key", r"secret(?P<access>[_. -]?access)?[_. -]?key"
          r"(?:" + _SEP + r"|[ \t]+(?:is[ \t]+)?)[\"'`]?(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+=])",
          ("secret",), _aws_secret, lower=True),
    _rule("bearer-token", r"bearer(?<![a-z0-9_]bearer)[ \t]+(?P<v>[a-z0-9._~+/-]{8,1024}+=*)",
          ("bearer",), _group("v", _token_value), lower=True),
    _rule("bearer-token", r"authorization[\"'`]?[ \t]*[:=][ \t]*[\"'`]?(?:basic|token)"
          r"[ \t]+(?P<v>[a-z0-9._~+/-]{8,1024}+=*)", ("authorization",),
          _group("v", _token_value), lower=True),
    _rule("secret-assignment", _KEY_WORD + r"(?![\w.-])[\"'`]?[ \t]*(?:" + _ANNOTATION
          + r"|=>|:=|={1,3}|:)[ \t]*"
          r"(?:[rbfu]{0,2}(?P<q>[\"'`])(?P<qv>[^\s\"'`\\]{1,512}+)(?P=q)"
          r"|(?P<uv>[^\s\"'`,;&(){}\[\]<>\\]{1,512}+)(?![(\[]))",
          ("pass", "secret", "key", "token", "credential"), _assignment, lower=True),
    _rule("secret-assignment", _KEY_WORD + r">(?P<qv>[^\s<>]{1,512}+)</", ("</",), _assignment,
          lower=True),
)

_KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY = re.compile(r"(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]{16,}+)*+")   # lines after a BEGIN with no END
_KEY_BLOCK_MAX = 64 * 1024


class _NoEnd:
    """Sentinel: no END line anywhere after the current position."""

    def start(self) -> int:
        return 1 << 62


_NO_END = _NoEnd()


def _redact_key_blocks(text: str, found: Counter) -> str:
    """Replace each BEGIN ... END PRIVATE KEY block (or a header and its body) by one marker."""
    out, pos, end = [], 0, None
    marker = MARKER.format("private-key-block")
    while (begin := _KEY_BEGIN.search(text, pos)) is not None:
        if end is not None and end.start() < begin.end():
            end = None
        if end is None:
            end = _KEY_END.search(text, begin.end()) or _NO_END
        if end is not _NO_END and end.start() - begin.end() <= _KEY_BLOCK_MAX:
            stop = end.end()
        else:
            stop = _KEY_BODY.match(text, begin.end()).end()
        out += (text[pos:begin.start()], marker)
        found["private-key-block"] += 1
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def _lowered(text: str) -> str:
    """A lower-cased copy with the same offsets as ``text``."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def redact(text: str) -> tuple[str, Counter]:
    """Return ``text`` with every secret replaced by a marker, and a Counter kind -> removed."""
    found: Counter = Counter()
    if not text:
        return text, found
    present = _lowered(text)
    if "private key" in present:
        text = _redact_key_blocks(text, found)
    low = None if found else present          # lower-cased copy of the current text
    for rule in _RULES:
        if not any(needle in present for needle in rule.needles):
            continue
        if rule.lower and low is None:
            low = _lowered(text)
        before = found.total()
        text = _apply(rule, text, low if rule.lower else text, found)
        if found.total() != before:
            low = None
    return text, found


def _apply(rule: _Rule, text: str, view: str, found: Counter) -> str:
    """Match ``rule`` over ``view`` (``text`` or its lower-cased copy); splice markers into ``text``."""
    marker = MARKER.format(rule.kind)
    out, pos = [], 0
    for m in rule.pattern.finditer(view):
        span = rule.pick(m, text)
        if span is None:
            continue
        out += (text[pos:span[0]], marker)
        pos = span[1]
        found[rule.kind] += 1
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)
