"""`loci calibrate`: fitting the evidence floor, the semantic floors, and reading them back."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import GIZMO, WEBBY, routing_index, setup_home
from loci.kernel.tokens import tokenize
from loci.query import evalgen
from loci.query.ask import open_session
from loci.query.store import indexed_metas
from loci.query.calibration import calibrated_params, read_calibration, semantic_floors
from loci.front.cli import app
from loci.kernel.config import DEFAULT_PARAMS, Params, layout
from loci_pipeline.calibrate import CLAMP, MIN_GAIN, NULL_TOP, Sample, fit_threshold, measure, near_top, render

runner = CliRunner()


def samples(routable, unroutable, concentrated=0.0):
    return ([Sample("r", evalgen.SIGNATURE, True, e, concentrated, 0, False) for e in routable]
            + [Sample("u", evalgen.UNANSWERABLE, False, e, concentrated, 0, False) for e in unroutable])


def test_floor_lands_between_bands_that_separate():
    fit = fit_threshold(samples([1.4, 1.6, 2.2, 3.0], [0.1, 0.5, 0.9, 1.2]), DEFAULT_PARAMS, "evidence_floor")
    assert 1.2 < fit.value < 1.4
    assert fit.accuracy == 1.0 and not fit.overlap
    assert (fit.routable, fit.unroutable) == (4, 4)


def test_overlapping_bands_are_reported_with_a_plain_warning():
    separate = fit_threshold(samples([1.5, 2.0], [0.3, 0.9]), DEFAULT_PARAMS, "evidence_floor")
    assert "overlap" not in "\n".join(render({"fits": {"evidence_floor": separate.__dict__}, "params": {}}))
    fit = fit_threshold(samples([0.8, 1.5, 2.0, 2.5], [0.3, 0.9, 1.1, 0.2]), DEFAULT_PARAMS, "evidence_floor")
    assert fit.overlap and fit.accuracy < 1.0
    text = "\n".join(render({"fits": {"evidence_floor": fit.__dict__}, "params": {}}))
    assert "bands overlap" in text and "4 routable + 4 unroutable" in text


def test_default_is_kept_when_a_better_cut_wins_only_by_noise():
    # one routable sample in thirty sits just under the default: moving would gain ~1.7 points
    fit = fit_threshold(samples([0.95] + [2.0] * 29, [0.2] * 30), DEFAULT_PARAMS, "evidence_floor")
    assert fit.value == DEFAULT_PARAMS.evidence_floor
    assert fit.best_cut < 0.95 and "default kept" in fit.note
    assert MIN_GAIN > 1 / 60


def test_fit_is_clamped_to_a_band_around_the_default():
    fit = fit_threshold(samples([4.0, 5.0, 6.0], [0.5, 1.2, 1.3, 3.0]), DEFAULT_PARAMS, "evidence_floor")
    assert fit.value == DEFAULT_PARAMS.evidence_floor * CLAMP[1]
    assert fit.best_cut > fit.value and "clamped" in fit.note


def test_one_empty_band_keeps_the_default():
    fit = fit_threshold(samples([1.5, 2.0], []), DEFAULT_PARAMS, "evidence_floor")
    assert fit.value == DEFAULT_PARAMS.evidence_floor and "too few" in fit.note


build_index = routing_index


FILLER = "module function class value return config default option error test file data " * 3


def fitted_floor(corpus):
    index = build_index(corpus)
    aliases = {s: [s] for s in corpus}
    routable, unroutable = evalgen.calibration_questions(evalgen.generate(index, aliases))
    measured = measure([*routable, *unroutable], index, aliases)
    return measured, fit_threshold(measured, DEFAULT_PARAMS, "evidence_floor")


DISTINCT = {
    "gizmo": FILLER + "sprocket cogwheel ratchet flywheel gearbox spindle " * 6,
    "webby": FILLER + "cookie session redirect header middleware blueprint " * 6,
    "walker": FILLER + "tree directory symlink descend inode dirent " * 6,
}


def test_measured_signature_questions_outscore_unanswerable_ones_on_a_distinct_corpus():
    measured, fit = fitted_floor(DISTINCT)
    lowest_routable = min(s.evidence for s in measured if s.routable)
    assert lowest_routable > max(s.evidence for s in measured if not s.routable)
    assert not fit.overlap and fit.accuracy == 1.0
    assert fit.value <= lowest_routable  # every routable sample passes the fitted floor


def test_measured_bands_overlap_when_an_unanswerable_question_uses_a_scopes_words():
    corpus = {  # gizmo's own words are the words of an off-topic question
        "gizmo": FILLER + "football world cup moons jupiter guitar " * 6,
        "webby": FILLER + "cookie session redirect header middleware blueprint " * 6,
    }
    _measured, fit = fitted_floor(corpus)
    assert fit.overlap


def test_copies_of_a_scope_change_neither_the_calibration_questions_nor_their_samples():
    from loci.query.router import Context

    alone, fit = fitted_floor(DISTINCT)
    copies = {**DISTINCT, "gizmo-fork": DISTINCT["gizmo"], "gizmo-mirror": DISTINCT["gizmo"]}
    index = build_index(copies)
    aliases = {s: [s] for s in copies}
    context = Context(shadowed=frozenset({"gizmo-fork", "gizmo-mirror"}))
    routable, unroutable = evalgen.calibration_questions(
        evalgen.generate(index, aliases, shadowed=context.shadowed))
    measured = measure([*routable, *unroutable], index, aliases, context=context)
    assert measured == alone
    assert fit_threshold(measured, DEFAULT_PARAMS, "evidence_floor") == fit
    diluted, _ = fitted_floor(copies)      # counted as three witnesses, the samples differ
    assert diluted != alone


# --- the command and the read side ------------------------------------------------------

@pytest.fixture
def corpus(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})


def test_calibrate_writes_the_fit_and_the_index_it_was_fitted_on(corpus, loci_home):
    res = runner.invoke(app, ["calibrate"])
    assert res.exit_code == 0, res.output
    assert "evidence floor" in res.output and "routable" in res.output and "accuracy" in res.output
    data = json.loads((loci_home / "calibration.json").read_text())
    manifest = json.loads((loci_home / "manifest.json").read_text())
    assert data["index_written_at"] == manifest["written_at"]
    assert set(data["params"]) == {"evidence_floor"}
    assert data["fits"]["evidence_floor"]["routable"] > 0 and data["fits"]["evidence_floor"]["unroutable"] > 0
    assert "skipped" in data["semantic"] and "semantic floor      skipped" in res.output


def test_calibrate_fits_again_when_loci_fits_another_way(corpus, loci_home, monkeypatch):
    # an upgrade that changes the off-topic questions (or any constant of the fit) must not leave
    # the old fit in place as "already fits this index"
    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    before = read_calibration(layout())["fits"]["evidence_floor"]["unroutable"]
    again = runner.invoke(app, ["calibrate"])
    assert "already fits" in again.output
    monkeypatch.setattr(evalgen, "UNANSWERABLE_QUESTIONS",
                        (*evalgen.UNANSWERABLE_QUESTIONS, "How do I keep basil alive on a windowsill?"))
    refit = runner.invoke(app, ["calibrate"])
    assert refit.exit_code == 0 and "written to" in refit.output
    assert read_calibration(layout())["fits"]["evidence_floor"]["unroutable"] == before + 1


def test_calibrate_show_prints_without_fitting(corpus, loci_home):
    res = runner.invoke(app, ["calibrate", "--show"])
    assert res.exit_code == 0 and "not calibrated yet" in res.output
    runner.invoke(app, ["calibrate"])
    before = (loci_home / "calibration.json").stat().st_mtime_ns
    res = runner.invoke(app, ["calibrate", "--show"])
    assert res.exit_code == 0 and "evidence floor" in res.output
    assert (loci_home / "calibration.json").stat().st_mtime_ns == before


def test_calibrate_without_an_index_says_what_to_run(tmp_path, loci_home):
    res = runner.invoke(app, ["calibrate"])
    assert res.exit_code == 1 and "loci setup" in res.output and "Traceback" not in res.output


def write_calibration(home, obj):
    home.mkdir(parents=True, exist_ok=True)
    (home / "calibration.json").write_text(obj if isinstance(obj, str) else json.dumps(obj))


def test_sessions_route_with_the_calibrated_floor(loci_home):
    write_calibration(loci_home, {"schema_version": 1,
                                  "params": {"evidence_floor": 1.3, "min_matched_tokens": 99}})
    params = open_session().params
    assert params.evidence_floor == 1.3
    assert params.min_matched_tokens == DEFAULT_PARAMS.min_matched_tokens  # never fitted: ignored
    assert open_session(params=Params(evidence_floor=2.0)).params.evidence_floor == 2.0


@pytest.mark.parametrize("content", ["{not json", '["a list"]', '{"schema_version": 1, "params": 3}',
                                     '{"schema_version": 1, "params": {"evidence_floor": -1}}',
                                     '{"schema_version": 1, "params": {"evidence_floor": "high"}}',
                                     '{"schema_version": 99, "params": {"evidence_floor": 1.2}}'])
def test_a_damaged_calibration_leaves_the_defaults_in_place(loci_home, content):
    write_calibration(loci_home, content)
    assert calibrated_params(layout(), DEFAULT_PARAMS) == DEFAULT_PARAMS
    with pytest.raises(ValueError, match="loci calibrate"):
        read_calibration(layout())


class FakeEncoder:
    """Bag-of-words vectors hashed into 32 dimensions: similar words, similar vectors."""

    model_id, dim, batch_size = "fake-model", 32, 16

    def encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in tokenize(text):
                out[i, sum(map(ord, tok)) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


def test_semantic_floor_is_fitted_per_scope_from_stored_vectors(corpus, loci_home):
    from loci_pipeline.calibrate import calibrate
    from loci_pipeline.embed import embed_scope

    enc = FakeEncoder()
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), enc)
    data = calibrate(layout(), load_encoder=lambda model, lay: enc)
    floors = data["semantic"]["models"]["fake-model"]["floors"]
    assert set(floors) == {"gizmo", "webby"}
    assert all(0.0 < f <= 1.0 for f in floors.values())
    assert semantic_floors(layout(), "fake-model") == floors


def test_the_second_opinion_floors_sit_above_nearly_every_off_topic_questions_best_affinity(corpus, loci_home):
    from loci.query.calibration import route_floors
    from loci.query.evalgen import UNANSWERABLE_QUESTIONS
    from loci.query.semantic import affinity, load_vectors, semantic_scores
    from loci_pipeline.calibrate import calibrate
    from loci_pipeline.embed import embed_scope

    enc = FakeEncoder()
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), enc)
    calibrate(layout(), load_encoder=lambda model, lay: enc)
    fitted = route_floors(layout(), "fake-model")
    best = [max(affinity(semantic_scores(v, load_vectors(layout(), "fake-model", s)[1]), 3) for s in ("gizmo", "webby"))
            for v in enc.encode(list(UNANSWERABLE_QUESTIONS))]
    below = sum(b < fitted["semantic_add_floor"] for b in best)
    assert below >= NULL_TOP * len(best) and fitted["semantic_add_floor"] < fitted["semantic_rescue_floor"]
    # and the off-topic background per scope, with how far above it a question must stand
    from loci.query.calibration import route_background

    bg = route_background(layout(), "fake-model")
    assert set(bg) == {"gizmo", "webby"} and all(sd > 0 for _m, sd in bg.values())
    assert fitted["semantic_z_floor"] > 0


def test_semantic_floor_is_skipped_with_a_reason_when_the_model_cannot_load(corpus, loci_home):
    from loci_pipeline.calibrate import calibrate
    from loci_pipeline.embed import embed_scope

    embed_scope("gizmo", layout(), FakeEncoder())

    def refuse(model, lay):
        raise RuntimeError("no such model offline")

    data = calibrate(layout(), load_encoder=refuse)
    assert "no such model offline" in data["semantic"]["skipped"]


def test_route_floors_add_above_every_off_topic_question_and_veto_below_the_typical_one():
    from loci_pipeline.calibrate import ROUTE_ADD_MARGIN, ROUTE_RESCUE_STEP, route_floors_from

    floors = route_floors_from([0.20, 0.25, 0.30, 0.35])
    assert floors["semantic_veto_floor"] == 0.275 == floors["null_median_affinity"]
    assert floors["semantic_add_floor"] == round(0.35 + ROUTE_ADD_MARGIN, 4)
    assert floors["semantic_rescue_floor"] == round(0.35 + ROUTE_ADD_MARGIN + ROUTE_RESCUE_STEP, 4)
    assert route_floors_from([0.3, 0.1, 0.2])["semantic_veto_floor"] == 0.2


def test_one_outlier_among_many_off_topic_questions_does_not_set_the_floor():
    from loci_pipeline.calibrate import route_floors_from

    many = [0.2 + 0.001 * i for i in range(99)] + [0.9]
    assert near_top(many) < 0.31 and route_floors_from(many)["semantic_add_floor"] < 0.35
    assert near_top([0.1, 0.5, 0.2]) == 0.5    # a handful: the closest one still counts


def test_damaged_second_opinion_floors_are_ignored_not_trusted(tmp_path):
    from loci.query.calibration import CALIBRATION_SCHEMA, route_floors

    lay = layout(tmp_path)
    lay.calibration.write_text(json.dumps({
        "schema_version": CALIBRATION_SCHEMA, "params": {},
        "semantic": {"models": {"m": {"route": {"semantic_add_floor": "high", "semantic_rescue_floor": True,
                                                "semantic_veto_floor": 0.25, "something_else": 9.0}}}}}))
    assert route_floors(lay, "m") == {"semantic_veto_floor": 0.25}
    assert route_floors(lay, "other-model") == {}


def test_the_background_is_each_scopes_off_topic_mean_and_spread():
    from loci_pipeline.calibrate import background_from

    bg = background_from({"a": [0.1, 0.2, 0.3], "flat": [0.2, 0.2, 0.2], "few": [0.1, 0.3]})
    assert bg == {"a": [0.2, round((2 / 300) ** 0.5, 4)]}


def test_the_z_floor_is_what_most_off_topic_questions_do_not_reach_against_the_others():
    from loci_pipeline.calibrate import z_floor_from

    # question 3 stands far out from scope a's other questions; the rest sit inside their background
    per_scope = {"a": [0.20, 0.22, 0.21, 0.60, 0.19, 0.20], "b": [0.30, 0.31, 0.29, 0.30, 0.32, 0.28]}
    assert z_floor_from(per_scope, quantile=0.9) > 10
    assert z_floor_from(per_scope, quantile=0.5) < 3


def test_a_damaged_background_entry_is_left_out(tmp_path):
    from loci.query.calibration import CALIBRATION_SCHEMA, route_background

    lay = layout(tmp_path)
    lay.calibration.write_text(json.dumps({
        "schema_version": CALIBRATION_SCHEMA, "params": {},
        "semantic": {"models": {"m": {"background": {"a": [0.2, 0.05], "b": [0.2, 0], "c": "x", "d": [1]}}}}}))
    assert route_background(lay, "m") == {"a": (0.2, 0.05)}


class ReachingFakeEncoder(FakeEncoder):
    """The bag of words, read only up to its first three words by the build (``reach``)."""

    def __init__(self):
        from test_windows import Words

        self.reach = Words(3)


def test_calibrate_fits_what_windows_win_by_chance_and_search_reads_it(corpus, loci_home):
    from loci.query.calibration import window_chance
    from loci_pipeline.calibrate import calibrate
    from loci_pipeline.embed import embed_scope

    enc = ReachingFakeEncoder()
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), enc, overlap=1)
    data = calibrate(layout(), load_encoder=lambda model, lay: enc)
    fitted = data["semantic"]["models"]["fake-model"]["window_chance"]
    assert len(fitted) == len(DEFAULT_PARAMS.semantic_window_chance) and all(0 <= v < 1 for v in fitted)
    assert window_chance(layout(), "fake-model") == tuple(fitted)


def test_a_home_without_windows_fits_no_window_chance(corpus, loci_home):
    from loci.query.calibration import window_chance
    from loci_pipeline.calibrate import calibrate
    from loci_pipeline.embed import embed_scope

    enc = FakeEncoder()
    embed_scope("gizmo", layout(), enc)
    data = calibrate(layout(), load_encoder=lambda model, lay: enc)
    assert "window_chance" not in data["semantic"]["models"]["fake-model"]
    assert window_chance(layout(), "fake-model") == ()


# --- a fit that scales with the corpus (issue 22: a calibrated pull of one changed bundle) -------

def test_every_cut_is_scored_as_the_whole_gate_would_decide_it():
    import random

    from loci_pipeline.calibrate import balanced_accuracy, cut_scores

    rng = random.Random(7)
    pool = [Sample("q", evalgen.SIGNATURE, rng.random() < 0.6, round(rng.uniform(0, 3), 2),
                   round(rng.uniform(0, 1.2), 2), rng.choice((0, 1, 2, 5)), rng.random() < 0.1)
            for _ in range(300)]
    for name in ("evidence_floor", "concentrated_min_evidence"):
        cuts = sorted({round(rng.uniform(0, 3), 2) for _ in range(60)} | {1.0, 0.6, 0.0})
        swept = cut_scores(pool, DEFAULT_PARAMS, name, cuts)
        from dataclasses import replace

        assert swept == [balanced_accuracy(pool, replace(DEFAULT_PARAMS, **{name: c})) for c in cuts]


def test_a_large_corpus_measures_a_bounded_sample_of_its_routable_questions():
    from loci_pipeline.calibrate import bounded

    many = [f"q{i}" for i in range(5000)]
    kept = bounded(many, 300, seed=0)
    assert len(kept) == 300 and set(kept) <= set(many)
    assert kept == sorted(kept, key=many.index)          # the generated order is kept
    assert bounded(many, 300, seed=0) == kept            # and the same sample every time
    assert bounded(many[:200], 300, seed=0) == many[:200]


def test_the_lexical_fit_holds_while_few_of_its_scopes_have_moved():
    from loci_pipeline.calibrate import lexical_fit_holds

    fitted = {f"s{i}": "a" for i in range(100)}
    assert lexical_fit_holds(fitted, dict(fitted), 0.02)
    two_moved = {**fitted, "s1": "b", "s2": "b"}
    assert lexical_fit_holds(fitted, two_moved, 0.02)
    three_moved = {**two_moved, "s3": "b"}
    assert not lexical_fit_holds(fitted, three_moved, 0.02)
    one_gone_two_new = {**{k: v for k, v in fitted.items() if k != "s0"}, "n1": "a", "n2": "a"}
    assert not lexical_fit_holds(fitted, one_gone_two_new, 0.02)
    assert not lexical_fit_holds({}, fitted, 0.02)
    # a small corpus refits on any change: one scope of 22 is not noise
    small = {f"s{i}": "a" for i in range(22)}
    assert not lexical_fit_holds(small, {**small, "s1": "b"}, 0.02)


def _change_webby(corpus):
    (corpus / "webby" / "webby" / "rotation.py").write_text(
        "def rotate_certificates():\n    '''Rotate the handshake certificates.'''\n")
    assert runner.invoke(app, ["index", "--quiet"]).exit_code == 0


def test_a_refit_after_few_of_many_scopes_moved_keeps_the_lexical_fit(corpus, loci_home, monkeypatch):
    from dataclasses import replace

    import loci_pipeline.calibrate as cal

    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    before = read_calibration(layout())
    # two scopes stand for many: a share of one half lets one of them move
    monkeypatch.setattr(cal, "DEFAULT_PARAMS", replace(DEFAULT_PARAMS, calibration_refit_share=0.5))
    monkeypatch.setattr(cal, "measure", lambda *a, **k: pytest.fail("the lexical fit was measured again"))
    _change_webby(corpus)
    res = runner.invoke(app, ["calibrate"])
    assert res.exit_code == 0 and "written to" in res.output, res.output
    after = read_calibration(layout())
    assert after["fits"] == before["fits"] and after["params"] == before["params"]
    assert after["lexical"]["scopes"] == before["lexical"]["scopes"]      # still what it was fitted on
    assert after["index_written_at"] != before["index_written_at"]
    shown = runner.invoke(app, ["calibrate", "--show"]).output
    assert "1 of 2 scopes changed since" in shown


def test_a_refit_after_a_scope_of_a_small_corpus_moved_fits_the_words_again(corpus, loci_home, monkeypatch):
    import loci_pipeline.calibrate as cal

    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    before = read_calibration(layout())["lexical"]["scopes"]
    measured, real = [], cal.measure
    monkeypatch.setattr(cal, "measure", lambda *a, **k: measured.append(1) or real(*a, **k))
    _change_webby(corpus)
    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    assert measured and read_calibration(layout())["lexical"]["scopes"] != before


def test_calibrate_show_says_the_fit_is_stale_and_how_many_scopes_moved_since_it(corpus, loci_home):
    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    shown = runner.invoke(app, ["calibrate", "--show"]).output
    assert "0 of 2 scopes changed since" in shown and "stale" not in shown
    _change_webby(corpus)
    shown = runner.invoke(app, ["calibrate", "--show"]).output
    assert "1 of 2 scopes changed since" in shown
    assert "stale: the index changed since this fit" in shown and "loci calibrate" in shown
    assert "written to" in runner.invoke(app, ["calibrate"]).output
    shown = runner.invoke(app, ["calibrate", "--show"]).output
    assert "0 of 2 scopes changed since" in shown and "stale" not in shown


def test_a_commit_hooks_rebuild_of_one_scope_leaves_a_calibrated_home_calibrated(corpus, loci_home):
    """The hook runs `python -m loci.dodo --wait index:S`; in a calibrated home that rebuild
    fits the calibration too, as `loci update` would, so doctor has nothing to ask for after it."""
    from conftest import git
    from loci.dodo import main as dodo
    from loci.front.doctor import diagnose

    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    before = read_calibration(layout())
    (corpus / "gizmo" / "gizmo" / "gearbox.py").write_text("def shift_gearbox_clutch():\n    pass\n")
    git(corpus / "gizmo", "add", "-A")
    git(corpus / "gizmo", "commit", "-q", "-m", "a gearbox with a clutch")
    assert dodo(["--wait", "index:gizmo"]) == 0
    assert not [f for f in diagnose(layout()) if f.problem.startswith("calibration")]
    after = read_calibration(layout())
    assert after["lexical"]["scopes"]["gizmo"] != before["lexical"]["scopes"]["gizmo"]
    from loci_pipeline.calibrate import calibration_stale

    assert calibration_stale(layout()) is None
    assert "already fits" in runner.invoke(app, ["calibrate"]).output


def test_a_commit_hooks_rebuild_in_a_home_with_vectors_leaves_nothing_for_calibrate_to_fit(corpus, loci_home):
    """With vectors the hook's rebuild encodes the scope again; the merged summaries the fit reads
    are merged before it fits, as `loci update` orders them, so a later calibrate has nothing to do."""
    from conftest import git
    from loci_pipeline import build
    from loci_pipeline.calibrate import calibration_stale
    from loci_pipeline.runner import run_scopes
    from loci_pipeline.tasks import home_context

    def ctx():
        made = home_context(layout(), graphs=False, embed=True, calibrate=True,
                            open_encoder=lambda name, lay: FakeEncoder(), query_encoder=lambda model, lay: FakeEncoder())
        made.encoder()
        return made

    assert build.update(ctx()).code == 0
    assert calibration_stale(layout()) is None
    (corpus / "gizmo" / "gizmo" / "gearbox.py").write_text("def shift_gearbox_clutch():\n    pass\n")
    git(corpus / "gizmo", "add", "-A")
    git(corpus / "gizmo", "commit", "-q", "-m", "a gearbox with a clutch")
    report = run_scopes(ctx(), ["gizmo"])
    assert report.code == 0, report.failed
    assert {"index:gizmo", "vectors:gizmo", "routing", "embed", "calibrate"} <= set(report.executed)
    assert calibration_stale(layout()) is None
    assert not build.calibrate(ctx()).fitted


def test_calibrate_full_fits_the_words_again_even_when_the_fit_still_stands(corpus, loci_home, monkeypatch):
    import loci_pipeline.calibrate as cal

    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    measured, real = [], cal.measure
    monkeypatch.setattr(cal, "measure", lambda *a, **k: measured.append(1) or real(*a, **k))
    assert "already fits" in runner.invoke(app, ["calibrate"]).output and not measured
    res = runner.invoke(app, ["calibrate", "--full"])
    assert res.exit_code == 0 and "written to" in res.output, res.output
    assert measured == [1]
    assert read_calibration(layout())["lexical"]["moved"] == 0


def test_calibrate_show_and_full_together_is_refused_in_one_line(corpus, loci_home):
    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    before = (loci_home / "calibration.json").read_bytes()
    res = runner.invoke(app, ["calibrate", "--show", "--full"])
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "--show" in res.output and "--full" in res.output
    assert (loci_home / "calibration.json").read_bytes() == before


# --- the floors fitted on what the second opinion measures -------------------------------------

def test_the_route_floors_are_fitted_on_the_scopes_the_second_opinion_measures():
    """The live second opinion measures a shortlist, not every scope: among hundreds the best of
    all is closer than the best of what it reads (0.524 against 0.453 at 1,000 scopes)."""
    from loci_pipeline.calibrate import semantic_from_pieces

    nulls = {"near": [0.60, 0.58, 0.61, 0.59], "mid": [0.40, 0.42, 0.38, 0.41], "far": [0.20, 0.22, 0.21, 0.19]}
    per = {s: {"floor": 0.5, "null": v} for s, v in nulls.items()}
    every = semantic_from_pieces(per, 4)["route"]
    read = semantic_from_pieces(per, 4, measured=[{"mid", "far"}] * 4)["route"]
    assert every["null_best_affinity"] > 0.55 and read["null_best_affinity"] < 0.45
    assert read["semantic_add_floor"] < every["semantic_add_floor"]
    assert semantic_from_pieces(per, 4, measured=None)["route"] == every
    # a question whose measured scopes have no piece is judged over every scope
    assert semantic_from_pieces(per, 4, measured=[{"gone"}] * 4)["route"] == every


def test_the_add_floor_is_fitted_on_every_scope_read_and_the_z_floor_on_the_few_that_judge():
    """The live opinion reads `semantic_read` scopes to find the closest and judges how far a
    question stands out on its first `semantic_shortlist`: each cut fitted where it is applied."""
    from loci_pipeline.calibrate import semantic_from_pieces

    base = [0.20, 0.21, 0.19, 0.20, 0.22, 0.18, 0.20, 0.21]
    nulls = {"quiet": base, "spiky": base[:-1] + [0.60], "other": [v + 0.1 for v in base]}
    per = {s: {"floor": 0.5, "null": v} for s, v in nulls.items()}
    n = len(base)
    wide = semantic_from_pieces(per, n, measured=[{"quiet", "spiky", "other"}] * n)["route"]
    split = semantic_from_pieces(per, n, measured=[{"quiet", "spiky", "other"}] * n, few=[{"quiet", "other"}] * n)["route"]
    assert split["semantic_add_floor"] == wide["semantic_add_floor"]        # the best of all read
    assert split["semantic_z_floor"] < wide["semantic_z_floor"]             # spiky's outlier was never judged
    assert semantic_from_pieces(per, n, measured=[{"quiet", "other"}] * n)["route"]["semantic_z_floor"] == split["semantic_z_floor"]


def test_the_z_floor_reads_each_questions_standing_where_it_was_measured():
    from loci_pipeline.calibrate import z_floor_from

    quiet = [0.20, 0.21, 0.19, 0.20, 0.22, 0.18, 0.20, 0.21]
    spiky = [0.20, 0.21, 0.19, 0.20, 0.22, 0.18, 0.20, 0.60]
    per_scope = {"quiet": quiet, "spiky": spiky}
    assert z_floor_from(per_scope, quantile=0.99) > 10
    assert z_floor_from(per_scope, quantile=0.99, measured=[{"quiet"}] * 8) < 3


def test_a_question_is_measured_where_its_summary_is_closest_and_where_its_words_went():
    import numpy as np

    from loci_pipeline.calibrate import measured_by_opinion

    spans = {"a": (0, 1), "b": (1, 2), "c": (2, 3), "d": (3, 4)}
    rows = np.eye(4, dtype=np.float32)
    qvecs = np.array([[1, 0.5, 0, 0], [0, 0, 0.2, 1]], dtype=np.float32)
    got = measured_by_opinion((spans, rows), qvecs, ["a", "b", "c", "d"], [["d"], []], shortlist=2)
    assert got == [{"a", "b", "d"}, {"d", "c"}]


def test_calibrate_fits_the_route_floors_on_the_scopes_the_opinion_measures(corpus, loci_home, monkeypatch):
    """With a merged summary, each off-topic question's best is taken where the live second opinion
    would look for it (its summary shortlist and its words' own choice), not over every scope."""
    from loci.query import semantic
    from loci.query.evalgen import UNANSWERABLE_QUESTIONS
    from loci_pipeline import calibrate as cal
    from loci_pipeline.embed import embed_scope

    enc = FakeEncoder()
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), enc)
    n = len(UNANSWERABLE_QUESTIONS)
    gizmo_only = cal.calibrate(layout(), load_encoder=lambda model, lay: enc, write=False)
    monkeypatch.setattr(semantic, "load_summary", lambda lay, model: ({"gizmo": (0, 1)}, np.ones((1, 32), np.float32)))
    seen = []

    def measured(summary, qvecs, scopes, judged, shortlist=4):
        seen.append((sorted(scopes), len(judged), len(qvecs), shortlist))
        return [{"gizmo"}] * len(qvecs)

    monkeypatch.setattr(cal, "measured_by_opinion", measured)
    got = cal.calibrate(layout(), load_encoder=lambda model, lay: enc, write=False)
    # once as far as the opinion reads, once for the few whose standing judges the question
    assert seen == [(["gizmo", "webby"], n, n, DEFAULT_PARAMS.semantic_read), (["gizmo", "webby"], n, n, DEFAULT_PARAMS.semantic_shortlist)]
    route, every = (d["semantic"]["models"]["fake-model"]["route"] for d in (got, gizmo_only))
    from loci_pipeline.calibration_pieces import Pieces

    nulls = cal.model_pieces(layout(), Pieces(layout(), ["gizmo", "webby"], cal.piece_signature()),
                             "fake-model", list(UNANSWERABLE_QUESTIONS), lambda model, lay: enc)
    assert route["null_best_affinity"] == round(near_top(sorted(nulls["gizmo"]["null"])), 4)
    assert every["null_best_affinity"] == round(near_top(sorted(max(a, b) for a, b in
                                                              zip(nulls["gizmo"]["null"], nulls["webby"]["null"]))), 4)


