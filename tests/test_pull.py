"""`loci push` / `loci pull`: bundles from one home merged into another, refusals leave it untouched."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from conftest import GIT_ENV, GIZMO, WEBBY, git, setup_home
from loci.front.cli import app
from loci.kernel.config import layout
from test_bundle import FakeEncoder, embed_home

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
GIZMO_Q = "In gizmo, how do I calibrate a sprocket?"
WEBBY_Q = "In webby, how are session cookies kept?"
CHANGED_Q = "In webby, how is the certificate rotation handshake done?"


def cli(*args: str, code: int = 0):
    res = runner.invoke(app, list(args))
    assert res.exit_code == code, res.output
    return res


def ask_json(*args: str) -> dict:
    return json.loads(cli("ask", "--json", "--no-cwd", *args).stdout)


def snapshot(home: Path) -> dict[str, str]:
    """Every file of a home and its sha256 (what "untouched" means)."""
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(home.rglob("*")) if p.is_file() and p.name != ".doit.db"}


def change_webby(code: Path, dest: str, monkeypatch, name: str = "handshake_certificate_rotation") -> None:
    """Commit a change to webby, rebuild it in the current home and push to ``dest``: one bundle moves."""
    (code / "webby" / "webby" / f"{name}.py").write_text(f"def {name}():\n    pass\n")
    git(code / "webby", "add", "-A")
    git(code / "webby", "commit", "-q", "-m", "rotate certificates during the handshake")
    cli("index", "--quiet")
    embed_home(monkeypatch)
    res = cli("push", dest)
    assert "pushed 1 bundle(s)" in res.stdout and "webby" in res.stdout


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Built once: home A with gizmo and webby (vectors of a fake model) pushed to store ``v1``;
    then webby changes and the push lands in ``v2``, a copy of v1 where only webby moved."""
    tmp = tmp_path_factory.mktemp("corpus")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCI_HOME", str(tmp / "home-a"))
        for k, v in GIT_ENV.items():
            mp.setenv(k, v)
        code = setup_home(tmp / "code", {"gizmo": GIZMO, "webby": WEBBY})
        git(code / "gizmo", "remote", "add", "origin", "https://example.invalid/team/gizmo.git")
        embed_home(mp)
        cli("push", str(tmp / "v1"), "--quiet")
        shutil.copytree(tmp / "v1", tmp / "v2")
        gizmo_commit = git(code / "gizmo", "rev-parse", "HEAD").strip()
        change_webby(code, str(tmp / "v2"), mp)
    return SimpleNamespace(code=code, home_a=tmp / "home-a", v1=tmp / "v1", v2=tmp / "v2",
                           gizmo_commit=gizmo_commit)


def swap(store: Path, version: Path) -> None:
    """The store at ``store`` now holds ``version`` (same address, so the records still match)."""
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(version, store)


@pytest.fixture
def published(corpus, tmp_path, loci_home):
    """A store holding v1, and an empty home at LOCI_HOME. Returns the store."""
    swap(tmp_path / "store", corpus.v1)
    return tmp_path / "store"


@pytest.fixture
def pulled(published, corpus):
    """The home has pulled v1; the store now holds v2 (only webby changed)."""
    cli("pull", str(published), "--all", "--quiet")
    swap(published, corpus.v2)
    return published


def test_a_pulled_home_answers_with_the_repository_and_commit(published, corpus):
    res = cli("pull", str(published), "--all")
    assert "pulled 2 scope(s)" in res.stdout
    out = ask_json("--fast", GIZMO_Q)
    assert out["scopes"] == ["gizmo"]
    block = out["blocks"][0]
    assert block["episodes"] or block["structure"]
    assert block["origin"] == {"repository": "https://example.invalid/team/gizmo.git",
                               "commit": corpus.gizmo_commit}
    text = cli("ask", "--no-cwd", "--fast", GIZMO_Q).stdout
    assert f"example.invalid/team/gizmo.git @ {corpus.gizmo_commit[:12]}" in text


def test_a_big_pull_builds_the_query_files_in_worker_processes_alike(published, monkeypatch):
    import loci_pipeline.workers
    import loci_pipeline.share.stage

    monkeypatch.setattr(loci_pipeline.share.stage, "PARALLEL_FROM", 1)
    monkeypatch.setattr(loci_pipeline.workers, "default_jobs", lambda: 2)
    cli("pull", str(published), "--all", "--quiet")
    assert ask_json("--fast", GIZMO_Q)["blocks"][0]["episodes"]
    assert ask_json("--fast", WEBBY_Q)["scopes"] == ["webby"]


