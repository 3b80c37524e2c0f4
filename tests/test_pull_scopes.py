"""`loci pull SOURCE --scope NAME`: only the named scopes' bundles come (the others neither taken
nor removed), a name the store lacks is one line and a non-zero exit, and `loci update` pulls the
source again the same way."""
from __future__ import annotations

import json

import test_pull
from test_pull import CHANGED_Q, GIZMO_Q, ask_json, cli, swap
from test_bundle import FakeEncoder

from loci.kernel.config import layout

corpus, published = test_pull.corpus, test_pull.published   # two bundles (gizmo, webby) in a folder store


def scope_names() -> set[str]:
    return {s["name"] for s in json.loads(cli("scopes", "--json").stdout)}


def test_pull_scope_takes_only_the_named_scopes_bundle(published):
    out = json.loads(cli("pull", str(published), "--scope", "gizmo", "--all", "--json").stdout)
    assert out["imported"] == ["gizmo"] and out["missing"] == [] and out["gone"] == []
    assert scope_names() == {"gizmo"}
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]


def test_pull_scope_leaves_the_other_scopes_of_the_source_as_they_are(published, corpus):
    from loci_pipeline.share.pull import read_pulled

    cli("pull", str(published), "--all", "--quiet")
    before = read_pulled(layout())["webby"]
    swap(published, corpus.v2)                                   # webby moved in the store
    out = json.loads(cli("pull", str(published), "--scope", "gizmo", "--all", "--json").stdout)
    assert out["imported"] == [] and out["unchanged"] == ["gizmo"] and out["gone"] == []
    assert scope_names() == {"gizmo", "webby"}                   # webby kept...
    assert read_pulled(layout())["webby"] == before              # ...as it was: not taken again


def test_a_scope_the_store_lacks_is_one_line_and_the_named_ones_it_has_are_pulled(published):
    res = cli("pull", str(published), "--scope", "nosuch", "--scope", "webby", "--quiet", code=1)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "'nosuch'" in lines[0], res.stderr
    assert scope_names() == {"webby"}
    res = cli("pull", str(published), "--scope", "nosuch", "--scope", "gizmo", "--json", code=1)
    out = json.loads(res.stdout)
    assert out["missing"] == ["nosuch"] and out["imported"] == ["gizmo"]


def test_update_pulls_again_only_the_scopes_pulled_by_name(published, corpus, monkeypatch):
    import loci_pipeline.embed

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())  # update re-embeds
    cli("pull", str(published), "--scope", "webby", "--all", "--quiet")
    swap(published, corpus.v2)                                   # webby moved in the store
    update = json.loads(cli("update", "--no-graphs", "--json").stdout)
    assert [p["imported"] for p in update["pulls"]] == [["webby"]]
    assert scope_names() == {"webby"}                            # gizmo still not taken
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]


def test_a_whole_pull_after_a_pull_by_name_is_how_update_pulls_the_source(published):
    from loci_pipeline.share.pull import pulled_sources

    cli("pull", str(published), "--scope", "gizmo", "--quiet")
    cli("pull", str(published), "--scope", "webby", "--quiet")
    [source] = pulled_sources(layout())
    assert source.scopes == ["gizmo", "webby"]
    cli("pull", str(published), "--quiet")                       # nothing moved, but asked whole
    [source] = pulled_sources(layout())
    assert source.scopes is None
