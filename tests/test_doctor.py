"""`loci doctor`: every gap named per scope with the command that fixes it, and nothing written."""
import gzip
import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import make_repo
from loci.front.cli import app
from loci.kernel.config import layout
from loci.front.doctor import GAP, NOTE, diagnose

runner = CliRunner()
GH_TOKEN = ("ghp_" + "FAKE0" * 10)[:40]


@pytest.fixture
def corpus(tmp_path, loci_home):
    code = tmp_path / "code"
    make_repo(code / "gizmo", {
        "README.md": "# gizmo\n\nA sprocket calibration toolkit.\n",
        "gizmo/sprocket.py": "def calibrate_sprocket(x):\n    return x\n",
    })
    make_repo(code / "webby", {
        "README.md": f"# webby\n\nServe cookies over HTTP.\n\nDeploy with the token {GH_TOKEN} in CI.\n",
        "webby/server.py": "class SessionCookieJar:\n    pass\n",
    })
    res = runner.invoke(app, ["setup", str(code), "-y", "--quiet", "--no-graphs", "--no-embed", "--no-calibrate"])
    assert res.exit_code == 0, res.output
    return code


def by_problem(findings, problem):
    return {f.scope: f for f in findings if f.problem == problem}


@pytest.fixture
def with_graphify(monkeypatch):
    """Doctor's view of an install that has the graph extra, whether or not this one does."""
    import loci_pipeline.graphs

    monkeypatch.setattr(loci_pipeline.graphs, "graphify_available", lambda: True)

    def never(*a, **k):
        raise AssertionError("doctor must not run graphify")

    monkeypatch.setattr(loci_pipeline.graphs, "build_graph", never)


def test_names_a_scope_with_no_graph_and_the_command_that_builds_it(corpus, with_graphify):
    missing = by_problem(diagnose(layout()), "no_graph")
    assert set(missing) == {"gizmo", "webby"}
    assert missing["gizmo"].fix == "loci graphs --scope gizmo" and missing["gizmo"].severity == GAP


def test_without_the_graph_extra_says_how_to_install_it_once(corpus, monkeypatch):
    import loci_pipeline.graphs

    monkeypatch.setattr(loci_pipeline.graphs, "graphify_available", lambda: False)
    findings = diagnose(layout())
    extra = [f for f in findings if f.problem == "no_graph_extra"]
    assert len(extra) == 1 and "pip install" in extra[0].fix
    assert not by_problem(findings, "no_graph")


def test_names_a_graph_older_than_the_code(corpus, loci_home, with_graphify):
    from loci_pipeline.graphs import code_fingerprint, fingerprint_path, graph_path

    lay = layout()
    for name in ("gizmo", "webby"):
        graph_path(name, lay).parent.mkdir(parents=True, exist_ok=True)
        graph_path(name, lay).write_bytes(gzip.compress(b'{"nodes": [], "links": []}'))
        fp, _n = code_fingerprint(corpus / name)
        fingerprint_path(name, lay).write_text(json.dumps({"fingerprint": fp, "status": "built"}))
    assert not by_problem(diagnose(lay), "graph_stale")
    (corpus / "gizmo" / "gizmo" / "sprocket.py").write_text("def calibrate_sprocket(x, y):\n    return y\n")
    stale = by_problem(diagnose(lay), "graph_stale")
    assert set(stale) == {"gizmo"} and stale["gizmo"].fix == "loci graphs --scope gizmo"


def test_a_scope_graphify_cannot_read_is_a_note_not_a_gap(corpus, loci_home, with_graphify):
    from loci_pipeline.graphs import code_fingerprint, fingerprint_path

    lay = layout()
    fingerprint_path("gizmo", lay).parent.mkdir(parents=True, exist_ok=True)
    fp, _n = code_fingerprint(corpus / "gizmo")
    fingerprint_path("gizmo", lay).write_text(json.dumps({"fingerprint": fp, "status": "unsupported"}))
    note = by_problem(diagnose(lay), "prose_only")["gizmo"]
    assert note.severity == NOTE and "prose only" in note.message and note.fix is None
    assert "gizmo" not in by_problem(diagnose(lay), "no_graph")


def test_names_a_registered_directory_that_is_gone(corpus):
    shutil.rmtree(corpus / "webby")
    findings = diagnose(layout())
    gone = by_problem(findings, "missing_dir")
    assert set(gone) == {"webby"} and str(corpus / "webby") in gone["webby"].message
    assert gone["webby"].fix == "loci forget webby" and "loci update" in gone["webby"].message
    assert not [f for f in findings if f.scope == "webby" and f.problem != "missing_dir"]


