"""Collection for one scope: listing, reading limits, prose/doc/comment chunks, commits."""
from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from loci.kernel.config import Params
from loci_pipeline import collect as collect_mod
from loci_pipeline.collect import collect_scope, list_files
from loci_pipeline.definitions import regex_definitions
from loci_pipeline.prose import sections, split_long

GITHUB_TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
AWS_KEY = "AKIAQWERTYUIOPASDFGH"


# --- helpers ---------------------------------------------------------------------------


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def git(root: Path, *args: str, date: str = "2024-03-04T05:06:07+00:00") -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Ada Lovelace", GIT_AUTHOR_EMAIL="ada@example.org",
               GIT_COMMITTER_NAME="Ada Lovelace", GIT_COMMITTER_EMAIL="ada@example.org",
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    out = subprocess.run(["git", "-C", str(root), "-c", "init.defaultBranch=main",
                          "-c", "commit.gpgsign=false", *args],
                         capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def commit_all(root: Path, message: str, **kw) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, **kw)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


@pytest.fixture
def plain(tmp_path: Path, monkeypatch) -> Path:
    """A directory that is not a git work tree (so the os.walk listing is used)."""
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "plain"
    root.mkdir()
    return root


def by_path(collected, path: str):
    return [c for c in collected.chunks if c.path == path]


def texts(collected) -> str:
    return "\n".join(c.heading + "\n" + c.text for c in collected.chunks)


# --- listing and pruning ---------------------------------------------------------------


@pytest.mark.parametrize("use_git", [False, True])
def test_node_modules_and_venv_readmes_are_never_read(tmp_path, repo, plain, use_git):
    root = repo if use_git else plain
    write(root, "README.md", "# Top\n\nreal project text\n")
    write(root, "node_modules/left-pad/README.md", "# Pad\n\nvendored marker\n")
    write(root, "env/pyvenv.cfg", "home = /usr\n")
    write(root, "env/lib/README.md", "# Venv\n\nvirtualenv marker\n")
    write(root, ".cache/README.md", "# Dot\n\ndotdir marker\n")
    write(root, "build/README.md", "# Build\n\nbuild marker\n")
    if use_git:
        git(root, "add", "-A", "-f")                 # even a committed node_modules is pruned
        git(root, "commit", "-q", "-m", "init")
    got = collect_scope("s", root)
    assert "real project text" in texts(got)
    for marker in ("vendored marker", "virtualenv marker", "dotdir marker", "build marker"):
        assert marker not in texts(got)
    assert all(not p.startswith(("node_modules/", "env/", ".cache/", "build/")) for p, _ in got.paths)


def test_walk_prunes_instead_of_filtering(plain, monkeypatch):
    write(plain, "a.md", "# A\n\ntext\n")
    write(plain, "node_modules/x/deep/b.md", "# B\n\ntext\n")
    visited = []
    real_walk = os.walk

    def spy(top, *a, **kw):
        for entry in real_walk(top, *a, **kw):
            visited.append(entry[0])
            yield entry
    monkeypatch.setattr(collect_mod.os, "walk", spy)
    assert list_files(plain) == ["a.md"]
    assert not any("node_modules" in v for v in visited)


@pytest.mark.parametrize("use_git", [False, True])
def test_symlink_loop_does_not_hang_and_is_counted(repo, plain, use_git):
    root = repo if use_git else plain
    write(root, "docs/guide.md", "# Guide\n\ntext\n")
    os.symlink(".", root / "docs" / "loop")
    os.symlink(root / "docs", root / "again")
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("c", collect_scope("s", root)),
                              daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert "c" in result, "collection hung on a symlink loop"
    got = result["c"]
    assert [c.path for c in got.chunks if c.kind == "doc"] == ["docs/guide.md"]
    assert got.stats["symlinks_skipped"] == 2


def test_list_files_respects_gitignore_and_lists_untracked(repo):
    write(repo, ".gitignore", "secret_dir/\n*.log\n")
    write(repo, "a.py", "x = 1\n")
    write(repo, "debug.log", "noise\n")
    write(repo, "secret_dir/b.md", "# no\n")
    commit_all(repo, "init")
    write(repo, "new.md", "# untracked but not ignored\n")
    assert list_files(repo) == [".gitignore", "a.py", "new.md"]


