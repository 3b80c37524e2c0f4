"""A question reads the metas of the scopes it reaches from routing.sqlite, never the
whole-corpus manifest.json; every merge (an index, a pull, an incremental pull) keeps them
equal to the manifest's."""
from __future__ import annotations

import json
import sqlite3

import pytest

import test_pull
from test_fetch import _no_network  # noqa: F401  (autouse: no model download)
from test_pull import GIZMO_Q, WEBBY_Q, ask_json, cli, swap

from loci.kernel import merged_metas
from loci.kernel.config import layout

corpus, published, pulled = test_pull.corpus, test_pull.published, test_pull.pulled


def _table_metas(path) -> dict:
    con = sqlite3.connect(path)
    try:
        return {n: json.loads(m) for n, m in con.execute(f"SELECT name, meta FROM {merged_metas.METAS_TABLE}")}
    finally:
        con.close()


def _manifest_metas(lay=None) -> dict:
    """What the table should hold: each merged scope's meta file, the fields a question reads."""
    from loci.kernel.state import read_meta

    lay = lay or layout()
    con = sqlite3.connect(lay.routing_db)
    try:
        names = [n for (n,) in con.execute("SELECT name FROM scopes")]   # the routing rows' scopes
    finally:
        con.close()
    return {n: merged_metas.project(read_meta(lay, n)) for n in names}


def _no_manifest_reads(monkeypatch):
    """Reading manifest.json from the query side now fails the test."""
    import loci.query.store

    def refuse(lay):
        raise AssertionError("a question read manifest.json")

    monkeypatch.setattr(loci.query.store, "read_manifest", refuse)


def test_a_question_on_a_pulled_map_answers_the_same_without_reading_the_manifest(published, monkeypatch):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    want = [ask_json(q) for q in (GIZMO_Q, WEBBY_Q)]
    assert any(b.get("origin") for b in want[0]["blocks"])   # a pulled scope's origin comes from its meta
    _no_manifest_reads(monkeypatch)
    layout().manifest.rename(layout().manifest.with_suffix(".away"))
    assert [ask_json(q) for q in (GIZMO_Q, WEBBY_Q)] == want


def test_a_built_home_keeps_every_scopes_meta_in_routing(corpus):
    lay = layout(corpus.home_a)
    assert _table_metas(lay.routing_db) == _manifest_metas(lay)
    assert all("chunks" in m for m in _table_metas(lay.routing_db).values())


def test_an_incremental_pull_rewrites_the_changed_scopes_meta_and_keeps_the_others(pulled, corpus, monkeypatch):
    before = _table_metas(layout().routing_db)
    out = json.loads(cli("pull", str(pulled), "--json", "--no-calibrate").stdout)
    assert out["imported"] == ["webby"]
    after = _table_metas(layout().routing_db)
    assert after == _manifest_metas()
    assert after["gizmo"] == before["gizmo"] and after["webby"]["origin"] != before["webby"]["origin"]
    _no_manifest_reads(monkeypatch)
    webby = next(b for b in ask_json(WEBBY_Q)["blocks"] if b["scope"] == "webby")
    assert webby["origin"]["commit"] == after["webby"]["origin"]["commit"]


def test_a_scope_gone_from_the_store_leaves_the_metas_with_its_routing(published, corpus):
    import shutil

    cli("pull", str(published), "--quiet", "--no-calibrate")
    shutil.rmtree(published / "gizmo")
    cli("pull", str(published), "--quiet", "--no-calibrate")
    assert set(_table_metas(layout().routing_db)) == set(_manifest_metas())


def test_a_routing_file_from_before_the_metas_is_read_through_the_manifest_until_the_next_merge(
        published, corpus):
    from loci.kernel.state import read_meta

    cli("pull", str(published), "--quiet", "--no-calibrate")
    want = ask_json(GIZMO_Q)
    lay = layout()
    manifest = json.loads(lay.manifest.read_text())   # as the loci before the metas rows wrote it
    lay.manifest.write_text(json.dumps({**manifest, "scopes": {n: read_meta(lay, n) for n in ("gizmo", "webby")}}))
    con = sqlite3.connect(layout().routing_db)
    con.execute(f"DROP TABLE {merged_metas.METAS_TABLE}")
    con.execute(f"DROP TABLE {merged_metas.STAMP_TABLE}")
    con.commit()
    con.close()
    assert ask_json(GIZMO_Q) == want
    swap(published, corpus.v2)
    assert json.loads(cli("pull", str(published), "--json", "--no-calibrate").stdout)["imported"] == ["webby"]
    assert _table_metas(layout().routing_db) == _manifest_metas()   # written whole once
    assert "scopes" not in json.loads(lay.manifest.read_text())     # and the manifest as a header


