"""`loci pull` without --all: the map comes, the stores stay in the store until a question needs
them; then they are fetched, verified and cached (least recently used out beyond the cap)."""
from __future__ import annotations

import json
import os
import shutil
import time

import pytest
import test_pull
from test_pull import CHANGED_Q, GIZMO_Q, WEBBY_Q, ask_json, cli, swap

from loci.kernel import territory
from loci.kernel.config import layout

corpus, published = test_pull.corpus, test_pull.published   # the fixtures: two bundles in a folder store


def _flip(path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _home_bytes(home) -> int:
    return sum(p.stat().st_size for p in home.rglob("*") if p.is_file())


def test_a_pull_without_all_leaves_the_stores_in_the_store_and_still_routes(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    for name in ("gizmo", "webby"):
        assert territory.state(lay, name) == "mapped"
        assert lay.meta(name).is_file() and territory.vocab_db(lay, name).is_file()
        assert not lay.query_db(name).exists() and not lay.chunks(name).exists()
    route = json.loads(cli("route", "--json", "--no-cwd", "--fast", GIZMO_Q).stdout)
    assert route["scopes"] == ["gizmo"]
    assert not lay.query_db("gizmo").exists()      # routing alone fetches nothing


def test_a_question_routed_to_a_mapped_scope_fetches_its_stores_and_answers_as_a_full_copy(
        published, tmp_path, monkeypatch):
    from test_bundle import FakeEncoder

    import loci.query.semantic

    # with the second opinion (the fake model): its first pass reads the summaries, then vectors
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    cli("pull", str(published), "--quiet", "--no-calibrate")
    mapped_bytes = _home_bytes(layout().home)
    mapped = [ask_json(q) for q in (GIZMO_Q, WEBBY_Q)]
    lay = layout()
    assert territory.state(lay, "gizmo") == territory.state(lay, "webby") == "cached"
    model = json.loads(lay.embed_config.read_text())["model_id"]
    assert lay.vectors(model, "gizmo").with_suffix(".npy").is_file()     # the vectors came too
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "full"))
    cli("pull", str(published), "--all", "--quiet", "--no-calibrate")
    assert [ask_json(q) for q in (GIZMO_Q, WEBBY_Q)] == mapped
    assert mapped_bytes < _home_bytes(tmp_path / "full")


