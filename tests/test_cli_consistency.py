"""The command line read as a whole: every command that narrows its work to some scopes spells it
`--scope NAME` (repeatable), and every command that reports a result a script reads takes `--json`
(its shape the build API's report)."""
from __future__ import annotations

import json

import click
import typer.main

from conftest import make_repo
from loci.front.cli import app
from test_readme_commands import built, cli, code, home  # noqa: F401  (fixtures: one built home per module)

NARROWING = ("ask", "export", "push", "pull", "graphs", "uses")   # commands whose work some scopes can narrow
REPORTING = ("scopes", "route", "ask", "groups", "calibrate", "eval", "uses", "doctor", "pull", "push", "export",
             "scan", "forget", "add", "graphs", "index", "setup", "embed", "update", "group set", "group add",
             "group rm")


def command(name: str) -> click.Command:
    """A command by its path (``"group add"``)."""
    cmd = typer.main.get_command(app)
    for word in name.split():
        cmd = cmd.commands[word]
    return cmd


def shown_params(name: str) -> dict[str, click.Parameter]:
    return {p.name: p for p in command(name).params if not getattr(p, "hidden", False)}


def test_every_command_that_narrows_to_scopes_spells_it_scope():
    for name in NARROWING:
        params = shown_params(name)
        assert any("--scope" in p.opts for p in params.values()), name
        shown_args = [p.name for p in params.values() if isinstance(p, click.Argument)]
        assert not any("scope" in a or a == "names" for a in shown_args), (name, shown_args)


def test_every_command_that_reports_a_result_takes_json():
    missing = [name for name in REPORTING if not any("--json" in p.opts for p in command(name).params)]
    assert not missing


