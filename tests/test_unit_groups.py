"""loci.kernel.groups.edit_group: one edit of groups.json, written whole, or nothing written."""
from __future__ import annotations

import json

import pytest

from conftest import GIZMO, WEBBY, setup_home
from loci.kernel import groups
from loci.kernel.config import layout


@pytest.fixture
def home(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    return loci_home


def test_an_edit_is_written_to_groups_json_and_the_group_comes_back(home):
    row = groups.edit_group(layout(), "tools", groups.add_member, "gizmo", "tools")
    assert row == groups.GroupRow("tools", "soft", 1, ("gizmo",))
    saved = json.loads(layout().groups.read_text())
    assert saved["members"]["tools"]["add"] == ["gizmo"]
    row = groups.edit_group(layout(), "tools", groups.set_mode, "tools", "hard")
    assert row == groups.GroupRow("tools", "hard", 1, ("gizmo",))
    assert json.loads(layout().groups.read_text())["modes"]["tools"] == "hard"


def test_a_group_whose_last_member_is_taken_out_comes_back_with_none(home):
    groups.edit_group(layout(), "tools", groups.add_member, "gizmo", "tools")
    row = groups.edit_group(layout(), "tools", groups.remove_member, "gizmo", "tools")
    assert row == groups.GroupRow("tools", "soft", 0, ())


def test_a_bad_edit_raises_a_usage_error_and_leaves_the_file_as_it_was(home):
    from loci.kernel.errors import UsageError

    groups.edit_group(layout(), "tools", groups.add_member, "gizmo", "tools")
    before = layout().groups.read_bytes()
    for edit, args in ((groups.set_mode, ("tools", "bogus")), (groups.add_member, ("nope", "tools")),
                       (groups.remove_member, ("webby", "tools")), (groups.set_mode, ("two words", "soft"))):
        with pytest.raises(UsageError):
            groups.edit_group(layout(), "tools", edit, *args)
    assert layout().groups.read_bytes() == before


def test_edits_side_by_side_keep_each_others(home):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda i: groups.edit_group(layout(), f"g{i}", groups.add_member, "gizmo", f"g{i}"), range(16)))
    assert set(json.loads(layout().groups.read_text())["members"]) == {f"g{i}" for i in range(16)}