def test_a_damaged_remote_store_is_refused_by_name_and_the_question_still_answered(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    _flip(published / "gizmo" / "query.sqlite")
    res = cli("ask", "--json", "--no-cwd", GIZMO_Q)
    assert json.loads(res.stdout)["scopes"] == ["gizmo"]
    note = next(n for n in res.stderr.splitlines() if "gizmo:" in n)
    assert "gizmo/query.sqlite" in note and "sha256" in note and "answered without it" in note
    assert "Traceback" not in res.output
    assert territory.state(layout(), "gizmo") == "mapped"            # nothing half-installed
    assert not list(layout().home.glob(".fetch-*"))


def test_an_unreachable_store_at_question_time_is_a_note_not_a_traceback(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    shutil.rmtree(published)
    res = cli("ask", "--json", "--no-cwd", WEBBY_Q)
    assert json.loads(res.stdout)["scopes"] == ["webby"]
    assert any("webby:" in n and "could not be fetched" in n for n in res.stderr.splitlines())
    assert "Traceback" not in res.output


def test_the_cache_evicts_the_least_recently_used_scope_beyond_the_cap(published, monkeypatch):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    ask_json(GIZMO_Q)
    one = territory.cached_bytes(lay, "gizmo")
    assert one > 0
    old = time.time() - 3600
    os.utime(lay.map_used("gizmo"), (old, old))
    monkeypatch.setenv("LOCI_CACHE_MB", str(one * 1.5 / (1 << 20)))   # room for one scope
    ask_json(WEBBY_Q)
    assert territory.state(lay, "webby") == "cached"
    assert territory.state(lay, "gizmo") == "mapped"                  # least recently used: out
    assert ask_json(GIZMO_Q)["scopes"] == ["gizmo"]                    # and fetched again when asked


def test_a_scope_used_within_the_grace_period_is_not_evicted(published, monkeypatch):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    ask_json(GIZMO_Q)
    monkeypatch.setenv("LOCI_CACHE_MB", "0")
    ask_json(WEBBY_Q)
    assert territory.state(lay, "gizmo") == "cached"   # another question may be reading it


def test_a_changed_bundle_drops_the_cached_stores_and_the_next_question_fetches_the_new_ones(published, corpus):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    ask_json(WEBBY_Q)
    swap(published, corpus.v2)
    out = json.loads(cli("pull", str(published), "--json", "--no-calibrate").stdout)
    assert out["imported"] == ["webby"]
    assert territory.state(layout(), "webby") == "mapped"
    answer = ask_json("--fast", CHANGED_Q)
    assert answer["scopes"] == ["webby"]
    assert any("rotate certificates" in e["text"] for b in answer["blocks"] for e in b["episodes"])


def test_pull_all_after_a_map_copies_every_store(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    out = json.loads(cli("pull", str(published), "--all", "--json", "--no-calibrate").stdout)
    assert sorted(out["imported"]) == ["gizmo", "webby"]
    lay = layout()
    assert territory.state(lay, "gizmo") is None and lay.chunks("gizmo").is_file()


def test_doctor_tells_mapped_scopes_from_cached_ones(published):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    ask_json(GIZMO_Q)
    found = {f["scope"]: f["problem"] for f in json.loads(cli("doctor", "--json", code=1).stdout)
             if f["scope"] in ("gizmo", "webby")}
    assert found == {"gizmo": "pulled_cached", "webby": "pulled_mapped"}


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _routing_rows(path) -> set:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        names = dict(con.execute("SELECT id, name FROM scopes"))
        return {(t, names[s], w) for t, s, w in con.execute("SELECT token, scope, weight FROM routing")}
    finally:
        con.close()


def _bump_commit(store, folder: str) -> None:
    """The bundle's manifest moves (another commit) while its files stay: as a push of a scope
    whose code moved but not its words, imports or vectors."""
    path = store / folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["commit"] = "1" * 40
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    past = time.time() - 3600
    os.utime(path, (past, past))


def test_an_incremental_pull_rewrites_only_what_the_changed_bundle_moved(published, corpus):
    from loci.kernel.vectorstore import merged_summary_files

    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    model = json.loads(lay.embed_config.read_text())["model_id"]
    kept = {p: p.stat().st_mtime_ns for p in (lay.uses, *merged_summary_files(lay, model))}
    inode = lay.routing_db.stat().st_ino
    _bump_commit(published, "webby")
    assert json.loads(cli("pull", str(published), "--json", "--no-calibrate").stdout)["imported"] == ["webby"]
    assert {p: p.stat().st_mtime_ns for p in kept} == kept          # same references, same summary
    assert lay.routing_db.stat().st_ino == inode                     # routing updated in place


def _pull_counting(monkeypatch, store, counted) -> dict:
    """One `loci pull --no-calibrate` of ``store``, counting the calls of each ``counted``
    ((module, name) -> label, the arguments kept)."""
    import importlib

    calls: dict = {}
    for (module, name), label in counted.items():
        mod = importlib.import_module(module)
        real = getattr(mod, name)

        def spy(*args, _real=real, _label=label, **kw):
            calls.setdefault(_label, []).append(args)
            return _real(*args, **kw)
        monkeypatch.setattr(mod, name, spy)
    cli("pull", str(store), "--quiet", "--no-calibrate")
    return calls


def test_an_incremental_pull_reads_the_registry_once_to_name_and_once_to_register(published, monkeypatch):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    _bump_commit(published, "webby")
    lay = layout()
    calls = _pull_counting(monkeypatch, published, {("loci.kernel.jsonfile", "read_json"): "read",
                                                    ("loci.kernel.atomic", "write_json"): "write"})
    assert len([a for a in calls["read"] if a[0] == lay.scopes]) == 2
    assert len([a for a in calls["write"] if a[0] == lay.scopes]) == 1


def test_an_incremental_map_pull_imports_no_module_only_a_whole_copy_or_a_big_pull_needs(published):
    import subprocess
    import sys

    cli("pull", str(published), "--quiet", "--no-calibrate")
    _bump_commit(published, "webby")
    probe = ("import sys\nfrom loci.kernel.config import layout\nfrom loci_pipeline.share.pull import pull\n"
             f"print(pull(layout(), {str(published)!r}, full=False).imported)\n"
             "print(sorted(m for m in ('pyarrow.dataset', 'pyarrow.compute', 'doit', 'loci_pipeline.index', "
             "'loci_pipeline.chunks', 'loci_pipeline.structure_tables') if m in sys.modules))")
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "LOCI_SERVER": "off"})
    assert got.stdout.splitlines() == ["['webby']", "[]"], got.stderr


def test_routing_updated_in_place_holds_what_a_whole_merge_writes(published, corpus, tmp_path):
    from loci.query.store import indexed_metas
    from loci_pipeline.routing import merge_routing

    cli("pull", str(published), "--quiet", "--no-calibrate")
    swap(published, corpus.v2)
    cli("pull", str(published), "--quiet", "--no-calibrate")   # webby's words moved
    lay = layout()
    incremental = _routing_rows(lay.routing_db)
    metas = indexed_metas(lay)                                 # webby's read again, gizmo's kept
    lay.routing_db.unlink()
    merge_routing(lay, ["gizmo", "webby"])                     # written whole, every meta read
    assert _routing_rows(lay.routing_db) == incremental
    assert indexed_metas(lay) == metas
    assert any(t == "certificate" and s == "webby" for t, s, _ in incremental)


def test_update_pulls_a_mapped_source_again_as_a_map(published, corpus):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    swap(published, corpus.v2)
    cli("update", "--quiet", "--no-graphs")
    lay = layout()
    assert territory.state(lay, "webby") == territory.state(lay, "gizmo") == "mapped"
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]


