"""`loci forget SCOPE...`: a scope leaves the registry, the routing the router reads and the
home's per-scope files; `loci update` follows a repository that moved instead of registering
it twice."""
from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from conftest import GIZMO, WEBBY, git, setup_home
from loci.front.cli import app
from loci.kernel.config import layout
from loci.kernel.registry import load_registry

runner = CliRunner()
SPROCKET_Q = "how do I calibrate a sprocket with the cogwheel ratchet?"


def _loci(*args: str):
    res = runner.invoke(app, list(args))
    return res


def _routed(question: str) -> dict:
    res = _loci("route", "--json", "--no-cwd", question)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _routing_names(lay) -> set[str]:
    from loci.query.store import indexed_metas

    return set(indexed_metas(lay))


def test_forget_removes_a_scope_from_routing_and_the_registry(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    lay = layout()
    assert "gizmo" in _routed(SPROCKET_Q)["scopes"]
    res = _loci("forget", "gizmo")
    assert res.exit_code == 0, res.output
    assert "forgot gizmo" in res.output
    assert load_registry(lay).names() == ["webby"]
    assert _routing_names(lay) == {"webby"}
    assert "gizmo" not in _routed(SPROCKET_Q)["scopes"]
    for path in (lay.chunks("gizmo"), lay.meta("gizmo"), lay.query_db("gizmo"), lay.vocab("gizmo"),
                 lay.refs("gizmo")):
        assert not path.exists(), path
    assert lay.chunks("webby").is_file() and lay.query_db("webby").is_file()   # the other scope is untouched


def test_a_forgotten_scope_whose_folder_was_deleted_stays_forgotten_after_an_update(tmp_path, loci_home):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    shutil.rmtree(code / "gizmo")
    assert _loci("forget", "gizmo").exit_code == 0
    res = _loci("update", "--quiet", "--no-graphs")
    assert res.exit_code == 0, res.output
    assert load_registry(layout()).names() == ["webby"]
    assert "missing" not in _loci("doctor").output


def test_forget_with_an_unknown_name_says_did_you_mean_and_changes_nothing(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    before = layout().scopes.read_bytes()
    res = _loci("forget", "gizmoo")
    assert res.exit_code == 2
    assert "unknown scope 'gizmoo'" in res.output and "did you mean gizmo?" in res.output
    assert layout().scopes.read_bytes() == before


def test_forget_names_a_folder_that_the_next_update_would_register_again(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    res = _loci("forget", "gizmo")
    assert res.exit_code == 0, res.output
    assert "loci update" in res.output and "register" in res.output


def test_update_moves_a_scope_whose_repository_was_moved_instead_of_registering_it_twice(tmp_path, loci_home):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    assert _loci("group", "add", "gizmo", "tools").exit_code == 0
    (code / "gizmo").rename(code / "gizmo-renamed")
    res = _loci("update", "--no-graphs")
    assert res.exit_code == 0, res.output
    assert "gizmo" in res.output and "moved" in res.output
    reg = load_registry(layout())
    assert reg.names() == ["gizmo", "webby"]
    assert reg.get("gizmo").path == str((code / "gizmo-renamed").resolve())
    assert _routed(SPROCKET_Q)["scopes"] == ["gizmo"]
    assert "gizmo" in json.loads(_loci("scopes", "--json", "--group", "tools").output)[0]["name"]


def test_update_registers_a_moved_folder_at_another_commit_as_a_new_scope(tmp_path, loci_home):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    (code / "gizmo").rename(code / "gizmo-renamed")
    (code / "gizmo-renamed" / "NOTES.md").write_text("notes\n")
    git(code / "gizmo-renamed", "add", "-A")
    git(code / "gizmo-renamed", "commit", "-q", "-m", "notes")
    assert _loci("update", "--quiet", "--no-graphs").exit_code == 0
    assert load_registry(layout()).names() == ["gizmo", "gizmo-renamed", "webby"]   # doctor names gizmo


def test_a_pulled_scope_can_be_forgotten_and_the_next_pull_of_its_source_brings_it_back(tmp_path, loci_home,
                                                                                          monkeypatch):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    store = tmp_path / "store"
    assert _loci("push", str(store)).exit_code == 0
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "team-home"))
    lay = layout()
    assert _loci("pull", str(store), "--no-calibrate").exit_code == 0
    res = _loci("forget", "gizmo")
    assert res.exit_code == 0, res.output
    assert "pull" in res.output                                   # it says a pull brings it back
    assert load_registry(lay).names() == ["webby"] and _routing_names(lay) == {"webby"}
    assert "gizmo" not in json.loads(lay.pulled.read_text())["scopes"]
    assert not [p for p in lay.home.rglob("*gizmo*") if p.is_file()]
    assert "pull" in _loci("forget", "--help").output
    assert _loci("pull", str(store), "--no-calibrate").exit_code == 0
    assert load_registry(lay).names() == ["gizmo", "webby"]       # as the help says


def test_forget_removes_the_commit_hooks_that_would_rebuild_nothing(tmp_path, loci_home):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    assert _loci("hook", "install", "--all").exit_code == 0
    res = _loci("forget", "gizmo")
    assert res.exit_code == 0, res.output
    assert "hooks removed" in res.output
    status = _loci("hook", "status", str(code / "gizmo")).output
    assert "post-commit    none" in status
    assert "post-commit    loci" in _loci("hook", "status", str(code / "webby")).output   # the other keeps its own
