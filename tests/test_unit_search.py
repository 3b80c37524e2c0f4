"""loci.query.search: rankers fused, weighed by kind, gated on grounding; pure, on in-memory scores."""
from __future__ import annotations

import pytest

from loci.query.question import Plan
from loci.query.search import (
    BM25_GROUNDED, FACT_FILE_BASE, GRAMS_GROUNDED, RANKER_WEIGHTS, Meaning, fuse, rank, search_scope,
)

DOC = ("doc", "source", 0.0)


def test_fuse_renormalises_over_the_rankers_that_scored():
    assert fuse({"bm25": {1: 4.0, 2: 2.0}, "grams": None, "semantic": {}}) == {1: 1.0, 2: 0.5}
    both = fuse({"bm25": {1: 2.0}, "grams": {2: 0.5}})
    w = RANKER_WEIGHTS["bm25"] + RANKER_WEIGHTS["grams"]
    assert both == pytest.approx({1: RANKER_WEIGHTS["bm25"] / w, 2: RANKER_WEIGHTS["grams"] / w})
    assert fuse({"bm25": None, "grams": {}}) == {}


def test_each_ranker_is_scaled_to_its_own_best():
    assert fuse({"bm25": {1: 100.0, 2: 50.0}}) == fuse({"bm25": {1: 2.0, 2: 1.0}})


def test_an_ungrounded_passage_is_dropped_unless_the_gate_is_off():
    bm25 = {1: BM25_GROUNDED + 1, 2: BM25_GROUNDED / 10}
    assert [d for d, _ in rank(bm25, None, {1: DOC, 2: DOC})] == [1]
    assert [d for d, _ in rank(bm25, None, {1: DOC, 2: DOC}, gate=False)] == [1, 2]


def test_a_char_gram_match_alone_grounds_a_passage():
    assert [d for d, _ in rank(None, {3: GRAMS_GROUNDED}, {3: DOC})] == [3]
    assert rank(None, {3: GRAMS_GROUNDED / 2}, {3: DOC}) == []


def test_a_close_meaning_above_the_scopes_floor_grounds_a_passage_the_words_missed():
    meaning = Meaning({5: 0.8, 6: 0.1})
    got = [d for d, _ in rank(None, None, {5: DOC, 6: DOC}, semantic=meaning, semantic_floor=0.5)]
    assert got == [5]
    assert rank(None, None, {5: DOC}, semantic=meaning, semantic_floor=None) == []


def test_a_test_file_counts_less_than_shipped_code():
    kinds = {1: ("doc", "test", 0.0), 2: ("doc", "source", 0.0)}
    got = rank({1: 10.0, 2: 9.0}, None, kinds)
    assert [d for d, _ in got] == [2, 1]


def test_a_translated_copy_ranks_below_its_original():
    got = rank({1: 10.0, 2: 9.0}, None, {1: DOC, 2: DOC}, demoted=[1])
    assert [d for d, _ in got] == [2, 1]


def test_commit_bodies_count_less_unless_the_question_asks_why():
    kinds = {1: ("commit", "source", 0.0), 2: ("doc", "source", 0.0)}
    assert [d for d, _ in rank({1: 10.0, 2: 8.0}, None, kinds, rationale=False)] == [2, 1]
    assert [d for d, _ in rank({1: 10.0, 2: 8.0}, None, kinds, rationale=True)] == [1, 2]


def test_a_fact_file_enters_grounded_even_when_no_ranker_touched_it():
    got = rank({1: 10.0}, None, {1: DOC, 9: ("readme", "docs", 0.0)}, fact_files=[9], k=2)
    assert [d for d, _ in got] == [1, 9] and dict(got)[9] >= FACT_FILE_BASE


def test_changelog_entries_follow_the_first_k_other_passages_when_no_change_is_asked():
    bm25 = {1: 10.0, 2: 9.0, 3: 8.0, 4: 7.0, 5: 6.0}
    kinds = {d: DOC for d in bm25}
    got = rank(bm25, None, kinds, k=2, changelog=[1, 2])
    assert [d for d, _ in got] == [3, 4, 1, 2, 5]


