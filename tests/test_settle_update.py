"""One `loci update` settles a home of local and pulled scopes: the pulled sources are pulled
again before the build's embed and calibrate steps run, so a second update has nothing to do."""
from __future__ import annotations

import json

import pytest

import test_pull
from conftest import git, setup_home
from test_bundle import embed_home
from test_pull import cli, swap

from loci.kernel.config import layout

corpus, published = test_pull.corpus, test_pull.published   # two bundles (gizmo, webby) in a folder store

SOLO = {"README.md": "# solo\n\nA lonely lighthouse keeper's logbook of tides and lanterns.\n",
        "solo/tides.py": "def lantern_tide(x):\n    return x\n"}
OLD_DERIVED = "query3:000000000000:000000000000"   # a query file made by an older loci's recipe


@pytest.fixture
def mixed(published, tmp_path, monkeypatch):
    """A home with a local scope (solo), embedded and calibrated, that pulled the store as maps."""
    code = setup_home(tmp_path / "mine", {"solo": SOLO})
    embed_home(monkeypatch)                       # the fake model stands in for every encoder from here
    cli("calibrate")
    cli("pull", str(published), "--quiet")
    return code


def _older_publisher(store) -> None:
    """Every bundle's query file made by an older loci: the next pull must take it whole."""
    for manifest in store.glob("*/manifest.json"):
        data = json.loads(manifest.read_text())
        data["derived"] = OLD_DERIVED
        manifest.write_text(json.dumps(data, indent=2, sort_keys=True))


def _count_calibrations(monkeypatch) -> list[int]:
    import loci_pipeline.calibrate

    fits, real = [], loci_pipeline.calibrate.calibrate
    monkeypatch.setattr(loci_pipeline.calibrate, "calibrate", lambda *a, **kw: fits.append(1) or real(*a, **kw))
    return fits


def _second_update():
    from loci_pipeline import build
    from loci_pipeline.tasks import home_context

    return build.update(home_context(layout(), graphs=False))


def _assert_settled(report) -> None:
    # no vectors, multilingual, embed or calibrate (the scan and the pulls, which list the store, always run)
    assert [t for t in report.tasks if t != "scan" and not t.startswith("pull:")] == []
    assert [p.imported for p in report.pulls] == [[]]
    doctor = json.loads(cli("doctor", "--json", code=1).stdout)   # 1: solo has no code graph (no graphify here)
    assert [(p["scope"], p["problem"]) for p in doctor if p["severity"] != "note"] == [("solo", "no_graph")], doctor


def test_one_update_settles_a_home_whose_pulled_maps_must_now_be_taken_whole(mixed, published, monkeypatch):
    _older_publisher(published)
    fits = _count_calibrations(monkeypatch)
    cli("update", "--quiet", "--no-graphs")
    assert layout().query_db("gizmo").is_file()                # taken whole, as an older bundle must be
    assert len(fits) == 1
    _assert_settled(_second_update())


def test_one_update_calibrates_once_when_a_local_and_a_pulled_scope_both_changed(mixed, published, corpus,
                                                                                 monkeypatch):
    (mixed / "solo" / "solo" / "beacons.py").write_text("def beacon_rotation():\n    pass\n")
    git(mixed / "solo", "add", "-A")
    git(mixed / "solo", "commit", "-q", "-m", "beacons")
    swap(published, corpus.v2)                                  # webby moved in the store
    fits = _count_calibrations(monkeypatch)
    res = cli("update", "--no-graphs")
    assert "pulled 1 scope(s)" in res.stdout and "webby" in res.stdout
    assert "calibrated" in res.stdout
    assert len(fits) == 1
    _assert_settled(_second_update())
