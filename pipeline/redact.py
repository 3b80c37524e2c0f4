"""Remove credentials from collected text, and name the files that are never opened.

``redact(text)`` returns the text with each secret replaced by ``[REDACTED:<kind>]``
and a Counter of what was removed; ``secrets_in(text)`` lists what it would remove
(to measure false positives, never to store). Run it over a whole file or commit
message before cutting chunks: a private key block is masked line by line, so the
text keeps its lines and a key that a chunk boundary would split is still whole.
It is idempotent, keeps the words around a secret (key names, quotes, ``Bearer``,
a URL's scheme, user and host) and cannot backtrack catastrophically: every
quantifier that could is bounded or possessive. Past the rules, a base64 blob that decodes
to a credential is masked whole, and so is the opaque token that continues a masked value on
the next line (a wrapped token, a YAML block scalar). ``redact_strings`` also masks the forms
a tool derives from a secret it found (lower-cased, or made an identifier: a graph node's id).
"""
from __future__ import annotations

import base64
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from loci.kernel.tokens import STOPWORDS
from loci_pipeline.keyblocks import HEADLESS_NEEDLES, mask_key_blocks

KINDS = ("aws-access-key", "aws-secret-key", "github-token", "gitlab-token", "slack-token",
         "google-api-key", "stripe-key", "sendgrid-key", "azure-key", "twilio-key", "npm-token",
         "pypi-token", "openai-key", "anthropic-key", "vendor-token", "private-key-block", "jwt",
         "url-credentials", "basic-auth", "bearer-token", "command-password", "password-hash",
         "secret-assignment")

MARKER = "[REDACTED:{}]"
_SEEN = "[REDACTED:"

Seen = Callable[[str, str], None]      # (kind, the original text masked)


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
  | %\(\w+\)s | %(?:\[\d+\])?[sdvqxf]   # printf-style slots: %s, %(name)s, %[1]s
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
_HEX = re.compile(r"[0-9a-fA-F]+")
_KEY_ALPHABET = re.compile(r"[A-Za-z0-9+/=_~-]+")      # base64, base64url, hex
_SNAKE_NAME = re.compile(r"[A-Za-z]+(?:_[A-Za-z]+)+\d{0,2}")
MIN_VALUE = 8                 # shorter assigned values are not judged secrets
OPAQUE_MIN = 24               # a value judged a key by its look alone is at least this long
PHRASE_WORDS = (2, 8)         # a bare pass phrase has this many words
QUOTED_PHRASE_WORDS = 12      # a quoted one at most this many
PEM_HEAD_B64 = 80             # base64 characters decoded to find a PEM header
STATED_WINDOW = 96            # "<name> [for the staging box] is <value>": characters read before "is"
# words of documentation and code that a pass phrase does not contain
_DOC_WORDS = STOPWORDS | frozenset("""password passwords passphrase passwd pwd secret secrets token
    tokens key keys user users username login account string str int bool bytes optional required
    default defaults none null value values field fields type see set sets given provided returned
    stored used hash hashed plain plaintext text encrypted authentication credential credentials
    new old current same here below above example description never""".split())
_SPACE = re.compile(r"\s")
_PLAIN_WORD = re.compile(r"[^\W_][\w'!.@$%^*~-]*")


def _placeholder(value: str) -> bool:
    """True for template slots, masks, env references and stock example values. A stock word
    (``your``, ``example``) marks a placeholder only when what is left without it does not
    still look like a credential (``Yourp@ssw0rd2024`` is a password)."""
    low = value.lower()
    if _SEEN in value or low.replace("_", "").replace("-", "") in _GENERIC or _TEMPLATE.fullmatch(value) is not None:
        return True
    words = [word for word in _PLACEHOLDER_WORDS if word in low]
    if not words:
        return False
    rest = re.sub("|".join(words), "", value, flags=re.IGNORECASE)
    return len(rest) < MIN_VALUE or not _random_looking(rest)