# --- the corpus-level semantic values while few scopes moved --------------------------------

def _embedded(corpus):
    from loci_pipeline.embed import embed_scope

    enc = FakeEncoder()
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), enc)
    return enc


def _webby_changed_and_embedded(corpus, enc):
    from loci_pipeline.embed import embed_scope

    _change_webby(corpus)
    embed_scope("webby", layout(), enc)


def test_a_refit_after_few_of_many_scopes_moved_keeps_the_corpus_level_semantic_values(corpus, loci_home, monkeypatch):
    """Routing the off-topic questions and the opinion's shortlists over every scope are what a
    calibrated pull of one bundle paid at 1,000 scopes: while the fit stands they are not redone,
    and the moved scope's own floor and background are its piece's now."""
    from dataclasses import replace

    import loci_pipeline.calibrate as cal
    from loci_pipeline.calibration_pieces import Pieces

    enc = _embedded(corpus)
    before = cal.calibrate(layout(), load_encoder=lambda model, lay: enc)
    monkeypatch.setattr(cal, "DEFAULT_PARAMS", replace(DEFAULT_PARAMS, calibration_refit_share=0.5))
    _webby_changed_and_embedded(corpus, enc)
    for name in ("opinion_inputs", "multilingual_floor", "semantic_floors"):
        monkeypatch.setattr(cal, name, lambda *a, name=name, **k: pytest.fail(f"{name} ran again"))
    import loci_pipeline.calibration_pieces as cp

    read = []

    class Counted(cp.Pieces):
        def __init__(self, lay, scopes, method):
            read.append(list(scopes))
            super().__init__(lay, scopes, method)

    monkeypatch.setattr(cp, "Pieces", Counted)
    after = cal.calibrate(layout(), load_encoder=lambda model, lay: enc)
    assert read == [["webby"]]      # the moved scope's piece alone
    was, now = (d["semantic"]["models"]["fake-model"] for d in (before, after))
    assert now["route"] == was["route"] and now.get("window_chance") == was.get("window_chance")
    assert after["multilingual"] == before["multilingual"]
    piece = cal.model_pieces(layout(), Pieces(layout(), ["webby"], cal.piece_signature()), "fake-model",
                             list(evalgen.UNANSWERABLE_QUESTIONS), lambda model, lay: enc)["webby"]
    assert now["floors"] == {"gizmo": was["floors"]["gizmo"], "webby": piece["floor"]}
    assert now["background"]["webby"] == cal.background_from({"webby": piece["null"]})["webby"]
    assert after["corpus_fit"]["moved"] == 1
    assert after["corpus_fit"]["scopes"] == before["corpus_fit"]["scopes"]   # still what it was fitted on


