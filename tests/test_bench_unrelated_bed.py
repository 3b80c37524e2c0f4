"""The unrelated bed's pure pieces: which packages are taken, which are skipped, the names of the copies."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is a folder of scripts, not an installed package

from bench.unrelated_bed import bed_names, carries_dev_project, choose, normal, text_bytes  # noqa: E402


def test_normal_folds_case_and_separator_runs():
    assert normal("Typing_Extensions") == "typing-extensions"
    assert normal("zope.interface") == "zope-interface"


def test_choose_skips_development_projects_by_normal_name():
    assert choose(["boto3", "Jinja2", "rank_bm25", "six"], {"jinja2", "rank-bm25"}, 5) == ["boto3", "six"]


def test_choose_stops_at_n_and_skips_names_taken_and_scoped():
    assert choose(["a", "@scope/b", "c", "d", "e"], set(), 2, taken={"c"}) == ["a", "d"]


def test_choose_takes_a_name_once():
    assert choose(["foo-bar", "foo_bar", "baz"], set(), 5) == ["foo-bar", "baz"]


def test_a_vendored_development_package_is_found(tmp_path):
    pkg = tmp_path / "src" / "botocore" / "vendored" / "requests"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    assert carries_dev_project(tmp_path) == "requests"


def test_a_folder_named_like_a_development_project_without_a_package_is_not_a_copy(tmp_path):
    (tmp_path / "docs" / "click").mkdir(parents=True)
    (tmp_path / "docs" / "click" / "index.md").write_text("click here")
    assert carries_dev_project(tmp_path) is None


def test_a_bundled_npm_development_package_is_found(tmp_path):
    dep = tmp_path / "node_modules" / "chalk"
    dep.mkdir(parents=True)
    (dep / "package.json").write_text('{"name": "chalk"}')
    (tmp_path / "package.json").write_text('{"name": "chalk"}')   # its own name is not a copy
    assert carries_dev_project(tmp_path) == "node_modules/chalk/package.json"


def test_text_bytes_counts_files_without_nul_bytes(tmp_path):
    (tmp_path / "a.py").write_text("x" * 100)
    (tmp_path / "b.png").write_bytes(b"\x89PNG\0\0" + b"x" * 50)
    assert text_bytes(tmp_path) == 100


def test_bed_names_keep_each_unrelated_scope_once_then_copies_round_robin():
    got = bed_names(["click", "flask"], ["boto3", "six"], 7)
    assert got == [("boto3", "boto3"), ("six", "six"), ("boto3", "boto3-001"), ("six", "six-001"),
                   ("boto3", "boto3-002")]


def test_bed_names_pass_over_a_name_already_taken():
    got = bed_names([], ["a", "a-001"], 4)
    assert [n for _, n in got] == ["a", "a-001", "a-001-001", "a-002"]


def test_bed_names_smaller_than_the_unrelated_set_takes_the_first():
    assert bed_names(["x"], ["a", "b", "c"], 3) == [("a", "a"), ("b", "b")]


def test_judge_checks_a_copy_on_the_package_it_was_built_from(tmp_path):
    from bench.unrelated_judge import judge

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "uv.lock").write_text("version = 1")
    (tmp_path / "pkg" / "PKG-INFO").write_text("Name: pkg")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "PKG-INFO").write_text("Name: other")
    changes = [{"id": "d2d-all-enumerative-16", "after": ["click", "pkg", "pkg-001", "other-002"]},
               {"id": "dev-vocab-01", "after": ["other"]}]
    assert judge(changes, tmp_path, {"click"}) == [
        {"id": "d2d-all-enumerative-16", "right": ["pkg", "pkg-001"], "wrong": ["other-002"]}]


def test_fetch_downloads_several_packages_at_once_and_records_each(tmp_path, monkeypatch):
    import argparse
    import json
    import threading

    from bench import unrelated_bed

    together = threading.Barrier(2, timeout=10)   # a fetch one at a time never lets two meet here

    def fake_fetch_one(registry, name, repos, dl):
        together.wait()
        assert dl.name != "dl"                     # each download in a folder of its own
        return {"name": name, "registry": registry, "folder": name, "kept": True}

    monkeypatch.setattr(unrelated_bed, "ranked_pypi", lambda path: ["alpha", "beta", "gamma", "delta"])
    monkeypatch.setattr(unrelated_bed, "ranked_npm", lambda path: [])
    monkeypatch.setattr(unrelated_bed, "fetch_one", fake_fetch_one)
    args = argparse.Namespace(cache=tmp_path / "cache", names=tmp_path, pypi=4, npm=0, jobs=2)
    assert unrelated_bed.fetch(args) == 0
    rows = json.loads((tmp_path / "cache" / "fetched.json").read_text())
    assert sorted(r["name"] for r in rows) == ["alpha", "beta", "delta", "gamma"]


def test_the_next_batch_takes_kept_packages_in_fetch_order_up_to_the_limit():
    from bench.unrelated_bed import next_batch

    fetched = [{"folder": f, "kept": f != "b"} for f in "abcdefg"]
    assert next_batch(fetched, set(), limit=10, batch=3) == ["a", "c", "d"]
    assert next_batch(fetched, {"a", "c", "d"}, limit=5, batch=3) == ["e", "f"]
    assert next_batch(fetched, {"a", "c", "d", "e", "f"}, limit=5, batch=3) == []


def test_build_without_a_fetch_says_so_and_writes_no_home(tmp_path, capsys):
    import pytest

    from bench.unrelated_bed import main

    home = tmp_path / "home"
    with pytest.raises(SystemExit) as exit_:
        main(["build", "--unrelated-home", str(home), "--cache", str(tmp_path / "never-fetched")])
    assert exit_.value.code == 2
    assert "fetched.json is missing" in capsys.readouterr().err and not home.exists()


def test_build_refuses_an_empty_batch(tmp_path, capsys):
    import json

    import pytest

    from bench.unrelated_bed import main

    (tmp_path / "fetched.json").write_text(json.dumps([{"folder": "a", "kept": True}]))
    with pytest.raises(SystemExit) as exit_:
        main(["build", "--unrelated-home", str(tmp_path / "home"), "--cache", str(tmp_path), "--batch", "0"])
    assert exit_.value.code == 2 and "--batch" in capsys.readouterr().err
    assert not (tmp_path / "home").exists()