def test_warming_a_long_lived_session_fetches_no_mapped_scope(published, monkeypatch):
    from test_bundle import FakeEncoder

    import loci.query.semantic
    from loci.query.ask import open_session

    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    cli("pull", str(published), "--quiet", "--no-calibrate")
    open_session(keep_full_index=True).warm()
    lay = layout()
    assert territory.state(lay, "gizmo") == territory.state(lay, "webby") == "mapped"


def test_a_bundle_carries_its_query_file_summary_and_what_built_them(corpus):
    from loci.kernel.config import DEFAULT_PARAMS
    from loci_pipeline.share.bundle import derived_signature

    manifest = json.loads((corpus.v1 / "gizmo" / "manifest.json").read_text())
    assert {"query", "summary"} <= {f["role"] for f in manifest["files"]}
    assert manifest["derived"] == derived_signature(DEFAULT_PARAMS)
    assert (corpus.v1 / "gizmo" / "query.sqlite").read_bytes().startswith(b"SQLite format 3")


def test_a_bundle_without_a_query_file_is_pulled_whole_by_a_map_pull(published):
    path = published / "gizmo" / "manifest.json"
    manifest = json.loads(path.read_text())           # as a publisher before maps wrote it
    manifest["files"] = [f for f in manifest["files"] if f["role"] not in ("query", "summary")]
    manifest.pop("derived")
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    assert territory.state(lay, "gizmo") is None and lay.query_db("gizmo").is_file()
    assert territory.state(lay, "webby") == "mapped"
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]


def _fake_records(lay, names):
    for name in names:
        territory.write_record(lay, name, "file:///nowhere", name,
                               [{"role": "query", "path": "query.sqlite", "sha256": "", "size": 0}], None, None)


