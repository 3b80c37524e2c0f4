"""Scoring of labelled questions against route/ask results: hand-made results
whose scores are known exactly."""
import json

import pytest

from loci.query.scoring import (
    Evidence,
    hit_ranks,
    load_questions,
    parse_evidence,
    render_markdown,
    score,
)


def q(qid, family, mode, gold=(), evidence=(), terms=()):
    return {"id": qid, "family": family, "question": f"question {qid}", "cwd": None,
            "gold_scopes": list(gold), "mode": mode, "evidence": list(evidence),
            "answer_terms": list(terms)}


def routed(*scopes, blocks=()):
    return {"outcome": "routed", "scopes": list(scopes), "reason": None,
            "candidates": [], "scores": {}, "blocks": list(blocks)}


def abstained(reason="no_evidence"):
    return {"outcome": "abstained", "scopes": [], "reason": reason,
            "candidates": [], "scores": {}}


def block(scope, episodes=(), structure=()):
    return {"scope": scope, "episodes": list(episodes), "structure": list(structure)}


def episode(text, source="README.md", line=1):
    return {"text": text, "source": source, "line": line, "kind": "doc", "score": 1.0}


def node(label, source_file="src/x.py", line=1):
    return {"label": label, "kind": "function", "source_file": source_file, "line": line,
            "relation": None, "score": 1.0}


def test_top1_counts_first_scope_of_routed_answers():
    questions = [q("a", "named", "one", ["flask"]), q("b", "named", "one", ["click"]),
                 q("c", "named", "one", ["doit"])]
    results = {"a": routed("flask", "click"), "b": routed("click"), "c": routed("flask", "doit")}
    report = score(questions, results)
    assert report.overall.top1 == pytest.approx(2 / 3)
    assert report.families["named"].top1_hits == 2
    assert report.families["named"].top1_n == 3


def test_top1_is_a_miss_when_the_gold_scope_comes_with_an_abstention():
    questions = [q("a", "named", "one", ["flask"])]
    result = {"outcome": "abstained", "scopes": ["flask"], "reason": "no_evidence"}
    assert score(questions, {"a": result}).overall.top1 == 0.0


def test_set_answer_with_one_extra_scope_scores_two_thirds_precision():
    questions = [q("e", "enumerative", "set", ["a", "b"])]
    result = {"outcome": "enumerated", "scopes": ["a", "b", "c"], "reason": None}
    m = score(questions, {"e": result}).overall
    assert m.set_precision == pytest.approx(2 / 3)
    assert m.set_recall == pytest.approx(1.0)
    assert m.set_f1 == pytest.approx(0.8)


def test_abstaining_on_a_set_question_scores_zero_recall():
    questions = [q("e", "enumerative", "set", ["a", "b"])]
    m = score(questions, {"e": abstained()}).overall
    assert (m.set_precision, m.set_recall, m.set_f1) == (0.0, 0.0, 0.0)


def test_abstention_precision_and_recall_count_abstain_as_the_positive_class():
    questions = [q("n1", "nonsense", "abstain"), q("n2", "nonsense", "abstain"),
                 q("n3", "nonsense", "abstain"), q("v1", "vocab", "one", ["a"])]
    results = {"n1": abstained(), "n2": abstained(), "n3": routed("a"), "v1": abstained()}
    report = score(questions, results)
    assert report.overall.abstain_tp == 2
    assert report.overall.abstain_fp == 1
    assert report.overall.abstain_fn == 1
    assert report.overall.abstain_precision == pytest.approx(2 / 3)
    assert report.overall.abstain_recall == pytest.approx(2 / 3)
    assert report.families["nonsense"].abstain_recall == pytest.approx(2 / 3)


def test_abstention_precision_is_undefined_when_nothing_abstained():
    questions = [q("v1", "vocab", "one", ["a"])]
    m = score(questions, {"v1": routed("a")}).overall
    assert m.abstain_precision is None
    assert m.abstain_recall is None


