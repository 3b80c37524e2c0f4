"""loci_pipeline.scan, with loci_pipeline.provenance and loci_pipeline.manifests: discovery, provenance,
sub-scopes, manifest aliases, and what a rescan keeps."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from loci.kernel.config import layout
from loci.kernel.registry import Registry, Scope, load_registry, save_registry
from loci_pipeline import provenance
from loci_pipeline.manifests import manifest_names
from loci_pipeline.provenance import Identity, classify_owner, remote_org, unknown_owner_reason
from loci_pipeline.scan import ScanError, add_scope, relabel, scan

ME = Identity(email="me@example.com", name="Me Myself")
OTHER = ("Someone Else", "else@example.com")


def git(repo: Path, *args: str, author: tuple[str, str] = OTHER) -> None:
    name, email = author
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def make_repo(path: Path, *, author: tuple[str, str] | None = OTHER, remote: str | None = None,
              files: dict[str, str] | None = None) -> Path:
    """A git repository at ``path`` with one commit by ``author`` (none when author is None)."""
    path.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {"README.md": "hello\n"}).items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "-c", "init.defaultBranch=main", "init", "-q")
    if author:
        git(path, "add", "-A", author=author)
        git(path, "commit", "-q", "-m", "initial", author=author)
    if remote:
        git(path, "remote", "add", "origin", remote)
    return path


def run(*roots: Path, **kw):
    kw.setdefault("identity", ME)
    return scan(list(roots), **kw)


# ---- discovery and pruning

def test_finds_repositories_below_a_root_and_a_root_that_is_itself_a_repo(tmp_path):
    make_repo(tmp_path / "code" / "alpha")
    make_repo(tmp_path / "code" / "group" / "beta")
    assert run(tmp_path / "code").found == ["alpha", "beta"]
    assert run(tmp_path / "code" / "alpha").found == ["alpha"]


def test_repos_under_pruned_directories_are_not_found(tmp_path):
    root = tmp_path / "code"
    make_repo(root / "real")
    for hidden in ("node_modules/pkg", ".cache/clone", "env/lib/dep", "dist/copy", "vendor/lib"):
        make_repo(root / hidden)
    (root / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    assert run(root).found == ["real"]


def test_symlinked_directories_are_not_followed_so_a_loop_does_not_hang(tmp_path):
    root = tmp_path / "code"
    repo = make_repo(root / "alpha")
    (repo / "loop").symlink_to(repo, target_is_directory=True)
    (root / "elsewhere").symlink_to(make_repo(tmp_path / "outside"), target_is_directory=True)
    result = run(root)
    assert result.found == ["alpha"]


def test_a_plain_folder_reports_that_no_repository_was_found(tmp_path):
    (tmp_path / "notes").mkdir()
    result = run(tmp_path / "notes")
    assert result.found == []
    assert any("no git repositories found under" in p for p in result.problems)


def test_a_root_that_is_missing_or_a_file_is_a_problem_not_an_error(tmp_path):
    make_repo(tmp_path / "code" / "alpha")
    (tmp_path / "file.txt").write_text("x")
    result = run(tmp_path / "nope", tmp_path / "file.txt", tmp_path / "code")
    assert result.found == ["alpha"]
    assert any("nope" in p and "no such directory" in p for p in result.problems)
    assert any("file.txt" in p and "not a directory" in p for p in result.problems)
    assert result.registry.roots == [str((tmp_path / "code").resolve())]


def test_a_worktree_with_a_git_file_is_a_repository(tmp_path):
    main = make_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "code" / "feature"))
    assert (tmp_path / "code" / "feature" / ".git").is_file()
    assert run(tmp_path / "code").found == ["feature"]


def test_nested_repository_is_its_own_scope_and_its_parent_excludes_it(tmp_path):
    outer = make_repo(tmp_path / "outer")
    make_repo(outer / "libs" / "inner")
    reg = run(tmp_path).registry
    assert reg.names() == ["inner", "outer"]
    assert reg.get("outer").excludes == ("libs/inner",)
    assert reg.get("inner").kind == "repo" and reg.get("inner").parent is None


def test_scan_makes_at_most_two_git_calls_per_repository(tmp_path, monkeypatch):
    for name in ("a", "b", "c"):
        make_repo(tmp_path / name, remote="git@github.com:org/x.git")
    calls = []
    real = provenance._git
    monkeypatch.setattr(provenance, "_git", lambda *a: calls.append(a) or real(*a))
    run(tmp_path)
    assert len(calls) <= 6


# ---- provenance

def test_repository_with_a_commit_by_the_user_is_me(tmp_path):
    make_repo(tmp_path / "mine", author=("Me Myself", "ME@example.com"),
              remote="git@github.com:bigcorp/mine.git")
    result = run(tmp_path)
    assert result.owners == {"mine": "me"}
    assert result.registry.get("mine").groups == ("me",)


def test_repository_with_a_foreign_remote_is_labelled_with_its_org(tmp_path):
    make_repo(tmp_path / "flask", remote="https://github.com/Pallets/flask.git")
    result = run(tmp_path)
    assert result.owners == {"flask": "vendor:pallets"}
    assert result.registry.get("flask").groups == ("vendor:pallets",)


def test_remote_org_equal_to_the_user_name_is_me(tmp_path):
    make_repo(tmp_path / "tool", remote="git@github.com:memyself/tool.git")
    assert run(tmp_path, identity=Identity(name="memyself")).owners == {"tool": "me"}


def test_a_repository_with_no_commits_and_no_remote_is_left_unlabelled_with_nothing_to_judge_by(tmp_path):
    make_repo(tmp_path / "fresh", author=None)
    make_repo(tmp_path / "copied")
    result = run(tmp_path)
    assert result.owners == {"fresh": "unknown", "copied": "unknown"}
    assert result.registry.get("fresh").groups == () and result.registry.get("copied").groups == ()
    assert "no commits" in unknown_owner_reason(ME, tmp_path / "fresh")
    assert relabel(result.registry, identity=ME).owners["fresh"] == "unknown"


# ---- a repository that moved

def test_a_rescan_moves_a_scope_whose_repository_moved_at_the_same_head(tmp_path):
    repo = make_repo(tmp_path / "code" / "alpha", files={".loci.json": '{"scopes": [{"path": "web", "alias": "w"}]}',
                                                        "web/x": "x"})
    make_repo(tmp_path / "code" / "beta")
    first = run(tmp_path / "code").registry
    first = add_scope(first, repo, alias=["al"])   # a hand-set alias travels with it
    repo.rename(tmp_path / "code" / "alpha-renamed")
    result = run(tmp_path / "code", prior=first)
    moved = (tmp_path / "code" / "alpha-renamed").resolve()
    assert result.registry.names() == ["alpha", "alpha/web", "beta"]
    assert result.registry.get("alpha").path == str(moved) and "al" in result.registry.get("alpha").aliases
    assert result.registry.get("alpha/web").path == str(moved / "web")
    assert result.moved == {"alpha": str(moved)} and result.missing == []


def test_a_moved_folder_at_another_head_is_a_new_scope_and_the_old_one_stays_missing(tmp_path):
    repo = make_repo(tmp_path / "code" / "alpha")
    first = run(tmp_path / "code").registry
    repo.rename(tmp_path / "code" / "alpha2")
    (tmp_path / "code" / "alpha2" / "more.md").write_text("more\n")
    git(tmp_path / "code" / "alpha2", "add", "-A", author=OTHER)
    git(tmp_path / "code" / "alpha2", "commit", "-q", "-m", "more", author=OTHER)
    result = run(tmp_path / "code", prior=first)
    assert result.registry.names() == ["alpha", "alpha2"] and result.missing == ["alpha"] and result.moved == {}


def test_two_new_folders_at_the_missing_scope_s_head_move_nothing(tmp_path):
    repo = make_repo(tmp_path / "code" / "alpha")
    first = run(tmp_path / "code").registry
    git(tmp_path / "code", "clone", "-q", str(repo), str(tmp_path / "code" / "copy-a"), author=OTHER)
    repo.rename(tmp_path / "code" / "copy-b")
    result = run(tmp_path / "code", prior=first)
    assert result.moved == {} and result.missing == ["alpha"]
    assert result.registry.names() == ["alpha", "copy-a", "copy-b"]


@pytest.mark.parametrize("url,org", [
    ("git@github.com:someorg/x.git", "someorg"),
    ("https://github.com/pallets/flask", "pallets"),
    ("https://user:token@gitlab.com/group/sub/repo.git", "group"),
    ("ssh://git@host:2222/Org/repo.git", "org"),
    ("/srv/git/repo.git", None),
    ("file:///srv/git/repo.git", None),
    ("../sibling", None),
    ("https://host/repo.git", None),
])
def test_remote_org_is_read_from_scp_and_url_remotes(url, org):
    assert remote_org(url) == org


def test_an_identity_with_no_email_or_name_never_claims_a_repository():
    assert classify_owner(None, [("", "")], Identity()) == "unknown"


# ---- sub-scopes

def test_split_makes_a_scope_per_manifest_child_carrying_the_monorepo_id(tmp_path):
    mono = make_repo(tmp_path / "mono", files={
        "web/package.json": '{"name": "@acme/web"}',
        "packages/core/pyproject.toml": '[project]\nname = "acme-core"\n',
        "docs/index.md": "# docs\n",
        "dist/package.json": "{}",
    })
    reg = run(tmp_path, split=True).registry
    assert reg.names() == ["mono", "mono/packages/core", "mono/web"]
    web = reg.get("mono/web")
    assert web.kind == "subscope" and web.parent == "mono"
    assert set(web.aliases) >= {"web", "@acme/web"}
    assert "mono" in web.groups and "mono" in reg.get("mono").groups
    assert reg.get("mono").excludes == ("packages/core", "web")
    assert reg.get("mono/web").path == str((mono / "web").resolve())


def test_a_rescan_that_does_not_say_keeps_a_split_repository_split(tmp_path):
    mono = make_repo(tmp_path / "mono", files={"web/package.json": "{}"})
    make_repo(tmp_path / "other", files={"api/go.mod": "module api\n"})
    first = run(tmp_path / "mono", split=True).registry
    (mono / "cli").mkdir()
    (mono / "cli" / "Cargo.toml").write_text('[package]\nname = "cli"\n')
    kept = run(tmp_path, prior=first).registry
    assert kept.names() == ["mono", "mono/cli", "mono/web", "other"]
    assert run(tmp_path, prior=first, split=False).registry.names() == ["mono", "other"]


def test_without_split_a_monorepo_is_one_scope_with_no_monorepo_group(tmp_path):
    make_repo(tmp_path / "mono", files={"web/package.json": '{"name": "web"}'})
    reg = run(tmp_path).registry
    assert reg.names() == ["mono"]
    assert "mono" not in reg.get("mono").groups


def test_loci_json_is_honoured_without_split(tmp_path):
    make_repo(tmp_path / "delroy", files={
        ".loci.json": json.dumps({"scopes": [{"path": "client", "alias": ["web"]},
                                             {"path": "services/api"}]}),
        "client/app.js": "x", "services/api/main.py": "x"})
    reg = run(tmp_path).registry
    assert reg.names() == ["delroy", "delroy/client", "delroy/services/api"]
    assert "web" in reg.get("delroy/client").aliases
    assert reg.get("delroy").excludes == ("client", "services/api")


@pytest.mark.parametrize("bad", ["../elsewhere", "/etc", "link-out", "missing-dir", "."])
def test_a_loci_json_path_outside_the_repository_is_rejected(tmp_path, bad):
    (tmp_path / "elsewhere").mkdir()
    repo = make_repo(tmp_path / "code" / "r", files={
        ".loci.json": json.dumps({"scopes": [{"path": bad}, {"path": "ok"}]}), "ok/a.py": "x"})
    (repo / "link-out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    result = run(tmp_path / "code")
    assert result.registry.names() == ["r", "r/ok"]
    assert any(".loci.json" in p and repr(bad) in p for p in result.problems)


@pytest.mark.parametrize("text", ['{"scopes": [{"path": "a"},]}', '["a"]', '{"scopes": "a"}'])
def test_a_malformed_loci_json_is_reported_and_the_scan_goes_on(tmp_path, text):
    make_repo(tmp_path / "r", files={".loci.json": text, "a/x.py": "x"})
    make_repo(tmp_path / "s")
    result = run(tmp_path)
    assert result.registry.names() == ["r", "s"]
    assert any(".loci.json" in p and "file ignored" in p for p in result.problems)


# ---- aliases

def test_aliases_come_from_the_directory_and_every_package_manifest(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "pyproject.toml").write_text('[project]\nname = "rank-bm25"\n')
    (d / "setup.py").write_text('from setuptools import setup\nsetup(\n    name="legacy-name",\n)\n')
    (d / "package.json").write_text('{"name": "@sindresorhus/slugify"}')
    (d / "Cargo.toml").write_text('[package]\nname = "walkdir"\n')
    (d / "go.mod").write_text("module github.com/someone/gizmo/v2\n\ngo 1.21\n")
    assert manifest_names(d) == ["rank-bm25", "walkdir", "legacy-name",
                                 "@sindresorhus/slugify", "slugify", "gizmo"]


def test_a_broken_manifest_contributes_no_alias(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\nname=")
    (tmp_path / "package.json").write_text("{")
    assert manifest_names(tmp_path) == []


def test_repository_aliases_include_its_directory_name_and_package_name(tmp_path):
    make_repo(tmp_path / "slugify", files={"package.json": '{"name": "@sindresorhus/slugify"}'})
    assert run(tmp_path).registry.get("slugify").aliases == ("slugify", "@sindresorhus/slugify")


# ---- names

def test_clashing_directory_names_are_deduplicated_and_stable_across_rescans(tmp_path):
    make_repo(tmp_path / "a" / "utils")
    make_repo(tmp_path / "b" / "utils")
    first = run(tmp_path).registry
    assert first.names() == ["b-utils", "utils"]
    assert first.get("utils").path.endswith("/a/utils")
    make_repo(tmp_path / "0" / "utils")  # sorts first, but must not steal a name
    second = run(tmp_path, prior=first).registry
    assert second.get("utils").path == first.get("utils").path
    assert second.get("b-utils").path == first.get("b-utils").path
    assert len(set(second.names())) == 3


# ---- rescans

def test_a_deleted_repository_is_reported_and_kept_with_its_hand_set_aliases(tmp_path):
    import shutil

    make_repo(tmp_path / "gone")
    make_repo(tmp_path / "stays")
    reg = add_scope(run(tmp_path).registry, tmp_path / "gone", alias=["g1"])
    shutil.rmtree(tmp_path / "gone")
    result = run(tmp_path, prior=reg)
    assert result.missing == ["gone"]
    assert result.registry.get("gone") == reg.get("gone")
    assert "g1" in result.registry.get("gone").aliases


def test_a_rescan_keeps_hand_aliases_globs_and_added_scopes(tmp_path):
    make_repo(tmp_path / "code" / "alpha")
    (tmp_path / "notes").mkdir()
    reg = run(tmp_path / "code").registry
    reg = add_scope(reg, tmp_path / "code" / "alpha", alias=["al"], glob=["/abs/**/*.md"])
    reg = add_scope(reg, tmp_path / "notes", alias=["jot"])
    again = run(tmp_path / "code", prior=reg).registry
    alpha = again.get("alpha")
    assert "al" in alpha.aliases and alpha.user_aliases == ("al",)
    assert alpha.globs == ("/abs/**/*.md",)
    assert again.get("notes").kind == "added" and "jot" in again.get("notes").aliases


def test_scopes_outside_the_scanned_roots_are_kept_and_roots_accumulate(tmp_path):
    make_repo(tmp_path / "work" / "a")
    make_repo(tmp_path / "home" / "b")
    first = run(tmp_path / "work").registry
    second = run(tmp_path / "home", prior=first).registry
    assert second.names() == ["a", "b"]
    assert second.roots == [str((tmp_path / "work").resolve()), str((tmp_path / "home").resolve())]


def test_a_scope_no_longer_declared_is_dropped_on_rescan(tmp_path):
    repo = make_repo(tmp_path / "r", files={".loci.json": '{"scopes": [{"path": "a"}]}', "a/x": "x"})
    first = run(tmp_path).registry
    (repo / ".loci.json").write_text('{"scopes": []}')
    assert run(tmp_path, prior=first).registry.names() == ["r"]


def test_scan_and_save_never_touch_groups_json(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    lay = layout()
    lay.home.mkdir()
    lay.groups.write_text('{"default_mode": "hard"}  ')
    make_repo(tmp_path / "code" / "a")
    save_registry(lay, run(tmp_path / "code", prior=load_registry(lay)).registry)
    assert lay.groups.read_text() == '{"default_mode": "hard"}  '
    assert load_registry(lay).names() == ["a"]


# ---- loci add

def test_add_rejects_a_path_that_does_not_exist(tmp_path):
    with pytest.raises(ScanError, match="does not exist"):
        add_scope(Registry(), tmp_path / "nope")


def test_add_registers_a_plain_directory_as_an_added_scope_with_globs_outside_it(tmp_path):
    (tmp_path / "notes").mkdir()
    reg = add_scope(Registry(), tmp_path / "notes", alias=["jot"], glob=["/elsewhere/*.md"])
    scope = reg.get("notes")
    assert scope.kind == "added" and scope.owner == "unknown"
    assert scope.aliases == ("notes", "jot") and scope.globs == ("/elsewhere/*.md",)


def test_add_inside_a_repository_makes_the_repository_exclude_it(tmp_path):
    make_repo(tmp_path / "r", files={"docs/a.md": "x"})
    reg = add_scope(run(tmp_path).registry, tmp_path / "r" / "docs")
    assert reg.get("r").excludes == ("docs",)
    assert reg.containing(tmp_path / "r" / "docs" / "a.md").name == "docs"


def test_relabel_recomputes_owners_and_keeps_other_groups(tmp_path):
    make_repo(tmp_path / "mono", remote="git@github.com:acme/mono.git",
              files={".loci.json": '{"scopes": [{"path": "web"}]}', "web/x": "x"})
    reg = run(tmp_path, identity=Identity()).registry
    assert reg.get("mono/web").groups == ("vendor:acme", "mono")
    relabelled = relabel(reg, identity=Identity(name="acme")).registry
    assert relabelled.get("mono/web").groups == ("me", "mono")
    assert relabelled.get("mono").owner == "me"


def test_a_git_identity_read_from_the_global_config(tmp_path, monkeypatch):
    (tmp_path / ".gitconfig").write_text("[user]\n\temail = x@y.z\n\tname = Ex\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    assert provenance.read_identity() == Identity(email="x@y.z", name="Ex")


def test_registry_scope_round_trips_through_scan_output(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    make_repo(tmp_path / "code" / "a", remote="git@github.com:o/a.git")
    reg = run(tmp_path / "code").registry
    save_registry(layout(), reg)
    assert load_registry(layout()) == reg
    assert isinstance(reg.scopes[0], Scope)


def test_a_rescan_reads_a_repositorys_authors_again_only_after_its_head_moves(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "code" / "lib", remote="git@github.com:acme/lib.git")
    reads = []
    real = provenance._authors
    monkeypatch.setattr(provenance, "_authors", lambda r: reads.append(r) or real(r))
    memo: dict = {}
    assert scan([tmp_path / "code"], identity=ME, memo=memo).owners["lib"] == "vendor:acme"
    assert scan([tmp_path / "code"], identity=ME, memo=memo).owners["lib"] == "vendor:acme"
    assert len(reads) == 1  # the second scan found HEAD, remote and identity as the memo had them
    (repo / "mine.txt").write_text("x")
    git(repo, "add", "-A", author=(ME.name, ME.email))
    git(repo, "commit", "-qm", "mine", author=(ME.name, ME.email))
    assert scan([tmp_path / "code"], identity=ME, memo=memo).owners["lib"] == "me"
    assert len(reads) == 2


def test_a_changed_identity_or_remote_is_not_answered_from_the_memo(tmp_path):
    repo = make_repo(tmp_path / "code" / "lib", remote="git@github.com:acme/lib.git")
    memo: dict = {}
    assert scan([tmp_path / "code"], identity=ME, memo=memo).owners["lib"] == "vendor:acme"
    assert scan([tmp_path / "code"], identity=Identity(name="acme"), memo=memo).owners["lib"] == "me"
    git(repo, "remote", "set-url", "origin", "git@github.com:other/lib.git")
    assert scan([tmp_path / "code"], identity=ME, memo=memo).owners["lib"] == "vendor:other"


def test_the_owner_memo_keeps_no_credential_a_remote_url_holds(tmp_path):
    make_repo(tmp_path / "code" / "lib", remote="https://x-access-token:ghp_planted123@github.com/acme/lib.git")
    memo: dict = {}
    scan([tmp_path / "code"], identity=ME, memo=memo)
    assert memo and "ghp_planted123" not in json.dumps(memo)