def test_several_mapped_scopes_are_fetched_together_in_a_bounded_pool(loci_home, monkeypatch):
    import threading

    lay = layout()
    names = [f"s{i}" for i in range(territory.FETCH_SCOPES + 3)]
    _fake_records(lay, names)
    live, most, guard = [0], [0], threading.Lock()

    def fetch(lay, rec, roles=None):
        with guard:
            live[0] += 1
            most[0] = max(most[0], live[0])
        time.sleep(0.05)
        with guard:
            live[0] -= 1
        lay.query_db(rec["scope"]).parent.mkdir(parents=True, exist_ok=True)
        lay.query_db(rec["scope"]).write_bytes(b"")

    monkeypatch.setattr(territory, "_fetch", fetch)
    assert territory.ensure_all(lay, names) == {}
    assert most[0] == territory.FETCH_SCOPES
    assert all(territory.state(lay, n) == "cached" for n in names)


def test_a_scope_that_cannot_be_fetched_is_one_note_and_the_others_still_land(loci_home, monkeypatch):
    from loci.kernel.remote import RemoteError

    lay = layout()
    _fake_records(lay, ["good1", "bad", "good2"])

    def fetch(lay, rec, roles=None):
        if rec["scope"] == "bad":
            raise RemoteError("file:///nowhere/bad/query.sqlite is missing")
        lay.query_db(rec["scope"]).parent.mkdir(parents=True, exist_ok=True)
        lay.query_db(rec["scope"]).write_bytes(b"")

    monkeypatch.setattr(territory, "_fetch", fetch)
    notes = territory.ensure_all(lay, ["good1", "bad", "good2"])
    assert list(notes) == ["bad"] and "\n" not in notes["bad"] and "answered without it" in notes["bad"]
    assert territory.state(lay, "good1") == territory.state(lay, "good2") == "cached"
    assert territory.state(lay, "bad") == "mapped"


def test_the_second_opinion_fetches_its_scopes_in_one_pass_and_a_damaged_one_once(published, monkeypatch):
    from test_bundle import FakeEncoder

    import loci.query.semantic
    from loci.query.ask import open_session

    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    cli("pull", str(published), "--quiet", "--no-calibrate")
    _flip(published / "gizmo" / "vectors.parquet")   # what the opinion's read fetches
    passes, fetched = [], []
    real_all, real_fetch = territory.ensure_all, territory._fetch
    monkeypatch.setattr(territory, "ensure_all", lambda lay, scopes, roles=territory.EAGER_ROLES:
                        passes.append(list(scopes)) or real_all(lay, scopes, roles))
    monkeypatch.setattr(territory, "_fetch", lambda lay, rec, roles=territory.TERRITORY_ROLES: fetched.append(rec["scope"]) or real_fetch(lay, rec, roles))
    session = open_session()
    got = session.semantic().affinities("cookies across redirects", ["gizmo", "webby"], 3, keep=False)
    assert passes[0] == ["gizmo", "webby"]                        # together, before any is read
    assert sorted(fetched) == ["gizmo", "webby"]                  # the damaged one tried once
    assert list(got) == ["webby"]                                 # the other still measured
    assert [n for n in session.notes if n.startswith("gizmo:") and "vectors" in n and "sha256" in n and "\n" not in n]


def test_a_vector_columns_values_are_taken_row_after_row_from_a_sliced_chunked_column():
    import numpy as np
    import pyarrow as pa

    from loci.kernel.vectorfiles import flat_vectors

    rows = np.arange(24, dtype=np.float32).reshape(6, 4)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(rows.ravel()), 4)
    column = pa.chunked_array([arr.slice(1, 2), arr.slice(4, 2)])
    assert flat_vectors(column).tolist() == rows[[1, 2, 4, 5]].ravel().tolist()