def test_changelog_entries_keep_their_place_unless_named_and_follow_the_other_passages_when_those_run_out():
    bm25 = {1: 10.0, 2: 9.0, 3: 8.0}
    kinds = {d: DOC for d in bm25}
    assert [d for d, _ in rank(bm25, None, kinds, k=2)] == [1, 2, 3]            # no changelog named: a change asked
    assert [d for d, _ in rank(bm25, None, kinds, k=3, changelog=[1])] == [2, 3, 1]
    assert [d for d, _ in rank(bm25, None, kinds, k=5, changelog=[1])] == [2, 3, 1]   # the docs run out


def test_ties_are_broken_by_row_and_the_list_is_cut_at_three_times_k():
    bm25 = {d: 5.0 for d in range(20)}
    got = rank(bm25, None, {d: DOC for d in range(20)}, k=2)
    assert [d for d, _ in got] == [0, 1, 2, 3, 4, 5]


class FakeLex:
    """What search_scope reads of a scope's lexical index."""

    lo, hi = 3, 5   # its char-gram lengths

    def __init__(self, bm25: dict, grams: dict, kinds: dict, prose: dict | None = None):
        self._bm25, self._grams, self._kinds, self._prose = bm25, grams, kinds, prose or {}
        self.asked: list = []

    def bm25_scores(self, tokens):
        self.asked.append(list(tokens))
        return self._bm25

    def gram_scores(self, question, wanted=None):
        return self._grams

    def prose_paths(self):
        return self._prose

    def chunk_kinds(self, rows):
        return {r: self._kinds[r] for r in rows if r in self._kinds}

    def chunks(self, rows):      # no texts: the passages lend no words
        return {}

    def term_scales(self, terms):
        return {}


def test_search_scope_ranks_what_the_lexical_rankers_found():
    lex = FakeLex({1: 4.0, 2: 1.0}, {2: 0.5}, {1: DOC, 2: DOC})
    got = search_scope("how are sprockets calibrated?", ["sprocket", "calibr"], lex, plan=Plan(k=5))
    assert [d for d, _ in got] == [2, 1]       # found by both rankers beats the best of one
    assert lex.asked == [["sprocket", "calibr"]]


def test_search_scope_returns_nothing_when_no_ranker_found_anything():
    assert search_scope("anything at all?", ["anything"], FakeLex({}, {}, {}), plan=Plan(k=5)) == []


def test_search_scope_asks_the_vectors_about_the_words_candidates():
    seen = []

    def meaning(candidates):
        seen.append(set(candidates))
        return Meaning({7: 0.9})

    lex = FakeLex({1: 4.0}, None, {1: DOC, 7: DOC})
    got = search_scope("q?", ["q"], lex, semantic=meaning, semantic_floor=0.5)
    assert seen == [{1}] and set(dict(got)) == {1, 7}


def test_a_readme_translation_is_demoted_for_a_question_in_english():
    prose = {1: "README.md", 2: "README.es.md"}
    lex = FakeLex({1: 9.0, 2: 10.0}, None, {1: DOC, 2: DOC}, prose)
    got = search_scope("how do I install the sprocket?", ["install", "sprocket"], lex)
    assert [d for d, _ in got] == [1, 2]


class WordsLex(FakeLex):
    """A scope whose BM25 answers per word, with passages' texts and words' rarity (``term_scales``)."""

    def __init__(self, postings: dict[str, dict[int, float]], texts: dict[int, str], scales: dict[str, float]):
        super().__init__({}, None, {d: DOC for d in texts})
        self.postings, self.texts, self.scales = postings, texts, scales

    def bm25_scores(self, tokens):
        self.asked.append(list(tokens))
        out: dict[int, float] = {}
        for t in tokens:
            for d, v in self.postings.get(t, {}).items():
                out[d] = out.get(d, 0.0) + v
        return out or None

    def chunks(self, rows):
        return {r: {"text": self.texts[r], "heading": ""} for r in rows if r in self.texts}

    def term_scales(self, terms):
        return {t: self.scales[t] for t in terms if t in self.scales}


