"""The one tokenizer: the build side and the query side both call ``tokenize``.

A token stream keeps qualified and compound identifiers whole *and* split:
``Session.send`` yields ``session.send``, ``session``, ``send``;
``SessionRedirectMixin`` yields ``sessionredirectmixin``, ``session``,
``redirect``, ``mixin``. Plain words are lower-cased and lightly stemmed.

Chinese, Japanese and Korean are written without spaces between words: a run of
their characters yields overlapping character bigrams (as Lucene's CJKAnalyzer
and Elasticsearch's ``cjk_bigram`` do), each script's stretch apart, and a Latin
name written against it (``clickでサブコマンド``) is a word of its own. Hiragana
yields nothing: it is the grammar (で, を, には, ですか), found on every Japanese page.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from loci.kernel.lazyre import LazyPattern

# the scripts written without spaces between words: Han (with 々〆〇), Katakana (with ー and the
# half-width forms), Hangul; Hiragana, their grammar, separates words and yields none. Code point
# ranges, not a character class at import: compiling a class of these ranges costs a process
# 5-15 ms each (the regex compiler walks every code point), so the patterns compile on first use,
# when a text holds such a character
_HAN = ((0x3005, 0x3007), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F))
_KATAKANA = ((0x30A1, 0x30FA), (0x30FC, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F))
_HANGUL = ((0x1100, 0x11FF), (0x3131, 0x318E), (0xAC00, 0xD7A3))
_HIRAGANA = ((0x3041, 0x3096), (0x309D, 0x309F))


def _class(*scripts) -> str:
    return "[" + "".join(f"{chr(a)}-{chr(b)}" for script in scripts for a, b in script) + "]"


_CJK_RUN = LazyPattern(_class(_HAN, _KATAKANA, _HANGUL, _HIRAGANA) + "+")
_CJK_WORD = LazyPattern("|".join(_class(s) + "+" for s in (_HAN, _KATAKANA, _HANGUL)))   # one script's stretch
_CJK_FLOOR = "\u3005"   # no CJK word character (Hangul's old jamo aside) is below this one


def spaced(text: str) -> str:
    """``text`` with a space on each side of every run of CJK characters, so that a word never spans
    a boundary between them and Latin letters ("clickでサブコマンド" -> "click でサブコマンド");
    ``text`` itself when it holds none (checked at C speed, the patterns left uncompiled)."""
    if text.isascii() or max(text) < _CJK_FLOOR:
        return text
    return _CJK_RUN.sub(r" \g<0> ", text)


def is_cjk(char: str) -> bool:
    """Is ``char`` (one character, or "") a CJK character?"""
    return bool(char) and char >= "\u1100" and _CJK_RUN.fullmatch(char) is not None


# an identifier, optionally qualified with '.', '::' or '-' (Session.send, a::b, sqlite-utils)
_TOKEN = re.compile(r"[^\W\d][\w]*(?:(?:\.|::|-)[^\W\d][\w]*)*|\d{2,}")
# ".env" after a space, a quote, a bracket or a slash (not "os.environ", not a sentence's end):
# the dot found first (the fast part), what precedes it read after
_DOT_NAME = re.compile(r"\.([^\W\d_][^\W_]*)\b")
_BEFORE_DOT = frozenset(" \t\n\r\"'`([{<,;:=/*")
# a plural acronym ("URLs", "IDs") is one part: split at its last capital it made "ur" + "ls"
_CAMEL = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_A-Za-z]+")
_PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each etc few for from further get gets got had has hasn have haven having he
    her here hers herself him himself his how however i if in into is isn it its itself just
    let like ll me might more most much must my myself no nor not now of off on once one only or
    other our ours ourselves out over own per re same shall she should shouldn so some such than
    that the their theirs them themselves then there these they this those through to too under
    until up upon us use used uses using ve very via want was wasn way we well were weren what
    when where whether which while who whom whose why will with within without won would wouldn
    yes yet you your yours yourself yourselves s t d m o y e g eg ie instead something anything
    thing things make makes made need needs needed able really still even""".split()
)


def _stem(word: str) -> str:
    """A deliberately small plural/inflection folder; it only has to be consistent.

    ``cookie``/``cookies`` -> ``cooki``, ``dependency``/``dependencies`` -> ``dependenci``.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "i"
    elif word.endswith(("ss", "us", "is", "ous")):
        return word
    elif word.endswith("es") and word[-3] in "sxz" or word.endswith(("ches", "shes")):
        word = word[:-2]
    elif word.endswith("s"):
        word = word[:-1]
    if word.endswith("ie") and len(word) > 4:
        word = word[:-1]
    elif word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    return word


def identifier_parts(name: str) -> list[str]:
    """``run_agent_turn`` -> [run, agent, turn]; ``HTTPAdapter`` -> [http, adapter]."""
    parts: list[str] = []
    for piece in re.split(r"[_\W]+", name):
        if piece:
            parts.extend(_singular(m.group(0)).lower() for m in _CAMEL.finditer(piece))
    return parts


def _singular(word: str) -> str:
    """A plural acronym's singular ("URLs" -> "URL"); any other word as it is."""
    return word[:-1] if _PLURAL_ACRONYM.fullmatch(word) else word


