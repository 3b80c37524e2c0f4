"""Generated question families and `loci eval`."""
import json

import pytest
from typer.testing import CliRunner

from loci.kernel.tokens import tokenize
from conftest import routing_index, GIZMO, WEBBY, setup_home
from loci.query import evalgen
from loci.front.cli import app

runner = CliRunner()

FILLER = "module function class value return config default option error test file data " * 3
CORPUS = {
    "gizmo": FILLER + "gizmo sprocket calibration parser cogwheel ratchet flywheel " * 4,
    "webby": FILLER + "cookie session redirect header middleware blueprint " * 5,
    "walker": FILLER + "tree walk directory symlink descend inode " * 4,
    "clicky": FILLER + "option argument command prompt envvar pager " * 5,
}
ALIASES = {s: [s] for s in CORPUS}


build_index = routing_index


@pytest.fixture
def index():
    return build_index(CORPUS)


def test_signature_questions_use_only_their_scopes_distinctive_tokens(index):
    pools = evalgen.distinctive_tokens(index, ALIASES)
    qs = evalgen.signature_questions(index, ALIASES)
    assert qs
    for q in qs:
        toks = tokenize(q.question)
        assert 2 <= len(toks) <= 4, q.question
        assert set(toks) <= set(pools[q.gold[0]]), q.question
        assert all(len(index.get(t)) == 1 for t in toks)  # no filler word held by every scope


def test_signature_tokens_never_include_a_scope_name(index):
    pools = evalgen.distinctive_tokens(index, ALIASES)
    assert "gizmo" in index.postings  # it is vocabulary of its scope...
    assert all("gizmo" not in pool for pool in pools.values())  # ...but naming it would give the answer away


def test_signature_templates_add_no_tokens_of_their_own():
    for template in evalgen.SIGNATURE_TEMPLATES:
        assert tokenize(template.format(terms="")) == []


def test_generation_is_deterministic_and_seeded(index):
    a = evalgen.generate(index, ALIASES, seed=0)
    assert a == evalgen.generate(index, ALIASES, seed=0)
    other = evalgen.signature_questions(index, ALIASES, seed=1)
    assert [q.question for q in other] != [q.question for q in evalgen.signature_questions(index, ALIASES, seed=0)]


def test_calibration_half_and_eval_half_are_disjoint_and_cover_every_scope(index):
    qs = evalgen.generate(index, ALIASES)
    routable, unroutable = evalgen.calibration_questions(qs)
    evaluated = evalgen.eval_questions(qs)
    assert not {q.id for q in routable} & {q.id for q in evaluated}
    signature_eval = [q for q in evaluated if q.family == evalgen.SIGNATURE]
    assert {q.gold[0] for q in routable} == {q.gold[0] for q in signature_eval} == set(CORPUS)
    assert unroutable and all(q.should_abstain for q in unroutable)


def test_deictic_questions_have_the_cwd_scope_as_gold_and_none_without_cwd(index):
    qs = evalgen.deictic_questions(index.scopes)
    with_cwd = [q for q in qs if q.family == evalgen.DEICTIC_CWD]
    assert len(with_cwd) == len(CORPUS) * len(evalgen.DEICTIC_TEMPLATES)
    assert all(q.gold == (q.cwd_scope,) for q in with_cwd)
    assert all(q.cwd_scope is None and q.should_abstain for q in qs if q.family == evalgen.DEICTIC_NOCWD)


def test_no_fixed_question_reads_as_an_enumeration():
    from loci.query.grammar import is_enumerative

    fixed = evalgen.DEICTIC_TEMPLATES + evalgen.UNANSWERABLE_QUESTIONS
    assert not [q for q in fixed if is_enumerative(q)]


def test_generation_needs_the_complete_index(index):
    index.complete = False
    with pytest.raises(ValueError, match="complete"):
        evalgen.distinctive_tokens(index)


def judged(family, correct, gold=("gizmo",), scopes=("gizmo",)):
    q = evalgen.GenQuestion(f"{family}-{id(object())}", family, "q?", gold=gold)
    if not gold:
        return evalgen.Judged(q, "abstained" if correct else "routed", () if correct else scopes, None)
    return evalgen.Judged(q, "routed", scopes if correct else ("webby",), None)


def test_summary_counts_each_family_and_states_the_random_baseline():
    rows = [judged(evalgen.SIGNATURE, True), judged(evalgen.SIGNATURE, False),
            judged(evalgen.UNANSWERABLE, True, gold=())]
    report = evalgen.summarise(rows, n_scopes=4)
    fams = {f.family: f for f in report.families}
    assert (fams[evalgen.SIGNATURE].n, fams[evalgen.SIGNATURE].correct) == (2, 1)
    assert fams[evalgen.UNANSWERABLE].accuracy == 1.0
    assert report.baseline == 0.25 and len(report.misses) == 1
    text = "\n".join(evalgen.render(report, misses=True))
    assert "25.0%" in text and "wanted gizmo, got routed webby" in text