def test_walk_skips_nested_repositories(plain):
    write(plain, "notes.md", "# Notes\n\nparent\n")
    write(plain, "inner/README.md", "# Inner\n\nnested repository\n")
    git(plain / "inner", "init", "-q")
    assert list_files(plain) == ["notes.md"]


@pytest.mark.parametrize("use_git", [False, True])
def test_exclude_leaves_a_sub_tree_out(repo, plain, use_git):
    root = repo if use_git else plain
    write(root, "README.md", "# Parent\n\nparent text\n")
    write(root, "services/api/README.md", "# Api\n\nsub-scope text\n")
    write(root, "services/apiary.md", "# Apiary\n\nsibling text\n")
    if use_git:
        commit_all(root, "init")
    got = collect_scope("s", root, exclude=["services/api"])
    assert "sub-scope text" not in texts(got)
    assert "sibling text" in texts(got)
    assert "services/api/README.md" not in list_files(root, exclude=["./services/api/"])


def test_sub_scope_commits_are_restricted_to_its_path(repo):
    write(repo, "client/a.md", "# A\n\nclient\n")
    commit_all(repo, "touch the client")
    write(repo, "server/b.md", "# B\n\nserver\n")
    commit_all(repo, "touch the server")
    client = collect_scope("c", repo / "client")
    assert [c.heading for c in client.chunks if c.kind == "commit"] == ["touch the client"]
    parent = collect_scope("p", repo, exclude=["client"])
    assert [c.heading for c in parent.chunks if c.kind == "commit"] == ["touch the server"]


def test_paths_list_every_listed_file_with_its_kind(plain):
    write(plain, "src/app.py", "x = 1\n")
    write(plain, "tests/test_app.py", "x = 1\n")
    write(plain, "logo.png", b"\x89PNG\0\0")
    got = collect_scope("s", plain)
    assert dict(got.paths) == {"logo.png": "source", "src/app.py": "source",
                               "tests/test_app.py": "test"}


# --- reading limits --------------------------------------------------------------------


def test_skips_files_over_max_file_bytes(plain):
    write(plain, "big.md", "# Big\n\n" + "word " * 100)
    write(plain, "small.md", "# Small\n\nfine\n")
    got = collect_scope("s", plain, params=Params(max_file_bytes=200))
    assert got.stats["skipped_large"] == 1
    assert not by_path(got, "big.md") and by_path(got, "small.md")


def test_binary_file_is_counted_and_not_read(plain):
    write(plain, "blob.md", b"# Title\n\n\x00\x01binary marker")
    got = collect_scope("s", plain)
    assert got.stats["skipped_binary"] == 1
    assert "binary marker" not in texts(got)


def test_non_utf8_text_is_decoded_with_replacement_and_counted(plain):
    write(plain, "latin.md", "# Café\n\nnaïve text\n".encode() + b"stray \xff\n")   # UTF-8, one bad byte
    got = collect_scope("s", plain)
    assert got.stats["non_utf8_replaced"] == 1
    (chunk,) = by_path(got, "latin.md")
    assert "\ufffd" in chunk.text and "ve text" in chunk.text


def test_unreadable_file_is_counted(plain, monkeypatch):
    write(plain, "locked.md", "# Locked\n\nhidden\n")
    write(plain, "open.md", "# Open\n\nvisible\n")
    real = collect_mod._read_bytes

    def deny(path, limit):
        if str(path).endswith("locked.md"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)
    monkeypatch.setattr(collect_mod, "_read_bytes", deny)
    got = collect_scope("s", plain)
    assert got.stats["skipped_unreadable"] == 1
    assert "visible" in texts(got) and "hidden" not in texts(got)


def test_secret_files_are_never_opened(repo, monkeypatch):
    write(repo, "secrets.md", "# Keys\n\nsecret file marker\n")
    write(repo, ".env", "TOKEN=abc\n")
    write(repo, "config/credentials.json", '{"k": "v"}\n')
    write(repo, "README.md", "# Hi\n\nhello\n")
    opened = []
    real = collect_mod._read_bytes
    monkeypatch.setattr(collect_mod, "_read_bytes",
                        lambda path, limit: opened.append(str(path)) or real(path, limit))
    got = collect_scope("s", repo)
    assert got.stats["secret_files"] == 3
    assert not any(p.endswith(("secrets.md", ".env", "credentials.json")) for p in opened)
    assert "secret file marker" not in texts(got)
    assert all(p not in ("secrets.md", ".env") for p, _ in got.paths)