def test_the_files_of_one_changed_bundle_are_fetched_together_in_a_bounded_pool(pulled, monkeypatch):
    import threading
    import time

    import loci_pipeline.share.stage
    from loci_pipeline.share.store import Store

    monkeypatch.setattr(loci_pipeline.share.stage, "FETCH_THREADS", 3)
    lock, now, most = threading.Lock(), [0], [0]
    copy = Store.copy

    def slow_copy(self, *args):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.05)   # a round trip to the store
        try:
            return copy(self, *args)
        finally:
            with lock:
                now[0] -= 1

    monkeypatch.setattr(Store, "copy", slow_copy)
    assert json.loads(cli("pull", str(pulled), "--all", "--json", "--no-calibrate").stdout)["imported"] == ["webby"]
    assert most[0] == 3      # webby's files came three at a time, not one after the other
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]


def test_a_pulled_home_asks_with_the_second_opinion_of_the_same_model(published, loci_home, monkeypatch):
    import loci.query.semantic

    cli("pull", str(published), "--all", "--quiet")
    assert json.loads((loci_home / "embed.json").read_text())["model_id"] == "fake-model"
    from loci.query.semantic import load_summary

    spans, _rows = load_summary(layout(), "fake-model")  # the second opinion's first pass
    assert set(spans) == {"gizmo", "webby"}
    asked = []

    class Spy(FakeEncoder):
        def encode(self, texts):
            asked.extend(texts)
            return super().encode(texts)

    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: Spy())
    out = ask_json("what keeps the cookie jar between redirects?", "--scope", "webby")
    assert asked and out["blocks"][0]["episodes"]


def test_a_pulled_scope_is_found_from_a_checkout_only_by_its_repository(published, corpus):
    cli("pull", str(published), "--all", "--quiet")
    # webby's bundle names no repository (its checkout has no remote): a folder cannot point at it
    out = json.loads(cli("route", "--json", "--fast", "--cwd", str(corpus.code / "webby"),
                         "how do I install it?").stdout)
    assert out["outcome"] == "abstained"
    # gizmo's names its origin, which the checkout has
    out = json.loads(cli("route", "--json", "--fast", "--cwd", str(corpus.code / "gizmo"),
                         "how do I install it?").stdout)
    assert out["scopes"] == ["gizmo"]


def test_pulling_again_moves_only_the_changed_bundle(pulled):
    lay = layout()
    kept = {p: p.stat().st_mtime_ns for p in (lay.chunks("gizmo"), lay.query_db("gizmo"), lay.meta("gizmo"))}
    out = json.loads(cli("pull", str(pulled), "--all", "--json").stdout)
    assert out["imported"] == ["webby"] and out["unchanged"] == ["gizmo"]
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]
    again = json.loads(cli("pull", str(pulled), "--all", "--json").stdout)
    assert again["imported"] == [] and sorted(again["unchanged"]) == ["gizmo", "webby"]


def test_a_manifest_rewritten_within_the_same_second_and_size_is_still_noticed(published):
    cli("pull", str(published), "--all", "--quiet")
    path = published / "webby" / "manifest.json"
    stat = path.stat()
    manifest = json.loads(path.read_text())
    manifest["commit"] = manifest["commit"][::-1]  # same length, another commit
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert json.loads(cli("pull", str(published), "--all", "--json").stdout)["imported"] == ["webby"]


def test_a_name_taken_by_a_local_scope_is_pulled_under_an_alias(published, tmp_path):
    setup_home(tmp_path / "mine", {"gizmo": {"README.md": "# gizmo\n\nMy own gizmo: widgets and doohickeys.\n"}})
    out = json.loads(cli("pull", str(published), "--all", "--json").stdout)
    assert out["renamed"] == {"gizmo": "gizmo@store"}
    names = {s["name"]: s for s in json.loads(cli("scopes", "--json").stdout)}
    assert Path(names["gizmo"]["path"]) == tmp_path / "mine" / "gizmo"
    assert ask_json("--fast", "--scope", "gizmo@store", "calibrate sprocket")["blocks"][0]["scope"] == "gizmo@store"
    assert ask_json("--fast", "In gizmo, what about doohickeys?")["scopes"] == ["gizmo"]


def test_update_refreshes_a_pulled_scope_by_pulling_again(pulled, monkeypatch):
    import loci_pipeline.embed

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())  # update re-embeds
    cli("update", "--quiet", "--no-graphs")
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]


@pytest.mark.parametrize("how", [["--all"], []], ids=["whole", "maps"])
def test_update_pulls_a_source_taken_without_vectors_again_without_vectors(published, corpus, loci_home, how):
    from loci_pipeline.share.pull import read_pulled

    cli("pull", str(published), *how, "--no-vectors", "--quiet")
    swap(published, corpus.v2)                                  # webby moved in the store
    cli("update", "--quiet", "--no-graphs")
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]   # pulled again
    assert not (loci_home / "vectors").exists() and not (loci_home / "embed.json").exists()
    assert all(r["no_vectors"] for r in read_pulled(layout()).values())


