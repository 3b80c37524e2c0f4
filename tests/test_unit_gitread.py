"""loci_pipeline.gitread and gitenv: git is read, never written, and a hook's variables never leak in."""
from __future__ import annotations

from conftest import make_repo
from loci_pipeline.gitenv import LOCAL_VARS, git_env
from loci_pipeline.gitread import git_out, read_status, run_git, status_entries


def test_git_env_drops_the_variables_that_locate_a_hooks_repository(monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/.git/index")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "kept")
    env = git_env(EXTRA="1")
    assert not LOCAL_VARS & set(env) and env["GIT_AUTHOR_NAME"] == "kept" and env["EXTRA"] == "1"


def test_a_hooks_git_dir_does_not_redirect_a_read(tmp_path, monkeypatch):
    a = make_repo(tmp_path / "a", {"a.txt": "a\n"})
    b = make_repo(tmp_path / "b", {"b.txt": "b\n"})
    monkeypatch.setenv("GIT_DIR", str(b / ".git"))
    assert git_out(a, "ls-files") == b"a.txt\n"


def test_outside_git_or_with_a_failing_command_there_is_no_output(tmp_path):
    assert git_out(tmp_path, "rev-parse", "HEAD") is None
    assert read_status(tmp_path) is None
    assert run_git(tmp_path, "status").returncode != 0


def test_status_reading_leaves_the_index_untouched(tmp_path):
    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    (repo / "a.txt").write_text("changed\n")
    before = (repo / ".git" / "index").stat().st_mtime_ns
    assert read_status(repo) is not None
    assert (repo / ".git" / "index").stat().st_mtime_ns == before
    assert not (repo / ".git" / "index.lock").exists()


def test_status_entries_name_each_changed_untracked_and_renamed_path(tmp_path):
    from conftest import git

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n", "old name.txt": "moved\n", "sub/c.txt": "c\n"})
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    git(repo, "mv", "old name.txt", "new name.txt")
    paths = {path: sub for _rec, path, sub in status_entries(read_status(repo))}
    assert paths == {b"a.txt": False, b"new.txt": False, b"new name.txt": False}