def test_missing_root_is_a_clear_error(tmp_path):
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        collect_scope("s", tmp_path / "nope")


# --- prose -----------------------------------------------------------------------------

MARKDOWN = """\
Intro before any heading.

# Install

Run pip.

```sh
# not a heading inside a fence
pip install thing
```

Usage
=====

Call it.

Details
-------

More text.
"""


def test_markdown_is_chunked_on_headings_with_start_lines(plain):
    write(plain, "README.md", MARKDOWN)
    got = collect_scope("s", plain)
    chunks = by_path(got, "README.md")
    assert [(c.kind, c.heading, c.line) for c in chunks] == [
        ("readme", "README.md", 1), ("readme", "Install", 3), ("readme", "Usage", 12),
        ("readme", "Details", 17)]
    assert chunks[1].text.startswith("# Install\n\nRun pip.")
    assert "# not a heading inside a fence" in chunks[1].text


RST = """\
=========
 Title
=========

Lead paragraph.

Section one
-----------

Body one.

::

    indented code
    -------------

Section two
~~~~~~~~~~~

Body two.
"""


def test_rst_is_chunked_on_over_and_underlined_titles(plain):
    write(plain, "docs/guide.rst", RST)
    got = collect_scope("s", plain)
    assert [(c.kind, c.heading, c.line) for c in by_path(got, "docs/guide.rst")] == [
        ("doc", "Title", 1), ("doc", "Section one", 7), ("doc", "Section two", 17)]


def test_long_section_splits_at_paragraphs_keeping_heading_and_own_lines():
    para = "word " * 30
    text = "# Big\n\n" + "\n\n".join([para.strip()] * 4) + "\n"
    pieces = sections(text, "md", 320, "f.md")
    assert [h for _, h, _ in pieces] == ["Big"] * len(pieces) and len(pieces) >= 2
    assert all(len(p) <= 320 for _, _, p in pieces)
    lines = text.split("\n")
    for line, _, piece in pieces:
        assert lines[line - 1] == piece.split("\n")[0]


def test_split_long_cuts_a_huge_line_by_characters():
    pieces = split_long(["x" * 25], 7, 10)
    assert [(line, len(t)) for line, t in pieces] == [(7, 10), (7, 10), (7, 5)]


def test_docs_txt_changelog_and_other_markdown_are_docs(plain):
    write(plain, "docs/notes.txt", "Notes\n=====\n\ntext file in docs\n")
    write(plain, "CHANGES.rst", "Version 2\n---------\n\nchanged things\n")
    write(plain, "pkg/design.md", "# Design\n\nnested markdown\n")
    write(plain, "requirements.txt", "requests\n")
    got = collect_scope("s", plain)
    kinds = {c.path: c.kind for c in got.chunks}
    assert kinds == {"docs/notes.txt": "doc", "CHANGES.rst": "doc", "pkg/design.md": "doc"}


def test_license_contributing_security_and_manifests_are_notes(repo):
    write(repo, "LICENSE", "MIT License\n\nPermission is hereby granted\n")
    write(repo, "CONTRIBUTING.md", "# Contributing\n\nopen a PR\n")
    write(repo, ".github/SECURITY.md", "# Security\n\nemail security@example.org\n")
    write(repo, ".github/workflows/ci.md", "# not a note\n\nworkflow\n")
    write(repo, "pyproject.toml", "[project]\nname = 'x'\n\n" + "\n\n".join(
        f"[tool.t{i}]\nkey = '{'v' * 200}'" for i in range(60)))
    write(repo, "sub/LICENSE", "nested license is not a note\n")
    got = collect_scope("s", repo)
    notes = [(c.path, c.heading) for c in got.chunks if c.kind == "note"]
    assert ("LICENSE", "LICENSE") in notes and ("CONTRIBUTING.md", "Contributing") in notes
    assert (".github/SECURITY.md", "Security") in notes
    assert sum(p == "pyproject.toml" for p, _ in notes) == collect_mod.NOTE_MAX_PIECES
    assert "workflow" not in texts(got) and "nested license" not in texts(got)