def test_update_names_a_damaged_bundle_and_takes_the_others(pulled, monkeypatch):
    import loci_pipeline.embed

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    _flip_byte(pulled / "webby")
    shutil.copytree(pulled / "gizmo", pulled / "gizmo2")        # a new, sound bundle beside the damaged one
    _edit_manifest(pulled / "gizmo2", lambda m: m.update(scope="gizmo2", aliases=[]))
    res = cli("update", "--quiet", "--no-graphs", code=1)
    refusals = res.stderr.strip().splitlines()
    assert len(refusals) == 1 and "'webby'" in refusals[0] and "sha256" in refusals[0]
    assert "nothing was pulled" not in refusals[0]             # gizmo2 was
    assert "gizmo2" in {s["name"] for s in json.loads(cli("scopes", "--json").stdout)}


def test_doctor_says_where_a_pulled_scope_came_from(published):
    cli("pull", str(published), "--all", "--quiet")
    # 0: the semantic floors came with the bundles (the fake model could not be loaded to fit them here)
    out = cli("doctor").stdout
    assert "pulled from" in out and "store" in out
    assert "no longer exists" not in out


def test_a_rescan_keeps_pulled_scopes_and_does_not_call_them_missing(published, tmp_path):
    cli("pull", str(published), "--all", "--quiet")
    setup_home(tmp_path / "mine", {"solo": {"README.md": "# solo\n\nA lonely project.\n"}})
    res = cli("scan", str(tmp_path / "mine"))
    assert "missing on disk" not in res.stdout
    names = {s["name"] for s in json.loads(cli("scopes", "--json").stdout)}
    assert {"gizmo", "webby", "solo"} <= names
    listing = cli("scopes").stdout
    assert "[pulled]" in listing and "missing on disk" not in listing


# --- a pulled home is calibrated before it answers ------------------------------------------

def _fitted(home: Path) -> dict:
    data = json.loads((home / "calibration.json").read_text())
    return {k: data[k] for k in ("params", "semantic") if k in data}


def test_a_pulled_home_is_calibrated_as_calibrate_would_fit_it(published, loci_home):
    out = json.loads(cli("pull", str(published), "--all", "--json").stdout)
    assert out["calibrated"] is True
    pulled = _fitted(loci_home)
    (loci_home / "calibration.json").unlink()
    from loci_pipeline.calibrate import calibrate

    calibrate(layout())   # what the calibrate step fits, run by hand on the same home
    assert _fitted(loci_home) == pulled


def test_a_pull_calibrates_again_only_when_it_merged_something(pulled, loci_home):
    stamp = (loci_home / "calibration.json").stat().st_mtime_ns
    assert json.loads(cli("pull", str(pulled), "--all", "--json").stdout)["calibrated"] is True   # webby moved
    assert (loci_home / "calibration.json").stat().st_mtime_ns != stamp
    stamp = (loci_home / "calibration.json").stat().st_mtime_ns
    out = json.loads(cli("pull", str(pulled), "--all", "--json").stdout)
    assert out["imported"] == [] and out["calibrated"] is False
    assert (loci_home / "calibration.json").stat().st_mtime_ns == stamp


def test_calibrating_after_a_pull_does_not_merge_routing_again(pulled, monkeypatch):
    import loci_pipeline.tasks

    merged = []
    full = loci_pipeline.tasks.routing_action
    monkeypatch.setattr(loci_pipeline.tasks, "routing_action", lambda ctx: merged.append(1) or full(ctx))
    assert json.loads(cli("pull", str(pulled), "--all", "--json").stdout)["calibrated"] is True
    assert merged == []          # the pull merged its changed scope: the routing step is up to date
    from loci_pipeline import build
    from loci_pipeline.tasks import home_context

    os.utime(layout().meta("gizmo"), ns=(1, 1))   # a meta moved after the merge: routing runs again
    build.calibrate(home_context(layout(), scan=False, graphs=False, embed=False))
    assert merged == [1]


def test_pull_no_calibrate_keeps_the_shipped_thresholds(published, loci_home):
    res = cli("pull", str(published), "--all", "--no-calibrate")
    assert "calibrated" not in res.stdout and not (loci_home / "calibration.json").exists()


def _semantic(home: Path) -> dict:
    return json.loads((home / "calibration.json").read_text())["semantic"]


def _calibrated_here(home: Path, monkeypatch) -> dict:
    """The semantic fit of ``home`` computed from its own vectors, no piece kept or pulled."""
    import loci.query.semantic
    from loci_pipeline.calibrate import calibrate
    from test_bundle import FakeEncoder

    shutil.rmtree(home / "calibration-pieces", ignore_errors=True)
    (home / "pulled.json").rename(home / "pulled.json.away")     # no bundle vouches for a piece
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    try:
        return calibrate(layout(), write=False)["semantic"]
    finally:
        (home / "pulled.json.away").rename(home / "pulled.json")


