"""loci.kernel.groups: membership, modes, groups.json, and what a group does to a question."""
from __future__ import annotations

import json

import pytest

from loci.kernel.config import layout
from loci.kernel.groups import (GroupError, GroupRow, Policy, add_member, confinement, effective_groups,
                         infer, list_groups, load_policy, mode_of, remove_member, save_policy,
                         set_default_mode, set_mode)
from loci.kernel.registry import Registry, Scope


def registry() -> Registry:
    """The spec's five scopes, minus the hand-added client:acme (that lives in groups.json)."""
    return Registry(scopes=[
        Scope("delroy", "/c/delroy", groups=("me", "delroy"), owner="me"),
        Scope("delroy/glasses", "/c/delroy/glasses", kind="subscope", parent="delroy",
              groups=("me", "delroy"), owner="me"),
        Scope("delroy/client", "/c/delroy/client", kind="subscope", parent="delroy",
              groups=("me", "delroy"), owner="me"),
        Scope("acme-api", "/c/acme-api", groups=("me",), owner="me"),
        Scope("vendorlib", "/c/vendorlib", groups=("vendor:someorg",), owner="vendor:someorg"),
        Scope("stray", "/c/stray"),
    ])


def with_acme(policy: Policy = Policy()) -> Policy:
    reg = registry()
    return add_member(add_member(policy, reg, "delroy/client", "client:acme"), reg, "acme-api", "client:acme")


ALL = frozenset(registry().names())


# ---- membership

def test_hand_added_members_join_the_computed_groups():
    groups = effective_groups(registry(), with_acme())
    assert groups["delroy/client"] == {"me", "delroy", "client:acme"}
    assert groups["acme-api"] == {"me", "client:acme"}
    assert groups["stray"] == set()


def test_removing_a_computed_membership_is_recorded_so_a_rescan_cannot_restore_it():
    policy = remove_member(Policy(), registry(), "acme-api", "me")
    assert policy.members["me"]["rm"] == ("acme-api",)
    assert "me" not in effective_groups(registry(), policy)["acme-api"]


def test_removing_a_hand_added_membership_leaves_no_trace():
    policy = remove_member(with_acme(), registry(), "acme-api", "client:acme")
    assert policy.members["client:acme"] == {"add": ("delroy/client",), "rm": ()}
    policy = remove_member(policy, registry(), "delroy/client", "client:acme")
    assert "client:acme" not in policy.members


def test_adding_back_a_removed_member_undoes_the_removal():
    reg = registry()
    policy = add_member(remove_member(Policy(), reg, "acme-api", "me"), reg, "acme-api", "me")
    assert "me" in effective_groups(reg, policy)["acme-api"]


def test_editing_an_unknown_scope_is_an_error_listing_the_known_scopes():
    with pytest.raises(GroupError, match="unknown scope 'nope'.*acme-api, delroy"):
        add_member(Policy(), registry(), "nope", "team")


def test_removing_a_group_the_scope_is_not_in_names_its_groups():
    with pytest.raises(GroupError, match="not in group 'team'.*its groups: me"):
        remove_member(Policy(), registry(), "acme-api", "team")


def test_a_group_name_with_spaces_is_refused():
    with pytest.raises(GroupError, match="invalid group name"):
        add_member(Policy(), registry(), "acme-api", "my team")


def test_infer_reads_the_provenance_group_from_each_owner():
    assert infer(registry()) == {"delroy": "me", "delroy/glasses": "me", "delroy/client": "me",
                                 "acme-api": "me", "vendorlib": "vendor:someorg"}


# ---- modes

def test_groups_are_soft_unless_set_otherwise():
    policy = set_mode(with_acme(), registry(), "client:acme", "hard")
    assert mode_of("client:acme", policy) == "hard"
    assert mode_of("delroy", policy) == "soft"
    assert mode_of("delroy", set_default_mode(policy, "explicit")) == "explicit"