def test_a_contributing_guide_is_read_whole_and_a_licence_is_capped(repo):
    """How to run the tests is often a guide's fifth section; a licence's legal text is boilerplate."""
    sections = "\n\n".join(f"## Step {i}\n\n{'Some advice. ' * 40}" for i in range(6))
    write(repo, "CONTRIBUTING.md", f"# Contributing\n\n{sections}\n\n## Running the tests\n\nRun `python -Im pytest`.\n")
    write(repo, ".github/SECURITY.md", f"# Security\n\n{sections}\n\n## Reporting\n\nMail the maintainers.\n")
    write(repo, "LICENSE", "\n\n".join(f"Section {i}\n{'=' * 10}\n\n{'Legal words. ' * 60}" for i in range(8)))
    got = collect_scope("s", repo)
    assert "python -Im pytest" in texts(got) and "Mail the maintainers" in texts(got)
    assert sum(c.path == "LICENSE" for c in got.chunks) == collect_mod.NOTE_MAX_PIECES

def test_the_files_a_project_builds_its_docs_or_runs_its_tests_with_are_notes(repo):
    """How to build the docs or run the tests is often said only by nox's sessions, MkDocs' or Sphinx's
    configuration or Read the Docs' build steps; the docs and tests topics cite them."""
    files = {"noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n    session.run('pytest')\n",
             "mkdocs.yml": "site_name: widgets\nnav:\n  - index.md\n",
             ".readthedocs.yaml": "version: 2\nsphinx:\n  configuration: docs/conf.py\n",
             "docs/conf.py": "project = 'widgets'\nextensions = ['sphinx.ext.autodoc']\n",
             "docs/Makefile": "SPHINXBUILD ?= sphinx-build\n",
             "widgets/conf.py": "LEVEL = 1\n", "examples/mkdocs.yml": "site_name: example\n"}
    for rel, text in files.items():
        write(repo, rel, text)
    got = collect_scope("s", repo)
    notes = {c.path for c in got.chunks if c.kind == "note"}
    assert notes == {"noxfile.py", "mkdocs.yml", ".readthedocs.yaml", "docs/conf.py", "docs/Makefile"}
    assert ("tests", "function", "noxfile.py", 5) in got.definitions   # still read for what it defines


# --- source: docstrings, comments, definitions -----------------------------------------

PYTHON = '''\
"""Module doc for the session module."""
import functools


class Session:
    """A session keeps cookies."""

    @functools.cache
    def send(self, request):
        """Send one request.

        Second paragraph.
        """
        # retry once on a dropped connection, because servers close idle sockets
        return request

    def _private(self):
        def inner():
            """Nested helper."""
        return inner


# A comment block right above a function
# explains why it exists.
def helper():
    pass


# short
x = 1
'''


def test_python_docstrings_have_qualified_headings_and_def_lines(plain):
    write(plain, "src/pkg/session.py", PYTHON)
    got = collect_scope("s", plain)
    docs = [(c.heading, c.line, c.text) for c in got.chunks if c.kind == "docstring"]
    assert docs == [
        ("pkg.session", 1, "Module doc for the session module."),
        ("Session", 5, "A session keeps cookies."),
        ("Session.send", 9, "Send one request.\n\nSecond paragraph."),
        ("Session._private.inner", 18, "Nested helper."),
    ]


def test_python_comment_blocks_and_what_is_dropped(plain):
    write(plain, "src/pkg/session.py", PYTHON)
    got = collect_scope("s", plain)
    comments = [(c.heading, c.line, c.text) for c in got.chunks if c.kind == "comment"]
    assert comments == [
        ("Session.send", 14, "retry once on a dropped connection, because servers close idle sockets"),
        ("helper", 23, "A comment block right above a function\nexplains why it exists."),
    ]


def test_python_definitions_include_module_classes_functions_and_methods(plain):
    write(plain, "src/pkg/session.py", PYTHON)
    got = collect_scope("s", plain)
    defs = {(n, k, line) for n, k, rel, line in got.definitions if rel == "src/pkg/session.py"}
    assert defs == {("pkg.session", "module", 1), ("Session", "class", 5),
                    ("send", "method", 9), ("Session.send", "method", 9),
                    ("_private", "method", 17), ("Session._private", "method", 17),
                    ("helper", "function", 25)}


