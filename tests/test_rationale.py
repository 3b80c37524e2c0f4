"""Commit bodies record why something changed: they answer why-questions, and count less elsewhere."""
from loci.query.grammar import asks_why
from loci.query.search import rank


def test_a_why_question_is_told_apart_from_a_how_question():
    assert asks_why("Why did fd stop line-buffering its output?")
    assert asks_why("What was the rationale for dropping Python 2?")
    assert not asks_why("How do I make a task re-run only when its inputs change?")


def test_a_commit_body_yields_to_an_equally_matching_doc_unless_the_question_asks_why():
    kinds = {0: ("commit", "source", 0.0), 1: ("doc", "docs", 0.0)}
    bm25, grams = {0: 3.0, 1: 2.8}, {0: 0.5, 1: 0.48}
    assert [d for d, _ in rank(bm25, grams, kinds, rationale=False)] == [1, 0]
    assert [d for d, _ in rank(bm25, grams, kinds, rationale=True)] == [0, 1]