def _is_compound(word: str) -> bool:
    return "_" in word.strip("_") or (any(c.isupper() for c in word[1:]) and not word.isupper()
                                      and not _PLURAL_ACRONYM.fullmatch(word))


def _emit_word(word: str, out: list[str]) -> None:
    word = _singular(word)
    lower = word.lower()
    if _is_compound(word):
        out.append(lower.strip("_"))
        for part in identifier_parts(word):
            if len(part) > 1 and part not in STOPWORDS:
                out.append(_stem(part))
        return
    if len(lower) > 1 and lower not in STOPWORDS:
        out.append(_stem(lower))


# what redaction leaves in place of a secret (loci_pipeline.redact.MARKER): no evidence of any topic
_MASK = re.compile(r"\[REDACTED:[\w-]*\]")


@lru_cache(maxsize=64)
def question_words(question: str) -> tuple[str, ...]:
    """A question's tokens, read once per process however many layers and scopes ask for them
    (the router, the routing read, every scope's search and structure lookup)."""
    return tuple(tokenize(question))


def tokenize(text: str) -> list[str]:
    """Every routing/search token of ``text``, in order, qualified names kept whole;
    redaction masks yield none."""
    if "[REDACTED:" in text:
        text = _MASK.sub(" ", text)
    out: list[str] = []
    plain = text
    text = spaced(text)
    for raw in _TOKEN.findall(text):
        if text is not plain and raw[0] >= _CJK_FLOOR and _CJK_RUN.fullmatch(raw):
            out.extend(cjk_bigrams(raw))
        elif len(raw) <= 80:  # longer is a blob, not a word
            out.extend(_raw_tokens(raw))
    if "." in text:   # a dotfile or an extension as written (".env", ".ipynb"): a name of its own
        out.extend("." + m.group(1).lower() for m in _DOT_NAME.finditer(text)
                   if (m.start() == 0 or text[m.start() - 1] in _BEFORE_DOT) and len(m.group(1)) <= 80)
    return out


def cjk_bigrams(run: str) -> list[str]:
    """A run of CJK characters' tokens: each script's stretch as overlapping bigrams ("进度条" ->
    "进度", "度条"), a stretch of one character as itself; hiragana stretches yield none."""
    out: list[str] = []
    for word in _CJK_WORD.findall(run):
        out.extend(word[i:i + 2] for i in range(max(1, len(word) - 1)))
    return out


@lru_cache(maxsize=1 << 17)
def _raw_tokens(raw: str) -> tuple[str, ...]:
    """The tokens of one matched word (words repeat, so this is cached)."""
    out: list[str] = []
    if "." in raw or "::" in raw or "-" in raw:
        pieces = re.split(r"\.|::|-", raw)
        if all(len(p) > 1 for p in pieces) or "." in raw or "::" in raw:
            out.append(".".join(p.lower() for p in pieces) if "-" not in raw else raw.lower())
        for piece in pieces:
            _emit_word(piece, out)
    else:
        _emit_word(raw, out)
    return tuple(out)


def surface_forms(text: str) -> dict[str, str]:
    """token -> the first word of ``text`` it came from, for showing tokens to people."""
    out: dict[str, str] = {}
    for raw in _TOKEN.findall(text):
        for tok in tokenize(raw):
            out.setdefault(tok, raw if tok == raw.lower() or "." in tok or len(tokenize(raw)) == 1 else tok)
    return out


# code abbreviates what prose spells out: a question's word also looks for its short form
_ABBREVIATIONS = {
    "directory": "dir", "configuration": "config", "repository": "repo", "authentication": "auth",
    "authorization": "auth", "environment": "env", "database": "db", "message": "msg",
    "argument": "arg", "parameter": "param", "attribute": "attr", "implementation": "impl",
    "initialize": "init", "initialise": "init", "string": "str", "integer": "int", "number": "num",
    "length": "len", "maximum": "max", "minimum": "min", "source": "src", "destination": "dst",
    "temporary": "tmp", "request": "req", "response": "resp", "context": "ctx", "function": "func",
    "command": "cmd", "package": "pkg", "library": "lib", "documentation": "doc",
    "dependency": "dep", "specification": "spec", "version": "ver", "column": "col",
    "index": "idx", "filesystem": "fs", "application": "app", "utility": "util",
    "statistic": "stat", "information": "info", "error": "err", "reference": "ref",
}
ABBREVIATIONS: dict[str, str] = {}
for _long, _short in _ABBREVIATIONS.items():
    for _tok in tokenize(_long):
        ABBREVIATIONS.setdefault(_tok, _short)


def words(text: str) -> list[str]:
    """Lower-cased surface words (no stemming, no stopword removal), for grammatical gates."""
    return re.findall(r"[^\W_]+(?:'[^\W_]+)?", text.lower())


@lru_cache(maxsize=1)
def signature() -> str:
    """Changes whenever the tokenizer's rules change (the hash of this module)."""
    import hashlib  # here: OpenSSL costs a one-shot query 3.5 MB it never needs

    return hashlib.sha1(Path(__file__).read_bytes()).hexdigest()[:12]