def test_hash_lines_inside_python_strings_are_not_comments(plain):
    write(plain, "m.py", 'SQL = """\n# inside a string, not a comment at all\n# second line\n"""\n')
    assert [c for c in collect_scope("s", plain).chunks if c.kind == "comment"] == []


def test_long_docstring_pieces_keep_the_def_line_then_their_own():
    from loci_pipeline.comments import python_source
    body = "\n\n".join(["    " + "word " * 20] * 3)
    episodes, _ = python_source(f'def f():\n    """Head.\n\n{body}\n    """\n', "m.py", 250)
    lines = [line for kind, line, heading, _ in episodes if kind == "docstring" and heading == "f"]
    assert lines[0] == 1 and lines[1:] and all(line > 2 for line in lines[1:])


def test_license_header_comment_is_skipped(plain):
    write(plain, "mod.py", "# Copyright 2020 Someone\n# Licensed under the MIT license.\n\n"
                           "# Two lines of a real\n# explanatory comment.\nx = 1\n")
    got = collect_scope("s", plain)
    assert [c.text for c in got.chunks] == ["Two lines of a real\nexplanatory comment."]


def test_python_syntax_error_falls_back_to_comment_syntax(plain):
    write(plain, "broken.py", "# First line of a block\n# second line of it\ndef f(:\n    pass\n")
    got = collect_scope("s", plain)
    assert [(c.kind, c.text) for c in got.chunks] == [
        ("comment", "First line of a block\nsecond line of it")]
    assert ("broken", "module", "broken.py", 1) in got.definitions


JS = """\
// Copyright (c) 2024 Example Corp. MIT license.

/**
 * Turn a string into a slug.
 * @param {string} text
 */
export default function slugify(text) {
  // lower-case first: the pattern below
  // only matches lower-case letters
  return text.toLowerCase();
}

export const pad = (s) => s;

class Counter {
  increment(by) {
    return by;
  }
}
"""

GO = """\
package walk

// Walker visits every file below a root
// and never follows symlinks.
type Walker struct {
\troot string
}

// Next returns the next entry.
func (w *Walker) Next() string {
\treturn w.root
}

/* Block comment spanning
   two lines. */
func helper() {}
"""

RUST = """\
//! Crate docs for a directory walker,
//! with a second line.

/// A builder for a recursive directory iterator.
#[derive(Debug)]
pub struct WalkDir {
    root: String,
}

impl WalkDir {
    /// Create a builder.
    pub fn new(root: String) -> Self {
        WalkDir { root }
    }
}
"""


def test_js_comment_blocks_attach_to_the_following_definition(plain):
    write(plain, "index.js", JS)
    got = collect_scope("s", plain)
    comments = [(c.heading, c.line, c.text) for c in got.chunks if c.kind == "comment"]
    assert comments == [
        ("slugify", 3, "Turn a string into a slug.\n@param {string} text"),
        ("", 8, "lower-case first: the pattern below\nonly matches lower-case letters"),
    ]
    defs = {(n, k) for n, k, _, _ in got.definitions}
    assert defs == {("slugify", "function"), ("pad", "function"), ("Counter", "class"),
                    ("increment", "method"), ("Counter.increment", "method")}


def test_go_comment_blocks_and_receiver_methods(plain):
    write(plain, "walk.go", GO)
    got = collect_scope("s", plain)
    comments = [(c.heading, c.line, c.text) for c in got.chunks if c.kind == "comment"]
    assert comments == [
        ("Walker", 3, "Walker visits every file below a root\nand never follows symlinks."),
        ("Walker.Next", 9, "Next returns the next entry."),
        ("helper", 14, "Block comment spanning\ntwo lines."),
    ]
    assert ("Walker.Next", "method", "walk.go", 10) in got.definitions


def test_rust_doc_comments_attach_through_attributes_and_impl_blocks(plain):
    write(plain, "src/lib.rs", RUST)
    got = collect_scope("s", plain)
    comments = [(c.heading, c.line, c.text) for c in got.chunks if c.kind == "comment"]
    assert comments == [
        ("", 1, "Crate docs for a directory walker,\nwith a second line."),
        ("WalkDir", 4, "A builder for a recursive directory iterator."),
        ("WalkDir.new", 11, "Create a builder."),
    ]
    assert {(n, k) for n, k, _, _ in got.definitions} == {
        ("WalkDir", "class"), ("new", "method"), ("WalkDir.new", "method")}