# --- the command ------------------------------------------------------------------------

@pytest.fixture
def corpus(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY, "walker": {
        "README.md": "# walker\n\nWalk a directory tree, following symlinks and inodes as you descend.\n",
        "walker/walk.py": "def descend_tree(root):\n    pass\n\nclass SymlinkGuard:\n    pass\n",
    }})


def test_eval_reports_families_counts_and_the_random_baseline(corpus):
    res = runner.invoke(app, ["eval", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["scopes"] == 3 and out["baseline"] == pytest.approx(1 / 3)
    fams = {f["family"]: f for f in out["families"]}
    assert set(fams) == set(evalgen.FAMILIES)
    assert fams[evalgen.DEICTIC_CWD]["n"] == 3 * len(evalgen.DEICTIC_TEMPLATES)
    assert fams[evalgen.DEICTIC_CWD]["correct"] == fams[evalgen.DEICTIC_CWD]["n"]
    assert fams[evalgen.UNANSWERABLE]["n"] == len(evalgen.UNANSWERABLE_QUESTIONS)
    text = runner.invoke(app, ["eval"]).output
    assert "3 scopes" in text and "33.3%" in text and "deictic + cwd" in text


def test_eval_misses_lists_each_wrong_answer_with_what_came_back(corpus):
    out = json.loads(runner.invoke(app, ["eval", "--json"]).output)
    text = runner.invoke(app, ["eval", "--misses"]).output
    assert f"misses ({len(out['misses'])})" in text
    for miss in out["misses"]:
        assert miss["question"] in text and not miss["correct"]


def test_eval_scores_a_labelled_questions_file(corpus, tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [
        {"id": "a", "family": "vocab", "question": "how is a sprocket calibrated?", "cwd": None,
         "gold_scopes": ["gizmo"], "mode": "one", "answer_terms": ["sprocket"]},
        {"id": "b", "family": "deictic", "question": "how do I install this project?", "cwd": "webby",
         "gold_scopes": ["webby"], "mode": "one"},
        {"id": "c", "family": "nonsense", "question": "how long should green tea steep?", "cwd": None,
         "gold_scopes": [], "mode": "abstain"},
        {"id": "d", "family": "deictic", "question": "what does this do?", "cwd": "nowhere",
         "gold_scopes": ["webby"], "mode": "one"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = runner.invoke(app, ["eval", "--questions", str(path), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["overall"]["n"] == 4 and out["overall"]["errors"] == 1
    assert out["families"]["deictic"]["top1"] == 0.5  # the unknown cwd scope counts as a miss
    assert out["families"]["vocab"]["top1"] == 1.0
    assert any("nowhere" in n for n in out["notes"])


def test_eval_rejects_a_malformed_questions_file(corpus, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x"}\n')
    res = runner.invoke(app, ["eval", "--questions", str(path)])
    assert res.exit_code == 2 and "line 1" in res.output and "Traceback" not in res.output


class _FarInMeaning:
    """A semantic side for which no scope comes close to any question: the veto fires."""

    def route_params(self, params):
        return params

    def affinities(self, question, scopes, k, **_):
        return {s: 0.0 for s in scopes}

    def first_pass(self, question, scopes, n, include=()):
        return list(scopes)


def test_eval_scores_as_abstained_what_ask_abstains_on(corpus):
    from loci.query.ask import ask, open_session, route_question

    session = open_session(keep_full_index=True)
    session._semantic = _FarInMeaning()
    report = evalgen.run_generated(session)
    signature = [j for j in report.judged if j.question.family == evalgen.SIGNATURE]
    # a question spelling a code name one project defines routes there whatever the vectors say
    vocabulary = [j for j in signature if route_question(session, j.question.question, fast=True).gate != "symbol"]
    assert vocabulary
    for j in vocabulary:
        assert ask(session, j.question.question).route.outcome == "abstained"
        assert j.outcome == "abstained"


def test_a_fast_labelled_run_routes_on_words_alone(corpus):
    from loci.query.ask import open_session

    session = open_session(keep_full_index=True)
    session._semantic = _FarInMeaning()        # the vectors would veto every vocabulary route
    rows = [{"id": "a", "family": "vocab", "question": "how is a sprocket calibrated?", "cwd": None,
             "gold_scopes": ["gizmo"], "mode": "one"}]
    _, vetoed, _ = evalgen.run_labelled(session, rows)
    _, words, _ = evalgen.run_labelled(session, rows, fast=True)
    assert vetoed["a"]["outcome"] == "abstained"
    assert words["a"]["outcome"] == "routed" and words["a"]["scopes"][0] == "gizmo"