def test_hit_at_5_by_every_answer_term_case_insensitively():
    questions = [q("v", "vocab", "one", ["a"], terms=["get_top_n", "Tokenized"])]
    hit = routed("a", blocks=[block("a", [episode("use get_top_n(tokenized_query)")])])
    partial = routed("a", blocks=[block("a", [episode("use get_top_n only")])])
    assert score(questions, {"v": hit}).overall.hit5 == 1.0
    assert score(questions, {"v": partial}).overall.hit5 == 0.0


def test_hit_at_5_by_evidence_path_and_line_within_the_window():
    questions = [q("v", "vocab", "one", ["a"], evidence=["a:docs/x.rst:100"], terms=["zzz"])]
    near = routed("a", blocks=[block("a", [episode("nothing", "docs/x.rst", 130)])])
    far = routed("a", blocks=[block("a", [episode("nothing", "docs/x.rst", 150)])])
    other = routed("a", blocks=[block("a", [episode("nothing", "docs/y.rst", 100)])])
    assert score(questions, {"v": near}).overall.hit5 == 1.0
    assert score(questions, {"v": far}).overall.hit5 == 0.0
    assert score(questions, {"v": other}).overall.hit5 == 0.0


def test_hit_at_5_by_structure_source_file():
    questions = [q("s", "structure", "one", ["a"], evidence=["a:src/core.py:40"], terms=["zzz"])]
    result = routed("a", blocks=[block("a", structure=[node("Thing", "src/core.py", 900)])])
    assert score(questions, {"s": result}).overall.hit5 == 1.0


def test_hit_at_5_by_commit_prefix():
    questions = [q("w", "why", "one", ["a"], evidence=["a:commit:2ed84f5"], terms=["zzz"])]
    full = "commit:2ed84f5" + "0" * 33
    result = routed("a", blocks=[block("a", [episode("msg", full, None)])])
    assert score(questions, {"w": result}).overall.hit5 == 1.0


def test_hit_at_5_ignores_results_below_the_fifth_and_outside_gold_blocks():
    questions = [q("v", "vocab", "one", ["a"], terms=["needle"])]
    sixth = [episode("hay")] * 5 + [episode("needle")]
    late = routed("a", blocks=[block("a", sixth)])
    wrong_scope = routed("b", "a", blocks=[block("b", [episode("needle")]), block("a")])
    assert score(questions, {"v": late}).overall.hit5 == 0.0
    assert score(questions, {"v": wrong_scope}).overall.hit5 == 0.0


def test_hit_ranks_say_where_the_first_answer_sits_among_episodes_and_structure():
    sixth = block("a", [episode("hay")] * 5 + [episode("needle")], [node("hay"), node("needle")])
    assert hit_ranks(sixth, [], ["needle"], True) == (None, 1)
    assert hit_ranks(sixth, [], ["needle"], True, limit=20) == (5, 1)
    assert hit_ranks(block("a", [episode("hay")]), [], ["needle"], True) == (None, None)


def test_set_hit_needs_one_term_in_every_returned_gold_block():
    questions = [q("e", "enumerative", "set", ["a", "b"], terms=["npm", "Rust"])]
    both = routed("a", "b", blocks=[block("a", [episode("an npm package")]),
                                    block("b", [episode("a Rust crate")])])
    one = routed("a", "b", blocks=[block("a", [episode("an npm package")]),
                                   block("b", [episode("nothing here")])])
    assert score(questions, {"e": both}).overall.hit5 == 1.0
    assert score(questions, {"e": one}).overall.hit5 == 0.0


def test_abstain_questions_do_not_count_toward_hit_at_5():
    questions = [q("n", "nonsense", "abstain"), q("v", "vocab", "one", ["a"], terms=["x"])]
    results = {"n": abstained(), "v": routed("a", blocks=[block("a", [episode("x")])])}
    m = score(questions, results).overall
    assert (m.hit5_hits, m.hit5_n) == (1, 1)


def test_route_only_results_leave_hit_at_5_unmeasured():
    questions = [q("v", "vocab", "one", ["a"], terms=["x"])]
    m = score(questions, {"v": routed("a")}).overall
    assert m.hit5_n == 1
    route_only = {"outcome": "routed", "scopes": ["a"], "reason": None}
    assert score(questions, {"v": route_only}).overall.hit5 is None