def test_regex_definitions_cover_common_forms():
    ts = "export interface Opts {}\nexport type Mode = 'a' | 'b';\nexport enum Color { Red }\n"
    assert {n for n, _, _ in regex_definitions(ts, "ts")} == {"Opts", "Mode", "Color"}
    java = "public class Box {\n    public static int size(int x) {\n        if (x) {}\n    }\n}\n"
    assert {n for n, _, _ in regex_definitions(java, "java")} == {"Box", "size", "Box.size"}
    rb = "module Shop\n  class Cart\n    def total\n    end\n  end\nend\n"
    assert ("Cart.total", "method", 3) in regex_definitions(rb, "rb")


# --- commits ---------------------------------------------------------------------------


def test_one_commit_chunk_per_commit_with_sha_author_and_date(repo):
    write(repo, "a.md", "# A\n\nx\n")
    first = commit_all(repo, "Add a\n\nBecause the docs needed it.\nSecond body line.")
    write(repo, "b.md", "# B\n\ny\n")
    second = commit_all(repo, "Add b", date="2024-05-06T07:08:09+02:00")
    got = collect_scope("s", repo)
    commits = [c for c in got.chunks if c.kind == "commit"]
    assert [(c.path, c.line, c.heading, c.text, c.author, c.date) for c in commits] == [
        (f"commit:{second}", 0, "Add b", "Add b", "Ada Lovelace", "2024-05-06T07:08:09+02:00"),
        (f"commit:{first}", 0, "Add a", "Add a\n\nBecause the docs needed it.\nSecond body line.",
         "Ada Lovelace", "2024-03-04T05:06:07+00:00"),
    ]
    assert got.stats["commits"] == 2


def test_a_commit_that_changes_no_file_is_collected_in_date_order(repo):
    write(repo, "a.md", "# A\n\nx\n")
    commit_all(repo, "Add a", date="2024-01-01T00:00:00+00:00")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Why: the vendor API rate-limits us",
        date="2024-02-01T00:00:00+00:00")
    write(repo, "b.md", "# B\n\ny\n")
    commit_all(repo, "Add b", date="2024-03-01T00:00:00+00:00")
    headings = [c.heading for c in collect_scope("s", repo).chunks if c.kind == "commit"]
    assert headings == ["Add b", "Why: the vendor API rate-limits us", "Add a"]
    assert [c.heading for c in collect_scope("s", repo, params=Params(max_commits=2)).chunks
            if c.kind == "commit"] == ["Add b", "Why: the vendor API rate-limits us"]


def test_an_older_commit_that_explains_itself_is_collected_beyond_the_recent_ones(repo):
    for i, message in enumerate(["Switch to batched flushing\n\nLine buffering made every write a syscall.",
                                 "Typo", "Older why\n\nThe body says why.", "Bump version",
                                 "Newest"]):
        write(repo, f"f{i}.md", f"# F{i}\n\nx\n")
        commit_all(repo, message, date=f"2024-0{i + 1}-01T00:00:00+00:00")
    headings = [c.heading for c in collect_scope("s", repo, params=Params(max_commits=2)).chunks
                if c.kind == "commit"]
    # the last two commits whatever they say, then older ones that carry a body, newest
    # first, at most as many again
    assert headings == ["Newest", "Bump version", "Older why", "Switch to batched flushing"]
    headings = [c.heading for c in collect_scope("s", repo, params=Params(max_commits=1)).chunks
                if c.kind == "commit"]
    assert headings == ["Newest", "Older why"]


def test_an_empty_first_commit_is_collected(repo):
    git(repo, "commit", "-q", "--allow-empty", "-m", "Start: why this project exists")
    write(repo, "a.md", "# A\n\nx\n")
    commit_all(repo, "Add a")
    assert "Start: why this project exists" in [c.heading for c in collect_scope("s", repo).chunks]


