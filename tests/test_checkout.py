"""Which repository a working directory is a checkout of (loci.kernel.checkout)."""
import pytest

from conftest import git
from loci.kernel.checkout import remote_keys, repository_key


@pytest.mark.parametrize("url", ["https://github.com/Acme/Gizmo.git", "https://user:token@github.com/acme/gizmo/",
                                 "git@github.com:acme/gizmo.git", "ssh://git@github.com/acme/gizmo",
                                 "github.com:acme/gizmo"])
def test_every_spelling_of_one_address_has_one_key(url):
    assert repository_key(url) == "github.com/acme/gizmo"


def test_no_address_has_no_key():
    assert repository_key(None) is None and repository_key("  ") is None


def test_the_remotes_of_the_checkout_holding_a_folder_are_read_without_git(tmp_path):
    repo = tmp_path / "clone"
    (repo / "deep" / "er").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "git@example.org:team/gizmo.git")
    git(repo, "remote", "add", "fork", "https://example.org/me/gizmo")
    git(repo, "config", "user.url", "https://example.org/not/a-remote")   # a url outside [remote] is not one
    assert remote_keys(repo / "deep" / "er") == {"example.org/team/gizmo", "example.org/me/gizmo"}
    assert remote_keys(tmp_path) == set()


def test_a_worktree_reads_the_remotes_of_its_repository(tmp_path):
    repo = tmp_path / "main"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "https://example.org/team/gizmo.git")
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert remote_keys(tmp_path / "wt") == {"example.org/team/gizmo"}


def test_the_checked_out_commit_is_read_from_the_git_files_as_git_reads_it(tmp_path):
    from conftest import git, make_repo

    from loci.kernel.checkout import head_commit

    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (repo / "sub").mkdir()
    assert head_commit(repo / "sub") == git(repo, "rev-parse", "HEAD").strip()
    git(repo, "pack-refs", "--all")                       # the branch now lives in packed-refs only
    assert head_commit(repo) == git(repo, "rev-parse", "HEAD").strip()
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    first = git(repo, "rev-parse", "HEAD~1").strip()
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"), first)
    assert head_commit(tmp_path / "wt") == first          # a worktree's own HEAD, detached
    assert head_commit(repo) == git(repo, "rev-parse", "HEAD").strip()
    assert head_commit(tmp_path) is None                  # outside any checkout
