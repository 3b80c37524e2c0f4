"""With --json, every failure is one JSON object on stdout ({"error", "hint"}) and the exit code
is the one the text form exits with."""
import json

import click
import pytest
import typer.main

from conftest import GIZMO, WEBBY, setup_home
from loci.front.cli import app, main


def json_commands() -> list[tuple[str, ...]]:
    """The command path of every command (and group callback) that takes --json."""
    out = []

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        if any("--json" in p.opts for p in cmd.params):
            out.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, path + (name,))
    walk(typer.main.get_command(app), ())
    return out


# a bad input for each command that takes --json (a new one needs its own line here): its
# arguments, the exit code, and what is damaged in the home first
BAD = {
    ("scopes",): (["--group", "nosuch"], 2, None),
    ("route",): (["--no-cwd", "--group", "nosuch", "anything"], 2, None),
    ("ask",): (["--no-cwd", "--scope", "nosuch", "anything"], 2, None),
    ("groups",): ([], 1, "groups.json"),
    ("pull",): (["/no/such/folder"], 2, None),   # a local folder that is not there: bad input
    ("calibrate",): ([], 1, "home"),   # LOCI_HOME is a file: nothing can be written
    ("eval",): (["--questions", "/no/such/questions.jsonl"], 2, None),
    ("uses",): (["nosuch"], 2, None),
    ("push",): (["/tmp/loci-never-written", "--scope", "nosuch"], 2, None),
    ("export",): (["--to", "/tmp/loci-never-written", "--scope", "nosuch"], 2, None),
    ("graphs",): ([], 1, "home"),   # (or, without graphify, the extra it needs: exit 1 too)
    ("forget",): (["nosuch"], 2, None),
    ("scan",): (["/no/such/folder"], 2, None),
    ("add",): (["/no/such/folder"], 2, None),
    ("setup",): (["/no/such/folder"], 1, "home"),
    ("index",): ([], 1, "home"),
    ("embed",): ([], 1, "home"),
    ("update",): ([], 1, "home"),
    ("hook", "status"): (["nosuch"], 2, None),
    ("groups", "infer"): ([], 1, "home"),
    ("group", "set"): (["tools", "--mode", "bogus"], 2, None),
    ("group", "add"): (["nosuch", "tools"], 2, None),
    ("group", "rm"): (["gizmo", "nosuch"], 2, None),
}
# doctor reports a damaged home as findings (its JSON output), never as an error, and
# `server status` reports whatever engine state it finds; a bad command line is the only
# failure they have
NO_BAD_INPUT = {("doctor",), ("server", "status")}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    tmp = tmp_path_factory.mktemp("json-errors")
    mp.setenv("LOCI_HOME", str(tmp / "home"))
    from conftest import GIT_ENV
    for k, v in GIT_ENV.items():
        mp.setenv(k, v)
    setup_home(tmp / "code", {"gizmo": GIZMO, "webby": WEBBY})
    yield tmp / "home"
    mp.undo()


def run_main(argv, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    out = capsys.readouterr()
    return done.value.code or 0, out.out, out.err


def test_every_json_command_has_a_bad_input_here():
    assert set(json_commands()) == set(BAD) | NO_BAD_INPUT


@pytest.mark.parametrize("path", sorted(BAD))
def test_a_failure_with_json_is_one_object_on_stdout_with_the_same_exit_code(path, home, capsys, monkeypatch):
    args, code, damage = BAD[path]
    if damage == "home":
        (home.parent / "a-file").write_text("")
        monkeypatch.setenv("LOCI_HOME", str(home.parent / "a-file"))
    elif damage:
        original = (home / damage).read_bytes() if (home / damage).exists() else None
        (home / damage).write_text("{not json")
    try:
        text_code, _, text_err = run_main([*path, *args], capsys)
        json_code, out, err = run_main([*path, "--json", *args], capsys)
    finally:
        if damage and damage != "home":
            (home / damage).unlink() if original is None else (home / damage).write_bytes(original)
    assert text_code == json_code == code, (text_err, out, err)
    obj = json.loads(out)
    assert isinstance(obj, dict) and set(obj) == {"error", "hint"} and obj["error"], obj
    assert obj["error"] in text_err and not err


@pytest.mark.parametrize("path", sorted(set(BAD) | NO_BAD_INPUT))
def test_a_bad_command_line_with_json_is_one_object_too(path, home, capsys):
    code, out, _ = run_main([*path, "--json", "--no-such-option"], capsys)
    assert code == 2 and "--no-such-option" in json.loads(out)["error"]


def test_the_hint_is_the_fix_after_the_semicolon(home, capsys):
    _, out, _ = run_main(["ask", "--json", "--no-cwd", "--scope", "nosuch", "anything"], capsys)
    obj = json.loads(out)
    assert obj["error"] == "unknown scope 'nosuch'" and "gizmo" in obj["hint"] and "webby" in obj["hint"]
