"""manifest.json is a header (schema, tokenizer, what and when the last merge merged), whatever the
number of scopes: each scope's meta stays in its own file, and what the merge recorded of it in
routing.sqlite (``loci.query.store.indexed_metas``), so a merge after a pull reads and writes only
the changed scopes' metas. A manifest an older loci wrote whole is still read."""
from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest

from loci.kernel.config import layout


def _scope(lay, name: str, chunks: int = 3, word: str | None = None) -> None:
    """An indexed scope as the merge reads it: its meta and its query file's vocabulary."""
    lay.meta(name).parent.mkdir(parents=True, exist_ok=True)
    lay.meta(name).write_text(json.dumps({"name": name, "fingerprint": f"fp-{name}-{chunks}", "chunks": chunks,
                                          "vocab_tokens": 1, "vocab_weight": 1.5, "updated": "2026-01-01"}))
    lay.query_db(name).parent.mkdir(parents=True, exist_ok=True)
    lay.query_db(name).unlink(missing_ok=True)
    con = sqlite3.connect(lay.query_db(name))
    con.execute("CREATE TABLE vocab (token TEXT, weight REAL)")
    con.execute("INSERT INTO vocab VALUES (?, 1.5)", (word or name,))
    con.commit()
    con.close()


def _home(n: int) -> tuple:
    lay = layout()
    names = [f"s{i:04d}" for i in range(n)]
    for name in names:
        _scope(lay, name)
    return lay, names


def _merged_long_ago(lay, names) -> None:
    """Every meta written well before the last merge (as after a pull some while ago)."""
    past = time.time() - 3600
    for name in names:
        os.utime(lay.meta(name), (past, past))


def test_the_manifest_holds_no_scopes_meta_and_its_size_does_not_grow_with_the_scopes(loci_home):
    from loci_pipeline.routing import merge_routing

    lay, names = _home(60)
    merge_routing(lay, names[:3])
    small = lay.manifest.stat().st_size
    merge_routing(lay, names)
    header = json.loads(lay.manifest.read_text())
    assert "scopes" not in header and {"schema_version", "tokenizer", "merged_from", "written_at"} <= set(header)
    assert abs(lay.manifest.stat().st_size - small) <= 4, (small, lay.manifest.stat().st_size)


def test_an_incremental_merge_reads_only_the_changed_scopes_meta_and_leaves_the_others_readable(
        loci_home, monkeypatch):
    import loci.kernel.state
    from loci.kernel.state import read_meta
    from loci.query.store import indexed_metas
    from loci_pipeline.routing import merge_routing

    lay, names = _home(12)
    _merged_long_ago(lay, names)
    merge_routing(lay, names)
    before = indexed_metas(lay)
    _scope(lay, "s0005", chunks=9, word="moved")
    read = []
    real = loci.kernel.state.read_meta
    monkeypatch.setattr(loci.kernel.state, "read_meta", lambda lay_, name: read.append(name) or real(lay_, name))
    merge_routing(lay, names, changed=["s0005"])
    assert read == ["s0005"]
    after = indexed_metas(lay)
    assert after["s0005"]["chunks"] == 9 and after["s0005"]["fingerprint"] == "fp-s0005-9"
    assert {n: m for n, m in after.items() if n != "s0005"} == {n: m for n, m in before.items() if n != "s0005"}
    assert all(read_meta(lay, n) is not None for n in names)
    whole = lay.routing_db.read_bytes()
    lay.routing_db.unlink()
    merge_routing(lay, names)             # written whole, every meta read: the same rows
    assert indexed_metas(lay) == after
    assert _rows(lay.routing_db) == _rows_of(whole, loci_home)


def _rows(path) -> dict:
    con = sqlite3.connect(path)
    try:
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall()) for t in ("scopes", "routing", "metas")}
    finally:
        con.close()


def _rows_of(data: bytes, tmp) -> dict:
    path = tmp.parent / "routing-copy.sqlite"
    path.write_bytes(data)
    return _rows(path)


def _as_an_older_loci_wrote_it(lay, names) -> dict:
    """manifest.json as the previous loci wrote it: every scope's meta in it, the metas' stats in full."""
    from loci.kernel.state import read_meta

    header = json.loads(lay.manifest.read_text())
    old = {**header, "scopes": {n: read_meta(lay, n) for n in names},
           "merged_from": ";".join(f"{n}=1:2" for n in names) + "|fields:chunks"}
    lay.manifest.write_text(json.dumps(old))
    return old


def test_a_manifest_an_older_loci_wrote_whole_is_still_read_and_the_next_merge_writes_the_header(loci_home):
    from loci.kernel.integrity import home_index_problems
    from loci.query.store import indexed_metas, read_manifest
    from loci_pipeline.routing import merge_routing

    lay, names = _home(4)
    merge_routing(lay, names)
    metas = indexed_metas(lay)
    old = _as_an_older_loci_wrote_it(lay, names)
    assert read_manifest(lay)["written_at"] == old["written_at"]
    assert indexed_metas(lay) == metas
    assert not [p for p, _ in home_index_problems(lay) if p == lay.manifest]   # no uses.parquet here
    _scope(lay, names[1], chunks=7)
    merge_routing(lay, names, changed=[names[1]])
    assert "scopes" not in json.loads(lay.manifest.read_text())
    assert indexed_metas(lay)[names[1]]["chunks"] == 7 and set(indexed_metas(lay)) == set(names)


def test_the_routing_step_is_up_to_date_after_a_merge_recorded_in_the_header(loci_home):
    from loci_pipeline.routing import merge_routing, merged_from, metas_state

    lay, names = _home(5)
    merge_routing(lay, names)
    assert merged_from(lay) == metas_state(lay, names)
    _scope(lay, names[0], chunks=8)
    assert merged_from(lay) != metas_state(lay, names)


def test_the_engine_sees_a_new_index_when_a_merge_writes_the_header(loci_home):
    from loci.query.engine import Engine
    from loci_pipeline.routing import merge_routing

    lay, names = _home(3)
    merge_routing(lay, names)
    engine = Engine(loci_home)
    first = engine._current_stamp()
    assert first == engine._current_stamp() and first[0] == json.loads(lay.manifest.read_text())["written_at"]
    time.sleep(0.01)
    _scope(lay, names[2], chunks=5)
    merge_routing(lay, names, changed=[names[2]])
    assert engine._current_stamp()[0] != first[0]


@pytest.mark.parametrize("shape", ["header", "whole"])
def test_calibrations_digests_and_the_embedding_estimate_read_the_scopes_the_merge_listed(loci_home, shape):
    """From the one reader (``indexed_metas``), with a header or a manifest an older loci wrote whole."""
    from loci.front.cli_build import _embed_estimate
    from loci.query.store import indexed_metas
    from loci_pipeline.calibrate import scope_digests
    from loci_pipeline.routing import merge_routing

    lay, names = _home(3)
    merge_routing(lay, names)
    if shape == "whole":
        _as_an_older_loci_wrote_it(lay, names)
    assert scope_digests(indexed_metas(lay)) == {n: f"fp-{n}-3" for n in names}
    assert "9 chunks" in _embed_estimate()
