"""loci.kernel.integrity: a derived file is judged whole or not from its frame, not its mtime."""
from __future__ import annotations

import sqlite3

import pytest

from loci.kernel.config import layout
from loci.kernel.integrity import (
    connect, home_index_problems, parquet_problem, scope_index_problems, set_aside_if_damaged, sqlite_problem,
)


def make_db(path, rows: int = 2000):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x TEXT)")
    con.executemany("INSERT INTO t VALUES (?)", [("row %d " % i * 5,) for i in range(rows)])
    con.commit()
    con.close()
    return path


def make_parquet(path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": list(range(100))}), path)
    return path


def test_a_sound_sqlite_file_has_no_problem(tmp_path):
    db = make_db(tmp_path / "ok.sqlite")
    assert sqlite_problem(db) is None and sqlite_problem(db, thorough=True) is None
    assert sqlite_problem(db, open_db=False) is None


def test_a_missing_emptied_or_overwritten_sqlite_file_is_named(tmp_path):
    assert sqlite_problem(tmp_path / "none.sqlite") == "missing"
    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert "not an SQLite database" in sqlite_problem(tmp_path / "empty.sqlite")
    (tmp_path / "text.sqlite").write_text("x" * 200)
    assert "not an SQLite database" in sqlite_problem(tmp_path / "text.sqlite")


def test_a_truncated_sqlite_file_is_found_from_its_header_alone(tmp_path):
    db = make_db(tmp_path / "cut.sqlite")
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    assert sqlite_problem(db, open_db=False).startswith("truncated:")


def test_a_sqlite_path_with_uri_characters_opens(tmp_path):
    folder = tmp_path / "a#b?c%d"
    folder.mkdir()
    db = make_db(folder / "x.sqlite", rows=3)
    assert sqlite_problem(db) is None
    assert connect(db).execute("SELECT count(*) FROM t").fetchone() == (3,)


def test_a_sound_parquet_file_has_no_problem_and_a_cut_one_does(tmp_path):
    pytest.importorskip("pyarrow")
    f = make_parquet(tmp_path / "x.parquet")
    assert parquet_problem(f) is None
    data = f.read_bytes()
    f.write_bytes(data[:-20])
    assert "no Parquet footer" in parquet_problem(f)
    f.write_bytes(b"PAR1")
    assert parquet_problem(f) == "truncated: 4 bytes"
    assert parquet_problem(tmp_path / "gone.parquet") == "missing"


def test_a_damaged_cache_is_set_aside_and_a_sound_one_is_left(tmp_path):
    sound = make_db(tmp_path / "doit.db", rows=3)
    assert set_aside_if_damaged(sound) is None and sound.exists()
    bad = tmp_path / ".doit.db"
    bad.write_text("garbage" * 30)
    note = set_aside_if_damaged(bad)
    assert note and "rebuilding every step" in note
    assert not bad.exists() and (tmp_path / ".doit.db.damaged").read_text() == "garbage" * 30
    assert set_aside_if_damaged(tmp_path / "absent.db") is None


def test_an_unbuilt_scope_lists_every_file_its_index_step_writes(tmp_path):
    lay = layout(tmp_path / "home")
    missing = {p.name for p, why in scope_index_problems(lay, "gizmo") if why == "missing"}
    assert missing == {"gizmo.parquet", "gizmo.sqlite", "gizmo.json"}     # chunks, vocab, refs share a name
    assert len(scope_index_problems(lay, "gizmo")) == 5
    assert {p.name for p, _ in home_index_problems(lay)} == {"routing.sqlite", "uses.parquet", "manifest.json"}


def test_a_built_scope_has_no_problem_until_one_of_its_files_is_cut(tmp_path, loci_home):
    from conftest import GIZMO, setup_home

    setup_home(tmp_path / "code", {"gizmo": GIZMO})
    lay = layout()
    assert scope_index_problems(lay, "gizmo") == [] and home_index_problems(lay) == []
    lay.meta("gizmo").write_text('{"chunks": "many"}')
    lay.chunks("gizmo").write_bytes(lay.chunks("gizmo").read_bytes()[:50])
    found = dict(scope_index_problems(lay, "gizmo"))
    assert "no Parquet footer" in found[lay.chunks("gizmo")]
    assert "loci index" in found[lay.meta("gizmo")]
