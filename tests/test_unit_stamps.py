"""loci.kernel.stamps and home: a file set's state as one string; where the home is."""
from __future__ import annotations

import os

from loci.kernel.home import home_dir
from loci.kernel.stamps import files_state


def test_the_state_string_changes_when_a_file_changes_and_names_a_missing_one(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("one")
    first = files_state([("a", f), ("b", tmp_path / "b.txt")])
    assert first.startswith("a=3:") and first.endswith(";b=none")
    assert files_state([("a", f), ("b", tmp_path / "b.txt")]) == first
    f.write_text("three")
    assert files_state([("a", f), ("b", tmp_path / "b.txt")]) != first


def test_the_home_is_loci_home_made_absolute_else_dot_loci(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCI_HOME", "rel/h")
    assert home_dir() == str(tmp_path / "rel" / "h")
    monkeypatch.delenv("LOCI_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    assert home_dir() == os.path.join(str(tmp_path / "me"), ".loci")
