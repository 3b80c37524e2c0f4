"""A mapped scope's fetch that fails records why, where it finds out (``territory.FetchNote.reason``):
"damaged" (the published copy is bad: a checksum that does not match, a query file or vector table
that does not read), "missing" (the store is there, the file is not), "unreachable" (the store
cannot be reached). The block's note reads that reason, not the words of the error's message."""
from __future__ import annotations

import hashlib
import json
import shutil
import socket

import pytest
import test_pull
from test_block_notes import gizmo_block
from test_fetch import _flip
from test_pull import cli

from loci.kernel import territory
from loci.kernel.config import layout
from loci.kernel.vectorstore import matrix_path

corpus, published = test_pull.corpus, test_pull.published   # two bundles in a folder store

PUBLISHER = "its publisher must push it again"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def republish(store, name: str, data: bytes) -> None:
    """The store's gizmo/``name`` is now ``data`` and the manifest the home pulled names its
    checksum and size: a damaged file its publisher pushed as it was, not one damaged on the way."""
    (store / "gizmo" / name).write_bytes(data)
    lay = layout()
    rec = json.loads(lay.map_record("gizmo").read_text())
    for f in rec["files"]:
        if f["path"] == name:
            f.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    lay.map_record("gizmo").write_text(json.dumps(rec))


def fetch_reason() -> str:
    """The reason the fetch records when gizmo's stores are asked for again (nothing was installed)."""
    note = territory.ensure(layout(), "gizmo")
    assert note and territory.state(layout(), "gizmo") == "mapped"
    return note.reason


def test_a_store_whose_checksum_does_not_match_is_recorded_damaged(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    _flip(published / "gizmo" / "query.sqlite")
    [note] = gizmo_block()["notes"]
    assert "sha256" in note and PUBLISHER in note
    assert fetch_reason() == territory.DAMAGED


def test_a_published_query_file_that_does_not_open_is_recorded_damaged_though_its_checksum_matches(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    data = bytearray((published / "gizmo" / "query.sqlite").read_bytes())
    data[100:1000] = b"\xff" * 900          # the schema page, past a sound header
    republish(published, "query.sqlite", bytes(data))
    [note] = gizmo_block()["notes"]
    assert "gizmo/query.sqlite is unreadable" in note and "sha256" not in note
    assert PUBLISHER in note and "--all" not in note
    assert fetch_reason() == territory.DAMAGED


@pytest.mark.parametrize("damage", ["truncated", "of another model"])
def test_a_published_vector_table_that_does_not_read_is_recorded_damaged(published, damage):
    import pyarrow.parquet as pq

    cli("pull", str(published), "--quiet", "--no-calibrate")
    path = published / "gizmo" / "vectors.parquet"
    if damage == "truncated":
        data = path.read_bytes()[:-40]
    else:
        table = pq.read_table(path)
        meta = {**table.schema.metadata, b"loci.model": b"another-model"}
        pq.write_table(table.replace_schema_metadata(meta), path)
        data = path.read_bytes()
    republish(published, "vectors.parquet", data)
    [note] = gizmo_block()["notes"]
    assert "gizmo/vectors.parquet" in note and PUBLISHER in note
    assert fetch_reason() == territory.DAMAGED


def test_a_file_gone_from_a_reachable_store_is_recorded_missing(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    (published / "gizmo" / "query.sqlite").unlink()
    [note] = gizmo_block()["notes"]
    assert "gizmo/query.sqlite is missing" in note
    assert f"loci pull --all {published.as_uri()}" in note and "publisher" not in note
    assert fetch_reason() == territory.MISSING


def test_a_store_that_is_gone_is_recorded_unreachable(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    shutil.rmtree(published)
    [note] = gizmo_block()["notes"]
    assert f"loci pull --all {published.as_uri()}" in note and "publisher" not in note
    assert fetch_reason() == territory.UNREACHABLE


def test_an_s3_store_whose_server_does_not_answer_is_recorded_unreachable(s3_server, corpus, loci_home,
                                                                          monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    cli("push", "s3://corpus/bundles", "--quiet")
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    cli("pull", "s3://corpus/bundles", "--quiet", "--no-calibrate")
    with socket.socket() as sock:   # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    [note] = gizmo_block()["notes"]
    assert "could not be fetched from s3://corpus/bundles" in note
    assert "loci pull --all s3://corpus/bundles" in note and "publisher" not in note
    assert fetch_reason() == territory.UNREACHABLE


def test_a_store_too_slow_to_fetch_in_the_fetch_time_is_given_up_with_a_note_saying_so(s3_server, corpus,
                                                                                       loci_home, monkeypatch):
    import time

    from conftest import SlowProxy

    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    cli("push", "s3://corpus/bundles", "--quiet")
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    cli("pull", "s3://corpus/bundles", "--quiet", "--no-calibrate")
    proxy = SlowProxy(s3_server.meta.endpoint_url, delay=3.0)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    monkeypatch.setenv("LOCI_FETCH_SECONDS", "1")
    try:
        begun = time.monotonic()
        [note] = gizmo_block("--fast")["notes"]
        took = time.monotonic() - begun
    finally:
        proxy.close()
    assert proxy.held and took < 3.0 + 3, f"{took:.1f} s"
    assert "could not be fetched from s3://corpus/bundles" in note and "not fetched within 1 s" in note, note
    assert "a slow link?" in note and "loci pull --all s3://corpus/bundles" in note, note
    assert territory.state(layout(), "gizmo") == "mapped" and not list(loci_home.glob(".fetch-*"))


def test_a_home_that_cannot_take_the_stores_is_recorded_local_not_damaged(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    rec = territory.read_record(lay, "gizmo")
    matrix_path(lay.vectors(rec["model"], "gizmo")).mkdir(parents=True)   # a folder where the vectors go
    [note] = gizmo_block()["notes"]
    assert "publisher" not in note
    assert fetch_reason() == territory.LOCAL
