"""`loci hook`: opt-in commit hooks that rebuild their repository's scopes in the background."""
from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import git, make_repo
from loci.front import hook
from loci.front.cli import app
from loci.kernel.config import layout
from test_tasks import REPOS, three  # noqa: F401 (a fixture)

runner = CliRunner()


@pytest.fixture
def code(three):
    """Three scopes (alpha, beta, gamma), scanned and built once."""
    return three


def hook_file(repo: Path, name: str = "post-commit") -> Path:
    return repo / ".git" / "hooks" / name


def wait_for_hook_runs(count: int, timeout: float = 120.0) -> str:
    """The hook log once ``count`` background builds have finished."""
    log = hook.log_path(layout())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if text.count("loci hook: done") >= count:
            return text
        time.sleep(0.2)
    raise AssertionError(f"the hook's build did not finish; log so far:\n{log.read_text() if log.exists() else ''}")


def test_install_writes_three_executable_hooks_that_name_the_repositorys_scopes(code):
    states = hook.install(layout(), [code / "beta"])
    assert {(s.hook, s.state) for s in states} == {(h, "loci") for h in hook.HOOKS}
    assert all(s.scopes == ("beta",) for s in states)
    for name in hook.HOOKS:
        path = hook_file(code / "beta", name)
        assert path.stat().st_mode & stat.S_IXUSR
        assert "index:beta" in path.read_text()


def test_installing_twice_changes_nothing(code):
    hook.install(layout(), [code / "beta"])
    before = hook_file(code / "beta").read_text()
    hook.install(layout(), [code / "beta"])
    assert hook_file(code / "beta").read_text() == before
    assert not hook_file(code / "beta", "post-commit.loci-prev").exists()


def test_an_existing_hook_runs_first_and_uninstall_puts_it_back(code, tmp_path):
    mine = hook_file(code / "beta")
    mine.parent.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "my-hook-ran"
    original = f"#!/bin/sh\necho ran >> {marker}\n"
    mine.write_text(original)
    mine.chmod(0o755)
    states = hook.install(layout(), [code / "beta"])
    assert ("post-commit", "loci+chained") in {(s.hook, s.state) for s in states}
    (code / "beta" / "NOTES.md").write_text("# notes\n\nflux capacitor\n")
    git(code / "beta", "add", "-A")
    git(code / "beta", "commit", "-qm", "Add notes")
    assert marker.read_text() == "ran\n"
    wait_for_hook_runs(1)
    hook.uninstall([code / "beta"])
    assert mine.read_text() == original and mine.stat().st_mode & stat.S_IXUSR
    assert not hook_file(code / "beta", "post-merge").exists()


def test_a_commit_with_the_hook_rebuilds_only_its_own_repository(code):
    hook.install(layout(), [code / name for name in REPOS])
    lay = layout()
    (code / "gamma" / "README.md").write_text("# gamma\n\nNow with barometers.\n")  # dirty, not committed
    before = {n: lay.meta(n).stat().st_mtime_ns for n in REPOS}
    (code / "beta" / "README.md").write_text("# beta\n\nCookie sessions over websockets.\n")
    git(code / "beta", "commit", "-qam", "websockets")
    log = wait_for_hook_runs(1)
    assert ".  index:beta" in log and "index:gamma" not in log and "index:alpha" not in log
    after = {n: lay.meta(n).stat().st_mtime_ns for n in REPOS}
    assert after["beta"] != before["beta"]
    assert after["alpha"] == before["alpha"] and after["gamma"] == before["gamma"]
    res = runner.invoke(app, ["route", "--json", "--no-cwd", "which project talks websockets?"])
    assert json.loads(res.output)["scopes"][:1] == ["beta"]


def test_uninstall_without_a_previous_hook_removes_ours(code):
    hook.install(layout(), [code / "alpha"])
    states = hook.uninstall([code / "alpha"])
    assert {s.state for s in states} == {"absent"}
    assert not any(hook_file(code / "alpha", h).exists() for h in hook.HOOKS)


def test_a_hooks_path_shared_beyond_the_repository_is_refused_in_one_line(code, tmp_path):
    shared = tmp_path / "shared-hooks"
    git(code / "alpha", "config", "core.hooksPath", str(shared))
    res = runner.invoke(app, ["hook", "install", str(code / "alpha")])
    assert res.exit_code == 1 and "core.hooksPath" in res.output and "Traceback" not in res.output
    assert not shared.exists()


def test_cli_install_without_a_repository_takes_the_one_it_is_run_in_and_all_takes_every_one(code, monkeypatch):
    monkeypatch.chdir(code / "alpha")
    res = runner.invoke(app, ["hook", "install"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["hook", "status"])
    assert res.output.count("post-checkout  loci") == 1 and f"{code / 'alpha'}  (rebuilds alpha)" in res.output
    res = runner.invoke(app, ["hook", "install", "--all"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["hook", "status"])
    assert res.exit_code == 0
    for name in REPOS:
        assert f"{code / name}  (rebuilds {name})" in res.output
    assert res.output.count("post-checkout  loci") == 3


def test_cli_install_outside_any_registered_repository_names_what_to_give(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["hook", "install"])
    assert res.exit_code == 2 and "--all" in res.output and "Traceback" not in res.output
    assert "post-checkout  loci" not in runner.invoke(app, ["hook", "status"]).output


def test_a_hook_command_takes_a_scope_name_for_its_repository(code):
    res = runner.invoke(app, ["hook", "install", "alpha"])
    assert res.exit_code == 0, res.output
    assert f"{code / 'alpha'}  (rebuilds alpha)" in res.output
    res = runner.invoke(app, ["hook", "uninstall", "alpha"])
    assert res.exit_code == 0 and "post-checkout  none" in res.output
    res = runner.invoke(app, ["hook", "install", "alhpa"])
    assert res.exit_code == 2 and "did you mean alpha" in res.output


def test_a_folder_that_holds_no_scope_is_refused(tmp_path, loci_home):
    make_repo(tmp_path / "stray", {"README.md": "# stray\n"})
    res = runner.invoke(app, ["hook", "install", str(tmp_path / "stray")])
    assert res.exit_code == 1 and "loci add" in res.output


def test_git_variables_from_a_hook_do_not_redirect_a_scopes_fingerprint(code, monkeypatch):
    from loci_pipeline.fingerprint import git_state

    head = git(code / "alpha", "rev-parse", "HEAD").strip()
    own = git_state(code / "alpha")
    monkeypatch.setenv("GIT_DIR", str(code / "beta" / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(code / "beta" / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(code / "beta"))
    assert git_state(code / "alpha") == own and own.startswith(head)