def test_a_routing_file_of_another_schema_is_one_line_naming_the_fix(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    con = sqlite3.connect(layout().routing_db)
    con.execute(f"UPDATE {merged_metas.STAMP_TABLE} SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    res = cli("ask", "--no-cwd", GIZMO_Q, code=1)
    assert "another version of loci" in res.output and "loci index" in res.output
    assert "Traceback" not in res.output


def test_an_incremental_routing_update_writes_the_metas_a_full_write_does(tmp_path):
    from loci_pipeline.query_store import update_routing_db, write_routing_db

    def scope_db(name: str, words: list[str]):
        path = tmp_path / f"{name}.sqlite"
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE vocab (token TEXT, weight REAL)")
        con.executemany("INSERT INTO vocab VALUES (?, ?)", [(w, 1.0) for w in words])
        con.commit()
        con.close()
        return path

    dbs = {n: scope_db(n, [n]) for n in ("b", "d", "e")}
    metas = {n: {"chunks": 1, "fingerprint": n} for n in dbs}
    inc = tmp_path / "inc.sqlite"
    write_routing_db(inc, dbs, metas)
    dbs["a"] = scope_db("a", ["ant"])
    del dbs["e"]
    metas = {n: {"chunks": 2, "fingerprint": n + "2"} for n in dbs}   # a, b changed; d's meta read again
    assert update_routing_db(inc, dbs, metas, changed=["a", "b"], metas_moved=["d"])
    full = tmp_path / "full.sqlite"
    write_routing_db(full, dbs, metas)
    assert _table_metas(inc) == _table_metas(full) == {n: {"chunks": 2, "fingerprint": n + "2"} for n in metas}


def test_metas_rows_an_older_loci_wrote_with_fewer_fields_are_all_written_again_by_the_next_merge(tmp_path):
    con = sqlite3.connect(tmp_path / "routing.sqlite")
    metas = {n: {"chunks": 3, "fingerprint": "f" + n, "origin": None} for n in ("a", "b", "c")}
    merged_metas.write(con, metas)
    con.execute(f"UPDATE {merged_metas.METAS_TABLE} SET meta = '{{\"chunks\":3}}'")     # as an older loci wrote them
    con.execute(f"UPDATE {merged_metas.STAMP_TABLE} SET value = 'chunks,origin' WHERE key = 'fields'")
    merged_metas.write(con, metas, rewrite=["a"])         # an incremental merge of one scope
    assert {n: merged_metas.read_meta(con, n).get("fingerprint") for n in metas} == {"a": "fa", "b": "fb", "c": "fc"}
    con.execute(f"UPDATE {merged_metas.METAS_TABLE} SET meta = '{{\"chunks\":3}}' WHERE name = 'b'")
    merged_metas.write(con, metas, rewrite=["a"])         # same fields now: only the changed scope's row
    assert merged_metas.read_meta(con, "b") == {"chunks": 3}


def test_copies_are_scopes_with_the_same_build_fingerprint_and_chunk_count(tmp_path):
    con = sqlite3.connect(tmp_path / "routing.sqlite")
    same = {"chunks": 9, "fingerprint": "x", "vocab_tokens": 40, "vocab_weight": 88.5}
    merged_metas.write(con, {"web": same, "web-fork": dict(same), "web-mirror": dict(same),
                             "other": {**same, "chunks": 8}, "docs-a": {**same, "vocab_tokens": 41},
                             "lone": {**same, "fingerprint": "y"}, "unbuilt": {"chunks": 9},
                             "unbuilt-2": {"chunks": 9}})
    assert merged_metas.twin_groups(con) == [("web", "web-fork", "web-mirror")]


def test_a_complete_routing_index_holds_its_postings_packed_and_reads_as_the_per_token_one(published):
    """A long-lived engine loads every token (3 million postings at 1,000 scopes: 300 MB as
    dicts); packed, each token's rows are two arrays, and each reads as the dict it was."""
    from loci.query.store import PackedPostings, load_routing

    cli("pull", str(published), "--quiet", "--no-calibrate")
    full = load_routing(layout())
    assert isinstance(full.postings, PackedPostings) and full.complete
    tokens = sorted(full.postings)
    some = load_routing(layout(), tokens)
    assert {t: full.get(t) for t in tokens} == some.postings
    assert [list(full.get(t)) for t in tokens] == [list(some.get(t)) for t in tokens]   # scope order kept
    assert full.get("no-such-token") == {} and "no-such-token" not in full.postings
    assert dict(full.postings.items()) == some.postings


def test_a_damaged_copies_entry_reads_as_no_copies(tmp_path):
    con = sqlite3.connect(tmp_path / "routing.sqlite")
    merged_metas.write(con, {"web": {"chunks": 9, "fingerprint": "x"}, "web-fork": {"chunks": 9, "fingerprint": "x"}})
    assert merged_metas.twin_groups(con) == [("web", "web-fork")]
    for damaged in ("{not json", '{"web": 1}', '[["web"]]', '[["web", 3]]'):
        con.execute(f"UPDATE {merged_metas.STAMP_TABLE} SET value = ? WHERE key = ?", (damaged, merged_metas.TWINS_KEY))
        assert merged_metas.twin_groups(con) == []


def test_packed_postings_read_as_the_dicts_they_were_in_unicode_order_and_sort_rows_out_of_order():
    """The rows come in SQLite's byte order of UTF-8, which is Python's order of code points."""
    from loci.query.store import PackedPostings

    rows = {"cafe": {0: 1.0}, "café": {2: 0.5, 7: 0.25}, "naïve": {1: 2.0}, "z": {3: 1.5}, "ä": {0: 0.1}}
    packed = PackedPostings()
    for token in sorted(t.encode("utf-8") for t in rows):
        for scope, weight in rows[token.decode("utf-8")].items():
            packed.add(token.decode("utf-8"), scope, weight)
    packed.done()
    assert dict(packed.items()) == rows and list(packed) == sorted(rows) and len(packed) == 5
    assert "café" in packed and "caf" not in packed and "x\ny" not in packed and 3 not in packed
    with pytest.raises(KeyError):
        packed["caf"]
    assert packed.nbytes < 400
    shuffled = PackedPostings()
    for token, scope in (("b", 0), ("a", 1), ("b", 2), ("c", 0), ("a", 3)):
        shuffled.add(token, scope, 1.0)
    shuffled.done()
    assert dict(shuffled.items()) == {"a": {1: 1.0, 3: 1.0}, "b": {0: 1.0, 2: 1.0}, "c": {0: 1.0}}
    assert list(shuffled) == ["a", "b", "c"] and "b" in shuffled
    empty = PackedPostings().done()
    assert len(empty) == 0 and "a" not in empty and dict(empty.items()) == {}