def test_the_passages_closest_in_meaning_lend_their_rarest_words_to_the_word_search():
    from loci.query.search import borrowed_terms

    texts = {7: "the ratchet pawl holds the sprocket", 8: "a ratchet spring", 9: "pawl spring ratchet details"}
    lex = WordsLex({"ratchet": {9: 3.0, 7: 1.0, 8: 1.0}, "pawl": {9: 2.0, 7: 1.0}}, texts,
                   {"the": 0.1, "ratchet": 2.0, "pawl": 3.0, "holds": 1.0, "sprocket": 1.5, "a": 0.1, "spring": 1.2})
    assert borrowed_terms(lex, [7, 8], own={"sprocket"}, n=2) == ["ratchet", "pawl"]   # held by both, then rarest
    # a paraphrase: its own words find nothing; meaning finds 7 and 8, and their words find 9, the answer
    got = search_scope("how does the clicking wheel stay put?", ["click", "wheel"], lex,
                       semantic=lambda cands: Meaning({7: 0.6, 8: 0.5}), semantic_floor=0.9)
    assert [d for d, _ in got] == [7, 9]     # 9 shares no word with the question, only with 7 and 8
    assert search_scope("how does the clicking wheel stay put?", ["click", "wheel"], lex, semantic=None) == []


def test_a_passage_only_the_borrowed_words_find_is_weighed_by_its_own_kinds():
    texts = {7: "the ratchet pawl holds the sprocket", 8: "a ratchet spring", 9: "pawl spring ratchet details"}
    lex = WordsLex({"ratchet": {9: 3.0, 7: 1.0, 8: 1.0}, "pawl": {9: 2.0, 7: 1.0}}, texts,
                   {"ratchet": 2.0, "pawl": 3.0, "sprocket": 1.5, "spring": 1.2})
    meaning = lambda cands: Meaning({7: 0.6, 8: 0.5})
    shipped = dict(search_scope("how does the clicking wheel stay put?", ["click", "wheel"], lex,
                                semantic=meaning, semantic_floor=0.9))
    lex._kinds[9] = ("comment", "test", 0.0)     # 9, found by no word of the question, is a test's comment
    in_a_test = dict(search_scope("how does the clicking wheel stay put?", ["click", "wheel"], lex,
                                  semantic=meaning, semantic_floor=0.9))
    assert in_a_test[9] < shipped[9]


@pytest.mark.parametrize("question, first", [
    ("How do I spread periodic tasks over the hour?", 2),                 # how it works: the docs first
    ("What changed about spreading periodic tasks in 2.0?", 1),          # a change: the entry keeps its place
    ("Why do periodic tasks spread over the hour now?", 1),              # a reason: changelogs give them
    ("Since which version are periodic tasks spread over the hour?", 1),
])
def test_a_changelog_entry_yields_to_the_docs_unless_the_question_asks_about_a_change(question, first):
    lex = FakeLex({1: 10.0, 2: 9.0}, {}, {1: DOC, 2: DOC}, prose={1: "CHANGELOG.rst", 2: "README.rst"})
    got = search_scope(question, ["periodic"], lex, plan=Plan(k=1))
    assert got[0][0] == first


class WordLex:
    """A scope whose BM25 knows which rows hold which word."""

    def __init__(self, holders: dict[str, dict[int, float]]):
        self.holders = holders

    def bm25_scores(self, tokens):
        out: dict[int, float] = {}
        for t in tokens:
            for d, v in self.holders.get(t, {}).items():
                out[d] = out.get(d, 0.0) + v
        return out or None


def test_a_cited_word_brings_the_best_ranked_passage_holding_it_first():
    from loci.query.search import cited_first

    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    got = cited_first(WordLex({".env": {3: 2.0, 4: 9.0}}), ranked, [".env"])
    assert [d for d, _ in got] == [3, 1, 2, 4] and got[0][1] > 0.9


def test_a_cited_word_no_ranked_passage_holds_brings_the_passage_its_bm25_ranks_first():
    from loci.query.search import cited_first

    ranked = [(1, 0.9), (2, 0.8)]
    got = cited_first(WordLex({"8080": {7: 1.0, 8: 3.0}}), ranked, ["no_color", "8080"])
    assert [d for d, _ in got] == [8, 1, 2]
    assert cited_first(WordLex({}), ranked, ["8080"]) == ranked


def test_a_changelog_entry_leads_on_a_cited_word_only_when_no_other_passage_holds_it():
    from loci.query.search import cited_first

    ranked = [(1, 0.9), (5, 0.8), (2, 0.7)]
    late = {5}.__contains__
    assert [d for d, _ in cited_first(WordLex({"mb": {5: 4.0, 6: 1.0}}), ranked, ["mb"], late)][0] == 6
    assert [d for d, _ in cited_first(WordLex({"mb": {5: 4.0}}), ranked, ["mb"], late)][0] == 5


