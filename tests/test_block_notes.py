"""A scope whose stores cannot be read says why in its block, in `ask --json` and the MCP answer
as in the text, with the fix that applies to it: `loci index` for a scope built here; for a
scope pulled from a store, the fetch's reason and what a pull or its publisher can do."""
from __future__ import annotations

import json
import shutil

import pytest
import test_pull
from conftest import GIZMO, WEBBY, setup_home
from test_fetch import _flip
from test_pull import GIZMO_Q, cli

from loci.front.mcp_server import Service
from loci.kernel import territory
from loci.kernel.config import layout

corpus, published = test_pull.corpus, test_pull.published   # two bundles in a folder store


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def gizmo_block(*args: str) -> dict:
    out = json.loads(cli("ask", "--json", "--no-cwd", *args, GIZMO_Q).stdout)
    return next(b for b in out["blocks"] if b["scope"] == "gizmo")


def test_a_local_scope_without_its_store_names_the_fix_in_its_json_block_and_the_mcp_answer(
        loci_home, tmp_path):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    assert "notes" not in gizmo_block()          # a block that answered carries no notes
    layout().query_db("gizmo").unlink()
    block = gizmo_block("--scope", "gizmo")
    assert block["episodes"] == [] and block["notes"] == ["no episode store for this scope: run `loci index`"]
    tool = json.loads(Service(loci_home).call("ask", question=GIZMO_Q, scope="gizmo", cwd=""))
    assert tool["blocks"][0]["notes"] == block["notes"]
    text = cli("ask", "--no-cwd", "--scope", "gizmo", GIZMO_Q).stdout
    assert "(no episode store for this scope: run `loci index`)" in text


def test_a_mapped_scope_whose_published_store_is_damaged_says_its_publisher_must_push_it_again(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    _flip(published / "gizmo" / "query.sqlite")
    block = gizmo_block()
    [note] = block["notes"]
    assert note.startswith("its stores could not be fetched from") and "sha256" in note
    assert "its publisher must push it again" in note and f"loci pull {published.as_uri()}" in note
    assert "loci index" not in note and "\n" not in note
    assert f"({note})" in cli("ask", "--no-cwd", GIZMO_Q).stdout


def test_a_mapped_scope_whose_store_is_unreachable_gives_the_reason_and_pull_all(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    shutil.rmtree(published)
    [note] = gizmo_block()["notes"]
    assert note.startswith("its stores could not be fetched from") and "loci index" not in note
    assert f"loci pull --all {published.as_uri()}" in note and "publisher" not in note


def test_a_long_lived_session_names_the_failed_fetch_on_every_question(published, loci_home):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    shutil.rmtree(published)
    service = Service(loci_home)
    for _ in range(2):   # the second question reads the failure the session kept, fetching nothing
        answer = json.loads(service.call("ask", question=GIZMO_Q, cwd=""))
        [note] = next(b for b in answer["blocks"] if b["scope"] == "gizmo")["notes"]
        assert "could not be fetched" in note and "loci index" not in note


def test_a_cached_scope_whose_stores_here_are_damaged_is_taken_again_by_pull_all(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    assert gizmo_block()["episodes"]                       # fetched and cached
    lay = layout()
    assert territory.state(lay, "gizmo") == "cached"
    lay.query_db("gizmo").write_bytes(b"not a database" * 100)
    [note] = gizmo_block()["notes"]
    assert f"`loci pull --all {published.as_uri()}`" in note and "`loci index` cannot rebuild" in note
    cli("pull", str(published), "--all", "--quiet", "--no-calibrate")   # the fix the note names works
    assert "notes" not in gizmo_block() and gizmo_block()["episodes"]


def test_a_scope_pulled_whole_without_its_query_file_is_not_told_to_run_index(published):
    cli("pull", str(published), "--all", "--quiet", "--no-calibrate")
    layout().query_db("gizmo").unlink()
    [note] = gizmo_block()["notes"]
    assert "missing or damaged" in note and "`loci index` cannot rebuild a pulled scope" in note
