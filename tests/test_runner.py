"""loci_pipeline.runner: one doit run per update, the routing merge inside it even when a scope fails."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_tasks import built, edit, routed_tokens

from loci.kernel.config import layout
from loci_pipeline.runner import run
from loci_pipeline.tasks import BuildContext, home_context

ROOT = Path(__file__).resolve().parent.parent
REPOS = {
    "alpha": {"README.md": "# alpha\n\nSprocket calibration toolkit.\n"},
    "beta": {"README.md": "# beta\n\nCookie sessions over HTTP.\n"},
}


@pytest.fixture
def two(tmp_path, loci_home):
    """Two scopes, scanned and built once (no graphs, no vectors): returns the code folder."""
    return built(tmp_path / "code", REPOS)


def break_beta_index() -> None:
    """beta's index cannot be written: its chunk file's place is taken by a folder."""
    chunks = layout().chunks("beta")
    chunks.unlink()
    (chunks / "in-the-way").mkdir(parents=True)


def test_one_scope_s_failed_index_still_merges_the_other_s_routing_in_the_same_doit_run(two, monkeypatch):
    import loci_pipeline.runner

    runs = []
    real = loci_pipeline.runner.doit_main
    monkeypatch.setattr(loci_pipeline.runner, "doit_main", lambda *a, **k: runs.append(a) or real(*a, **k))
    edit(two / "alpha", "flywheels")
    edit(two / "beta", "websockets")
    break_beta_index()
    report = run(home_context(layout(), graphs=False), ["update"])
    assert len(runs) == 1
    assert list(report.failed) == ["index:beta"] and report.code != 0
    assert report.scopes("index") == ["alpha"]
    assert "routing" in report.values  # doit ran the merge as a task (its values were saved)
    assert "flywheel" in routed_tokens(layout()) and "websocket" not in routed_tokens(layout())


def test_python_m_loci_dodo_merges_the_routing_of_the_scopes_that_built_and_fails(two):
    edit(two / "alpha", "flywheels")
    edit(two / "beta", "websockets")
    break_beta_index()
    out = subprocess.run([sys.executable, "-m", "loci.dodo"], capture_output=True, text=True, cwd=ROOT, check=False,
                         env={**os.environ, "LOCI_HOME": str(layout().home)}, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "beta" in out.stdout + out.stderr and "Traceback" not in out.stderr
    assert "flywheel" in routed_tokens(layout())


def test_the_next_run_after_the_failure_is_fixed_builds_the_failed_scope_and_merges_it(two):
    edit(two / "beta", "websockets")
    break_beta_index()
    assert run(home_context(layout(), graphs=False), ["update"]).failed
    shutil.rmtree(layout().chunks("beta"))
    report = run(home_context(layout(), graphs=False), ["update"])
    assert report.code == 0, report.failed
    assert report.scopes("index") == ["beta"] and "routing" in report.executed
    assert "websocket" in routed_tokens(layout())


def test_routing_waits_for_every_index_step_before_it_merges(two, monkeypatch):
    import loci_pipeline.tasks

    order = []
    real_index, real_routing = loci_pipeline.tasks.index_action, loci_pipeline.tasks.routing_action
    monkeypatch.setattr(loci_pipeline.tasks, "index_action",
                        lambda ctx, name: order.append(f"index:{name}") or real_index(ctx, name))
    monkeypatch.setattr(loci_pipeline.tasks, "routing_action",
                        lambda ctx: order.append("routing") or real_routing(ctx))
    edit(two / "alpha", "flywheels")
    edit(two / "beta", "websockets")
    report = run(home_context(layout(), graphs=False), ["update"], jobs=4)
    assert report.code == 0, report.failed
    assert sorted(order[:2]) == ["index:alpha", "index:beta"] and order[2:] == ["routing"]


@pytest.fixture
def graphed(tmp_path, loci_home):
    """Two scopes set up with code graphs (graphify), no vectors."""
    pytest.importorskip("graphify")
    from conftest import GIZMO, WEBBY, setup_home

    return setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY}, "--no-embed", "--no-calibrate")


def made_steps(ctx: BuildContext) -> dict[str, dict]:
    """The per-scope task dicts the creator makes, by name (``graphs:S`` ...)."""
    from loci_pipeline.tasks import make_tasks

    made = make_tasks(ctx, delayed=False)["task_scopes"]()
    return {f"{t['basename']}:{t['name']}": t for t in made if t.get("name")}


def test_every_file_a_scope_s_graph_and_index_steps_write_is_a_target(graphed):
    from loci_pipeline.graphs import fingerprint_path, graph_path

    lay = layout()
    steps = made_steps(home_context(lay))
    assert {str(graph_path("gizmo", lay)), str(fingerprint_path("gizmo", lay))} <= set(steps["graphs:gizmo"]["targets"])
    assert {str(lay.symbols("gizmo")), str(lay.calls("gizmo")), str(lay.chunks("gizmo")),
            str(lay.meta("gizmo"))} <= set(steps["index:gizmo"]["targets"])


def test_a_scope_without_a_graph_names_no_structure_tables(two):
    lay = layout()
    targets = set(made_steps(home_context(lay, graphs=False))["index:alpha"]["targets"])
    assert str(lay.chunks("alpha")) in targets and str(lay.symbols("alpha")) not in targets


def test_a_deleted_structure_table_is_written_again_by_the_next_update(graphed):
    lay = layout()
    lay.calls("gizmo").unlink()
    report = run(home_context(lay), ["update"])
    assert report.code == 0, report.failed
    assert report.scopes("index") == ["gizmo"]
    assert lay.calls("gizmo").is_file()