def _random_looking(value: str) -> bool:
    """Letters mixed with digits or symbols (a sigil at either end does not count), or long
    mixed case that changes case often."""
    value = value.strip("#@$!*~.:")
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


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _high_entropy(value: str) -> bool:
    """Tokens of one character class that ``_random_looking`` cannot judge: digits
    (8+, not a date-like repetition) or letters of one case (12+, few vowels, varied)."""
    if value.isdigit():
        return len(value) >= MIN_VALUE and _entropy(value) >= 2.5
    if len(value) >= 12 and value.isalpha() and (value.islower() or value.isupper()):
        vowels = sum(c in "aeiouAEIOU" for c in value)
        return vowels < 0.3 * len(value) and _entropy(value) >= 3.0
    return False


def _opaque(value: str) -> bool:
    """A long value that is a key by its look alone: 32+ hex digits mixing digits and letters,
    or 24+ characters of a random mix with high entropy."""
    if len(value) < OPAQUE_MIN or not _KEY_ALPHABET.fullmatch(value) or _placeholder(value):
        return False
    if _HEX.fullmatch(value):
        return len(value) >= 32 and not value.isdigit() and not value.isalpha() and _entropy(value) >= 3.0
    return _random_looking(value) and _entropy(value) >= 4.0


def _constant_name(value: str) -> bool:
    """One word of letters in one case (``IDENTIFIER``, ``whitespace``): a token type or a
    constant's name, not a credential."""
    return value.isalpha() and (value.isupper() or value.islower()) and not _high_entropy(value)


def _credential_token(value: str) -> bool:
    """What follows ``Bearer``: a random mix, or one case of letters with high entropy."""
    return _token_value(value) or (len(value) >= 16 and not _placeholder(value) and _high_entropy(value))


def _token_value(value: str) -> bool:
    """An opaque credential of at least 8 characters that is not a placeholder."""
    return len(value) >= MIN_VALUE and not _placeholder(value) and _random_looking(value)


def _passphrase(value: str, max_words: int) -> bool:
    """Several plain words (not code, not a sentence of documentation): a pass phrase."""
    words = value.split()
    if not PHRASE_WORDS[0] <= len(words) <= max_words or len(value) < MIN_VALUE:
        return False
    if value.rstrip()[-1] in ":?" or _placeholder(value):
        return False
    return all(_PLAIN_WORD.fullmatch(w) and w.strip(".!'").lower() not in _DOC_WORDS for w in words)


def _assigned_value(value: str, quoted: bool) -> bool:
    """Quoted: 8+ characters (several words: a pass phrase); bare: one token that is no code
    reference and looks random (mixed characters, or high entropy)."""
    if len(value) < MIN_VALUE or _placeholder(value):
        return False
    if quoted:
        return _passphrase(value, QUOTED_PHRASE_WORDS) if _SPACE.search(value) else True
    if _ATTRIBUTE_PATH.fullmatch(value) or _SNAKE_NAME.fullmatch(value):
        return False
    return _random_looking(value) or _high_entropy(value)


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


def _not_placeholder(value: str) -> bool:
    return not _placeholder(value)


_PGPASS_VALUE = _group("v", _not_placeholder)


def _whole(m: re.Match[str], src: str) -> Span | None:
    return m.span()


def _with_hex_before(m: re.Match[str], src: str) -> Span | None:
    """The match and the 32 hex digits its look-behind checked (a Mailchimp key)."""
    return m.start() - 32, m.end()


def _fenced(literal: str, rest: str) -> str:
    """``literal`` + ``rest`` as group ``v``, refused when a word character precedes it.

    The check follows the literal, so the engine still skips straight to the literal."""
    lit = re.escape(literal)
    return rf"(?P<v>{lit}(?<![A-Za-z0-9_]{lit}){rest})"


_AWS_BEFORE = re.compile(r"aws[_. -]?\Z")
_AWS_VALUE = _group("v")


def _aws_secret(m: re.Match[str], src: str) -> Span | None:
    """The 40-character value after ``secret access key`` or ``aws secret key``."""
    if m.group("access") is None and not _AWS_BEFORE.search(m.string, max(0, m.start() - 4), m.start()):
        return None
    return _AWS_VALUE(m, src)


_PHRASE = re.compile(r"[^\n\r;,\"'`()\[\]{}]{1,256}")
_PASSWORDISH = ("pass", "pwd", "secret")


def _phrase_at(src: str, start: int) -> str:
    """The rest of the line from ``start``, up to a delimiter or a `` #`` comment."""
    m = _PHRASE.match(src, start)
    return m.group(0).split(" #", 1)[0].rstrip().rstrip(".!?") if m else ""