def test_names_a_scope_that_is_registered_but_not_indexed(corpus, tmp_path):
    make_repo(corpus / "newbie", {"README.md": "# newbie\n\nFresh.\n"})
    assert runner.invoke(app, ["scan", str(corpus), "-q"]).exit_code == 0
    findings = diagnose(layout())
    assert by_problem(findings, "not_indexed")["newbie"].fix == "loci index"


def test_names_a_scope_whose_repository_changed_since_indexing(corpus):
    (corpus / "gizmo" / "README.md").write_text("# gizmo\n\nNow with flywheels.\n")
    stale = by_problem(diagnose(layout()), "index_stale")
    assert set(stale) == {"gizmo"} and stale["gizmo"].fix == "loci index"


def test_calibration_missing_then_older_than_the_index(corpus):
    assert by_problem(diagnose(layout()), "calibration_missing")[None].fix == "loci calibrate"
    assert runner.invoke(app, ["calibrate"]).exit_code == 0
    findings = diagnose(layout())
    assert not by_problem(findings, "calibration_missing") and not by_problem(findings, "calibration_stale")
    (corpus / "gizmo" / "README.md").write_text("# gizmo\n\nNow with flywheels.\n")
    assert runner.invoke(app, ["index", "-q"]).exit_code == 0
    stale = by_problem(diagnose(layout()), "calibration_stale")
    assert stale[None].fix == "loci calibrate" and "the index changed since this fit" in stale[None].message


def test_doctor_calls_the_calibration_stale_exactly_when_calibrate_would_fit_it_again(corpus, loci_home, monkeypatch):
    """One test decides both (``loci_pipeline.calibrate.calibration_stale``): doctor asks for
    `loci calibrate` when, and only when, `loci calibrate` would fit again."""
    from loci.query import semantic
    from loci_pipeline.calibrate import calibrate
    from loci_pipeline.embed import embed_scope

    def agree(stale: bool) -> None:
        flagged = bool(by_problem(diagnose(layout()), "calibration_stale"))
        res = runner.invoke(app, ["calibrate"])
        assert res.exit_code == 0, res.output
        assert (flagged, "written to" in res.output) == (stale, stale), res.output
        assert not by_problem(diagnose(layout()), "calibration_stale")

    calibrate(layout())                       # fitted by hand, not by the build's step
    agree(stale=False)
    (corpus / "gizmo" / "README.md").write_text("# gizmo\n\nNow with flywheels.\n")
    assert runner.invoke(app, ["index", "-q"]).exit_code == 0
    agree(stale=True)                         # the index moved
    monkeypatch.setattr(semantic, "load_encoder", lambda model, lay: FakeEncoder())
    embed_scope("gizmo", layout(), FakeEncoder())
    agree(stale=True)                         # the vectors the fit reads moved
    agree(stale=False)


def test_a_damaged_calibration_is_reported(corpus, loci_home):
    (loci_home / "calibration.json").write_text("{oops")
    bad = by_problem(diagnose(layout()), "calibration_unreadable")[None]
    assert "calibration.json" in bad.message and bad.fix == "loci calibrate"


def test_names_redacted_chunks_and_the_files_they_came_from(corpus):
    red = by_problem(diagnose(layout()), "redacted")
    assert set(red) == {"webby"}
    assert "README.md" in red["webby"].message and "rotate" in red["webby"].message
    assert red["webby"].severity == NOTE and red["webby"].fix is None


class FakeEncoder:
    def __init__(self, model_id="fake-model", dim=8):
        self.model_id, self.dim, self.batch_size = model_id, dim, 16

    def encode(self, texts):
        rng = np.random.default_rng(len(texts))
        out = rng.normal(size=(len(texts), self.dim)).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def embedded_with(model: str, model_id: str) -> None:
    """What `loci embed` records after a run: the model the home's vectors come from."""
    (layout().home / "embed.json").write_text(json.dumps({"model": model, "model_id": model_id}))


def test_names_missing_and_out_of_date_embeddings(corpus):
    from loci_pipeline.embed import embed_scope

    findings = diagnose(layout())
    assert by_problem(findings, "no_embeddings")[None].fix == "loci embed"
    embed_scope("gizmo", layout(), FakeEncoder())
    embedded_with("default", "fake-model")
    findings = diagnose(layout())
    assert set(by_problem(findings, "no_embeddings")) == {"webby"}
    assert not by_problem(findings, "embeddings_stale")
    (corpus / "gizmo" / "README.md").write_text("# gizmo\n\nNow with flywheels and more prose.\n")
    assert runner.invoke(app, ["index", "-q"]).exit_code == 0
    stale = by_problem(diagnose(layout()), "embeddings_stale")
    assert set(stale) == {"gizmo"} and stale["gizmo"].fix == "loci embed"