def test_an_unknown_mode_is_an_error_listing_the_modes():
    with pytest.raises(GroupError, match="modes are: explicit, soft, hard"):
        set_mode(Policy(), registry(), "delroy", "strict")


def test_setting_the_mode_of_a_new_group_creates_it_with_no_members():
    policy = set_mode(Policy(), registry(), "web", "hard")
    assert GroupRow("web", "hard", 0) in list_groups(registry(), policy)


def test_setting_the_mode_of_a_group_with_a_bad_name_is_an_error():
    with pytest.raises(GroupError, match="invalid group name"):
        set_mode(Policy(), registry(), "my web", "hard")


def test_list_groups_gives_mode_and_member_count():
    policy = set_mode(with_acme(), registry(), "client:acme", "hard")
    assert [(r.group, r.mode, r.count) for r in list_groups(registry(), policy)] == [
        ("client:acme", "hard", 2), ("delroy", "soft", 3), ("me", "soft", 4), ("vendor:someorg", "soft", 1)]


def test_list_groups_names_each_groups_members_sorted():
    rows = {r.group: r for r in list_groups(registry(), with_acme())}
    assert all(r.members == tuple(sorted(r.members)) and len(r.members) == r.count for r in rows.values())
    assert len(rows["client:acme"].members) == 2


# ---- groups.json

@pytest.fixture
def lay(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    return layout()


def test_a_missing_policy_is_the_default(lay):
    assert load_policy(lay) == Policy()


def test_policy_round_trips_and_keeps_keys_it_does_not_know(lay):
    lay.home.mkdir(parents=True)
    lay.groups.write_text(json.dumps({"default_mode": "soft", "note": "mine"}))
    policy = set_mode(with_acme(load_policy(lay)), registry(), "client:acme", "hard")
    save_policy(lay, policy)
    assert load_policy(lay) == policy
    assert json.loads(lay.groups.read_text())["note"] == "mine"


@pytest.mark.parametrize("text", ["{not json", '{"modes": {"team": "strict"}}',
                                  '{"default_mode": "loose"}', '{"members": {"team": ["a"]}}', "[]"])
def test_a_damaged_policy_is_an_error_naming_the_file_which_is_left_alone(lay, text):
    lay.home.mkdir(parents=True)
    lay.groups.write_text(text)
    with pytest.raises(GroupError) as err:
        load_policy(lay)
    assert str(lay.groups) in str(err.value)
    assert lay.groups.read_text() == text


# ---- confinement

def groups_of(policy: Policy) -> dict[str, set[str]]:
    return effective_groups(registry(), policy)


@pytest.mark.parametrize("mode", ["explicit", "soft", "hard"])
def test_naming_a_group_confines_to_its_members_in_every_mode(mode):
    policy = set_mode(with_acme(), registry(), "client:acme", mode)
    c = confinement("client:acme", "vendorlib", groups_of(policy), policy)
    assert c.eligible == {"delroy/client", "acme-api"}
    assert c.demoted is None
    assert c.strict is (mode == "hard")
    assert (c.group, c.via) == ("client:acme", "flag")


def test_naming_an_unknown_group_is_an_error_listing_the_known_groups():
    with pytest.raises(GroupError, match="unknown group 'team'; known groups: client:acme"):
        confinement("team", None, groups_of(with_acme()), with_acme())


def test_a_soft_cwd_group_demotes_every_scope_outside_it():
    c = confinement(None, "delroy/glasses", groups_of(Policy()), Policy())
    assert c.eligible is None and not c.strict
    assert c.demoted == ALL - {"delroy", "delroy/glasses", "delroy/client"}
    assert (c.group, c.via) == ("delroy", "cwd")


def test_a_hard_cwd_group_confines_strictly():
    policy = set_mode(Policy(), registry(), "delroy", "hard")
    c = confinement(None, "delroy", groups_of(policy), policy)
    assert c.eligible == {"delroy", "delroy/glasses", "delroy/client"}
    assert c.strict and c.demoted is None and c.via == "cwd"


def test_an_explicit_cwd_group_does_nothing():
    policy = set_mode(Policy(), registry(), "delroy", "explicit")
    c = confinement(None, "delroy", groups_of(policy), policy)
    assert c.eligible is None and c.demoted is None and not c.strict and c.via is None


def test_the_strictest_cwd_group_wins():
    policy = set_mode(with_acme(), registry(), "client:acme", "hard")
    c = confinement(None, "delroy/client", groups_of(policy), policy)
    assert c.group == "client:acme" and c.strict
    assert c.eligible == {"delroy/client", "acme-api"}


def test_equally_strict_cwd_groups_act_together():
    policy = with_acme()
    c = confinement(None, "delroy/client", groups_of(policy), policy)
    assert c.demoted == {"vendorlib", "stray"}
    assert c.group == "client:acme+delroy"


def test_provenance_groups_do_not_act_through_cwd_by_default():
    c = confinement(None, "acme-api", groups_of(Policy()), Policy())
    assert c.demoted is None and c.eligible is None
    c = confinement(None, "vendorlib", groups_of(Policy()), Policy())
    assert c.demoted is None and c.eligible is None


def test_a_provenance_group_acts_through_cwd_once_its_mode_is_set_by_name():
    policy = set_mode(Policy(), registry(), "me", "soft")
    c = confinement(None, "acme-api", groups_of(policy), policy)
    assert c.demoted == {"vendorlib", "stray"} and c.group == "me"


def test_no_cwd_scope_or_a_scope_in_no_group_confines_nothing():
    for cwd in (None, "stray", "not-registered"):
        c = confinement(None, cwd, groups_of(Policy()), Policy())
        assert c.eligible is None and c.demoted is None and not c.strict


def test_groups_with_scopes_but_no_group_says_so_instead_of_promising_a_scan(tmp_path, loci_home):
    from typer.testing import CliRunner

    from conftest import GIZMO, WEBBY, setup_home
    from loci.front.cli import app

    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})   # others' commits, no remote: no owner
    runner = CliRunner()
    assert runner.invoke(app, ["groups", "infer"]).exit_code == 0
    res = runner.invoke(app, ["groups"])
    assert res.exit_code == 0
    assert "no groups yet" not in res.output and "`loci scan` labels" not in res.output
    assert "none of the 2 scopes is in a group" in res.output and "loci group add" in res.output