def test_a_map_pulled_home_is_calibrated_from_the_bundles_pieces_without_a_store(published, loci_home,
                                                                                 tmp_path, monkeypatch):
    cli("pull", str(published), "--quiet")                      # the map: every store left remote
    mapped = _semantic(loci_home)
    assert not any((loci_home / "vectors" / "fake-model").glob("*.npy"))
    assert set(mapped["models"]["fake-model"]["floors"]) == {"gizmo", "webby"}
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "whole"))
    cli("pull", str(published), "--all", "--quiet")
    assert _semantic(tmp_path / "whole") == mapped             # the same pieces landed with every store
    assert _calibrated_here(tmp_path / "whole", monkeypatch) == mapped   # what its own vectors give


def test_a_bundle_without_pieces_is_calibrated_from_its_vectors_when_they_are_here(published, loci_home,
                                                                                  tmp_path, monkeypatch):
    for folder in ("gizmo", "webby"):
        _edit_manifest(published / folder, lambda m: m.pop("calibration"))   # as an older loci exported it
    cli("pull", str(published), "--quiet")
    assert _semantic(loci_home)["models"]["fake-model"]["floors"] == {}      # remote vectors: the default floor
    import loci.query.semantic
    from test_bundle import FakeEncoder

    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "whole"))
    cli("pull", str(published), "--all", "--quiet")
    whole = _semantic(tmp_path / "whole")
    assert set(whole["models"]["fake-model"]["floors"]) == {"gizmo", "webby"}
    assert whole == _calibrated_here(tmp_path / "whole", monkeypatch)


def test_a_piece_fitted_another_way_or_malformed_is_not_landed(published, loci_home):
    _edit_manifest(published / "gizmo", lambda m: m["calibration"].update(method="another-loci"))
    _edit_manifest(published / "webby", lambda m: m["calibration"].update(null=[0.5, "x"]))
    cli("pull", str(published), "--quiet")
    assert _semantic(loci_home)["models"]["fake-model"]["floors"] == {}


# --- refusals: one line, nothing changed ------------------------------------------------------

def _edit_manifest(folder: Path, edit) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _flip_byte(folder: Path) -> None:
    path = folder / "chunks.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(folder: Path) -> None:
    path = folder / "vocab.parquet"
    path.write_bytes(path.read_bytes()[:-7])


def _newer_schema(folder: Path) -> None:
    _edit_manifest(folder, lambda m: m.update(bundle_schema=m["bundle_schema"] + 1))


def _outside(folder: Path) -> None:
    _edit_manifest(folder, lambda m: m["files"][0].update(path="../gizmo/chunks.parquet"))


def _other_model(folder: Path) -> None:
    _edit_manifest(folder, lambda m: m.update(embedding={"model": "another-model", "dim": 8}))


def _rehash(folder: Path, name: str) -> None:
    """The manifest now promises ``name``'s current bytes (a forger recomputes the checksum)."""
    data = (folder / name).read_bytes()

    def edit(manifest):
        for entry in manifest["files"]:
            if entry["path"] == name:
                entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    _edit_manifest(folder, edit)


def _retable(name: str, change):
    """Rewrite the Parquet table ``name`` through ``change`` and re-hash it."""
    def damage(folder: Path) -> None:
        import pyarrow.parquet as pq

        table = pq.read_table(folder / name)
        pq.write_table(change(table), folder / name)
        _rehash(folder, name)
    return damage


def _string_column(table, column: str):
    import pyarrow as pa

    i = table.column_names.index(column)
    return table.set_column(i, column, pa.array([str(v) for v in table.column(column).to_pylist()], pa.string()))


def _first_line(value):
    """The table's first ``line`` becomes ``value`` (None: left empty), of the column's own type."""
    def change(table):
        import pyarrow as pa

        i, lines = table.column_names.index("line"), table.column("line").to_pylist()
        return table.set_column(i, table.schema.field(i), pa.array([value] + lines[1:], table.schema.field(i).type))
    return change


def _vocab_of_wrong_types(table):
    import pyarrow as pa

    return pa.table({"token": pa.array(range(len(table)), pa.int64()),
                     "weight": pa.array([str(w) for w in table.column("weight").to_pylist()], pa.string())})


def _nan_vectors(table):
    import numpy as np
    import pyarrow as pa

    flat = np.full(len(table) * table.schema.field("vector").type.list_size, np.nan, np.float32)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(flat), table.schema.field("vector").type.list_size)
    return table.set_column(table.column_names.index("vector"), "vector", vectors).replace_schema_metadata(
        table.schema.metadata)


def _truncated_and_rehashed(folder: Path) -> None:
    path = folder / "refs.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    _rehash(folder, "refs.parquet")