def _assignment(m: re.Match[str], src: str) -> Span | None:
    """The value assigned to a secret-shaped name: quoted (8+ characters or a pass phrase),
    several bare words after a password-like name (a pass phrase), or one random token."""
    low, start, word = m.string, m.start(), m.group("k")
    if word.startswith("key") and not _KEY_PREFIX.search(low, max(0, start - 12), start):
        value_start, value_end = m.span("qv") if m.start("qv") >= 0 else m.span("uv")
        value = src[value_start:value_end]   # a bare "key" names nothing secret: only its value can
        return (value_start, value_end) if _opaque(value) else None
    if word.startswith(("pass", "pwd")) and not word.startswith(("passw", "passp")) \
            and start and low[start - 1].isalnum():
        return None                          # bypass, compass
    compared = m.groupdict().get("eq") is not None     # token == "name": judged like a bare value
    if m.start("qv") >= 0:
        start, end = m.span("qv")
        value = src[start:end]
        if not word.startswith(_PASSWORDISH) and _constant_name(value):
            return None                      # token = "IDENTIFIER"
        return (start, end) if _assigned_value(value, not compared) else None
    start, end = m.span("uv")
    if word.startswith(_PASSWORDISH) and not compared:
        phrase = _phrase_at(src, start)
        if len(phrase) > end - start and _passphrase(phrase, PHRASE_WORDS[1]):
            return start, start + len(phrase)
    trimmed = src[start:end].rstrip(".:!?")   # sentence punctuation after a bare value stays
    return (start, start + len(trimmed)) if _assigned_value(trimmed, False) else None


def _stated(m: re.Match[str], src: str) -> Span | None:
    """Prose that states a secret: "our secret key is <token>" or "... is '<phrase>'"."""
    if not _STATED_NAME.search(m.string, max(0, m.start() - STATED_WINDOW), m.start()):
        return None
    quoted = m.start("qv") >= 0
    start, end = m.span("qv" if quoted else "uv")
    value = src[start:end] if quoted else src[start:end].rstrip(".:!?")
    return (start, start + len(value)) if _assigned_value(value, quoted) else None