class TextLex(WordLex):
    """A scope whose BM25 knows which rows hold which word, and whose rows have texts."""

    def __init__(self, texts: dict[int, str]):
        from loci.kernel.tokens import tokenize

        holders: dict[str, dict[int, float]] = {}
        for d, text in texts.items():
            for t in tokenize(text):
                holders.setdefault(t, {})[d] = holders.setdefault(t, {}).get(d, 0.0) + 1.0
        super().__init__(holders)
        self.texts = texts

    def chunks(self, rows):
        return {d: {"text": self.texts[d], "heading": None} for d in rows if d in self.texts}


def test_a_string_the_question_quotes_brings_the_passage_holding_it_verbatim_first():
    from loci.query.search import quoted_first

    lex = TextLex({1: "Numbers are aligned on the decimal point.", 2: "Tables print rows of numbers.",
                   3: 'print(tabulate([["Ver1", "18.0"]], disable_numparse=True))', 4: "Version 18 adds 0 padding."})
    ranked = [(1, 0.9), (2, 0.8), (4, 0.7)]
    got = quoted_first(lex, ranked, ["18.0"])
    assert [d for d, _ in got] == [3, 1, 2, 4] and got[0][1] > 0.9   # 4 holds "18" and "0", not "18.0"


def test_a_quoted_string_many_passages_hold_or_none_holds_changes_nothing():
    from loci.query.search import quoted_first

    lex = TextLex({d: f"the user record number {d}" for d in range(1, 8)})
    ranked = [(1, 0.9), (2, 0.8)]
    assert quoted_first(lex, ranked, ["user"]) == ranked          # held by seven passages: says nothing
    assert quoted_first(lex, ranked, ["512kb"]) == ranked         # held by none
    assert quoted_first(lex, ranked, ["-5"]) == ranked            # no word to look it up by


def test_the_quoted_strings_of_a_question():
    from loci.query.grammar import quoted_strings

    assert quoted_strings("strings like '18.0' get realigned") == ("18.0",)
    assert quoted_strings('it prints "too many arguments" and `--offset` fails; it\'s odd, isn\'t it') == (
        "too many arguments", "--offset")
    assert quoted_strings("the project's users' names") == ()
    # typographic quotes, as a phone or a word processor types them, are read as plain ones
    from loci.query.question import Question

    assert Question.of("it prints “too many arguments” for ‘18.0’; it’s odd").quoted == ("too many arguments", "18.0")


def test_a_quoted_string_whose_words_too_many_passages_hold_is_not_read_for():
    from loci.query.search import QUOTE_CANDIDATES, quoted_first

    texts = {d: f"option number {d} of many" for d in range(QUOTE_CANDIDATES + 5)}
    texts[999] = "Options: shown under their own heading"
    ranked = [(1, 0.9), (2, 0.8)]
    assert quoted_first(TextLex(texts), ranked, ["Options:"]) == ranked


def test_a_licence_text_is_held_back_unless_the_question_asks_about_the_licence():
    from loci.query.question import Question
    from loci.query.search import held_back

    prose = {1: "LICENSE", 2: "README.md", 3: "COPYING.txt", 4: "docs/licenses.md", 5: "src/license_check.py"}
    _, late = held_back(Question("How do I contribute?"), prose)
    assert [i for i in prose if late(i)] == [1, 3]   # a docs page about licences is no licence text
    _, late = held_back(Question("What license is this under?"), prose)
    assert not any(late(i) for i in prose)


def test_a_passage_and_its_window_are_one_answer_so_a_held_back_row_still_follows_k_others():
    from loci.query.search import after_the_docs, distinct

    rows = {1: {"path": "README.md", "line": 10, "text": "Keys are case-insensitive."},
            2: {"path": "README.md", "line": 10, "text": "case-insensitive. Keys are folded."},   # its tail's window
            3: {"path": "viper.go", "line": 5, "text": "Sub returns a new instance."},
            4: {"path": "util.go", "line": 9, "text": "Sub  returns a new\ninstance."},          # the same text
            5: {"path": "LICENSE", "line": 1, "text": "MIT License"}}
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6), (6, 0.55), (5, 0.5)]
    assert distinct(ranked, rows) == [(1, 0.9), (3, 0.7), (5, 0.5)]
    assert [i for i, _ in after_the_docs(distinct(ranked, rows), {5}, 2)] == [1, 3, 5]
