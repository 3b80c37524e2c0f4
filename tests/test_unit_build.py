"""loci_pipeline.build, the one build API: each step takes a BuildContext and returns a report value."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import GIZMO, WEBBY, git, make_repo
from loci.kernel.atomic import LockHeld, process_start
from loci.kernel.config import layout
from loci.kernel.errors import BuildError, UsageError
from loci_pipeline import build
from loci_pipeline.tasks import BuildContext
from test_bundle import FakeEncoder


@pytest.fixture
def code(tmp_path, loci_home):
    for name, files in (("gizmo", GIZMO), ("webby", WEBBY)):
        make_repo(tmp_path / "code" / name, files)
    return tmp_path / "code"


def ctx(**kw) -> BuildContext:
    return BuildContext(layout(), **kw)


def test_scan_reports_what_it_registered_and_who_owns_it(code):
    report = build.scan(ctx(), [code])
    assert sorted(report.found) == ["gizmo", "webby"] and report.scopes == 2
    assert set(report.owners) == {"gizmo", "webby"} and report.problems == []
    assert [s["name"] for s in json.loads(layout().scopes.read_text())["scopes"]] == ["gizmo", "webby"]


def test_scanning_a_folder_that_is_not_there_is_a_problem_not_an_exception(tmp_path, loci_home):
    report = build.scan(ctx(), [tmp_path / "nowhere"])
    assert report.found == [] and report.problems and "nowhere" in report.problems[0]


def test_index_with_nothing_registered_says_to_scan_first(loci_home):
    with pytest.raises(BuildError, match="loci scan DIR"):
        build.index(ctx())


def test_index_builds_every_scope_once_then_finds_them_unchanged(code):
    build.scan(ctx(), [code])
    first = build.index(ctx())
    assert sorted(first.rebuilt) == ["gizmo", "webby"] and first.routed and first.code == 0
    assert first.metas["gizmo"]["chunks"] > 0
    again = build.index(ctx())
    assert again.rebuilt == [] and sorted(again.unchanged) == ["gizmo", "webby"] and not again.routed


def test_a_commit_rebuilds_its_scope_only(code):
    build.scan(ctx(), [code])
    build.index(ctx())
    (code / "webby" / "webby" / "tls.py").write_text("def rotate_certificates():\n    pass\n")
    git(code / "webby", "add", "-A")
    git(code / "webby", "commit", "-q", "-m", "rotate certificates")
    report = build.index(ctx())
    assert report.rebuilt == ["webby"] and report.unchanged == ["gizmo"]


def test_force_rebuilds_an_unchanged_scope(code):
    build.scan(ctx(), [code])
    build.index(ctx())
    assert sorted(build.index(ctx(), force=True).rebuilt) == ["gizmo", "webby"]


def test_graphs_of_an_unknown_scope_is_a_usage_error_naming_the_known_ones(code):
    build.scan(ctx(), [code])
    with pytest.raises(UsageError, match="unknown scope 'nope'; known scopes: gizmo, webby"):
        build.graphs(ctx(), ["nope"])


@pytest.mark.parametrize("step", [build.embed, build.calibrate])
def test_embed_and_calibrate_before_any_index_say_what_to_run(code, step):
    build.scan(ctx(), [code])
    with pytest.raises(BuildError, match="nothing indexed yet"):
        step(ctx())


def test_embed_encodes_new_chunks_once_and_reuses_them_after(code):
    encoder = FakeEncoder()
    build.scan(ctx(), [code])
    build.index(ctx())
    first = build.embed(ctx(open_encoder=lambda name, lay: encoder))
    assert sorted(first.embedded) == ["gizmo", "webby"] and first.encoded > 0 and first.code == 0
    assert first.model_id == "fake-model"
    again = build.embed(ctx(open_encoder=lambda name, lay: encoder))
    assert again.encoded == 0 and sorted(again.unchanged) == ["gizmo", "webby"]


def test_an_encoder_that_cannot_load_is_a_build_error_before_any_task(code):
    from loci.query.semantic import EncoderUnavailable

    def unavailable(name, lay):
        raise EncoderUnavailable("no model here; pip install it")

    build.scan(ctx(), [code])
    build.index(ctx())
    with pytest.raises(BuildError, match="no model here"):
        build.embed(ctx(open_encoder=unavailable))
    assert not layout().embed_config.exists()


def test_update_with_nothing_registered_says_to_set_up(loci_home):
    with pytest.raises(BuildError, match="loci setup DIR"):
        build.update(ctx())


def test_update_refuses_while_another_live_process_builds_and_touches_nothing(code):
    build.scan(ctx(), [code])
    lay = layout()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lay.lock.write_text(json.dumps({"pid": sleeper.pid, "what": "build", "start": process_start(sleeper.pid)}))
        with pytest.raises(LockHeld):
            build.update(ctx())
        assert not lay.manifest.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_setup_scans_and_builds_and_lists_the_tasks_that_ran(code):
    report = build.setup(ctx(), [code])
    assert sorted(report.scan.found) == ["gizmo", "webby"]
    assert sorted(report.index.rebuilt) == ["gizmo", "webby"] and report.code == 0
    assert {"index:gizmo", "index:webby", "routing"} <= set(report.tasks)
    assert report.embed is None and report.calibrate is None      # not asked for


def test_setup_of_a_folder_without_repositories_is_a_build_error(tmp_path, loci_home):
    (tmp_path / "empty").mkdir()
    with pytest.raises(BuildError, match="no git repositories were found"):
        build.setup(ctx(), [tmp_path / "empty"])


def test_update_adds_the_folders_it_is_given(code, tmp_path):
    build.setup(ctx(), [code / "gizmo"])
    report = build.update(ctx(scan=True), [code / "webby"])
    assert report.scan.found == ["webby"] and "webby" in report.index.rebuilt


# ---------------------------------------------------------------- the registry, by hand

def test_add_registers_a_directory_then_adds_aliases_to_it(code):
    first = build.add(ctx(), code / "gizmo")
    assert (first.name, first.registered, first.indexed) == ("gizmo", True, False)
    build.index(ctx())
    again = build.add(ctx(), code / "gizmo", alias=["cogworks"], glob=["extra/*.txt"])
    assert (again.name, again.registered, again.indexed) == ("gizmo", False, True)
    scope = json.loads(layout().scopes.read_text())["scopes"][0]
    assert "cogworks" in scope["aliases"] and "extra/*.txt" in scope["globs"]


def test_adding_a_directory_that_is_not_there_is_an_error_and_writes_nothing(tmp_path, loci_home):
    from loci.kernel.errors import LociError

    with pytest.raises(LociError):
        build.add(ctx(), tmp_path / "nowhere")
    assert not layout().scopes.exists()


def test_infer_groups_labels_every_scope_and_says_why_an_owner_is_unknown(code):
    build.scan(ctx(), [code])
    reg = json.loads(layout().scopes.read_text())
    for s in reg["scopes"]:
        s["owner"] = "someone-else"
    layout().scopes.write_text(json.dumps(reg))
    report = build.infer_groups(ctx())
    owners = {s["name"]: s["owner"] for s in json.loads(layout().scopes.read_text())["scopes"]}
    assert owners == report.owners and set(owners) == {"gizmo", "webby"}
    assert "someone-else" not in owners.values()
    assert set(report.why) == {n for n, o in owners.items() if o == "unknown"}
    assert all(report.why.values())
