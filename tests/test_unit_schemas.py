"""loci.kernel.schemas and jsonfile: a state file is checked when read; damage names the file and its fix."""
from __future__ import annotations

import json

import pytest

from loci.kernel.errors import StoreError
from loci.kernel.jsonfile import read_state, read_state_or_none
from loci.kernel.schemas import (
    EMBED_FILE, GROUPS, LOCK, MANIFEST, SCOPES, SCOPES_FILE, ListOf, MapOf, Obj, StateError, check, problem,
)


def test_a_value_that_fits_its_schema_has_no_problem():
    scopes = {"schema_version": 1, "roots": ["/code"],
              "scopes": [{"name": "a", "path": "/code/a", "groups": ["me"], "parent": None}]}
    assert problem(scopes, SCOPES) is None
    assert problem({"pid": 12, "what": "build", "start": None}, LOCK) is None


def test_the_problem_names_the_first_place_by_its_path():
    bad = {"scopes": [{"name": "a", "path": "/a"}, {"name": "b", "path": "/b", "groups": 3}]}
    assert problem(bad, SCOPES) == "`scopes[1].groups` is a number, not a list"
    assert problem({"members": {"team": {"add": "x"}}}, GROUPS) == "`members.team.add` is a string, not a list"


def test_a_missing_required_key_is_named():
    assert problem({"scopes": [{"name": "a"}]}, SCOPES) == "`scopes[0]` has no `path`"
    assert problem({"tokenizer": "t"}, MANIFEST) == "the file has no `schema_version`"


def test_the_wrong_container_is_named_at_the_top():
    assert problem([1, 2], LOCK) == "the file is a list, not an object"
    assert problem({"a": 1}, ListOf(int)) == "the file is an object, not a list"
    assert problem("x", MapOf(int)) == "the file is a string, not an object"


def test_true_and_false_are_not_numbers():
    assert problem(True, int) == "the file is true/false, not a number"
    assert problem({"pid": True}, LOCK) == "`pid` is true/false, not a number"
    assert problem(True, (bool, int)) is None


def test_unknown_keys_are_allowed_known_ones_are_checked_only_when_present():
    spec = Obj({"a": int}, required=())
    assert problem({"z": "anything"}, spec) is None and problem({"a": "1"}, spec) == "`a` is a string, not a number"


def test_check_raises_a_state_error_naming_the_file_and_the_command_that_rebuilds_it(tmp_path):
    path = tmp_path / "scopes.json"
    with pytest.raises(StateError) as err:
        check({"scopes": 3}, SCOPES_FILE, path)
    assert str(path) in str(err.value) and "`loci scan DIR`" in str(err.value)
    assert err.value.path == path and err.value.fix == "loci scan DIR"
    assert isinstance(err.value, StoreError) and "\n" not in str(err.value)
    assert check({"scopes": []}, SCOPES_FILE, path) == {"scopes": []}


def test_reading_a_missing_state_file_is_none(tmp_path):
    assert read_state(tmp_path / "embed.json", EMBED_FILE) is None


@pytest.mark.parametrize("text, words", [
    ("{not json", "is not valid JSON"),
    ("null", "holds null"),
    ('{"model": "m"}', "has no `model_id`"),
    ('{"model_id": 5}', "`model_id` is a number"),
])
def test_reading_a_damaged_state_file_names_it_and_its_fix(tmp_path, text, words):
    path = tmp_path / "embed.json"
    path.write_text(text)
    with pytest.raises(StateError, match="loci embed") as err:
        read_state(path, EMBED_FILE)
    assert words in str(err.value) and str(path) in str(err.value)
    assert read_state_or_none(path, EMBED_FILE) is None


def test_a_sound_state_file_is_returned_as_decoded(tmp_path):
    path = tmp_path / "embed.json"
    path.write_text(json.dumps({"model": "m", "model_id": "m@1"}))
    assert read_state(path, EMBED_FILE) == {"model": "m", "model_id": "m@1"}
