"""What `loci --help`, `loci CMD --help` and a bad command line tell a user: every argument says
what it is, defaults are the real ones, and a command line loci cannot read is one line with
exit code 2 that names the help to read."""
from __future__ import annotations

import re

import click
import pytest
import typer.main
from typer.testing import CliRunner

from loci.front.cli import app, main

runner = CliRunner()


def leaf_commands() -> list[list[str]]:
    """The path of every command that runs something (``["group", "add"]``, ``["ask"]``...)."""
    found = []

    def walk(cmd, path):
        if isinstance(cmd, click.Group) and cmd.commands:
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])
        if cmd.params and path:
            found.append(path)

    walk(typer.main.get_command(app), [])
    return found


def section(text: str, title: str) -> list[str]:
    """The lines of one section of a help text (``Arguments:``), up to the next blank line."""
    if f"\n{title}:\n" not in text:
        return []
    return text.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0].splitlines()


def test_every_argument_says_what_it_is_in_its_commands_help():
    silent = []
    for path in leaf_commands():
        out = runner.invoke(app, [*path, "--help"], terminal_width=200).output
        for line in section(out, "Arguments"):
            if line.startswith("    "):
                continue   # a wrapped description
            said = re.sub(r"\[required\]", "", line.strip().split(None, 1)[1] if " " in line.strip() else "")
            if not said.strip():
                silent.append(f"loci {' '.join(path)}: {line.strip()}")
    assert silent == []


def test_an_arguments_default_is_stated_where_it_has_one():
    out = runner.invoke(app, ["setup", "--help"], terminal_width=200).output
    assert "Folders holding your repositories" in out and "the current directory" in out
    assert "every scope" in runner.invoke(app, ["graphs", "--help"], terminal_width=200).output


def test_hook_status_says_it_looks_at_every_registered_repository_by_default():
    out = runner.invoke(app, ["hook", "status", "--help"], terminal_width=200).output
    described = " ".join(section(out, "Arguments"))
    assert "every registered" in described and "run in" not in described
    install = " ".join(section(runner.invoke(app, ["hook", "install", "--help"], terminal_width=200).output,
                               "Arguments"))
    assert "the repository this command is run in" in install


def test_the_question_commands_show_an_example():
    for command in ("ask", "route", "setup"):
        out = runner.invoke(app, [command, "--help"], terminal_width=200).output
        assert re.search(rf"^\s+loci {command} .+", out, re.M), out


def test_mcp_help_names_its_three_tools():
    out = runner.invoke(app, ["mcp", "--help"], terminal_width=200).output
    assert all(tool in out for tool in ("ask", "scopes", "doctor"))


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    out = capsys.readouterr()
    return exited.value.code, out.out, out.err


@pytest.mark.parametrize("args, words", [
    (["ask", "--scop", "x"], "--scope"),
    (["ask", "--k", "0", "x"], "1<=x<=50"),
    (["frobnicate"], "frobnicate"),
    (["group", "set", "g"], "--mode"),
    (["scopes", "extra"], "extra"),
    (["hook", "instal"], "install"),
])
def test_a_command_line_loci_cannot_read_is_one_line_with_exit_code_2(capsys, loci_home, args, words):
    code, out, err = run_main(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("loci: ") and words in err, err
    assert "--help`" in err and "Traceback" not in err
    assert err.count("Did you mean") <= 1


def test_an_unquoted_question_is_told_to_be_quoted(capsys, loci_home):
    code, _out, err = run_main(capsys, "ask", "how", "do", "I", "retry", "--scope", "x")
    assert code == 2 and "quote" in err and err.count("\n") == 1


def test_a_bad_command_line_with_json_is_the_error_object_with_the_help_as_hint(capsys, loci_home):
    import json

    code, out, err = run_main(capsys, "scopes", "--json", "--bogus")
    obj = json.loads(out)
    assert code == 2 and err == "" and "--bogus" in obj["error"] and "loci scopes --help" in obj["hint"]


def test_a_group_with_no_subcommand_still_shows_its_help(capsys, loci_home):
    code, out, err = run_main(capsys, "hook")
    assert "install" in out + err and "Usage:" in out + err


def test_scanning_only_missing_folders_is_a_usage_error(tmp_path, loci_home):
    res = runner.invoke(app, ["scan", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such directory" in res.output


def test_server_status_with_the_server_off_does_not_promise_one(loci_home, monkeypatch):
    monkeypatch.setenv("LOCI_SERVER", "off")
    out = runner.invoke(app, ["server", "status"]).output
    assert "starts one" not in out and "LOCI_SERVER=off" in out
    monkeypatch.delenv("LOCI_SERVER")
    assert "the next question starts one" in runner.invoke(app, ["server", "status"]).output


def test_export_to_a_file_is_a_usage_error(tmp_path, loci_home):
    (tmp_path / "a-file").write_text("x")
    res = runner.invoke(app, ["export", "--to", str(tmp_path / "a-file")])
    assert res.exit_code == 2 and "is a file, not a folder" in res.output


def test_adding_a_registered_directory_again_before_it_is_indexed_says_it_is_registered(tmp_path, loci_home):
    from conftest import make_repo

    repo = make_repo(tmp_path / "fresh", {"README.md": "# fresh\n"})
    assert "registered fresh; run `loci index`" in runner.invoke(app, ["add", str(repo)]).output
    again = runner.invoke(app, ["add", str(repo), "--alias", "newname"]).output
    assert "registered already" in again and "newname" in again and "loci index" in again
