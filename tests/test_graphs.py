"""Building a scope's code graph with graphify, under $LOCI_HOME and never inside the repository."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loci.kernel.config import layout
from loci_pipeline import graphs
from loci_pipeline.graphs import build_graph, code_fingerprint, graph_source

CORE = "def clamp_value(x):\n    return max(0, x)\n\n\ndef run(x):\n    return clamp_value(x)\n"


def git(root: Path, *args: str) -> str:
    cmd = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    return subprocess.run(cmd + list(args), check=True, capture_output=True, text=True).stdout


def make_repo(root: Path, files: dict[str, str], *, commit: bool = True) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if commit:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init")
    return root


def listing(root: Path) -> dict[str, int]:
    """Every file (including git's own) with its mtime: proof nothing was written."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def graph_text(path) -> str:
    from loci_pipeline.graphs import read_graph_bytes

    return read_graph_bytes(path).decode()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    return layout(tmp_path / "home")


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo", {"pkg/core.py": CORE, "README.md": "# demo\n"})


needs_graphify = pytest.mark.skipif(not graphs.graphify_available(), reason="graphify not installed")


@pytest.fixture
def extra_present(monkeypatch):
    """For tests that never run graphify: behave as if the extra were installed."""
    monkeypatch.setattr(graphs, "graphify_available", lambda: True)


# --- no graphify needed ------------------------------------------------------------------

def test_a_missing_extra_names_the_install_command(repo, home, monkeypatch):
    monkeypatch.setattr(graphs, "graphify_available", lambda: False)
    result = build_graph("demo", repo, home)
    assert result.status == "no_extra" and result.graph is None
    assert "pip install 'loci-scopes[graph]'" in result.message and "\n" not in result.message


def test_a_missing_root_fails_with_a_message(tmp_path, home):
    result = build_graph("gone", tmp_path / "nowhere", home)
    assert result.status == "failed" and "not a directory" in result.message


def test_a_prose_only_repository_is_unsupported_without_running_graphify(tmp_path, home, monkeypatch, extra_present):
    root = make_repo(tmp_path / "notes", {"README.md": "# notes\n", "docs/a.md": "text\n"})
    monkeypatch.setattr(graphs, "graphify_command", lambda *a: pytest.fail("graphify was run"))
    result = build_graph("notes", root, home)
    assert result.status == "unsupported" and "prose" in result.message
    assert graph_source("notes", root, home) is None
    assert graphs.last_status("notes", home) == "unsupported"
    (home.graph_dir("notes") / "work" / "graphify-out").mkdir(parents=True)  # a folder an old loci left
    assert build_graph("notes", root, home).status == "unsupported"
    assert not (home.graph_dir("notes") / "work").exists()  # else the graphs step never looks current


def test_graph_source_is_none_before_any_graph_exists(repo, home):
    assert graph_source("demo", repo, home) is None


def test_a_user_graph_newer_than_loci_s_is_the_one_read(repo, home):
    ours = graphs.graph_path("demo", home)
    ours.parent.mkdir(parents=True)
    ours.write_text("{}")
    theirs = repo / "graphify-out" / "graph.json"
    theirs.parent.mkdir()
    theirs.write_text("{}")
    os.utime(ours, (time.time() - 100, time.time() - 100))
    assert graph_source("demo", repo, home) == theirs
    os.utime(theirs, (time.time() - 200, time.time() - 200))
    assert graph_source("demo", repo, home) == ours


def test_build_leaves_a_newer_user_graph_alone_unless_forced(repo, home, monkeypatch, extra_present):
    theirs = repo / "graphify-out" / "graph.json"
    theirs.parent.mkdir()
    theirs.write_text("{}")
    monkeypatch.setattr(graphs, "graphify_command", lambda *a: pytest.fail("graphify was run"))
    result = build_graph("demo", repo, home)
    assert result.status == "user_graph" and result.graph == theirs


def test_a_graphify_failure_is_reported_with_the_retry(repo, home, monkeypatch, extra_present):
    monkeypatch.setattr(graphs, "graphify_command", lambda *a: [
        sys.executable, "-c", "import sys; print('boom: parser exploded', file=sys.stderr); sys.exit(3)"])
    result = build_graph("demo", repo, home)
    assert result.status == "failed"
    assert "exit 3" in result.message and "boom" in result.message and "loci graphs --scope demo" in result.message
    assert graph_source("demo", repo, home) is None


def test_fingerprint_ignores_docs_but_not_code(repo):
    before, count = code_fingerprint(repo)
    assert count == 1
    (repo / "README.md").write_text("# changed\n")
    assert code_fingerprint(repo)[0] == before
    (repo / "pkg" / "core.py").write_text(CORE + "\n# edited\n")
    assert code_fingerprint(repo)[0] != before


def test_fingerprint_sees_untracked_code_and_commits(repo):
    before = code_fingerprint(repo)[0]
    (repo / "pkg" / "extra.py").write_text("def more():\n    pass\n")
    untracked = code_fingerprint(repo)[0]
    assert untracked != before
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    assert code_fingerprint(repo)[0] not in (before, untracked)


def test_fingerprint_of_a_package_ignores_edits_elsewhere_in_the_monorepo(tmp_path):
    mono = make_repo(tmp_path / "mono", {"a/x.py": "X = 1\n", "b/y.py": "Y = 1\n"})
    before = code_fingerprint(mono / "a")[0]
    (mono / "b" / "y.py").write_text("Y = 2\n")
    assert code_fingerprint(mono / "a")[0] == before
    (mono / "a" / "x.py").write_text("X = 2\n")
    assert code_fingerprint(mono / "a")[0] != before


def test_fingerprint_works_outside_git(tmp_path):
    root = make_repo(tmp_path / "plain", {"m.py": "A = 1\n"}, commit=False)
    before, count = code_fingerprint(root)
    assert count == 1
    (root / "m.py").write_text("A = 22\n")
    assert code_fingerprint(root)[0] != before


# --- through graphify --------------------------------------------------------------------

@needs_graphify
def test_builds_under_loci_home_and_writes_nothing_in_the_repository(repo, home):
    status = ("--no-optional-locks", "status", "--porcelain")  # a plain status may refresh .git/index
    status_before, files_before = git(repo, *status), listing(repo)
    result = build_graph("demo", repo, home)
    assert result.status == "built", result.message
    assert result.graph == home.graph_dir("demo") / "graph.json.gz"
    assert json.loads(graph_text(result.graph))["nodes"]
    assert (home.graph_dir("demo") / "fingerprint.json").exists()
    assert git(repo, *status) == status_before
    assert listing(repo) == files_before
    assert not (repo / "graphify-out").exists()
    assert graph_source("demo", repo, home) == result.graph


@needs_graphify
def test_a_second_run_with_nothing_changed_does_no_work(repo, home, monkeypatch):
    first = build_graph("demo", repo, home)
    mtime = first.graph.stat().st_mtime_ns
    (repo / "README.md").write_text("# docs moved on\n")
    monkeypatch.setattr(graphs, "graphify_command", lambda *a: pytest.fail("graphify was run"))
    again = build_graph("demo", repo, home)
    assert again.status == "uptodate" and again.graph == first.graph
    assert first.graph.stat().st_mtime_ns == mtime
    assert again.seconds < 1.0


@needs_graphify
def test_an_edited_code_file_rebuilds_the_graph(repo, home):
    build_graph("demo", repo, home)
    (repo / "pkg" / "core.py").write_text(CORE + "\n\ndef brand_new_helper():\n    return run(1)\n")
    result = build_graph("demo", repo, home)
    assert result.status == "built"
    assert "brand_new_helper()" in graph_text(result.graph)


@needs_graphify
def test_force_reextracts_but_an_identical_graph_keeps_its_mtime(repo, home):
    first = build_graph("demo", repo, home)
    mtime = first.graph.stat().st_mtime_ns
    forced = build_graph("demo", repo, home, force=True)
    assert forced.status == "built"
    assert forced.graph.stat().st_mtime_ns == mtime


@needs_graphify
def test_excluded_paths_stay_out_of_the_graph(tmp_path, home):
    root = make_repo(tmp_path / "ex", {"pkg/core.py": CORE, "gen/big.py": "def generated_thing():\n    pass\n"})
    result = build_graph("ex", root, home, excludes=("gen/",))
    assert result.status == "built"
    assert "generated_thing" not in graph_text(result.graph)


@needs_graphify
def test_a_code_file_over_the_read_limit_never_reaches_graphify(tmp_path, home, monkeypatch):
    import dataclasses

    import loci.kernel.config

    limit = 4_000       # the shipped 1 MB limit, scaled down: a 50 MB file stalled graphify for minutes
    monkeypatch.setattr(loci.kernel.config, "DEFAULT_PARAMS",
                        dataclasses.replace(loci.kernel.config.DEFAULT_PARAMS, max_file_bytes=limit))
    huge = "def huge_generated_table():\n    pass\n" + "# padding\n" * (limit // 10 + 1)
    root = make_repo(tmp_path / "big", {"pkg/core.py": CORE, "gen/huge.py": huge})
    result = build_graph("big", root, home)
    assert result.status == "built"
    text = graph_text(result.graph)
    assert "clamp_value" in text and "huge_generated_table" not in text
    assert "gen/huge.py" in result.message


@needs_graphify
def test_a_language_graphify_does_not_model_is_unsupported(tmp_path, home):
    root = make_repo(tmp_path / "cobol", {"prog.cbl": "       IDENTIFICATION DIVISION.\n"})
    result = build_graph("cobol", root, home)
    assert result.status == "unsupported", result.message
    assert graph_source("cobol", root, home) is None


@needs_graphify
def test_changing_the_excludes_reextracts_in_full(tmp_path, home):
    root = make_repo(tmp_path / "ex2", {"pkg/core.py": CORE, "gen/big.py": "def generated_thing():\n    pass\n"})
    assert "generated_thing" in graph_text(build_graph("ex2", root, home).graph)
    result = build_graph("ex2", root, home, excludes=("gen/",))
    assert result.status == "built"
    assert "generated_thing" not in graph_text(result.graph)


def test_an_unwritable_home_fails_with_a_message(repo, tmp_path, extra_present):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the home directory should be")
    result = build_graph("demo", repo, layout(blocker))
    assert result.status == "failed" and "cannot write" in result.message


@needs_graphify
def test_the_home_keeps_one_graph_and_graphify_s_cache_packed(repo, home):
    build_graph("demo", repo, home)
    names = sorted(p.name for p in home.graph_dir("demo").iterdir())
    assert names == ["fingerprint.json", "graph.json.gz", "graphify-cache.tar.gz"]


@needs_graphify
def test_an_edit_after_the_cache_was_packed_still_rebuilds_the_graph(repo, home):
    build_graph("demo", repo, home)
    (home.graph_dir("demo") / "graphify-cache.tar.gz").write_bytes(b"not a tarball")
    (repo / "pkg" / "core.py").write_text(CORE + "\n\ndef another_helper():\n    return run(2)\n")
    result = build_graph("demo", repo, home)
    assert result.status == "built" and "another_helper()" in graph_text(result.graph)
    assert not (home.graph_dir("demo") / "work").exists()


def test_a_plain_graph_from_before_is_compressed_in_place_and_keeps_its_mtime(home):
    from loci_pipeline.graphs import graph_intact, graph_path, graph_source, migrate_graph

    plain = home.graph_dir("demo") / "graph.json"
    plain.parent.mkdir(parents=True)
    plain.write_text('{"nodes": [{"id": "a"}], "links": []}')
    os.utime(plain, ns=(1_000_000_000, 1_500_000_000_000_000_000))
    assert graph_source("demo", plain.parent, home) == plain  # read as it is until migrated
    migrate_graph("demo", home)
    ours = graph_path("demo", home)
    assert not plain.exists() and ours.stat().st_mtime_ns == 1_500_000_000_000_000_000
    assert json.loads(gzip.decompress(ours.read_bytes()))["nodes"] == [{"id": "a"}]
    assert graph_intact("demo", home)
