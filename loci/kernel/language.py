"""Is a text written in English, and is a file a translated copy? Both sides share these.

Prose in another language is told apart from English prose and from code by the
words no writer can avoid: English text is full of "the", "of", "to", "is";
Spanish of "de", "que", "los"; German of "der", "und", "ist". A text whose
function words are mostly another language's, or whose letters are mostly of
another script (Cyrillic, CJK, Hangul, Arabic...), is foreign. Code and tables
carry few function words of any language and stay English (unjudged). A path
with a language tag (``README.es.md``, ``docs/zh-CN/``) names a translation
(``translation_language``). Pure: no model, no I/O.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

ENGLISH = frozenset("""the of and to in is that for it with as on be this are by an or you can
    from not if your will which when how what do does use used using should into an its their
    this these there have has was were been but also all any each than then them they we our""".split())

# the most frequent function words of the languages READMEs are most often translated into,
# minus every word that is also English or common in English technical prose (a, in, on,
# die, son, plus, os, del, es, mit, ci, num, non, ...)
FOREIGN = frozenset("""
    de la el los las del que por con para una es al lo como más pero sus le ya este si porque
    esta entre cuando muy sin sobre también hasta hay donde desde todo nos durante todos uno les
    ni otros ese eso ante ellos esto antes algunos qué unos otro otras otra él tanto esa estos
    cómo puedo hago cuál
    le les des et du est pour dans qui pas sur au avec ce il ne se par plus sont son mais ou
    aux lui nous vous leur ses été être cette tout elle ces je sa aussi même ont fait comment
    peut une un sont quand
    der und den von zu das mit sich des auf für ist im dem nicht ein eine als auch es werden
    aus er hat dass sie nach wird bei einer um sind noch wie einem über einen zum war haben
    nur oder aber vor zur bis mehr durch kann wenn ich wir ohne
    do da em um com não os se na mais dos das à seu sua ou quando muito já eu só pelo pela até
    isso depois sem mesmo aos seus quem nas esse eles você essa num nem suas meu às minha numa
    pelos elas qual nós lhe deles dele este isto faço como
    di il che per è non sono della con si dei delle gli nel questo più anche ho ci del degli
    alla nella faccio
    het een van zijn niet op voor met dat ook maar bij nog wat wordt er naar deze worden kan
    """.split()) - ENGLISH - frozenset("""per op em um os ci del es son plus mit num non""".split())

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class Reading:
    """What the language test saw in a text."""

    words: int
    english: int          # English function words
    foreign: int          # function words of another language
    latin_letters: int
    other_letters: int    # letters of another script

    @property
    def other_script_share(self) -> float:
        total = self.latin_letters + self.other_letters
        return self.other_letters / total if total else 0.0


_LATIN = re.compile("[\x00-\x7f\u00c0-\u024f]+")   # ASCII and the Latin-1 Supplement to Extended-B


def read(text: str) -> Reading:
    words = _WORD.findall(text.lower())
    letters = "".join(words)
    other = len(_LATIN.sub("", letters))
    latin = len(letters) - other
    english = sum(w in ENGLISH for w in words)
    foreign = sum(w in FOREIGN for w in words)
    return Reading(len(words), english, foreign, latin, other)


OTHER_SCRIPT_SHARE = 0.5   # past this share of letters outside the Latin script, a text is in another script


def in_other_script(text: str) -> bool:
    """Mostly written in another script (CJK, Cyrillic, Arabic...): an English encoder reads noise."""
    return read(text).other_script_share >= OTHER_SCRIPT_SHARE


def is_foreign(text: str, min_words: int = 8, script_share: float = OTHER_SCRIPT_SHARE,
               function_share: float = 0.08) -> bool:
    """True when ``text`` reads as prose in a language other than English.

    Either most of its letters are of another script, or at least
    ``function_share`` of its words are another language's function words and
    they outnumber the English ones. Short texts (under ``min_words`` words) and
    code (few function words of any language) are never foreign.
    """
    r = read(text)
    if r.words == 0:
        return False
    if r.other_script_share >= script_share and r.other_letters >= min_words:
        return True
    if r.words < min_words:
        return False
    return r.foreign >= function_share * r.words and r.foreign > 2 * r.english


def foreign_function_words(text: str) -> set[str]:
    """The other-language function words in ``text`` (lower-cased), to drop from a question's evidence."""
    return {w for w in _WORD.findall(text.lower()) if w in FOREIGN}


