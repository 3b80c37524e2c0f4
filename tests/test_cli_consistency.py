"""The command line read as a whole: every command that narrows its work to some scopes spells it
`--scope NAME` (repeatable), and every command that reports a result a script reads takes `--json`
(its shape the build API's report)."""
from __future__ import annotations

import json

import click
import typer.main

from loci.front.cli import app
from test_readme_commands import built, cli, code, home  # noqa: F401  (fixtures: one built home per module)

NARROWING = ("ask", "export", "push", "graphs", "uses")   # commands whose work some scopes can narrow
REPORTING = ("scopes", "route", "ask", "groups", "calibrate", "eval", "uses", "doctor", "pull", "push", "export",
             "scan", "forget", "graphs", "index", "embed", "update")


def command(name: str) -> click.Command:
    return typer.main.get_command(app).commands[name]


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
