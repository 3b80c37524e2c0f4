"""The entry point answers a plain `route`/`ask` without typer, the same as the typer commands."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conftest import setup_home
from loci.front import oneshot
from loci.front.cli import app


@pytest.fixture
def corpus(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {
        "gizmo": {"README.md": "# gizmo\n\nA sprocket calibration toolkit.\n",
                  "gizmo/sprocket.py": "def calibrate_sprocket(x):\n    return x\n"},
        "webby": {"README.md": "# webby\n\nServe cookies and sessions over HTTP with redirects.\n",
                  "webby/server.py": "class SessionCookieJar:\n    pass\n"},
    })


def _entry(args: list[str], probe: str = "") -> subprocess.CompletedProcess:
    code = ("import sys\nfrom loci.front.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
            f"    {probe or 'pass'}\n    raise\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=os.environ)


@pytest.mark.parametrize("args", [["route", "--json", "--no-cwd", "how do I calibrate a sprocket?"],
                                  ["ask", "--no-cwd", "--k", "2", "sessions and cookies over HTTP"],
                                  ["route", "--explain", "--no-cwd", "what is a sprocket?"]])
def test_a_plain_route_or_ask_prints_what_the_typer_command_prints_without_loading_typer(corpus, args):
    got = _entry(args, probe="print('typer' in sys.modules, file=sys.stderr)")
    want = CliRunner().invoke(app, args)
    assert got.returncode == want.exit_code == 0, got.stderr
    assert got.stdout == want.output
    assert got.stderr.strip().splitlines()[-1] == "False"


def test_an_expected_error_is_one_line_and_its_exit_code_without_typer(tmp_path, loci_home):
    got = _entry(["route", "--fast", "--no-cwd", "anything"], probe="print('typer' in sys.modules)")
    assert got.returncode != 0
    assert got.stderr.startswith("loci: no index yet") and len(got.stderr.strip().splitlines()) == 1
    assert got.stdout.strip() == "False"


@pytest.mark.parametrize("argv", [["route", "--help"], ["ask", "--k", "99", "q"], ["route", "a", "b"],
                                  ["route", "--no-such-option", "q"], ["route", "--ex", "q"], ["scopes"], [],
                                  ["ask", "--k", "two", "q"], ["ask", "q", "--scope"], ["route", "--fast=1", "q"],
                                  ["route"], ["ask", "--explain", "q"]])
def test_help_a_bad_value_or_another_command_is_left_to_typer(argv):
    assert oneshot.parse(argv) is None


def test_the_quick_parser_knows_exactly_the_typer_commands_options():
    import click
    import typer.main

    group = typer.main.get_command(app)
    for name in oneshot.COMMANDS:
        typer_opts = {o for p in group.commands[name].params if isinstance(p, click.Option) for o in p.opts}
        typer_opts.discard("--help")
        quick = set(oneshot.OPTIONS[name])
        assert quick == typer_opts, name




@pytest.mark.parametrize("argv, expected", [
    (["ask", "--k=3", "q", "--scope", "gizmo"], {"k": 3, "scope": "gizmo", "question": "q"}),
    (["route", "--json", "--", "--weird question"], {"as_json": True, "question": "--weird question"}),
    (["route", "--group", "work", "--group=home", "q"], {"group": "home", "question": "q"}),
    (["ask", "--cwd", "/tmp/x", "--no-cwd", "--fast", "q"],
     {"no_cwd": True, "fast": True, "question": "q", "k": 5}),
])
def test_the_quick_parser_reads_what_typer_reads(argv, expected):
    command, kwargs = oneshot.parse(argv)
    assert command is oneshot.COMMANDS[argv[0]]
    assert {k: kwargs[k] for k in expected} == expected
    if "--cwd" in argv:
        assert kwargs["cwd"] == "/tmp/x"   # made absolute against the client's directory when asked



def test_a_lexical_one_shot_route_loads_no_module_it_does_not_use(corpus):
    """argparse, OpenSSL's hashlib, typer and numpy each cost a one-shot command milliseconds."""
    probe = "print(sorted(m for m in ('argparse', 'hashlib', 'typer', 'numpy', 'pyarrow') if m in sys.modules))"
    got = _entry(["route", "--fast", "--no-cwd", "how do I calibrate a sprocket?"], probe=probe)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip().splitlines()[-1] == "[]"


def test_a_plain_ask_on_a_home_without_vectors_imports_no_numpy(corpus):
    """Without embeddings the answer is lexical: numpy (and pyarrow) must not be paid for."""
    probe = "print(sorted(m for m in ('numpy', 'pyarrow') if m in sys.modules))"
    got = _entry(["ask", "--no-cwd", "sessions and cookies over HTTP"], probe=probe)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip().splitlines()[-1] == "[]"


def test_a_question_asked_from_a_deleted_directory_is_answered_as_without_cwd(corpus, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys\nos.chdir(sys.argv[1]); os.rmdir(sys.argv[1])\nfrom loci.front.cli import main\n"
            "main(sys.argv[2:])\n")
    for args in (["route", "--json", "how do I calibrate a sprocket?"], ["ask", "how do I calibrate a sprocket?"]):
        got = subprocess.run([sys.executable, "-c", code, str(gone), *args], capture_output=True, text=True,
                             env={**os.environ, "LOCI_SERVER": "off"})
        gone.mkdir()
        assert got.returncode == 0, got.stderr
        assert "Traceback" not in got.stderr
        assert "no longer exists" in got.stderr and "gizmo" in got.stdout


def test_cwd_naming_no_directory_is_a_usage_error(corpus, tmp_path):
    got = _entry(["route", "--cwd", str(tmp_path / "nowhere"), "what is a sprocket?"])
    assert got.returncode == 2
    assert got.stderr.startswith("loci: --cwd") and "no such directory" in got.stderr


def test_a_bad_cwd_is_left_to_the_in_process_path_which_reports_it_in_one_line_with_the_engine_on(tmp_path):
    class Client:   # an engine that would answer anything: a bad --cwd must never reach it
        class NoServer(Exception):
            pass

        def ask(self, *a, **kw):
            raise AssertionError("the engine was asked")

    kwargs = {"question": "q", "cwd": str(tmp_path / "nowhere"), "no_cwd": False, "group": None, "fast": False,
              "explain": False, "as_json": False}
    assert oneshot._through_engine(Client(), str(tmp_path), "route", kwargs) == (None, None)