def _labelled_scope(lay, tmp_path, name: str = "sc"):
    """A cached mapped scope whose symbol labels are still in a folder store; returns the Parquet."""
    import hashlib

    import numpy as np

    from loci.kernel.vectorfiles import write_vectors
    from loci_pipeline.embed import store_as_parquet

    made = tmp_path / "made" / "labels.json"
    made.parent.mkdir(parents=True)
    write_vectors(made, ["open_file", "close_file"], np.eye(2, 4, dtype=np.float32), "fake", 4)
    parquet = tmp_path / "store" / name / "label_vectors.parquet"
    parquet.parent.mkdir(parents=True)
    parquet.write_bytes(store_as_parquet(made, "label"))
    data = parquet.read_bytes()
    files = [{"role": "label_vectors", "path": "label_vectors.parquet", "sha256": hashlib.sha256(data).hexdigest(),
              "size": len(data)}]
    territory.write_record(lay, name, (tmp_path / "store").as_uri(), name, files, {"model": "fake", "dim": 4}, "fake")
    lay.query_db(name).parent.mkdir(parents=True, exist_ok=True)
    lay.query_db(name).write_bytes(b"")   # cached: its query file is here
    return parquet


def test_a_scopes_fetch_leaves_its_symbol_labels_in_the_store(loci_home, monkeypatch):
    lay = layout()
    territory.write_record(lay, "sc", "file:///nowhere", "sc", [
        {"role": r, "path": f"{r}.x", "sha256": "", "size": 0} for r in territory.TERRITORY_ROLES], None, "m")
    asked = []
    monkeypatch.setattr(territory, "_fetch", lambda lay, rec, roles=None: asked.append(tuple(roles)) or
                        lay.query_db("sc").parent.mkdir(parents=True, exist_ok=True) or lay.query_db("sc").write_bytes(b""))
    assert territory.ensure_all(lay, ["sc"]) == {}
    assert asked == [territory.EAGER_ROLES] and "label_vectors" not in territory.EAGER_ROLES


def test_symbol_labels_are_fetched_and_verified_when_first_read_and_only_then(loci_home, tmp_path, monkeypatch):
    from loci.kernel.vectorstore import meta_path
    from loci.query.semantic import load_label_vectors

    lay = layout()
    _labelled_scope(lay, tmp_path)
    assert territory.ensure_role(lay, "sc", "label_vectors") is None
    assert load_label_vectors(lay, "fake", "sc")[0] == ["open_file", "close_file"]
    assert meta_path(lay.label_vectors("fake", "sc")).is_file()
    monkeypatch.setattr(territory, "_fetch", lambda *a, **k: pytest.fail("fetched again"))
    assert territory.ensure_role(lay, "sc", "label_vectors") is None


def test_damaged_symbol_labels_are_one_note_and_nothing_is_installed(loci_home, tmp_path):
    from loci.kernel.vectorstore import meta_path

    lay = layout()
    _flip(_labelled_scope(lay, tmp_path))
    note = territory.ensure_role(lay, "sc", "label_vectors")
    assert note.startswith("sc: its label vectors could not be fetched") and "sha256" in note and "\n" not in note
    assert not meta_path(lay.label_vectors("fake", "sc")).exists() and not list(lay.home.glob(".fetch-*"))
    assert territory.state(lay, "sc") == "cached"   # the scope still answers, without its labels


def test_the_second_opinion_asks_for_a_scopes_labels_before_it_reads_them(loci_home):
    from loci.query.semantic_search import SemanticSide

    asked = []
    side = SemanticSide(layout(), "default", "fake", fetch_store=lambda scope, role: asked.append((scope, role)))
    assert side.expansion("sc", "open a file") == []
    assert asked == [("sc", "label_vectors")]