def _linked(name: str):
    """``name`` becomes a symbolic link to a copy of itself outside the bundle (same bytes)."""
    def damage(folder: Path) -> None:
        outside = folder.parent.parent / f"outside-{name}"
        shutil.copyfile(folder / name, outside)
        (folder / name).unlink()
        (folder / name).symlink_to(outside)
    return damage


def _linked_folder(folder: Path) -> None:
    outside = folder.parent.parent / "outside-bundle"
    shutil.copytree(folder, outside)
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)


def _too_deep(folder: Path) -> None:
    text = (folder / "manifest.json").read_text().rstrip()
    (folder / "manifest.json").write_text(text[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}")


def _big_file(folder: Path) -> None:
    with open(folder / "chunks.parquet", "r+b") as fh:      # sparse: 1 GB on disk costs nothing
        fh.truncate(1 << 30)


BAD = {
    "checksum": (_flip_byte, "sha256"),
    "truncated": (_truncate, "truncated"),
    "missing": (lambda f: (f / "refs.parquet").unlink(), "missing"),
    "newer schema": (_newer_schema, "newer loci"),
    "outside": (_outside, "outside the bundle"),
    "other model": (_other_model, "--no-vectors"),
    "string line column": (_retable("chunks.parquet", lambda t: _string_column(t, "line")), "column 'line'"),
    "empty chunk line": (_retable("chunks.parquet", _first_line(None)), "empty values in column 'line'"),
    "negative chunk line": (_retable("chunks.parquet", _first_line(-1)), "negative 'line'"),
    "truncated with its checksum": (_truncated_and_rehashed, "refs.parquet cannot be read"),
    "vocab of wrong types": (_retable("vocab.parquet", _vocab_of_wrong_types), "vocab.parquet has column"),
    "nan vectors": (_retable("vectors.parquet", _nan_vectors), "NaN"),
    "loci_schema 99": (lambda f: _edit_manifest(f, lambda m: m.update(loci_schema=99)), "loci_schema"),
    "bundle_schema true": (lambda f: _edit_manifest(f, lambda m: m.update(bundle_schema=True)), "bundle_schema"),
    "meta chunks many": (lambda f: _edit_manifest(f, lambda m: m["meta"].update(chunks="many")), "meta.chunks"),
    "meta a list": (lambda f: _edit_manifest(f, lambda m: m.update(meta=[1, 2])), "`meta` is a list"),
    "long scope name": (lambda f: _edit_manifest(f, lambda m: m.update(scope="w" * 300)), "scope name"),
    "deep manifest": (_too_deep, "nests deeper"),
    "alias shadows a scope": (lambda f: _edit_manifest(f, lambda m: m.update(aliases=["Gizmo"])),
                              "is the name of the scope 'gizmo'"),
    "linked file": (_linked("refs.parquet"), "symbolic link"),
    "linked manifest": (_linked("manifest.json"), "symbolic link"),
    "linked bundle folder": (_linked_folder, "symbolic link"),
    "claims a gigabyte": (lambda f: _edit_manifest(f, lambda m: m["files"][0].update(size=1 << 30)),
                          "refused before reading"),
    "a gigabyte on disk": (_big_file, "the manifest says"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_bundle_is_refused_in_one_line_and_the_home_is_untouched(pulled, loci_home, kind):
    before = snapshot(loci_home)
    damage, words = BAD[kind]
    damage(pulled / "webby")
    res = cli("pull", str(pulled), "--all", code=1)
    refusal = res.stderr.strip().splitlines()
    assert len(refusal) == 1 and words in refusal[0] and "'webby'" in refusal[0]
    assert "Traceback" not in res.output
    assert snapshot(loci_home) == before


def test_a_pull_takes_the_good_bundles_and_refuses_the_bad_one_by_name(published, loci_home):
    _flip_byte(published / "webby")
    res = cli("pull", str(published), "--all", code=1)
    assert "pulled 1 scope(s)" in res.stdout and "gizmo" in res.stdout
    refusal = res.stderr.strip().splitlines()
    assert len(refusal) == 1 and "'webby'" in refusal[0] and "sha256" in refusal[0]
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]
    assert "webby" not in {s["name"] for s in json.loads(cli("scopes", "--json").stdout)}
    assert json.loads(cli("pull", str(published), "--all", "--json", code=1).stdout)["refused"].keys() == {"webby"}


def test_a_refused_bundle_is_taken_once_it_is_repaired(published, corpus, loci_home):
    _flip_byte(published / "webby")
    cli("pull", str(published), "--all", "--quiet", code=1)
    swap(published, corpus.v1)
    out = json.loads(cli("pull", str(published), "--all", "--json").stdout)
    assert out["imported"] == ["webby"] and out["unchanged"] == ["gizmo"] and out["refused"] == {}
    assert ask_json("--fast", WEBBY_Q)["scopes"] == ["webby"]


def test_a_pull_whose_changed_bundles_are_all_refused_still_records_how_the_others_were_asked_for(pulled, loci_home):
    _flip_byte(pulled / "webby")          # the one changed bundle, refused once staged
    cli("pull", str(pulled), "--all", "--scope", "gizmo", "--scope", "webby", code=1)
    records = json.loads((loci_home / "pulled.json").read_text())["scopes"]
    assert records["gizmo"]["named"] is True    # asked by name this time: `loci update` pulls it so again


@pytest.mark.parametrize("kind", ["string line column", "meta a list", "nan vectors", "linked file",
                                  "alias shadows a scope"])
def test_a_bad_bundle_pulled_into_an_empty_home_leaves_no_file_of_it_behind(published, loci_home, kind):
    setup = {"alias shadows a scope": lambda f: _edit_manifest(f, lambda m: m.update(aliases=["gizmo"]))}
    setup.get(kind, BAD[kind][0])(published / "webby")
    res = cli("pull", str(published), "--all", code=1)
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert not [path for path in snapshot(loci_home) if "webby" in path]   # gizmo, sound, landed
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]


def test_a_source_folder_that_does_not_exist_is_bad_input_refused_in_one_line(published, tmp_path):
    res = cli("pull", str(tmp_path / "nowhere"), "--all", code=2)   # a typo, as a misspelt scope is
    assert "not a folder" in res.output and len(res.output.strip().splitlines()) == 1


def test_vectors_of_another_model_come_in_with_no_vectors(published, loci_home):
    loci_home.mkdir(parents=True)
    (loci_home / "embed.json").write_text(json.dumps({"model": "static", "model_id": "another-model"}))
    res = cli("pull", str(published), "--all", code=1)
    assert "--no-vectors" in res.output
    cli("pull", str(published), "--all", "--no-vectors", "--quiet")
    assert not (loci_home / "vectors").exists()
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]


