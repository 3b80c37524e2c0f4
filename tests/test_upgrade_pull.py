"""A home that pulled maps under an older loci, updated by this one: the scopes stay maps (the
stores remote) once their publisher pushes them again; an older bundle's stores come whole meanwhile."""
from __future__ import annotations

import json

import test_pull
from test_pull import GIZMO_Q, ask_json, cli, swap

from loci.kernel import territory
from loci.kernel.config import layout

corpus, published = test_pull.corpus, test_pull.published   # the fixtures: two bundles in a folder store

OLD_DERIVED = "query3:000000000000:000000000000"   # how an older loci named the recipe of its query files


def _as_an_older_loci_published_and_pulled(store) -> None:
    """The bundles' query files and the home's pull records made by an older loci's recipe."""
    for manifest in store.glob("*/manifest.json"):
        data = json.loads(manifest.read_text())
        data["derived"] = OLD_DERIVED
        manifest.write_text(json.dumps(data, indent=2, sort_keys=True))
    lay = layout()
    records = json.loads(lay.pulled.read_text())
    for rec in records["scopes"].values():
        rec["derived"] = OLD_DERIVED
        rec.pop("whole", None)    # an older loci recorded only what it did ("mapped")
    lay.pulled.write_text(json.dumps(records))


def test_maps_pulled_by_an_older_loci_are_maps_again_once_their_publisher_pushes_with_this_one(
        published, corpus, monkeypatch):
    import loci_pipeline.embed
    from test_bundle import FakeEncoder

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    cli("pull", str(published), "--quiet", "--no-calibrate")
    _as_an_older_loci_published_and_pulled(published)
    cli("update", "--quiet", "--no-graphs")           # the upgrade: an older query file cannot be served remote
    lay = layout()
    assert territory.state(lay, "gizmo") is None and lay.query_db("gizmo").is_file()
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]
    swap(published, corpus.v1)                          # the publisher upgrades too and pushes again
    cli("update", "--quiet", "--no-graphs")
    assert territory.state(lay, "gizmo") == territory.state(lay, "webby") == "mapped"
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]