def test_push_and_export_select_scopes_the_same_way(home, tmp_path):
    exported = json.loads(cli("export", "--scope", "gizmo", "--to", str(tmp_path / "out"), "--json").stdout)
    pushed = json.loads(cli("push", str(tmp_path / "store"), "--scope", "gizmo", "--json").stdout)
    assert list(exported["exported"]) == ["gizmo"] and pushed["uploaded"] == ["gizmo"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["gizmo"]
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["gizmo"]


def test_the_old_spelling_of_a_scope_selection_still_works_unadvertised(home, tmp_path):
    cli("export", "webby", "--to", str(tmp_path / "out"))          # SCOPES as arguments, as scripts wrote it
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["webby"]
    assert cli("uses", "gizmo").stdout == cli("uses", "--scope", "gizmo").stdout
    for name in ("export", "graphs", "uses"):
        usage = cli(name, "--help").stdout.splitlines()[0]
        assert usage.split() == ["Usage:", "root", name, "[OPTIONS]"], usage   # no argument left to name


def test_graphs_narrows_to_the_scopes_named_either_way(home, monkeypatch):
    from loci_pipeline import build, graphs

    asked = []
    monkeypatch.setattr(graphs, "graphify_available", lambda: True)
    monkeypatch.setattr(build, "graphs", lambda ctx, names, force=False: asked.append(names) or build.GraphsReport())
    cli("graphs", "--scope", "gizmo", "--scope", "webby", "--quiet")
    cli("graphs", "gizmo", "--quiet")
    assert asked == [["gizmo", "webby"], ["gizmo"]]


def test_build_commands_report_their_build_report_as_json(home, code, tmp_path):
    index = json.loads(cli("index", "--json").stdout)
    assert set(index) >= {"rebuilt", "unchanged", "failed"} and sorted(index["unchanged"]) == ["gizmo", "webby"]
    update = json.loads(cli("update", "--no-scan", "--json").stdout)
    assert set(update) >= {"index", "graphs", "embed", "calibrate", "failed"}
    assert update["index"]["failed"] == {}
    embed = json.loads(cli("embed", "--json").stdout)
    assert embed["model_id"] and sorted(embed["unchanged"]) == ["gizmo", "webby"]
    scan = json.loads(cli("scan", str(code), "--json").stdout)
    assert sorted(scan["found"]) == ["gizmo", "webby"]
    forgot = json.loads(cli("forget", "webby", "--no-calibrate", "--json").stdout)
    assert forgot["forgotten"] == ["webby"]


def test_pull_selects_scopes_as_push_does():
    def scope_help(name: str) -> str:
        return next(p.help for p in command(name).params if "--scope" in p.opts)

    assert scope_help("push").startswith("Only this scope (repeatable; default: every ")
    assert scope_help("pull").startswith("Only this scope (repeatable; default: every ")


def test_add_reports_its_add_report_as_json(home, code, tmp_path):
    make_repo(tmp_path / "fresh", {"README.md": "# fresh\n"})
    added = json.loads(cli("add", str(tmp_path / "fresh"), "--alias", "fr", "--json").stdout)
    assert added == {"name": "fresh", "registered": True, "indexed": False}
    again = json.loads(cli("add", str(code / "gizmo"), "--alias", "gz", "--json").stdout)
    assert again == {"name": "gizmo", "registered": False, "indexed": True}


def test_group_edits_report_the_group_with_its_members_as_json(home):
    def edit(*args: str) -> dict:
        return json.loads(cli("group", *args, "--json").stdout)

    assert edit("add", "gizmo", "tools") == {"group": "tools", "mode": "soft", "count": 1, "members": ["gizmo"]}
    assert edit("add", "webby", "tools")["members"] == ["gizmo", "webby"]
    assert edit("set", "tools", "--mode", "hard") == {"group": "tools", "mode": "hard", "count": 2,
                                                       "members": ["gizmo", "webby"]}
    assert edit("rm", "gizmo", "tools")["members"] == ["webby"]
    listed = {g["group"]: g for g in json.loads(cli("groups", "--json").stdout)}
    assert listed["tools"] == {"group": "tools", "mode": "hard", "count": 1, "members": ["webby"]}
    assert edit("set", "empty", "--mode", "explicit") == {"group": "empty", "mode": "explicit", "count": 0,
                                                          "members": []}


def test_a_group_emptied_by_hand_is_reported_with_no_members(home):
    cli("group", "add", "gizmo", "solo")
    left = json.loads(cli("group", "rm", "gizmo", "solo", "--json").stdout)
    assert left == {"group": "solo", "mode": "soft", "count": 0, "members": []}


def test_setup_with_json_asks_nothing_and_prints_its_update_report_alone(tmp_path, loci_home, monkeypatch):
    from loci.front import cli_build

    monkeypatch.setattr(cli_build, "interactive", lambda: True)   # a terminal: yet nothing is asked
    make_repo(tmp_path / "code" / "fresh", {"README.md": "# fresh\n\nA windmill telemetry logger.\n"})
    monkeypatch.chdir(tmp_path / "code")                           # no DIR: the default, as -y takes it
    res = cli("setup", "--json", "--no-graphs", "--no-embed", "--no-calibrate")
    report = json.loads(res.stdout)                                # one document: no doctor printout after it
    assert set(report) >= {"scan", "graphs", "index", "embed", "calibrate", "failed"}
    assert report["scan"]["found"] == ["fresh"] and report["index"]["rebuilt"] == ["fresh"]
    assert report["index"]["failed"] == {} and report["embed"] is None


def test_setup_with_json_finding_no_repository_prints_the_failure_as_an_object(tmp_path, loci_home):
    (tmp_path / "empty").mkdir()
    res = cli("setup", str(tmp_path / "empty"), "--json", "--no-graphs", "--no-embed", code=1)
    out = json.loads(res.stdout)
    assert set(out) == {"error", "hint"} and "no git repositories" in out["error"]


def test_a_build_command_with_json_prints_its_failure_as_an_object(home, tmp_path):
    res = cli("push", str(tmp_path / "store"), "--scope", "nosuch", "--json", code=None)
    assert res.exit_code != 0
    out = json.loads(res.stdout)
    assert set(out) == {"error", "hint"} and "nosuch" in out["error"]



def test_hook_status_and_groups_infer_report_json(home, code):
    states = json.loads(cli("hook", "status", str(code / "gizmo"), "--json").stdout)
    assert {s["hook"] for s in states} == {"post-commit", "post-merge", "post-checkout"}
    assert {s["state"] for s in states} == {"absent"} and all(s["repo"].endswith("gizmo") for s in states)
    owners = json.loads(cli("groups", "infer", "--json").stdout)
    assert set(owners["owners"]) == {"gizmo", "webby"}