# --- translated copies -------------------------------------------------------------------

# ISO 639-1 codes of the languages documentation is translated into ("en" is the original)
LANGUAGE_CODES = frozenset("""af ar az be bg bn bs ca cs cy da de el eo es et eu fa fi fil fr ga gl
    he hi hr hu hy id is it ja ka kk km kn ko ku lt lv mk ml mn mr ms my nb ne nl nn no pa pl ps
    pt ro ru si sk sl sq sr sv sw ta te th tl tr uk ur uz vi zh""".split())
_REGION = r"(?P<region>[-_](?:[A-Za-z]{2}|Hans|Hant|hans|hant|\d{3}))?"
_NAME_TAG = re.compile(r"^(?P<stem>.+?)(?P<sep>[._-])(?P<lang>[A-Za-z]{2,3})" + _REGION + r"$")
_DIR_TAG = re.compile(r"^(?P<lang>[A-Za-z]{2,3})" + _REGION + r"$")
# a bare code after '-' or '_' tags only a file every project has (``readme-fr``, not ``what-is``)
_DOC_NAME = re.compile(r"(?i)^(readme|contributing|changelog|changes|code[-_]of[-_]conduct|index|security|faq|"
                       r"getting[-_]started|quickstart|install(ation)?|usage|guide|tutorial)$")
TRANSLATION_DIRS = frozenset({"i18n", "l10n", "translations", "translation", "locale", "locales", "lang"})


TRANSLATED_KINDS = ("readme", "doc")
"""The chunk kinds a translated copy is told apart in (``is_translated_copy``)."""


def is_translated_copy(kind: str, relpath: str) -> bool:
    """A chunk of a translated copy of the project's prose (``README.es.md``, ``docs/zh-CN/``): the
    English encoder reads it as noise, so routing leaves it out and search demotes it."""
    return kind in TRANSLATED_KINDS and translation_language(relpath) is not None


@lru_cache(maxsize=8192)   # search asks it of every prose candidate, question after question
def translation_language(relpath: str) -> str | None:
    """The language a prose file's path says it is a translation into, else None.

    ``README.es.md``, ``README-fr.md``, ``Readme_zh-CN.md``, ``guide.de.md``,
    ``docs/zh-CN/...`` and ``i18n/...`` are translations; ``docs/en/...``,
    ``README.md`` and ``what-is.md`` are not: a bare code after '-' or '_' tags
    only a readme-like name, and a bare two-letter folder (``docs/fr/``, but also
    ``src/ml/``) is too ambiguous to count (``is_foreign`` reads the text).
    """
    parts = [p for p in relpath.replace("\\", "/").split("/") if p]
    if not parts:
        return None
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1].strip(".") else parts[-1]
    m = _NAME_TAG.match(stem)
    if m and m.group("lang").lower() in LANGUAGE_CODES and (
            m.group("region") or m.group("sep") == "." or _DOC_NAME.match(m.group("stem"))):
        return m.group("lang").lower()
    for folder in parts[:-1]:
        if folder.lower() in TRANSLATION_DIRS:
            return "?"
        m = _DIR_TAG.match(folder)
        if m and m.group("region") and m.group("lang").lower() in LANGUAGE_CODES:
            return m.group("lang").lower()
    return None



QUESTION_MIN_WORDS = 5   # a question is shorter than the prose ``is_foreign`` was tuned on


@lru_cache(maxsize=64)
def question_is_foreign(question: str) -> bool:
    """True when a question is not written in English (another script, or another language's
    function words): the question an English encoder cannot read."""
    return is_foreign(question, min_words=QUESTION_MIN_WORDS)
