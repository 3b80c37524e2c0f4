"""loci.kernel.registry: reading and writing scopes.json, and finding the scope of a path."""
from __future__ import annotations

import json

import pytest

from loci.kernel.config import SCHEMA_VERSION, layout
from loci.kernel.registry import Registry, RegistryError, Scope, load_registry, save_registry


@pytest.fixture
def lay(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    return layout()


def sample(tmp_path) -> Registry:
    return Registry(
        scopes=[
            Scope("mono", str(tmp_path / "mono"), aliases=("mono",), groups=("me", "mono"),
                  excludes=("web",)),
            Scope("mono/web", str(tmp_path / "mono" / "web"), kind="subscope", parent="mono",
                  groups=("me", "mono")),
            Scope("monolith", str(tmp_path / "monolith")),
        ],
        roots=[str(tmp_path)],
    )


def test_a_missing_registry_is_empty(lay):
    reg = load_registry(lay)
    assert reg.scopes == [] and reg.roots == []


def test_save_then_load_round_trips_and_records_the_schema_version(lay, tmp_path):
    reg = sample(tmp_path)
    save_registry(lay, reg)
    assert json.loads(lay.scopes.read_text())["schema_version"] == SCHEMA_VERSION
    assert load_registry(lay) == reg


@pytest.mark.parametrize("text", ['{"scopes": [', "[1, 2]", '{"scopes": [{"name": "x"}]}',
                                  '{"scopes": [], "roots": "/x"}'])
def test_a_damaged_registry_is_an_error_naming_the_file_and_the_fix_and_is_left_alone(lay, text):
    lay.home.mkdir(parents=True)
    lay.scopes.write_text(text)
    with pytest.raises(RegistryError) as err:
        load_registry(lay)
    assert str(lay.scopes) in str(err.value)
    assert "loci scan" in str(err.value)
    assert lay.scopes.read_text() == text


def test_a_registry_from_a_newer_schema_is_refused(lay):
    lay.home.mkdir(parents=True)
    lay.scopes.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1, "scopes": []}))
    with pytest.raises(RegistryError, match="newer loci"):
        load_registry(lay)


def test_unknown_keys_in_a_scope_entry_are_ignored(lay, tmp_path):
    lay.home.mkdir(parents=True)
    lay.scopes.write_text(json.dumps({"scopes": [{"name": "a", "path": "/a", "future": 1}]}))
    assert load_registry(lay).get("a") == Scope("a", "/a")


def test_containing_picks_the_deepest_scope(tmp_path):
    reg = sample(tmp_path)
    assert reg.containing(tmp_path / "mono" / "web" / "src" / "x.js").name == "mono/web"
    assert reg.containing(tmp_path / "mono" / "lib").name == "mono"
    assert reg.containing(tmp_path / "mono").name == "mono"


def test_containing_does_not_confuse_a_sibling_sharing_a_name_prefix(tmp_path):
    reg = sample(tmp_path)
    assert reg.containing(tmp_path / "monolith" / "a").name == "monolith"
    assert reg.containing(tmp_path / "elsewhere") is None


def test_get_and_names(tmp_path):
    reg = sample(tmp_path)
    assert reg.names() == ["mono", "mono/web", "monolith"]
    assert reg.get("mono/web").parent == "mono"
    assert reg.get("nope") is None
    assert reg.at_path(tmp_path / "monolith").name == "monolith"
