"""Inside the right scope, which passages come first (loci.query.search, SemanticSide.scores)."""
import numpy as np

from loci.kernel.config import DEFAULT_PARAMS
from loci.query.search import Meaning, rank, search_scope


class FakeLex:
    """The few LexicalIndex reads search_scope makes, from fixed scores."""

    lo, hi = 3, 5

    def __init__(self, bm25, grams, kinds):
        self._bm25, self._grams, self._kinds = bm25, grams, kinds

    def bm25_scores(self, tokens):
        return dict(self._bm25) or None

    def gram_scores(self, text, wanted=None):
        return dict(self._grams) or None

    def prose_paths(self):
        return {}

    def chunk_kinds(self, ids):
        return {i: self._kinds[i] for i in ids if i in self._kinds}

    def chunks(self, ids):      # no texts: the passages lend no words
        return {}

    def term_scales(self, terms):
        return {}


DOC = ("doc", "docs", 0.0)


def _vectors(cosines: dict[int, float], short_list: int):
    """A vector ranker that lists its ``short_list`` best rows and the cosines it is asked for."""
    asked: list[set[int]] = []

    def semantic(candidates):
        asked.append(set(candidates))
        best = sorted(cosines, key=lambda d: -cosines[d])[:short_list]
        return Meaning({d: cosines[d] for d in set(best) | set(candidates) if d in cosines})

    return semantic, asked


def test_the_vectors_are_asked_about_every_passage_the_words_found():
    lex = FakeLex({0: 9.0, 1: 2.0}, {0: 0.4, 2: 0.3}, {0: DOC, 1: DOC, 2: DOC, 3: DOC})
    semantic, asked = _vectors({0: 0.5, 1: 0.4, 2: 0.3, 3: 0.7}, short_list=1)
    search_scope("q", ["q"], lex, semantic=semantic)
    assert asked == [{0, 1, 2}]


def test_a_passage_outside_the_vectors_short_list_keeps_its_closeness_in_meaning():
    # row 0 is the words' best by far and close in meaning (0.55), but not the vectors' first;
    # row 1 is the vectors' only listed row and barely matches the words
    lex = FakeLex({0: 10.0, 1: 2.0}, {0: 0.4, 1: 0.1}, {0: DOC, 1: DOC})
    semantic, _ = _vectors({0: 0.55, 1: 0.6}, short_list=1)
    led = search_scope("q", ["q"], lex, semantic=semantic, semantic_led=True)
    assert [d for d, _ in led] == [0, 1]
    # what it did when a row outside the short list read as unrelated (cosine 0)
    listed_only = rank({0: 10.0, 1: 2.0}, {0: 0.4, 1: 0.1}, {0: DOC, 1: DOC}, semantic=Meaning({1: 0.6}),
                       semantic_led=True)
    assert [d for d, _ in listed_only] == [1, 0]


def test_a_docstring_or_comment_yields_to_equally_matching_docs_unless_the_question_asks_why():
    for code_kind in ("docstring", "comment"):
        kinds = {0: (code_kind, "source", 0.0), 1: DOC}
        bm25, grams = {0: 3.0, 1: 2.8}, {0: 0.5, 1: 0.48}
        assert [d for d, _ in rank(bm25, grams, kinds, rationale=False)] == [1, 0]
        assert [d for d, _ in rank(bm25, grams, kinds, rationale=True)] == [0, 1]


def test_how_much_code_passages_count_outside_a_why_question_is_a_parameter():
    from dataclasses import replace

    kinds = {0: ("comment", "source", 0.0), 1: DOC}
    bm25, grams = {0: 3.0, 1: 2.8}, {0: 0.5, 1: 0.48}
    even = replace(DEFAULT_PARAMS, outside_why=(("commit", 0.5),))
    assert [d for d, _ in rank(bm25, grams, kinds, rationale=False, params=even)] == [0, 1]


def test_the_semantic_side_returns_its_best_rows_and_the_rows_it_is_asked_about(monkeypatch):
    from loci.query import semantic_search
    from loci.query.semantic_search import SemanticSide

    monkeypatch.setattr(semantic_search, "TOP_SEMANTIC", 1)
    side = SemanticSide(layout=None, model="m", model_id="m")
    from types import SimpleNamespace

    from loci.query.semantic import StoredRows
    from loci.query.semantic_search import ScopeVectors

    side._vectors["s"] = ScopeVectors(list("abcd"), StoredRows(
        np.array([[1, 0], [0.8, 0.6], [0.6, 0.8], [-1, 0]], dtype=np.float32)))
    side._qvec["q"] = np.array([1, 0], dtype=np.float32)
    lex = SimpleNamespace(hashes=lambda: list("abcd"))
    got = side.scores("s", lex, "q", also={2, 3, 7})
    assert set(got) == {0, 2}               # the best row, and the asked rows that lean its way
    assert abs(got[2] - 0.6) < 1e-6
    assert set(side.scores("s", lex, "q")) == {0}


def test_a_passage_the_second_encoder_vouches_for_is_grounded_though_no_ranker_of_words_found_it():
    kinds = {0: DOC, 1: DOC}
    words = {0: 0.5}                    # below BM25_GROUNDED: row 0 is not grounded by its words
    unvouched = rank(words, None, kinds, semantic=Meaning({1: 0.2}), semantic_floor=0.4)
    vouched = rank(words, None, kinds, semantic=Meaning({1: 0.2}, other=(1,), vouched=frozenset({1})),
                   semantic_floor=0.4)
    assert unvouched == []
    assert [d for d, _ in vouched] == [1]


def test_two_encoders_meaning_is_fused_by_rank_not_by_their_cosines():
    m = Meaning({0: 0.9, 1: 0.8, 2: 0.1}, other=(2, 1))
    got = m.scores()
    assert got[1] > got[0]              # second for both encoders beats first for one only
    assert got[2] > got[0]              # the cosines' scales never meet: 0.1 is not "far" for the other
    assert Meaning({0: 0.9}).scores() == {0: 0.9}              # one encoder: its cosines as they are


def test_fusing_only_the_grounded_rows_gives_them_the_scores_a_full_fusion_gives():
    """A char-gram ranker scores nearly every passage; the gate drops most, so only the rows it keeps
    are fused, each ranker still scaled by its best row overall: the same floats, bit for bit."""
    import random

    from loci.query.search import BM25_GROUNDED, GRAMS_GROUNDED, fuse, grounded

    rng = random.Random(7)
    bm25 = {d: rng.uniform(0, 4) for d in rng.sample(range(500), 120)}
    grams = {d: rng.uniform(0, 0.4) for d in range(500)}
    cosines = {d: rng.uniform(-0.1, 0.6) for d in rng.sample(range(500), 40)}
    parts = {"bm25": bm25, "grams": grams, "semantic": cosines}
    keep = grounded(range(500), bm25, grams, cosines, 0.5, also={3})
    assert 3 in keep and all(bm25.get(d, 0) >= BM25_GROUNDED or grams[d] >= GRAMS_GROUNDED
                             or cosines.get(d, -1) >= 0.5 or d == 3 for d in keep)
    assert len(keep) < 500 and grounded(range(500), bm25, grams, cosines, None) <= keep
    full = fuse(parts)
    assert fuse(parts, only=keep) == {d: full[d] for d in keep}