def test_names_vectors_whose_width_does_not_match_the_model(corpus):
    from loci.query.semantic import STATIC_ID, static_model_dir
    from loci_pipeline.embed import embed_scope

    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), FakeEncoder(STATIC_ID, dim=8))
    embedded_with("static", STATIC_ID)
    static_model_dir(layout()).mkdir(parents=True)
    (static_model_dir(layout()) / "config.json").write_text(json.dumps({"hidden_dim": 16}))
    wrong = by_problem(diagnose(layout()), "embeddings_dim")
    assert set(wrong) == {"gizmo", "webby"} and wrong["gizmo"].fix == "loci embed --model static"
    assert "8" in wrong["gizmo"].message and "16" in wrong["gizmo"].message


def test_only_the_model_the_home_uses_is_judged_not_every_folder_under_vectors(corpus):
    from loci.query.semantic import STATIC_ID
    from loci_pipeline.embed import embed_scope

    embed_scope("gizmo", layout(), FakeEncoder(STATIC_ID, dim=8))  # an earlier `loci embed --model static`
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), FakeEncoder())
    embedded_with("default", "fake-model")                       # then setup went back to the default
    findings = diagnose(layout())
    assert not [f for f in findings if f.problem.startswith(("no_embeddings", "embeddings_"))]


def test_names_a_model_whose_second_opinion_floors_are_not_fitted(corpus, loci_home):
    from loci.query.semantic import TRANSFORMER_ID
    from loci_pipeline.calibrate import calibrate

    (loci_home / "embed.json").write_text(json.dumps({"model": "fake-model", "model_id": "fake-model"}))
    off = by_problem(diagnose(layout()), "second_opinion_off")
    assert off[None].fix == "loci calibrate" and "fake-model" in off[None].message
    from loci_pipeline.embed import embed_scope

    embed_scope("gizmo", layout(), FakeEncoder())
    calibrate(layout(), load_encoder=lambda model, lay: FakeEncoder())
    assert not by_problem(diagnose(layout()), "second_opinion_off")
    (loci_home / "embed.json").write_text(json.dumps({"model": "default", "model_id": TRANSFORMER_ID}))
    assert not by_problem(diagnose(layout()), "second_opinion_off")  # the shipped floors are its own


def test_names_the_scopes_the_calibration_has_no_off_topic_background_for(corpus, loci_home):
    """A bundle pushed by another loci lands no calibration piece, so its scope has no background
    and the second opinion reads a typical one for it: doctor says which, and what mends it."""
    from loci_pipeline.calibrate import calibrate
    from loci_pipeline.embed import embed_scope

    (loci_home / "embed.json").write_text(json.dumps({"model": "fake-model", "model_id": "fake-model"}))
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), FakeEncoder())
    calibrate(layout(), load_encoder=lambda model, lay: FakeEncoder())
    assert not by_problem(diagnose(layout()), "background_missing")
    data = json.loads((loci_home / "calibration.json").read_text())
    del data["semantic"]["models"]["fake-model"]["background"]["webby"]
    (loci_home / "calibration.json").write_text(json.dumps(data))
    found = by_problem(diagnose(layout()), "background_missing")[None]
    assert "webby" in found.message and "gizmo" not in found.message and "loci calibrate" in found.fix


def snapshot(home):
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(home.rglob("*"))}


def test_doctor_writes_nothing_and_exits_one_when_a_gap_needs_a_command(corpus, loci_home):
    shutil.rmtree(corpus / "webby")
    before = snapshot(loci_home)
    text = runner.invoke(app, ["doctor"])
    as_json = runner.invoke(app, ["doctor", "--json"])
    assert snapshot(loci_home) == before
    assert text.exit_code == 1 and as_json.exit_code == 1
    assert "webby" in text.output and "run: loci forget webby" in text.output
    rows = json.loads(as_json.output)
    assert rows and all(set(r) == {"scope", "problem", "message", "fix", "severity"} for r in rows)
    assert {"scope": "webby", "problem": "missing_dir"}.items() <= next(
        r for r in rows if r["problem"] == "missing_dir").items()


def test_doctor_on_an_empty_home_says_to_run_setup(tmp_path, loci_home):
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 1 and "loci setup" in res.output
    assert not loci_home.exists()