def test_a_moved_scope_of_a_small_corpus_fits_the_corpus_level_semantic_values_again(corpus, loci_home, monkeypatch):
    import loci_pipeline.calibrate as cal

    enc = _embedded(corpus)
    before = cal.calibrate(layout(), load_encoder=lambda model, lay: enc)
    _webby_changed_and_embedded(corpus, enc)
    routed, real = [], cal.opinion_inputs
    monkeypatch.setattr(cal, "opinion_inputs", lambda *a, **k: routed.append(1) or real(*a, **k))
    after = cal.calibrate(layout(), load_encoder=lambda model, lay: enc)
    assert routed and after["corpus_fit"]["moved"] == 0
    assert after["corpus_fit"]["scopes"] != before["corpus_fit"]["scopes"]


def test_vectors_that_change_under_an_unchanged_index_count_as_a_moved_scope(corpus, loci_home):
    """A scope embedded again (or pulled again with other vectors) keeps its fingerprint: its
    pieces' files say it moved."""
    import loci_pipeline.calibrate as cal
    from loci_pipeline.embed import embed_scope

    enc = _embedded(corpus)
    before = cal.calibrate(layout(), load_encoder=lambda model, lay: enc)
    from loci.kernel.vectorstore import vector_files

    for path in vector_files(layout().vectors("fake-model", "webby")):
        path.unlink()
    embed_scope("webby", layout(), enc)
    now = cal.corpus_state(layout(), cal.scope_digests(indexed_metas(layout())), cal.method_signature())
    assert cal.corpus_moved(before, now, 0.5) == ["webby"]