def test_an_eviction_pass_skips_a_file_another_pass_removed_meanwhile(loci_home, monkeypatch):
    """Concurrent passes (a question's search threads, another process) may remove a scope's
    files between one pass listing them and measuring them: that pass goes on."""
    lay = layout()
    for name in ("old", "new"):
        territory.write_record(lay, name, "file:///nowhere", name,
                               [{"role": "query", "path": "query.sqlite", "sha256": "", "size": 0}], None, None)
        lay.query_db(name).parent.mkdir(parents=True, exist_ok=True)
        lay.query_db(name).write_bytes(b"x" * 1000)
        lay.map_used(name).touch()
    past = time.time() - 3600
    os.utime(lay.map_used("old"), (past, past))
    real_files = territory._files
    monkeypatch.setattr(territory, "_files", lambda lay, rec: real_files(lay, rec) + [lay.home / "gone.npy"])
    real_is_file = type(lay.home).is_file
    monkeypatch.setattr(type(lay.home), "is_file", lambda p: p.name == "gone.npy" or real_is_file(p))
    assert territory.evict(lay, keep={"new"}, cap=0, grace=0) == ["old"]
    assert territory.state(lay, "old") == "mapped" and territory.state(lay, "new") == "cached"


# --- the second opinion reads a mapped scope's vectors alone: they name its translated copies ---

def _opinion_session(published, monkeypatch):
    from test_bundle import FakeEncoder

    import loci.query.semantic
    from loci.query.ask import open_session

    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    cli("pull", str(published), "--quiet", "--no-calibrate")
    return open_session()


def test_the_second_opinion_fetches_a_mapped_scopes_vectors_and_leaves_its_query_file(published, monkeypatch):
    session = _opinion_session(published, monkeypatch)
    got = session.semantic().affinities("cookies across redirects", ["gizmo", "webby"], 3, keep=False)
    lay = layout()
    model = json.loads(lay.embed_config.read_text())["model_id"]
    assert sorted(got) == ["gizmo", "webby"]
    for name in ("gizmo", "webby"):
        assert lay.vectors(model, name).with_suffix(".npy").is_file()
        assert not lay.query_db(name).exists() and territory.state(lay, name) == "mapped"


def test_a_scope_answered_after_the_opinion_read_it_fetches_only_its_query_file(published, monkeypatch):
    session = _opinion_session(published, monkeypatch)
    session.semantic().affinities("cookies across redirects", ["gizmo", "webby"], 3, keep=False)
    roles = []
    real = territory._fetch
    monkeypatch.setattr(territory, "_fetch", lambda lay, rec, roles_=territory.TERRITORY_ROLES:
                        roles.append(tuple(roles_)) or real(lay, rec, roles_))
    assert territory.ensure(layout(), "webby") is None
    assert roles == [("query",)] and territory.state(layout(), "webby") == "cached"


def test_vectors_fetched_without_their_query_file_are_evicted_beyond_the_cap(published, monkeypatch):
    session = _opinion_session(published, monkeypatch)
    session.semantic().affinities("cookies across redirects", ["gizmo"], 3, keep=False)
    lay = layout()
    assert territory.cached_bytes(lay, "gizmo") > 0
    old = time.time() - 3600
    os.utime(lay.map_used("gizmo"), (old, old))
    assert territory.evict(lay, cap=0) == ["gizmo"]
    assert territory.cached_bytes(lay, "gizmo") == 0


def test_doctor_counts_the_vectors_the_opinion_fetched_of_a_mapped_scope(published, monkeypatch):
    session = _opinion_session(published, monkeypatch)
    session.semantic().affinities("cookies across redirects", ["gizmo"], 3, keep=False)
    found = {f["scope"]: f for f in json.loads(cli("doctor", "--json", code=1).stdout)
             if f["scope"] in ("gizmo", "webby")}
    assert found["gizmo"]["problem"] == found["webby"]["problem"] == "pulled_mapped"
    assert "of its vectors are cached here" in found["gizmo"]["message"]
    assert "cached" not in found["webby"]["message"]


def test_pull_json_is_the_pull_report_whole_with_whether_it_calibrated(published):
    from dataclasses import fields

    from loci_pipeline.share.pull import PullReport

    out = json.loads(cli("pull", str(published), "--json", "--no-calibrate").stdout)
    assert set(out) == {f.name for f in fields(PullReport)} | {"calibrated"}
    assert out["calibrated"] is False and sorted(out["imported"]) == ["gizmo", "webby"]
