"""A question, read once: every reading the router, search and structure take of it.

``Question`` holds the text and computes each reading (its words, evidence tokens, shape,
language, deixis, character n-grams...) the first time one is asked for, then keeps it. `ask`
makes one per question and hands the same value to the router, to every scope's search and
to structure, so none of them reads the text again. Functions that still take a plain string
(tests, the bench, calibration) go through ``Question.of``, which wraps it once.

``Plan`` is what a caller asked of the answer (how many passages, the gate, the project's own
files first): one value passed down instead of the same options threaded through each layer.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from loci.kernel import language, runtimes
from loci.kernel.tokens import question_words, tokenize
from loci.query import grammar


_TYPOGRAPHIC = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def plain_quotes(text: str) -> str:
    """``text`` with typographic apostrophes and quotes (’ ‘ “ ”, as a phone or a word processor
    types them) made plain, so that "What’s this project for?" reads as "What's ...". Other
    languages' quotes (« », „ “) are left as they are."""
    return text.translate(_TYPOGRAPHIC)


@dataclass(frozen=True, eq=False)
class Question:
    text: str

    @classmethod
    def of(cls, question: "Question | str") -> "Question":
        """The question read once; a string's typographic quotes made plain (``plain_quotes``)."""
        return question if isinstance(question, Question) else cls(plain_quotes(question))

    def __str__(self) -> str:
        return self.text

    @cached_property
    def words(self) -> tuple[str, ...]:
        """Every token of the question, in order (``loci.kernel.tokens.question_words``)."""
        return tuple(question_words(self.text))

    @cached_property
    def other_spellings(self) -> dict[str, str]:
        """Its tokens that are words it writes on their own, each with the same word spelled the
        other way ("colour": "color"; ``loci.query.spelling``), in question order."""
        from loci.query.spelling import OTHER_SPELLING, spelled_words

        spelled = spelled_words(self.text)
        return {t: OTHER_SPELLING[t] for t in self.words if t in spelled and t in OTHER_SPELLING}

    @cached_property
    def enumerative(self) -> bool:
        """Asks for a set of projects ("which of my projects ...")."""
        return grammar.is_enumerative(self.text)

    @cached_property
    def tokens(self) -> list[str]:
        """The evidence tokens (``evidence_tokens``), as its own reading of enumeration asks."""
        return self.evidence_tokens(self.enumerative)

    def evidence_tokens(self, enumerative: bool) -> list[str]:
        """Its tokens, each once: not an enumeration's frame words, and, in a question written in
        another language, not that language's function words ("de", "les", "und"): they say
        which language it is in, never what it is about."""
        skip = language.foreign_function_words(self.text) if self.reads_as_foreign_prose else set()
        seen: dict[str, None] = {}
        for tok in self.words:
            if enumerative and tok in grammar.ENUM_FRAME or tok in skip:
                continue
            seen.setdefault(tok, None)
        for tok in runtimes.asked_tokens(self.text):   # "Python 3.9", "Node 20 or newer": declared ranges
            seen.setdefault(tok, None)
        return list(seen)

    @cached_property
    def foreign(self) -> bool:
        """Not written in English, by the question's own (shorter) bar: the multilingual encoder's cue."""
        return language.question_is_foreign(self.text)

    @cached_property
    def reads_as_foreign_prose(self) -> bool:
        """Not English by the bar prose is held to (eight words or more): the router's cue to drop
        another language's function words and to lower the English encoder's bar."""
        return language.is_foreign(self.text)

    @cached_property
    def other_script(self) -> bool:
        """Mostly in another script: the English encoder reads it as noise."""
        return language.in_other_script(self.text)

    @cached_property
    def deixis(self) -> str | None:
        """How it points at a project ("strong", "own", ...; ``grammar.deixis``). A question about a
        project that leaves the project unsaid ("what changed recently?", "show me a quick
        example": ``about_project`` with no subject) points at one as "this project" does."""
        found = grammar.deixis(self.text)
        if found is None and self.about_project is not None and not self.about_project[1]:
            return "strong"
        return found

    @cached_property
    def about_project(self) -> tuple[str, str] | None:
        """(kind, subject) when it asks about a project itself: what it is, how it is used, what
        changed, which version (``grammar.about_project``)."""
        return grammar.about_project(self.text)

    @cached_property
    def why(self) -> bool:
        return grammar.asks_why(self.text)

    @cached_property
    def about_change(self) -> bool:
        """It asks why, or about a change: a changelog entry answers it as well as the docs do."""
        return self.why or grammar.asks_about_change(self.text)

    @cached_property
    def languages(self) -> frozenset[str]:
        """The language facts of the ecosystem it says the asker works in ("my Node CLI":
        javascript, typescript; ``grammar.named_languages``)."""
        return grammar.named_languages(self.text)

    @cached_property
    def quoted(self) -> tuple[str, ...]:
        """The strings it quotes (``grammar.quoted_strings``): text the asker has seen."""
        return grammar.quoted_strings(self.text)

    @cached_property
    def language_tokens(self) -> frozenset[str]:
        """The tokens of the words that name its ecosystem ("Node.js": node.js, node, js)."""
        return frozenset(t for w in grammar.ecosystem_words(self.text) for t in tokenize(w))

    @cached_property
    def unnamed_language_words(self) -> frozenset[str]:
        """Language facts spelled as everyday words ("shell", "go") that it uses as words, not as
        the language's name: no fact of the question (``grammar.PLAIN_WORD_FACTS``)."""
        return grammar.PLAIN_WORD_FACTS - self.languages

    @cached_property
    def pairs(self) -> list[str]:
        """Adjacent word pairs ("click option" may be written ``click.option``)."""
        return list(grammar.adjacent_pairs(self.text))

    @cached_property
    def shape(self) -> grammar.Shape:
        """Which structural questions it asks (define, callers, callees, chain)."""
        return grammar.question_shape(self.text)

    @cached_property
    def _grams(self) -> dict[tuple[int, int], Counter]:
        return {}

    def grams(self, lo: int, hi: int) -> Counter:
        """Its character n-grams of ``lo``..``hi`` letters within words, counted (each scope's
        char-gram ranker reads the same ones)."""
        if (lo, hi) not in self._grams:
            from loci.query.lexical import char_wb_ngrams

            self._grams[(lo, hi)] = Counter(char_wb_ngrams(self.text, lo, hi))
        return self._grams[(lo, hi)]


@dataclass(frozen=True)
class Plan:
    """What the caller asked of an answer: ``k`` passages a scope, the grounding ``gate`` (off
    for ``--scope``), the project's own files first (``prefer_project_docs``: the question
    points at the project it is asked from), its own words first (``about``: the question asks
    what the scope is or how it is used)."""

    k: int = 5
    gate: bool = True
    prefer_project_docs: bool = False
    project_named: bool = False  # ... because the question names this project (not asked inside it)
    about: str | None = None   # a kind of ``grammar.about_project`` ("overview", "usage", ...): the question
                               # asks about this scope itself, answered from its own words first
    cite: tuple[str, ...] = ()   # an enumeration member's words (``router.cited_words``): a passage holding
                                 # one leads its answer