def test_missing_result_counts_as_an_error_and_a_miss():
    questions = [q("a", "named", "one", ["flask"]), q("b", "named", "one", ["click"])]
    report = score(questions, {"a": routed("flask")})
    assert report.overall.errors == 1
    assert report.overall.top1 == 0.5


def test_parse_evidence_forms():
    assert parse_evidence("flask:docs/x.rst:301") == Evidence("flask", "docs/x.rst", 301)
    assert parse_evidence("doit:LICENSE") == Evidence("doit", "LICENSE", None)
    assert parse_evidence("click:commit:7d05a59") == Evidence("click", "commit:7d05a59", None)


def test_render_markdown_has_one_row_per_family_and_overall():
    questions = [q("a", "named", "one", ["flask"]), q("n", "nonsense", "abstain")]
    text = render_markdown(score(questions, {"a": routed("flask"), "n": abstained()}))
    lines = [l for l in text.splitlines() if l.startswith("|")]
    assert len(lines) == 2 + 3
    assert "| overall |" in text
    assert "100%" in text


def test_load_questions_rejects_a_line_without_required_fields(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(q("a", "named", "one", ["x"])) + "\n" + '{"id": "b"}\n')
    with pytest.raises(ValueError, match="line 2"):
        load_questions(path)


def test_load_questions_reads_every_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps(q(i, "named", "one", ["x"])) for i in "abc") + "\n\n")
    assert [x["id"] for x in load_questions(path)] == ["a", "b", "c"]


def test_hit_at_5_when_routed_right_counts_only_questions_whose_route_was_right():
    questions = [q("r", "paraphrase", "one", ["a"], terms=["needle"]),
                 q("w", "paraphrase", "one", ["a"], terms=["needle"])]
    right = routed("a", blocks=[block("a", [episode("hay")])])
    wrong = routed("b", "a", blocks=[block("b"), block("a", [episode("needle")])])
    m = score(questions, {"r": right, "w": wrong}).families["paraphrase"]
    assert m.hit5 == 0.5            # the wrong route still found the answer in its second block
    assert m.hit5_routed == 0.0     # but among the routes that were right, the answer was missed


def test_a_first_scope_whose_five_hold_every_answer_term_counts_as_answered_elsewhere():
    # beside many other scopes a neighbour may answer: the label's own answer terms say whether it did
    questions = [q("n", "vocab", "one", ["requests"], terms=["stream=True", "iter_content"]),
                 q("p", "vocab", "one", ["requests"], terms=["stream=True", "iter_content"]),
                 q("g", "vocab", "one", ["requests"], terms=["stream=True"])]
    results = {
        "n": routed("urllib3", "requests", blocks=[
            block("urllib3", [episode("hay"), episode("use stream=True and iter_content(1024)")])]),
        "p": routed("urllib3", blocks=[block("urllib3", [episode("stream=True only")])]),
        "g": routed("requests", blocks=[block("requests", [episode("stream=True")])]),
    }
    report = score(questions, results)
    by_id = {s.id: s for s in report.questions}
    assert by_id["n"].answered_elsewhere and by_id["n"].top1 is False
    assert not by_id["p"].answered_elsewhere     # one of the two terms is not an answer
    assert not by_id["g"].answered_elsewhere     # routed right: nothing to credit elsewhere
    m = report.overall
    assert m.top1 == pytest.approx(1 / 3)
    assert m.top1_answered == pytest.approx(2 / 3)


def test_answered_elsewhere_needs_the_answer_in_the_first_five_of_the_first_scope():
    questions = [q("late", "vocab", "one", ["a"], terms=["needle"]),
                 q("second", "vocab", "one", ["a"], terms=["needle"]),
                 q("none", "vocab", "one", ["a"]),
                 q("abst", "vocab", "one", ["a"], terms=["needle"])]
    late = routed("b", blocks=[block("b", [episode("hay")] * 5 + [episode("needle")])])
    second = routed("b", "c", blocks=[block("b", [episode("hay")]), block("c", [episode("needle")])])
    results = {"late": late, "second": second,
               "none": routed("b", blocks=[block("b", [episode("anything")])]),
               "abst": abstained()}
    report = score(questions, results)
    assert not any(s.answered_elsewhere for s in report.questions)
    assert report.overall.top1_answered == 0.0