# --- a pull killed at any point leaves the previous state answering ---------------------------

@pytest.mark.parametrize("stage", [
    "installed-one",
    pytest.param("staged", marks=pytest.mark.slow),
    pytest.param("registered", marks=pytest.mark.slow),
    pytest.param("merged", marks=pytest.mark.slow),
])
def test_a_pull_killed_midway_leaves_the_previous_state_answering(pulled, loci_home, stage):
    env = {**os.environ, "LOCI_HOME": str(loci_home), "LOCI_TEST_KILL_AT": stage, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "loci", "pull", str(pulled), "--all"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]
    assert ask_json("--fast", WEBBY_Q)["scopes"] == ["webby"]
    out = json.loads(cli("pull", str(pulled), "--all", "--json").stdout)
    assert out["imported"] == ["webby"]
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]


def _routing_rows(path: Path) -> list[tuple]:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        scopes = con.execute("SELECT id, name, size, updated FROM scopes ORDER BY id").fetchall()
        rows = con.execute("SELECT token, s.name, weight FROM routing JOIN scopes s ON s.id = routing.scope "
                           "ORDER BY 1, 2").fetchall()
    finally:
        con.close()
    return [scopes, rows]


def test_an_incremental_routing_merge_equals_a_full_one(tmp_path):
    import sqlite3

    from loci_pipeline.query_store import update_routing_db, write_routing_db

    def scope_db(name: str, words: list[str]) -> Path:
        path = tmp_path / f"{name}.sqlite"
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE vocab (token TEXT, weight REAL)")
        con.executemany("INSERT INTO vocab VALUES (?, ?)", [(w, float(len(w))) for w in words])
        con.commit()
        con.close()
        return path

    dbs = {"b": scope_db("b", ["bee", "hive"]), "d": scope_db("d", ["dog"]), "e": scope_db("e", ["elk"])}
    metas = {n: {"vocab_weight": 2.0, "updated": ""} for n in dbs}
    inc = tmp_path / "inc.sqlite"
    write_routing_db(inc, dbs, metas)
    # "b" changes, "a" and "c" arrive (every later id shifts), "e" leaves
    dbs.update(b=scope_db("b2", ["bee", "wax"]), a=scope_db("a", ["ant"]), c=scope_db("c", ["cat", "dog"]))
    del dbs["e"]
    metas = {n: {"vocab_weight": 3.0, "updated": "2026"} for n in dbs}
    assert update_routing_db(inc, dbs, metas, changed=["a", "b", "c"])
    full = tmp_path / "full.sqlite"
    write_routing_db(full, dbs, metas)
    assert _routing_rows(inc) == _routing_rows(full)
    # and a question reads the postings in the same order from both (the router sums in it)
    from loci.query.store import load_routing

    for tokens in (None, ["dog", "bee"]):
        got = [[(t, list(rows.items())) for t, rows in load_routing(_at(db), tokens).postings.items()]
               for db in (inc, full)]
        assert got[0] == got[1]
        assert all([i for i, _ in rows] == sorted(i for i, _ in rows) for _, rows in got[0])