def test_static_model_vectors_get_a_note_naming_the_switch(corpus, loci_home):
    from loci.query.semantic import STATIC_ID

    (loci_home / "embed.json").write_text(json.dumps({"model": "default", "model_id": STATIC_ID}))
    note = by_problem(diagnose(layout()), "static_vectors")[None]
    assert note.fix == "loci embed" and note.severity == NOTE


def test_a_scope_built_by_other_build_rules_is_told_apart_from_a_changed_repository(corpus, monkeypatch):
    import loci_pipeline.fingerprint as fingerprint

    meta = json.loads(layout().meta("gizmo").read_text())
    assert meta["build"] == fingerprint.build_signature()        # the index records the rules it was built by
    monkeypatch.setattr(fingerprint, "build_signature", lambda: "rules-of-a-newer-loci")
    stale = by_problem(diagnose(layout()), "index_built_by_other_rules")
    assert set(stale) == {"gizmo", "webby"} and stale["gizmo"].fix == "loci update"
    assert "build rules" in stale["gizmo"].message and "repository" not in stale["gizmo"].message
    assert not by_problem(diagnose(layout()), "index_stale")


def test_doctor_notes_pulled_scopes_that_came_without_a_multilingual_store(tmp_path, loci_home, monkeypatch):
    """A question in another language is measured only against scopes with a multilingual store:
    pulled scopes whose bundles carried none are named, with what brings one (a push from a
    home that has the package, then a pull); pulled scopes are never told to run `loci embed`."""
    import loci_pipeline.multilingual
    from test_multilingual import FETCHER, FINDER, BilingualEncoder, build

    from conftest import setup_home
    from loci.front.doctor import _multilingual
    from loci.query import multilingual

    setup_home(tmp_path / "code", {"fetcher": FETCHER, "finder": FINDER})
    lay = layout()
    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: True)
    monkeypatch.setattr(multilingual, "cache_current", lambda folder: True)
    build(lay, BilingualEncoder(), names=("fetcher",))
    found = _multilingual(lay, ["fetcher"], pulled=["finder"])
    assert [f.problem for f in found] == ["multilingual_pulled_missing"]
    assert "finder" in found[0].message and "loci pull" in found[0].fix and "loci embed" not in found[0].fix
    assert found[0].severity == NOTE
    build(lay, BilingualEncoder(), names=("finder",))
    assert _multilingual(lay, ["fetcher"], pulled=["finder"]) == []


def test_a_thousand_notes_of_one_kind_are_one_line_and_every_gap_keeps_its_own():
    from loci.front.doctor import Finding, render

    mapped = [Finding(f"pkg{i:04d}", "pulled_mapped", f"pulled from s3://b/pkg{i:04d} as a map: its stores "
                      "are fetched when a question first needs them", None, NOTE) for i in range(1000)]
    copies = [Finding(f"web-{i}", "copies", f"a copy of web: questions are answered from web", None, NOTE)
              for i in range(2)]
    gap = Finding("flask", "graph_stale", "its graph is older than its code", "loci graphs --scope flask")
    lines = render(mapped + copies + [gap], 1003)
    text = "\n".join(lines)
    assert len(lines) < 20
    assert "flask" in text and "run: loci graphs --scope flask" in text            # a gap: its own line and fix
    assert text.count("web-0") == 1 and text.count("web-1") == 1            # two notes of a kind: each shown
    folded = [line for line in lines if "1,000 scopes" in line]
    assert folded and "pkg0000" in text and "pkg0999" not in text and "--json" in text


def test_fix_commands_quote_a_scope_name_with_a_space_so_they_run_as_printed(tmp_path, loci_home, with_graphify):
    import shlex

    from conftest import setup_home

    setup_home(tmp_path / "code", {"my repo ü": {"README.md": "# spaced\n\nA spaced project.\n"}})
    findings = by_problem(diagnose(layout()), "no_graph")
    assert findings["my repo ü"].fix == "loci graphs --scope 'my repo ü'"
    assert shlex.split(findings["my repo ü"].fix)[3] == "my repo ü"
    shutil.rmtree(tmp_path / "code" / "my repo ü")
    gone = by_problem(diagnose(layout()), "missing_dir")["my repo ü"]
    assert gone.fix == "loci forget 'my repo ü'"
    assert "run: loci forget 'my repo ü'" in runner.invoke(app, ["doctor"]).output


def test_a_note_with_nothing_to_fix_prints_no_run_arrow():
    from loci.front.doctor import Finding, render

    note = Finding(None, "engine_running", "a warm engine answers questions (pid 1)", None, NOTE)
    text = "\n".join(render([note], 1))
    assert "run:" not in text and "a warm engine answers questions" in text
