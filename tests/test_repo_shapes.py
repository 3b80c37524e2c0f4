"""Repositories and files of unusual shapes, as users' machines hold them: what is read, what is
registered, and what moves a scope's fingerprint."""
from __future__ import annotations

import os

from conftest import git, make_repo

from loci_pipeline.collect import collect_scope
from loci_pipeline.fingerprint import git_state
from loci_pipeline.scan import scan


def _texts(got, rel: str) -> list[str]:
    return [c.text for c in got.chunks if c.path == rel]


# --- how files are decoded ------------------------------------------------------------


def test_a_latin1_readme_reads_as_its_letters_not_replacement_characters(tmp_path):
    repo = make_repo(tmp_path / "ash", {"core.py": "x = 1\n"})
    (repo / "NOTES.md").write_bytes("# Notes\n\nCaf\xe9 na\xefve r\xe9sum\xe9 of the \xc9ruptions.\n".encode("latin-1"))
    got = collect_scope("ash", repo)
    (text,) = _texts(got, "NOTES.md")
    assert "Café naïve résumé of the Éruptions." in text
    assert "\ufffd" not in text


def test_a_utf16_file_with_a_bom_is_read_as_text_not_skipped_as_binary(tmp_path):
    repo = make_repo(tmp_path / "ash", {"core.py": "x = 1\n"})
    (repo / "wide.md").write_bytes("# Wide notes\n\nThe tephra layer inventory.\n".encode("utf-16"))
    (repo / "wider.md").write_bytes("# Wider\n\nThe pumice ledger.\n".encode("utf-32"))
    got = collect_scope("ash", repo)
    assert got.stats["skipped_binary"] == 0
    assert _texts(got, "wide.md") == ["# Wide notes\n\nThe tephra layer inventory."]
    assert _texts(got, "wider.md") == ["# Wider\n\nThe pumice ledger."]


def test_crlf_line_endings_leave_no_carriage_return_in_a_chunk_and_keep_its_line(tmp_path):
    repo = make_repo(tmp_path / "ash", {"core.py": "x = 1\n"})
    (repo / "docs.md").write_bytes(b"# Doc\r\n\r\nintro\r\n\r\n## Basalt\r\n\r\nBasalt columns cool slowly.\r\n")
    (repo / "dens.js").write_bytes(b"const a = 1;\r\n\r\n// ash density of one sample,\r\n// in grams\r\n"
                                   b"function density(s) { return s; }\r\n")
    got = collect_scope("ash", repo)
    assert not [c for c in got.chunks if "\r" in c.text]
    basalt = next(c for c in got.chunks if c.path == "docs.md" and c.heading == "Basalt")
    assert (basalt.line, basalt.text) == (5, "## Basalt\n\nBasalt columns cool slowly.")
    comment = next(c for c in got.chunks if c.path == "dens.js" and "ash density" in c.text)
    assert comment.line == 3


def test_a_git_lfs_pointer_is_skipped_and_counted_not_read_as_the_file(tmp_path):
    pointer = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
    repo = make_repo(tmp_path / "ash", {"core.py": "x = 1\n", "GUIDE.md": pointer, "weights.py": pointer})
    got = collect_scope("ash", repo)
    assert not [c for c in got.chunks if "git-lfs" in c.text or "sha256" in c.text]
    assert got.stats["skipped_lfs_pointer"] == 2


