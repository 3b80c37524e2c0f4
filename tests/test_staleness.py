"""One answer to "is this scope's graph or index current?", for the tasks and for doctor."""
import shutil

import pytest

from conftest import GIZMO, WEBBY, setup_home
from loci.front.doctor import diagnose
from loci.kernel.config import layout
from loci.kernel.registry import load_registry
from loci.kernel.state import read_meta
from loci_pipeline import staleness
from loci_pipeline.tasks import home_context


def stale_for_doctor(lay) -> set[str]:
    return {f.scope for f in diagnose(lay) if f.problem in ("index_stale", "graph_stale")}


def stale_for_the_tasks(lay) -> set[str]:
    ctx = home_context(lay)
    return {s.name for s in load_registry(lay).scopes if not ctx.index_fresh(s)
            or (ctx.graphs and ctx.graph_fresh(s.name) is False)}


@pytest.fixture
def graphed(tmp_path, loci_home):
    pytest.importorskip("graphify")
    return setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY}, "--no-embed", "--no-calibrate")


def test_the_tasks_and_doctor_agree_before_and_after_an_edit(graphed):
    lay = layout()
    assert stale_for_doctor(lay) == stale_for_the_tasks(lay) == set()
    (graphed / "webby" / "webby" / "server.py").write_text("class SessionCookieJar:\n    pass\n")
    assert stale_for_doctor(lay) == stale_for_the_tasks(lay) == {"webby"}


def test_a_home_copied_without_its_file_times_is_still_current(graphed, tmp_path):
    copy = tmp_path / "copied-home"
    shutil.copytree(layout().home, copy, copy_function=shutil.copyfile)  # `cp -r`: new mtimes
    lay = layout(copy)
    assert all(read_meta(lay, n) for n in ("gizmo", "webby"))
    assert stale_for_doctor(lay) == stale_for_the_tasks(lay) == set()


def test_an_index_names_loci_s_graph_by_its_content_and_a_user_graph_by_its_time(graphed):
    lay = layout()
    scope = load_registry(lay).get("gizmo")
    assert staleness.graph_identity(lay, scope).startswith("sha1:")
    user = graphed / "gizmo" / "graphify-out" / "graph.json"
    user.parent.mkdir()
    user.write_text('{"nodes": [], "links": []}')
    assert staleness.graph_identity(lay, scope) == f"{user.stat().st_mtime:.6f}"


def test_a_check_writes_nothing_to_the_home(graphed):
    lay = layout()
    (graphed / "gizmo" / "README.md").write_text("# gizmo\n\nSprockets, now with docs.\n")
    before = {p: p.stat().st_mtime_ns for p in lay.home.rglob("*") if p.is_file()}
    stale_for_the_tasks(lay)
    stale_for_doctor(lay)
    assert {p: p.stat().st_mtime_ns for p in lay.home.rglob("*") if p.is_file()} == before