def _at(routing_db: Path):
    """A layout whose routing.sqlite is ``routing_db``."""
    from types import SimpleNamespace

    return SimpleNamespace(routing_db=routing_db, manifest=routing_db.with_suffix(".json"))


def test_an_incremental_uses_merge_equals_a_full_one(tmp_path):
    import pyarrow.parquet as pq

    from loci.query.uses import load_uses
    from loci_pipeline.uses import Ref, merge_uses, write_refs

    def provides(name):
        return Ref(name, "provides", "manifest", "manifest", 0)

    def uses(name, path="src/a.py"):
        return Ref(name, "uses", "import", path, 3)

    inc, full = layout(tmp_path / "inc"), layout(tmp_path / "full")
    for lay in (inc, full):
        write_refs(lay, "app", [provides("app"), uses("lib-core"), uses("tool")])
        write_refs(lay, "lib", [provides("lib_core")])
        write_refs(lay, "tool", [provides("tool"), uses("app", "README.md")])
    merge_uses(inc, ["app", "lib", "tool"])
    for lay in (inc, full):  # lib changes its name, cli arrives, tool leaves
        write_refs(lay, "lib", [provides("libcore"), uses("cli")])
        write_refs(lay, "cli", [provides("cli"), uses("libcore", "main.py")])
    merge_uses(inc, ["app", "cli", "lib"], changed=["lib", "cli"])
    merge_uses(full, ["app", "cli", "lib"])
    assert pq.read_table(inc.uses).to_pylist() == pq.read_table(full.uses).to_pylist()
    assert {(u.source, u.target) for u in load_uses(inc)} == {("lib", "cli"), ("cli", "lib")}


def test_an_incremental_uses_merge_reads_only_the_changed_scopes_references(tmp_path, monkeypatch):
    import loci_pipeline.uses
    from loci_pipeline.uses import Ref, merge_uses, write_refs

    lay = layout(tmp_path / "home")
    write_refs(lay, "app", [Ref("app", "provides", "manifest", "manifest", 0)])
    write_refs(lay, "docs", [])                        # a scope that provides and imports nothing
    write_refs(lay, "tool", [Ref("app", "uses", "import", "t.py", 1)])
    merge_uses(lay, ["app", "docs", "tool"])
    read, real = [], loci_pipeline.uses.read_refs
    monkeypatch.setattr(loci_pipeline.uses, "read_refs", lambda lay, scope: read.append(scope) or real(lay, scope))
    merge_uses(lay, ["app", "docs", "tool"], changed=["tool"])
    assert read == ["tool"]
    merge_uses(lay, ["app", "tool"], changed=[])        # docs leaves: nothing to read
    assert read == ["tool"]
    write_refs(lay, "docs", [Ref("app", "uses", "import", "d.py", 2)])
    merge_uses(lay, ["app", "docs", "tool"], changed=[])   # docs comes back: read again
    assert read == ["tool", "docs"]


def test_query_files_from_another_loci_are_built_again_by_the_next_pull(published, monkeypatch):
    import loci_pipeline.share.pull

    cli("pull", str(published), "--all", "--quiet")
    layout().query_db("gizmo").write_bytes(b"not a query file from this loci")
    assert "query file is missing or from another version" in cli("doctor", code=1).stdout
    monkeypatch.setattr(loci_pipeline.share.pull, "derived_signature", lambda params: "a newer query schema")
    out = json.loads(cli("pull", str(published), "--all", "--json").stdout)
    assert sorted(out["imported"]) == ["gizmo", "webby"]
    assert ask_json("--fast", GIZMO_Q)["blocks"][0]["episodes"]
    assert json.loads(cli("pull", str(published), "--all", "--json").stdout)["imported"] == []


def test_a_pulled_scope_keeps_the_facts_its_enumerations_cite(published, corpus):
    import json as _json

    local = _json.loads((corpus.home_a / "meta" / "gizmo.json").read_text())
    assert local.get("facts"), "the local build records facts (language at least)"
    cli("pull", str(published), "--all", "--quiet")
    from loci.kernel.config import layout

    pulled = _json.loads(layout().meta("gizmo").read_text())
    assert pulled.get("facts") == local["facts"]


@pytest.mark.parametrize("stage", ["registered", pytest.param("merged", marks=pytest.mark.slow)])
def test_a_pull_killed_after_registering_then_pulled_again_registers_each_scope_once(published, loci_home, stage):
    env = {**os.environ, "LOCI_HOME": str(loci_home), "LOCI_TEST_KILL_AT": stage, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "loci", "pull", str(published), "--all"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    cli("pull", str(published), "--all", "--quiet")
    names = sorted(s["name"] for s in json.loads(cli("scopes", "--json").stdout))
    assert names == ["gizmo", "webby"]
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]