def test_a_symlink_out_of_the_repository_is_never_read(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text("# Out\n\nzanzibar quokka\n")
    (outside / "leak.py").write_text("def quokka():\n    '''zanzibar'''\n")
    repo = make_repo(tmp_path / "ash", {"core.py": "x = 1\n"})
    os.symlink(outside / "secret.md", repo / "linked.md")
    os.symlink(outside, repo / "linkdir")
    os.symlink("..", repo / "up")                       # a loop
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    got = collect_scope("ash", repo)
    assert not [c for c in got.chunks if "zanzibar" in c.text or "quokka" in c.text]
    assert not [p for p, _ in got.paths if "linkdir" in p or "linked" in p]


# --- what moves a fingerprint ---------------------------------------------------------


def test_a_commit_inside_a_submodule_leaves_its_parent_s_git_state_alone(tmp_path):
    source = make_repo(tmp_path / "morse-src", {"core.py": "def dit(): pass\n"})
    parent = make_repo(tmp_path / "ferry", {"core.py": "def sail(): pass\n"})
    git(parent, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "libs/morse")
    git(parent, "commit", "-qm", "add morse")
    before = git_state(parent)
    sub = parent / "libs" / "morse"
    (sub / "core.py").write_text("def dah(): pass\n")
    assert git_state(parent) == before                 # edited, not committed
    git(sub, "commit", "-qam", "dah")
    assert git_state(parent) == before                 # a new commit of the submodule
    (parent / "core.py").write_text("def moor(): pass\n")
    assert git_state(parent) != before                 # the parent's own edit still counts


def test_a_change_inside_a_nested_repository_leaves_the_outer_git_state_alone(tmp_path):
    outer = make_repo(tmp_path / "outer", {"core.py": "def glacier(): pass\n"})
    inner = make_repo(outer / "inner", {"core.py": "def cheese(): pass\n"})
    before = git_state(outer)
    (inner / "NEW.md").write_text("# new\n")
    assert git_state(outer) == before


def test_a_new_tag_moves_the_git_state_of_a_checkout_whose_git_is_a_file(tmp_path):
    main = make_repo(tmp_path / "main", {"core.py": "def snowflake(): pass\n"})
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = tmp_path / "linked"
    assert (linked / ".git").is_file()
    before = git_state(linked)
    git(linked, "tag", "v2.0.0")
    tagged = git_state(linked)
    assert tagged != before
    git(main, "pack-refs", "--all")
    git(main, "tag", "v2.0.1")
    assert git_state(linked) != tagged


# --- what a scan registers ------------------------------------------------------------


def test_a_repository_whose_folder_name_is_not_utf8_is_reported_not_registered(tmp_path):
    code = tmp_path / "code"
    make_repo(code / "fine", {"README.md": "# fine\n"})
    make_repo(code / os.fsdecode(b"odd\xffname"), {"README.md": "# odd\n"})
    result = scan([code])
    assert result.registry.names() == ["fine"]
    assert any("odd" in p and "UTF-8" in p for p in result.problems), result.problems


def test_a_bare_repository_is_reported_and_not_registered(tmp_path):
    code = tmp_path / "code"
    make_repo(code / "fine", {"README.md": "# fine\n"})
    code.joinpath("store.git").mkdir()
    git(code / "store.git", "init", "-q", "--bare")
    fixture = code / "fine" / "tests" / "data" / "remote.git"     # a project's test data
    fixture.mkdir(parents=True)
    git(fixture, "init", "-q", "--bare")
    result = scan([code])
    assert result.registry.names() == ["fine"]
    assert [p for p in result.problems if "bare" in p] == [
        f"{code / 'store.git'}: a bare repository (no working tree to read): not registered; a clone of it is"]


def test_setup_indexes_the_other_repositories_beside_one_whose_name_is_not_utf8(tmp_path, loci_home):
    from typer.testing import CliRunner

    from loci.front.cli import app

    code = tmp_path / "code"
    make_repo(code / "fine", {"README.md": "# fine\n\nTallies penguin colonies.\n"})
    make_repo(code / os.fsdecode(b"odd\xffname"), {"README.md": "# odd\n"})
    res = CliRunner().invoke(app, ["setup", str(code), "-y", "--quiet", "--no-graphs", "--no-embed",
                                   "--no-calibrate"])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    res = CliRunner().invoke(app, ["ask", "--no-server", "--scope", "fine", "penguin colonies"])
    assert "README.md:1" in res.output, res.output


def test_update_reports_what_its_rescan_could_not_register(tmp_path, loci_home):
    from typer.testing import CliRunner

    from conftest import setup_home
    from loci.front.cli import app

    code = setup_home(tmp_path / "code", {"fine": {"README.md": "# fine\n\nFine things.\n"}})
    code.joinpath("store.git").mkdir()
    git(code / "store.git", "init", "-q", "--bare")
    res = CliRunner().invoke(app, ["update", "--quiet"])
    assert res.exit_code == 0, res.output
    assert f"{code / 'store.git'}: a bare repository" in res.output