def test_groups_on_an_empty_home_says_to_register_scopes_first(tmp_path, loci_home):
    from typer.testing import CliRunner

    from loci.front.cli import app

    res = CliRunner().invoke(app, ["groups"])
    assert res.exit_code == 0 and "no scopes registered" in res.output


def test_a_group_whose_last_member_left_is_named_as_empty_not_unknown():
    from loci.kernel.groups import GroupUsageError, Policy, confinement

    policy = Policy(modes={"données": "hard"})
    with pytest.raises(GroupUsageError, match="group 'données' has no members; add one: loci group add SCOPE"):
        confinement("données", None, {"a": {"web"}}, policy)
    with pytest.raises(GroupUsageError, match="unknown group 'nope'"):
        confinement("nope", None, {"a": {"web"}}, policy)


def test_scopes_of_a_group_whose_last_member_left_is_an_empty_list(tmp_path, loci_home):
    import json

    from typer.testing import CliRunner

    from conftest import GIZMO, setup_home
    from loci.front.cli import app

    setup_home(tmp_path / "code", {"gizmo": GIZMO})
    run = CliRunner().invoke
    assert run(app, ["group", "add", "gizmo", "tools"]).exit_code == 0
    assert run(app, ["group", "rm", "gizmo", "tools"]).exit_code == 0
    assert run(app, ["group", "set", "tools", "--mode", "hard"]).exit_code == 0   # `loci groups` lists it
    assert "tools" in run(app, ["groups"]).output
    res = run(app, ["scopes", "--json", "--group", "tools"])
    assert res.exit_code == 0 and json.loads(res.stdout) == []
    assert run(app, ["scopes", "--group", "nope"]).exit_code == 2