_SLOW_PULL = """
import sys, time
import loci_pipeline.workers, loci_pipeline.share.stage as stage
stage.PARALLEL_FROM = 1
loci_pipeline.workers.default_jobs = lambda: 2
build = stage._build
def slow(*args):
    time.sleep(120)
    return build(*args)
stage._build = slow
from loci.front.cli import app
sys.argv = ["loci", "pull", sys.argv[1], "--all"]
app()
"""


def _children(pid: int) -> set[int]:
    try:
        return {int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_pull_workers_do_not_outlive_a_killed_pull(published, loci_home):
    import signal
    import time

    env = {**os.environ, "LOCI_HOME": str(loci_home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_PULL, str(published)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(workers) >= 2, "the pull never started its workers"
        time.sleep(0.5)                       # each worker has run its initializer
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [w for w in workers if _alive(w)]
        for w in left:
            os.kill(w, signal.SIGKILL)
        assert not left, f"worker(s) {left} outlived the killed pull"
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("command", ["push", "export"])
def test_push_and_export_of_an_empty_home_are_the_same_error_and_write_nothing(command, loci_home, tmp_path):
    dest = tmp_path / "dest"
    args = [command, str(dest)] if command == "push" else [command, "--to", str(dest)]
    res = cli(*args, code=1)
    assert "nothing to publish" in res.output and "loci setup" in res.output
    assert not dest.exists()


def test_a_bundles_piece_still_lands_after_the_words_fit_changed(published, loci_home, monkeypatch):
    # the exporting and the pulling loci differ only in how they fit the evidence floor: each
    # scope's semantic piece is computed the same way, so it must land (without it a map-pulled
    # scope has no background and its raw closeness outranks every local scope's lift)
    import loci_pipeline.calibrate as cal

    real = cal.fit_words
    monkeypatch.setattr(cal, "fit_words", lambda *a, **k: real(*a, **k))   # another words' fit
    monkeypatch.setattr(cal, "method_signature", lambda: "a-loci-that-fits-the-words-another-way")
    cli("pull", str(published), "--quiet")
    assert set(_semantic(loci_home)["models"]["fake-model"]["floors"]) == {"gizmo", "webby"}


def test_a_question_asked_inside_a_checkout_of_a_pulled_repository_is_about_that_scope(published, tmp_path):
    # a team member pulls the corpus, then asks from their own clone of one of its repositories:
    # the clone is not a registered scope, but its remote names the pulled one
    cli("pull", str(published), "--quiet")
    clone = tmp_path / "work" / "my-gizmo"
    (clone / "src").mkdir(parents=True)
    git(clone, "init", "-q")
    git(clone, "remote", "add", "upstream", "git@example.invalid:team/gizmo")   # another spelling, no .git
    ask = ["route", "--json", "--cwd", str(clone / "src"), "--", "what does this project do?"]
    assert json.loads(cli(*ask).stdout)["scopes"] == ["gizmo"]
    stranger = tmp_path / "work" / "stranger"
    stranger.mkdir()
    git(stranger, "init", "-q")
    git(stranger, "remote", "add", "origin", "https://example.invalid/team/elsewhere.git")
    ask[3] = str(stranger)
    assert json.loads(cli(*ask).stdout)["outcome"] == "abstained"   # a checkout of nothing pulled


def test_a_clone_without_the_remote_at_the_commit_a_bundle_was_built_from_asks_about_that_scope(published, corpus,
                                                                                               tmp_path):
    cli("pull", str(published), "--quiet")
    mirror = tmp_path / "work" / "mirror"
    git(tmp_path, "clone", "-q", str(corpus.code / "gizmo"), str(mirror))
    git(mirror, "remote", "remove", "origin")                    # no remote names the repository
    ask = ["route", "--json", "--cwd", str(mirror), "--", "what does this project do?"]
    assert json.loads(cli(*ask).stdout)["scopes"] == ["gizmo"]   # its HEAD is the bundle's commit
    (mirror / "NOTES.md").write_text("notes\n")
    git(mirror, "add", "-A")
    git(mirror, "commit", "-q", "-m", "moved on")
    assert json.loads(cli(*ask).stdout)["outcome"] == "abstained"   # another commit, no remote: nothing known


def test_doctor_on_a_home_pulled_without_vectors_names_a_fix_that_brings_them(published, loci_home):
    cli("pull", str(published), "--no-vectors", "--quiet")        # a map: its stores stay in the store
    found = {f["problem"]: f for f in json.loads(cli("doctor", "--json", code=1).stdout)}
    gap = found["no_embeddings"]
    assert gap["fix"] != "loci embed"                              # it encodes nothing here: no local store
    assert "loci pull --all" in gap["fix"] and str(published) in gap["fix"] and "loci embed" in gap["fix"]
