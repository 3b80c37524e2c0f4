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