def test_an_empty_commit_belongs_to_the_whole_repository_not_a_sub_scope(repo):
    write(repo, "client/a.md", "# A\n\nclient\n")
    write(repo, "server/b.md", "# B\n\nserver\n")
    commit_all(repo, "two halves")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Decision: one release train")
    client = collect_scope("c", repo / "client")
    assert [c.heading for c in client.chunks if c.kind == "commit"] == ["two halves"]
    parent = collect_scope("p", repo, exclude=["client"])
    assert [c.heading for c in parent.chunks if c.kind == "commit"] == ["Decision: one release train",
                                                                        "two halves"]


def test_repository_without_commits_still_collects(repo):
    write(repo, "README.md", "# Fresh\n\nnot committed yet\n")
    got = collect_scope("s", repo)
    assert [c.heading for c in got.chunks] == ["Fresh"]
    assert got.stats["commits"] == 0


def test_shallow_clone_collects_its_commits(repo, tmp_path):
    for i in range(3):
        write(repo, f"f{i}.md", f"# F{i}\n\nx\n")
        commit_all(repo, f"commit {i}")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)],
                   check=True, capture_output=True)
    got = collect_scope("s", clone)
    assert [c.heading for c in got.chunks if c.kind == "commit"] == ["commit 2"]


def test_hook_environment_cannot_redirect_git(repo, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    write(other, "o.md", "# O\n")
    commit_all(other, "other repository commit")
    write(repo, "r.md", "# R\n")
    commit_all(repo, "this repository commit")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    got = collect_scope("s", repo)
    assert [c.heading for c in got.chunks if c.kind == "commit"] == ["this repository commit"]


# --- globs and redaction ---------------------------------------------------------------


def test_globs_read_notes_inside_and_outside_the_repository(repo, tmp_path):
    outside = tmp_path / "notes"
    write(outside, "deploy.txt", "Deploy\n======\n\noutside note\n")
    write(outside, "skip.log", "not matched\n")
    write(outside, ".env", "SECRET=1\n")
    write(repo, "ops/runbook.cfg", "inside note\n")
    write(repo, "README.md", "# R\n\nreadme\n")
    got = collect_scope("s", repo, globs=[str(outside / "*"), "ops/**/*.cfg", "*.md"])
    notes = {(c.path, c.heading) for c in got.chunks if c.kind == "note"}
    assert notes == {(str(outside / "deploy.txt"), "Deploy"), ("ops/runbook.cfg", "runbook.cfg"),
                     (str(outside / "skip.log"), "skip.log")}
    assert [c.kind for c in by_path(got, "README.md")] == ["readme"]     # not read twice
    assert got.stats["secret_files"] == 1
    assert (str(outside / "deploy.txt"), "docs") in got.paths


def test_secrets_are_redacted_in_readme_and_commit_body(repo):
    write(repo, "README.md", f"# Setup\n\nexport GITHUB_TOKEN={GITHUB_TOKEN}\n")
    commit_all(repo, f"Rotate keys\n\nThe old key {AWS_KEY} leaked.")
    got = collect_scope("s", repo)
    assert GITHUB_TOKEN not in texts(got) and AWS_KEY not in texts(got)
    assert got.redactions["github-token"] == 1
    assert got.redactions["aws-access-key"] == 1
    (commit,) = [c for c in got.chunks if c.kind == "commit"]
    assert "[REDACTED:aws-access-key]" in commit.text


def test_a_one_line_doc_comment_on_a_field_is_kept_and_a_plain_one_line_comment_is_not(plain):
    write(plain, "src/cli.rs", "pub struct Opts {\n    /// Follow symbolic links\n"
                               "    #[arg(long, short = 'L')]\n    pub follow: bool,\n\n"
                               "    // short note\n    pub depth: usize,\n}\n")
    got = collect_scope("s", plain)
    texts = [c.text for c in got.chunks if c.kind == "comment"]
    assert "Follow symbolic links" in texts and "short note" not in texts


def test_a_comment_above_a_struct_field_is_headed_by_the_field(plain):
    write(plain, "command.go", "package cli\n\ntype Command struct {\n"
          "\t// Whether to read arguments from stdin\n\t// applicable to root command only\n"
          "\tReadArgsFromStdin bool `json:\"readArgsFromStdin\"`\n"
          "\t// the usage text shown by help\n\tUsage string\n}\n\n"
          "func run() error {\n\t// nothing to do when the list is empty\n\treturn nil\n}\n")
    write(plain, "src/cli.rs", "pub struct Opts {\n    /// Follow symbolic links\n    #[arg(long)]\n"
          "    pub follow: bool,\n}\n")
    write(plain, "src/opts.ts", "export interface Options {\n  /** Stop at the first match. */\n"
          "  readonly firstOnly?: boolean;\n}\n")
    got = collect_scope("s", plain)
    heads = {(c.path, c.text.split("\n")[0]): c.heading for c in got.chunks if c.kind == "comment"}
    assert heads[("command.go", "Whether to read arguments from stdin")] == "Command.ReadArgsFromStdin"
    assert heads[("command.go", "the usage text shown by help")] == "Command.Usage"
    assert heads.get(("command.go", "nothing to do when the list is empty"), "") == ""   # a statement
    assert heads[("src/cli.rs", "Follow symbolic links")] == "Opts.follow"
    assert heads[("src/opts.ts", "Stop at the first match.")] == "Options.firstOnly"


def test_a_doc_comment_reaches_its_field_past_an_attribute_over_several_lines(plain):
    write(plain, "src/cli.rs", "pub struct Opts {\n    /// Do not traverse into directories that match.\n"
          "    #[arg(long, hide_short_help = true, conflicts_with_all(&[\"size\", \"exact_depth\"]),\n"
          "        long_help,\n        )]\n    pub prune: bool,\n}\n")
    got = collect_scope("s", plain)
    assert [c.heading for c in got.chunks if c.text.startswith("Do not traverse")] == ["Opts.prune"]


def test_the_newest_release_tag_of_the_checkout_is_a_passage(repo):
    write(repo, "main.go", "package main\n")
    commit_all(repo, "first release")
    git(repo, "tag", "v1.2.0")
    write(repo, "extra.go", "package main\n")
    commit_all(repo, "a change after it")
    got = collect_scope("s", repo)
    (tag,) = [c for c in got.chunks if c.path.startswith("tag:")]
    assert (tag.kind, tag.path, tag.heading) == ("note", "tag:v1.2.0", "v1.2.0")
    assert "v1.2.0" in tag.text and "first release" in tag.text and "1 commit since" in tag.text


def test_a_repository_without_tags_has_no_tag_passage(repo):
    write(repo, "main.go", "package main\n")
    commit_all(repo, "no tag yet")
    assert not [c for c in collect_scope("s", repo).chunks if c.path.startswith("tag:")]


def test_python_files_are_parsed_one_at_a_time_across_threads(monkeypatch):
    # CPython 3.11's parser is not safe in two threads at once (python/cpython#106905)
    import ast
    import threading
    import time

    from loci_pipeline import comments

    inside, most = [0], [0]
    real = ast.parse

    def slow_parse(text, *a, **kw):
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        inside[0] -= 1
        return real(text, *a, **kw)

    monkeypatch.setattr(comments.ast, "parse", slow_parse)
    threads = [threading.Thread(target=comments.python_source, args=("def f():\n    pass\n", "m.py", 250))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1


def test_a_file_the_parser_fails_on_is_skipped_not_fatal(monkeypatch):
    from loci_pipeline import comments

    def broken(*_a, **_kw):
        raise SystemError("AST constructor recursion depth mismatch (before=42, after=36)")

    monkeypatch.setattr(comments.ast, "parse", broken)
    assert comments.python_source("def f():\n    pass\n", "m.py", 250) is None


def test_docs_sources_kept_in_a_docs_build_folder_are_read(repo):
    # Mako, SQLAlchemy and Alembic keep their Sphinx sources in doc/build/
    write(repo, "README.md", "# Top\n\nreal project text\n")
    write(repo, "doc/build/usage.rst", "Usage\n=====\n\nCall render() to stop rendering early.\n")
    write(repo, "doc/build/output/page.html", "<p>built marker</p>\n")
    write(repo, "doc/build/_sources/usage.rst.txt", "Usage\n=====\n\ncopied marker\n")
    write(repo, "build/notes.md", "# Notes\n\nbuild marker\n")
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "init")
    got = collect_scope("s", repo)
    assert "stop rendering early" in texts(got)
    for marker in ("build marker", "copied marker", "built marker"):
        assert marker not in texts(got)
