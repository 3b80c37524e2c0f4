"""bench/score_within.py: a bed's enumerations scored within the projects the questions were
labelled on; every other answer is scored as given."""
from __future__ import annotations

from bench.score_within import within
from loci.query import scoring

ENUM = {"id": "e1", "family": "enumerative", "mode": "set", "question": "Which of my projects are MIT licensed?",
        "gold_scopes": ["a", "b"], "cwd": None}
ONE = {"id": "o1", "family": "vocab", "mode": "one", "question": "How do I retry?", "gold_scopes": ["a"], "cwd": None}


def test_members_outside_the_universe_are_not_counted_against_an_enumeration():
    results = {"e1": {"outcome": "enumerated", "scopes": ["a", "zz-1", "b", "zz-2", "zz-3"]}}
    as_given = scoring.score([ENUM], results).overall.set_f1
    narrowed = scoring.score([ENUM], within(results, {"a", "b", "c"})).overall.set_f1
    assert as_given < 0.6 and narrowed == 1.0


def test_a_non_member_inside_the_universe_still_costs_precision():
    results = within({"e1": {"outcome": "enumerated", "scopes": ["a", "c", "zz-1"]}}, {"a", "b", "c"})
    assert results["e1"]["scopes"] == ["a", "c"]
    assert scoring.score([ENUM], results).overall.set_f1 == 0.5


def test_a_routed_answer_outside_the_universe_stays_wrong():
    results = within({"o1": {"outcome": "routed", "scopes": ["zz-1", "a"]}}, {"a", "b"})
    assert results["o1"]["scopes"] == ["zz-1", "a"]
    assert scoring.score([ONE], results).overall.top1 == 0.0