def _basic_credentials(value: str) -> bool:
    """Base64 of ``user:password`` (a docker config's ``auth``)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password) and decoded.isprintable()


def _encoded_private_key(value: str) -> bool:
    """Base64 of a PEM private key (a kubeconfig's ``client-key-data``)."""
    head = value[:PEM_HEAD_B64]
    try:
        decoded = base64.b64decode(head[:len(head) // 4 * 4]).decode("ascii", "replace")
    except ValueError:
        return False
    return "PRIVATE KEY" in decoded


def _url_password(m: re.Match[str], src: str) -> Span | None:
    """The password of ``scheme://user:password@host``, or of one cut short by an ellipsis
    (a label truncated after the password: ``git+https://dev:ghp_12ab...``), not a port."""
    if m.group("cut") is not None and m.group("v").isdigit():
        return None
    return _URL_VALUE(m, src)


_URL_VALUE = _group("v", _not_placeholder)


_PGPASS_HOST = re.compile(r"[ \t]*[A-Za-z0-9.*_\[\]-]{1,253}")


def _pgpass_line(m: re.Match[str], src: str) -> Span | None:
    """``host:port:database:user:password``, a whole line (a ``.pgpass`` entry): the password."""
    line_start = src.rfind("\n", 0, m.start()) + 1
    if not _PGPASS_HOST.fullmatch(src, line_start, m.start()):
        return None
    return _PGPASS_VALUE(m, src)


def _crypt_hash(m: re.Match[str], src: str) -> Span | None:
    """A crypt(3) hash (``$6$salt$hash``, bcrypt's ``$2b$12$...``) not glued to a word before it."""
    if m.start() and (src[m.start() - 1].isalnum() or src[m.start() - 1] in "_$"):
        return None
    return m.span("v")


def _command_password(value: str) -> bool:
    """A password given to a command: 4+ characters, no placeholder, no further flag."""
    return len(value) >= 4 and not value.startswith("-") and not _placeholder(value)


def _flag_password(value: str) -> bool:
    """``--password X``: X must look like a credential (a word could be a prompt or a name)."""
    return _command_password(value) and (_random_looking(value) or _high_entropy(value))


def _rule(kind: str, pattern: str, needles: tuple[str, ...], pick: Pick, lower: bool = False) -> _Rule:
    return _Rule(kind, re.compile(pattern), needles, pick, lower)


def _vendor(kind: str, literal: str, rest: str, needle: str | None = None) -> _Rule:
    """A token known by its literal prefix; refused only when it is a placeholder."""
    return _rule(kind, _fenced(literal, rest), (needle or literal.lower(),), _group("v", _not_placeholder))


_B64URL = r"[A-Za-z0-9_-]"
_BARE = r"""[^\s"'`,;&(){}\[\]<>\\]"""
_KEY_WORD = (r"(?P<k>(?:pass(?:word|wd|phrase)?|pwd|secret(?:[_.-]?key)?|key|token|credentials?)"
             r"(?:[_.-]?(?:base|value|b64|base64|hex|prod|production|dev|development|staging|stage"
             r"|test|qa|uat|live|local|ci|root|admin|master|main|old|new|default|primary|backup"
             r"|\d{1,3})){0,3})")
_KEY_PREFIX = re.compile(r"(?:api|private|access|auth|encryption|signing|master|client|hmac|app|fernet"
                         r"|aes|des|crypt|cipher|session|jwt|subscription|license|webhook|shared|consumer"
                         r"|service|admin|secret)[_.-]?\Z")
_ANNOTATION = r""":[ \t]*(?:str|bytes|secretstr|optional\[str\]|str[ \t]*\|[ \t]*none)[ \t]*="""
_NAME_VALUE = r"""["'`]?[ \t]*,[ \t]*["'`]value["'`][ \t]*:"""     # {"Name": "X", "Value": "..."}
_STATED_NAME = re.compile(r"(?:password|passphrase|passwd|secret(?: key)?|api key|access key"
                          r"|access token|auth token|token|private key)"
                          r"(?:[ \t]+(?:for|of|on|in|to|at)(?:[ \t]+[\w.@-]{1,24}){1,3})?[ \t]*\Z")
_STATED_VALUE = (r"[ \t]+(?:[\"'`](?P<qv>[^\n\"'`]{1,512}+)[\"'`]|(?P<uv>" + _BARE + r"{1,512}+))")

_VENDOR_TOKENS = (
    ("shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"), *((f"do{c}_v1_", r"[a-f0-9]{64}") for c in "opr"),
    ("hvs.", r"[\w-]{90,}+"), ("hvb.", r"[\w-]{90,}+"), ("dapi", r"[a-h0-9]{32}(?:-\d)?"),
    ("hf_", r"[A-Za-z]{34,}+"), ("sq0", r"(?:atp|csp)-[\w-]{22,}+"), ("ATATT3", r"[\w=-]{150,}+"),
    ("lin_", r"(?:api|oauth)_[A-Za-z0-9]{40}"), ("PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"),
    ("AGE-SECRET-KEY-1", r"[0-9A-Z]{58}"), ("glc_", r"[A-Za-z0-9+/]{32,}+={0,2}"),
    ("glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"), ("sntry", r"[su]_[\w+/=]{40,}+"),
    ("NR", r"(?:AK|JS|II)-[A-Z0-9]{27}"), ("pul-", r"[a-f0-9]{40}"), ("LTAI", r"[A-Za-z0-9]{20}"),
    ("dp.", r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}+"), ("sbp_", r"[a-f0-9]{40}"),
    ("key-", r"[a-f0-9]{32}(?![a-z0-9])"), ("gsk_", r"[A-Za-z0-9]{48,}+"), ("r8_", r"[A-Za-z0-9]{37}"),
    ("ntn_", r"[A-Za-z0-9]{40,}+"), ("HRKU-", r"[\w-]{60}"), ("EAA", r"[MC][A-Za-z0-9]{80,}+"),
    ("v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}"), ("sl.", r"[\w-]{130,}+"),
    ("sk.", r"eyJ[\w-]{20,}+\.[\w-]{20,}+"), ("AAAAAAAAAAAAAAAAAAAAA", r"[A-Za-z0-9%]{30,}+"),
    ("access_token$production$", r"[0-9a-z]{16}\$[0-9a-f]{32}"), ("dckr_pat_", r"[\w-]{27,}+"),
    ("fo1_", r"[\w-]{43}"), ("rubygems_", r"[a-f0-9]{48}"), ("oy2", r"[a-z0-9]{43}(?![a-z0-9])"),
    ("CLOJARS_", r"[a-z0-9]{60}"), ("ops_", r"eyJ[\w+/=-]{100,}+"), ("pscale_", r"(?:tkn|oauth|pw)_[\w=.-]{32,64}+"),
    ("CFPAT-", r"[\w-]{43}"), ("dt0c01.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}"), ("fio-u-", r"[\w=-]{64}"),
    ("pnu_", r"[a-z0-9]{36}"), ("rdme_", r"[a-z0-9]{70}"), ("shippo_", r"(?:live|test)_[a-f0-9]{40}"),
    ("tfp_", r"[\w.-]{59}"), ("EZAK", r"[a-z0-9]{54}"), ("duffel_", r"(?:test|live)_[\w=-]{43}"),
    ("FLWSECK", r"(?:_TEST)?-[a-h0-9]{32}-X"), ("api_org_", r"[A-Za-z]{34}"),
)

_RULES = (
    _rule("anthropic-key", _fenced("sk-ant-", r"[A-Za-z0-9_-]{20,}+"), ("sk-ant-",),
          _group("v", _random_looking)),
    _rule("openai-key", _fenced("sk-", r"(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+"),
          ("sk-",), _group("v", _random_looking)),
    _rule("github-token", _fenced("gh", r"[pousr]_[A-Za-z0-9]{30,}+"), ("gh",), _group("v")),
    _rule("github-token", _fenced("github_pat_", r"\w{40,}+"), ("github_pat_",), _group("v")),
    _vendor("gitlab-token", "gl", r"(?:pat|ptt|dt|rt|ft|imt|agent|oas|cbt|soat|sa)-[\w-]{20,}+"),
    _vendor("gitlab-token", "GR1348941", r"[\w-]{20,}+"),
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
    _rule("sendgrid-key", _fenced("SG.", r"[\w-]{16,32}+\.[\w-]{16,64}+"), ("sg.",),
          _group("v", _random_looking)),
    _rule("azure-key", r"(?:accountkey|sharedaccesskey|sharedaccesssignature)[ \t]*=[ \t]*"
          r"(?P<v>[^;\s\"'`<>]{8,512}+)", ("accountkey", "sharedaccess"),
          _group("v", _not_placeholder), lower=True),
    _rule("azure-key", r"[?&]sig=(?P<v>[a-z0-9%+/=]{20,256}+)", ("sig=",), _group("v"), lower=True),
    _rule("azure-key", r"[A-Za-z0-9_~.]{3}\dQ~(?P<v>[A-Za-z0-9_~.-]{31,34})(?![\w~.-])", ("q~",),
          _group("v")),
    _vendor("twilio-key", "SK", r"[0-9a-f]{32}(?![0-9A-Za-z])"),
    _vendor("npm-token", "npm_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    _vendor("pypi-token", "pypi-", r"AgE[\w-]{50,}+", "pypi-age"),
    *(_vendor("vendor-token", literal, rest) for literal, rest in _VENDOR_TOKENS),
    _rule("vendor-token", r"-us(?<=(?<![0-9a-f])[0-9a-f]{32}-us)\d{1,2}(?![0-9a-z])", ("-us",),
          _with_hex_before),
    _rule("vendor-token", r"\d{8,10}:AA[\w-]{33}(?![\w-])", (":aa",), _whole),
    _rule("vendor-token", r"[a-z0-9]{14}\.atlasv1\.[\w=-]{60,70}+", (".atlasv1.",), _whole),
    *(_rule("aws-access-key", _fenced(prefix, rf"[A-Z0-9]{{{20 - len(prefix)}}}(?![A-Za-z0-9])"),
            (prefix.lower(),), _group("v")) for prefix in ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
    _rule("jwt", _fenced("eyJ", _B64URL + r"{8,}+\." + _B64URL + r"{8,}+\." + _B64URL + r"{10,}+"),
          ("eyj",), _group("v")),
    _rule("url-credentials", r"://(?<=[A-Za-z0-9+.-]://)[^\s:/@'\"`<>]{0,256}+:"
          r"(?P<v>[^\s/'\"`<>]{1,256})(?:@(?=[\w\[.-])|(?P<cut>\.\.\.|\u2026))", ("://",), _url_password),
    _rule("private-key-block", _fenced("LS0tLS1CRUdJTi", r"[A-Za-z0-9+/]{20,}+={0,2}"),
          ("ls0tls1crudjti",), _group("v", _encoded_private_key)),
    _rule("password-hash", r"\$(?:1|2[abxy]|5|6|7|y|gy|md5|sha1)(?:\$rounds=\d{1,7})?"
          r"\$(?P<v>[./A-Za-z0-9]{1,64}\$[./A-Za-z0-9$]{16,512}+)",
          ("$1$", "$2a$", "$2b$", "$2x$", "$2y$", "$5$", "$6$", "$7$", "$y$", "$gy$", "$md5", "$sha1"),
          _crypt_hash),
    _rule("command-password", r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb)(?![\w-])"
          r"[^\n|;&]{0,256}?[ \t]-p(?P<v>[^\s\"'`;|&]{1,256}+)", ("mysql", "mariadb"),
          _group("v", _command_password)),
    _rule("command-password", r"sshpass(?![\w-])[^\n|;&]{0,64}?[ \t]-p[ \t]*[\"']?(?P<v>[^\s\"'`;|&]{1,256}+)",
          ("sshpass",), _group("v", _command_password)),
    _rule("command-password", r"--pass(?:word|wd|phrase)?[ \t]+[\"']?(?P<v>[^\s\"'`;|&]{1,256}+)",
          ("--pass",), _group("v", _flag_password)),
    _rule("secret-assignment", r"(?m):(?:\d{1,5}|\*):[^:\s]{1,64}:[^:\s]{1,64}:(?P<v>[^\s]{4,256})[ \t]*$",
          (":",), _pgpass_line),
    _rule("secret-assignment", r"\"private_key_id\"[ \t]*:[ \t]*\"(?P<v>[0-9a-f]{40})\"",
          ("private_key_id",), _group("v")),
    # the rest match the lower-cased copy
    _rule("basic-auth", r"auth(?<![\w-]auth)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[a-z0-9+/]{8,1024}+={0,2})",
          ("auth",), _group("v", _basic_credentials), lower=True),
    _rule("basic-auth", r"curl[^\n]{0,256}?[ \t](?:-u|--user)[ \t=]+[\"']?[^\s:\"']{1,64}:"
          r"(?P<v>[^\s\"'`]{4,256}+)", ("curl",), _group("v", _not_placeholder), lower=True),
    _rule("aws-secret-key", r"secret(?P<access>[_. -]?access)?[_. -]?key"
          r"(?:" + _NAME_VALUE + r"""[ \t]*|["'`]?[ \t]*(?:=>|:=|={1,3}|:|\|)[ \t]*""" + r"|[ \t]+(?:is[ \t]+)?)[\"'`]?"
          r"(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+=])", ("secret",), _aws_secret, lower=True),
    _rule("bearer-token", r"bearer(?<![a-z0-9_]bearer)[ \t]+(?P<v>[a-z0-9._~+/-]{8,1024}+=*)",
          ("bearer",), _group("v", _credential_token), lower=True),
    _rule("bearer-token", r"authorization[\"'`]?[ \t]*[:=][ \t]*[\"'`]?(?:basic|token)"
          r"[ \t]+(?P<v>[a-z0-9._~+/-]{8,1024}+=*)", ("authorization",),
          _group("v", _token_value), lower=True),
    _rule("secret-assignment", _KEY_WORD + r"(?![\w.-])[\"'`]?[ \t]*(?:" + _ANNOTATION
          + r"|" + _NAME_VALUE + r"|=>|:=|(?P<eq>={2,3})|=|:|\|)[ \t]*"
          r"(?:[|>][+-]?[1-9]?[ \t]*\r?\n[ \t]+)?"         # a YAML block scalar: its first line
          r"(?:[rbfu]{0,2}(?P<q>[\"'`])(?P<qv>[^\n\"'`\\]{1,512}+)(?P=q)"
          r"|(?P<uv>" + _BARE + r"{1,512}+(?:&(?![a-z_][\w.-]{0,64}=)" + _BARE + r"{0,256}+)*+)(?![(\[]))",
          ("pass", "pwd", "secret", "key", "token", "credential"), _assignment, lower=True),
    _rule("secret-assignment", _KEY_WORD + r">(?P<qv>[^\s<>]{1,512}+)</", ("</",), _assignment,
          lower=True),
    *(_rule("secret-assignment", verb + _STATED_VALUE, (verb,), _stated, lower=True)
      for verb in (" is", " was")),
)


# --- the driver -----------------------------------------------------------------------


def _lowered(text: str) -> str:
    """A lower-cased copy with the same offsets as ``text``."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


_NEEDLES = frozenset(needle for rule in _RULES for needle in rule.needles)


def _scrub(text: str, seen: Seen | None) -> tuple[str, Counter]:
    found: Counter = Counter()
    if not text:
        return text, found
    present = _lowered(text)
    if "private key" in present or any(needle in present for needle in HEADLESS_NEEDLES):
        def on_block(original: str) -> None:
            found["private-key-block"] += 1
            if seen is not None:
                seen("private-key-block", original)
        text = mask_key_blocks(text, MARKER.format("private-key-block"), on_block)
    low = None if found else present          # lower-cased copy of the current text
    seen_needles = {needle for needle in _NEEDLES if needle in present}
    for rule in _RULES:
        if seen_needles.isdisjoint(rule.needles):
            continue
        if rule.lower and low is None:
            low = _lowered(text)
        before = found.total()
        text = _apply(rule, text, low if rule.lower else text, found, seen)
        if found.total() != before:
            low = None
    text = _encoded(text, found, seen)
    return _continued(text, found, seen), found


# --- what the rules above cannot see: an encoded secret, a value wrapped onto the next line ----

_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# every byte of the base64 alphabet as "a", every other as " ": runs of "a" are found by a
# pattern with a literal prefix, which the regex engine skips to (4x faster than a class)
_BASE64_RUNS = bytes(ord("a") if i in _BASE64_ALPHABET else ord(" ") for i in range(256))
_RUN = re.compile(rb"a" * 16 + rb"a{0,4080}+")
_GLUED = frozenset("=_-")                 # a blob glued to one of these is part of a longer token
_USER_PASSWORD = re.compile(r"[\w.+@-]{1,64}:[^\s]{4,256}")


def _decoded_secret(blob: str) -> str | None:
    """The kind of secret a base64 blob holds once decoded (``user:password`` or anything
    ``redact`` masks), else None. Binary data (an image, a hash) is not decoded further."""
    if len(blob) % 4 or (blob.isalnum() and (blob.isupper() or blob.islower() or blob.isdigit())):
        return None
    try:
        decoded = base64.b64decode(blob, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    if not decoded.replace("\n", "").replace("\t", "").isprintable():
        return None
    if _USER_PASSWORD.fullmatch(decoded.strip()):
        return "basic-auth"
    found = redact(decoded)[1]
    return next(iter(found)) if found else None


def _encoded(text: str, found: Counter, seen: Seen | None) -> str:
    """Mask each standalone base64 blob that decodes to a credential."""
    out, pos = [], 0
    for m in _RUN.finditer(text.encode("ascii", "replace").translate(_BASE64_RUNS)):
        start, end = m.span()                 # "replace" keeps one byte per character
        while end < len(text) and end - m.end() < 2 and text[end] == "=":
            end += 1
        if (start and text[start - 1] in _GLUED) or (end < len(text) and (text[end] in _GLUED
                                                                          or text[end].isalnum())):
            continue
        blob = text[start:end]
        kind = _decoded_secret(blob)
        if kind is None:
            continue
        out += (text[pos:start], MARKER.format(kind))
        if seen is not None:
            seen(kind, blob)
        found[kind] += 1
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# a marker ending its line, then (after a comment sign or a quote) one opaque token opening
# the next line: the rest of a value wrapped there (a long token, a YAML folded scalar)
_CONTINUED = re.compile(r"\[REDACTED:(?P<kind>[a-z0-9-]{1,32})\][\"'`]?(?:[ \t]*[+&\\])?[ \t]*\r?\n"
                        r"(?P<lead>[ \t]*(?:(?:#|//|\*|--|;)[ \t]*)?[\"'`]?)"
                        r"(?P<v>[A-Za-z0-9+/_-]{8,512}+={0,2}+)(?![\w=:(\[]|\.\w)")


def _continued(text: str, found: Counter, seen: Seen | None) -> str:
    """Mask the opaque token that continues a masked value on the next line, line after line."""
    while _SEEN in text:
        masked = [0]

        def mask(m: re.Match[str]) -> str:
            value = m.group("v")
            if _SNAKE_NAME.fullmatch(value) or not (_random_looking(value) or _high_entropy(value)) \
                    or _placeholder(value):
                return m.group(0)
            kind = m.group("kind")
            masked[0] += 1
            found[kind] += 1
            if seen is not None:
                seen(kind, value)
            return m.group(0)[:m.start("v") - m.start()] + MARKER.format(kind)
        text = _CONTINUED.sub(mask, text)
        if not masked[0]:
            break
    return text


def redact(text: str) -> tuple[str, Counter]:
    """Return ``text`` with every secret replaced by a marker, and a Counter kind -> removed."""
    return _scrub(text, None)


def redact_strings(value: object) -> tuple[object, Counter]:
    """``value`` (JSON-like: dicts, lists, strings) with every string redacted, and the counts.

    One pass over all strings joined decides whether any needs masking, so a clean
    document costs one scan."""
    strings: list[str] = []
    _walk(value, strings.append)
    secrets = secrets_in("\n".join(dict.fromkeys(strings)))     # each distinct string once
    if not secrets:
        return value, Counter()
    found: Counter = Counter()
    derived = _derived_forms(secrets)

    def clean(text: str) -> str:
        masked, counts = redact(text)
        found.update(counts)
        return derived(masked, found)
    return _walk(value, None, clean), found


DERIVED_MIN = 8      # a masked value shorter than this is not sought in other forms


def _derived_forms(secrets: list[tuple[str, str]]) -> Callable[[str, Counter], str]:
    """A function masking, in any string, the forms a tool derives from a secret it was given:
    the secret lower-cased, or as an identifier (graphify's node ids: lower-cased, each run of
    other characters one ``_``), wherever a found secret stands in one of them."""
    kinds: dict[str, str] = {}
    for kind, original in secrets:
        low = original.lower()
        for form in (low, re.sub(r"[^0-9a-z]+", "_", low).strip("_")):
            if len(form) >= DERIVED_MIN:
                kinds.setdefault(form, kind)
    if not kinds:
        return lambda text, found: text
    pattern = re.compile("|".join(map(re.escape, sorted(kinds, key=len, reverse=True))), re.IGNORECASE)

    def mask(text: str, found: Counter) -> str:
        def one(m: re.Match[str]) -> str:
            kind = kinds[m.group(0).lower()]
            found[kind] += 1
            return MARKER.format(kind)
        return pattern.sub(one, text)
    return mask


def _walk(value: object, visit: Callable[[str], None] | None, change: Callable[[str], str] | None = None):
    if isinstance(value, str):
        if visit is not None:
            visit(value)
        return change(value) if change is not None else value
    if isinstance(value, dict):
        return {_walk(k, visit, change): _walk(v, visit, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, visit, change) for v in value]
    return value


def secrets_in(text: str) -> list[tuple[str, str]]:
    """(kind, original text) for every span ``redact`` would mask, in the order it masks them."""
    spans: list[tuple[str, str]] = []
    _scrub(text, lambda kind, value: spans.append((kind, value)))
    return spans


def _apply(rule: _Rule, text: str, view: str, found: Counter, seen: Seen | None) -> str:
    """Match ``rule`` over ``view`` (``text`` or its lower-cased copy); splice markers into ``text``."""
    marker = MARKER.format(rule.kind)
    out, pos = [], 0
    for m in rule.pattern.finditer(view):
        span = rule.pick(m, text)
        if span is None or span[0] < pos:     # refused, or inside a phrase masked already
            continue
        out += (text[pos:span[0]], marker)
        if seen is not None:
            seen(rule.kind, text[span[0]:span[1]])
        pos = span[1]
        found[rule.kind] += 1
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)