def test_calibrate_full_fits_the_corpus_level_semantic_values_again(corpus, loci_home, monkeypatch):
    from dataclasses import replace

    import loci_pipeline.calibrate as cal

    enc = _embedded(corpus)
    cal.calibrate(layout(), load_encoder=lambda model, lay: enc)
    monkeypatch.setattr(cal, "DEFAULT_PARAMS", replace(DEFAULT_PARAMS, calibration_refit_share=0.5))
    _webby_changed_and_embedded(corpus, enc)
    routed, real = [], cal.opinion_inputs
    monkeypatch.setattr(cal, "opinion_inputs", lambda *a, **k: routed.append(1) or real(*a, **k))
    assert cal.calibrate(layout(), load_encoder=lambda model, lay: enc, full=True)["corpus_fit"]["moved"] == 0
    assert routed


def test_a_fit_made_another_way_or_with_other_models_is_not_kept():
    from loci_pipeline.calibrate import corpus_moved

    now = {"method": "m", "pieces": "p", "tags": {"fake-model": "t", "": "ml"},
           "scopes": {f"s{i}": "d" for i in range(100)}}
    previous = {"corpus_fit": {**now, "moved": 0}, "semantic": {"models": {"fake-model": {}}}, "multilingual": {}}
    assert corpus_moved(previous, now, 0.02) == []
    assert corpus_moved(previous, {**now, "scopes": {**now["scopes"], "s1": "e", "s2": "e"}}, 0.02) == ["s1", "s2"]
    assert corpus_moved(previous, {**now, "scopes": {**now["scopes"], "s1": "e", "s2": "e", "s3": "e"}}, 0.02) is None
    assert corpus_moved(previous, {**now, "method": "other"}, 0.02) is None
    assert corpus_moved(previous, {**now, "tags": {"other-model": "t", "": "ml"}}, 0.02) is None
    assert corpus_moved({**previous, "semantic": {"skipped": "no vectors"}}, now, 0.02) is None
    assert corpus_moved({}, now, 0.02) is None


def test_a_moved_scope_patches_its_own_floor_and_a_gone_one_leaves():
    from loci_pipeline.calibrate import patched_model

    entry = {"floors": {"a": 0.5, "b": 0.6, "c": 0.7}, "background": {"a": [0.1, 0.01], "c": [0.2, 0.02]},
             "route": {"semantic_add_floor": 0.4}}
    got = patched_model(entry, {"b": {"floor": 0.65, "null": [0.1, 0.3, 0.5]}}, ["b", "c"], ["a", "b"])
    assert got["floors"] == {"a": 0.5, "b": 0.65}
    assert list(got["background"]) == ["a", "b"] and got["background"]["b"][0] == 0.3
    assert got["route"] == entry["route"]
