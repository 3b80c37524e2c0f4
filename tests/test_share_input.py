"""`loci export`, `loci push`, `loci pull` given bad input: one line naming what is wrong, a
non-zero exit (2 for a malformed address or an unknown scope), nothing written, no traceback."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import GIT_ENV, GIZMO, WEBBY, setup_home
from loci.front.cli import app

runner = CliRunner()


def cli(*args: str, code: int = 0):
    res = runner.invoke(app, list(args))
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def one_line(res) -> str:
    """The command's whole output, which must be one line."""
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    return lines[0]


def files_of(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Built once: a home with gizmo and webby indexed (no vectors), and a store it pushed."""
    tmp = tmp_path_factory.mktemp("share-input")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCI_HOME", str(tmp / "home"))
        mp.setenv("LOCI_SERVER", "off")
        for k, v in GIT_ENV.items():
            mp.setenv(k, v)
        setup_home(tmp / "code", {"gizmo": GIZMO, "webby": WEBBY})
        cli("push", str(tmp / "store"), "--quiet")
    return tmp


@pytest.fixture
def home(built, tmp_path, monkeypatch) -> Path:
    """This test's own copy of the built home, at LOCI_HOME; the current directory an empty folder."""
    home = tmp_path / "home"
    shutil.copytree(built / "home", home)
    monkeypatch.setenv("LOCI_HOME", str(home))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return home


@pytest.fixture
def store(built, tmp_path) -> Path:
    """This test's own copy of the store the built home pushed (bundles gizmo and webby)."""
    shutil.copytree(built / "store", tmp_path / "store")
    return tmp_path / "store"


@pytest.fixture
def empty_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "empty-home"
    monkeypatch.setenv("LOCI_HOME", str(home))
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    monkeypatch.chdir(cwd)
    return home


# --- export ---------------------------------------------------------------------------------

def test_export_to_an_existing_file_names_it_and_writes_nothing(home, tmp_path):
    target = tmp_path / "existing.json"
    target.write_text("{}\n")
    line = one_line(cli("export", "--to", str(target), code=2))   # bad input, as an empty --to is
    assert str(target) in line and "not a folder" in line
    assert target.read_text() == "{}\n"


def test_export_below_a_file_names_the_file_and_writes_nothing(home, tmp_path):
    target = tmp_path / "existing.json"
    target.write_text("{}\n")
    line = one_line(cli("export", "--to", str(target / "bundles"), code=2))
    assert str(target) in line and "not a folder" in line
    assert target.read_text() == "{}\n"


def test_export_to_an_empty_path_is_a_usage_error_and_writes_nothing(home, tmp_path):
    line = one_line(cli("export", "--to", "", code=2))
    assert "--to" in line and "folder" in line
    assert not list(Path.cwd().iterdir())


def test_export_of_an_unknown_scope_among_known_ones_writes_no_bundle(home, tmp_path):
    out = tmp_path / "out"
    line = one_line(cli("export", "gizmo", "nosuch", "--to", str(out), code=2))
    assert "unknown scope 'nosuch'" in line and "gizmo" in line and "webby" in line
    assert not out.exists()


def test_export_of_a_misspelt_scope_suggests_the_known_one(home, tmp_path):
    line = one_line(cli("export", "gizmoo", "--to", str(tmp_path / "out"), code=2))
    assert "did you mean gizmo?" in line and "before exporting" not in line


def test_export_of_a_pulled_scope_is_a_usage_error_that_says_where_it_is_built(store, empty_home, tmp_path):
    cli("pull", str(store), "--quiet")
    line = one_line(cli("export", "gizmo", "--to", str(tmp_path / "out"), code=2))
    assert "gizmo" in line and "pulled" in line and "not indexed" not in line
    assert not (tmp_path / "out").exists()


def test_export_still_writes_every_named_bundle(home, tmp_path):
    res = cli("export", "gizmo", "webby", "--to", str(tmp_path / "out"))
    assert "gizmo:" in res.stdout and "webby:" in res.stdout
    assert (tmp_path / "out" / "gizmo" / "manifest.json").is_file()
    assert (tmp_path / "out" / "webby" / "manifest.json").is_file()


# --- push -----------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["path", "file://"])
def test_push_to_a_file_names_it_and_writes_nothing(home, tmp_path, form):
    target = tmp_path / "x.out"
    target.write_text("data\n")
    dest = str(target) if form == "path" else target.as_uri()
    line = one_line(cli("push", dest, code=1))
    assert str(target) in line and "not a folder" in line
    assert target.read_text() == "data\n"


def test_push_below_a_file_names_the_file(home, tmp_path):
    target = tmp_path / "x.out"
    target.write_text("data\n")
    line = one_line(cli("push", str(target / "store"), code=1))
    assert str(target) in line and "not a folder" in line
    assert target.read_text() == "data\n"


@pytest.mark.parametrize("dest", ["", "   "])
def test_push_to_an_empty_destination_is_a_usage_error(home, dest):
    line = one_line(cli("push", dest, code=2))
    assert "folder, file://PATH or s3://bucket/prefix" in line
    assert not list(Path.cwd().iterdir())


BAD_ADDRESSES = ["http://example.invalid/bundles", "gs://bucket/prefix", "s3://", "s3:///prefix",
                 "file://", "file://host/bundles"]


@pytest.mark.parametrize("dest", BAD_ADDRESSES)
def test_push_to_a_malformed_address_is_a_usage_error_and_writes_nothing(home, dest):
    line = one_line(cli("push", dest, code=2))
    assert dest in line
    assert not list(Path.cwd().iterdir())


def test_push_of_an_unknown_scope_is_a_usage_error_and_creates_no_destination(home, tmp_path):
    dest = tmp_path / "new"
    line = one_line(cli("push", "--scope", "nosuch", dest.as_uri(), code=2))
    assert "unknown scope 'nosuch'" in line and "before exporting" not in line
    assert not dest.exists()


def test_push_of_a_misspelt_scope_suggests_the_known_one(home, tmp_path):
    line = one_line(cli("push", "--scope", "webbby", str(tmp_path / "new"), code=2))
    assert "did you mean webby?" in line
    assert not (tmp_path / "new").exists()


# --- pull -----------------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["", "   "])
def test_pull_from_an_empty_source_is_a_usage_error(store, empty_home, source):
    (Path.cwd() / "gizmo").mkdir()   # a folder a pull of the current directory would have read
    line = one_line(cli("pull", source, code=2))
    assert "folder, file://PATH or s3://bucket/prefix" in line
    assert not (empty_home / "scopes.json").exists()


@pytest.mark.parametrize("source", BAD_ADDRESSES)
def test_pull_from_a_malformed_address_is_a_usage_error(empty_home, source):
    line = one_line(cli("pull", source, code=2))
    assert source in line
    assert not (empty_home / "scopes.json").exists()


def test_pulling_one_bundles_folder_says_to_pull_its_parent(store, empty_home):
    line = one_line(cli("pull", str(store / "gizmo"), code=1))
    assert "one bundle" in line and f"loci pull {store}" in line
    assert not (empty_home / "scopes.json").exists()


def test_pulling_a_folder_without_bundles_is_refused_by_name(empty_home, tmp_path):
    folder = tmp_path / "nothing-here"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "notes.txt").write_text("no manifest\n")
    line = one_line(cli("pull", str(folder), code=1))
    assert "no bundle" in line and str(folder) in line
    assert not (empty_home / "scopes.json").exists()


def test_pulling_the_folder_above_a_store_names_the_store(store, empty_home, tmp_path):
    line = one_line(cli("pull", str(tmp_path), code=1))
    assert "no bundle" in line and f"loci pull {store}" in line
    assert not (empty_home / "scopes.json").exists()


def test_a_store_pulled_before_and_emptied_since_is_valid_its_scopes_are_reported_gone(store, empty_home):
    cli("pull", str(store), "--quiet")
    for bundle in ("gizmo", "webby"):
        shutil.rmtree(store / bundle)
    res = cli("pull", str(store))
    assert "pulled 0 scope(s)" in res.stdout
    assert "gizmo: no longer in the store" in res.stdout and "webby: no longer in the store" in res.stdout


def test_a_malformed_address_with_json_is_one_object_with_the_fix_and_exit_2(empty_home):
    import json

    out = json.loads(cli("pull", "--json", "", code=2).stdout)
    assert out == {"error": "no store given", "hint": "give a folder, file://PATH or s3://bucket/prefix"}


def test_adding_a_directory_that_does_not_exist_is_bad_input(home, tmp_path):
    line = one_line(cli("add", str(tmp_path / "nowhere"), code=2))
    assert "does not exist" in line
