"""The MCP server: exactly three tools over stdio, one warm session, errors as tool errors."""
import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import GIT_ENV, git, make_repo
from loci.front.cli import app
from loci.front.mcp_server import MCP_HINT, Service, ToolFailure

runner = CliRunner()
SERVER = [sys.executable, "-c", "from loci.front.cli import main; main()", "mcp"]
QUESTION = "how do I calibrate a sprocket gauge?"


def build_home(base: Path) -> Path:
    """Two tiny repositories, set up (no code graphs) into base/home."""
    make_repo(base / "code" / "gizmo", {
        "README.md": "# gizmo\n\nA sprocket calibration toolkit.\n\n## Install\n\npip install gizmo\n",
        "gizmo/sprocket.py": "def calibrate_sprocket(x):\n    \"\"\"Calibrate one sprocket gauge.\"\"\"\n"
                             "    return x\n",
    })
    make_repo(base / "code" / "webby", {
        "README.md": "# webby\n\nServe cookies and sessions over HTTP with redirects.\n",
        "webby/server.py": "class SessionCookieJar:\n    def redirect(self):\n        pass\n",
    })
    home = base / "home"
    res = runner.invoke(app, ["setup", str(base / "code"), "-y", "--quiet", "--no-graphs", "--no-embed", "--no-calibrate"],
                        env={"LOCI_HOME": str(home)})
    assert res.exit_code == 0, res.output
    return home


def cli_json(home: Path, *args: str):
    res = runner.invoke(app, list(args), env={"LOCI_HOME": str(home)})
    assert res.exit_code == 0 or args[0] == "doctor" and res.exit_code == 1, res.output  # doctor: 1 = gaps
    return json.loads(res.output)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return build_home(tmp_path_factory.mktemp("mcp"))


# ---------------------------------------------------------------- the service, in process

def test_ask_tool_returns_what_ask_json_prints(home):
    tool = json.loads(Service(home).call("ask", question=QUESTION, cwd=""))
    assert tool == cli_json(home, "ask", "--json", "--no-cwd", QUESTION)
    assert tool["outcome"] == "routed" and tool["blocks"][0]["scope"] == "gizmo"


def test_ask_tool_takes_cwd_scope_and_group_like_the_cli(home):
    service = Service(home)
    webby = str(home.parent / "code" / "webby")
    assert json.loads(service.call("ask", question="how do I install it?", cwd=webby))["scopes"][0] == "webby"
    forced = json.loads(service.call("ask", question="sprocket calibration", scope="webby", cwd=""))
    assert forced["scopes"] == ["webby"]


def test_scopes_tool_returns_what_scopes_json_prints(home):
    tool = json.loads(Service(home).call("scopes"))
    assert tool == cli_json(home, "scopes", "--json")
    assert sorted(row["name"] for row in tool) == ["gizmo", "webby"]


@pytest.mark.parametrize("arguments, words", [
    ({"question": "   "}, "empty"),
    ({"question": "anything", "scope": "nope"}, "unknown scope"),
    ({"question": "anything", "group": "nope"}, "unknown group"),
    ({"question": "anything", "k": 0}, "k must be"),
])
def test_a_bad_call_is_a_one_line_tool_failure(home, arguments, words):
    with pytest.raises(ToolFailure) as info:
        Service(home).call("ask", **arguments)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_cwd_holding_a_nul_is_a_clear_failure_and_logs_no_traceback(home, monkeypatch):
    import loci.front.mcp_server

    logged = []
    monkeypatch.setattr(loci.front.mcp_server, "_log", logged.append)
    with pytest.raises(ToolFailure) as info:
        Service(home).call("ask", question="anything", cwd="/tmp/a\x00b")
    assert "NUL" in str(info.value) and "internal error" not in str(info.value)
    assert logged == []


def test_no_index_yet_is_a_tool_failure_naming_setup(tmp_path):
    with pytest.raises(ToolFailure, match="loci setup"):
        Service(tmp_path / "empty-home").call("ask", question="anything")


def test_doctor_tool_returns_what_doctor_json_prints(home):
    tool = json.loads(Service(home).call("doctor"))
    assert isinstance(tool, list) and tool == cli_json(home, "doctor", "--json")


def test_boot_warms_the_routing_index_and_the_largest_scopes(home):
    session = Service(home, warm_scopes=1).session()
    assert session._routing is not None and session._routing.complete
    assert list(session._lexical) == ["gizmo"]   # gizmo has more chunks than webby


def test_a_rebuild_is_served_without_restarting(tmp_path):
    home = build_home(tmp_path)
    service = Service(home)
    first = service.session()
    assert service.session() is first            # nothing changed: the warm session is kept
    question = "where is the quasar frobnicator defined?"
    before = json.loads(service.call("ask", question=question, cwd=""))
    repo = tmp_path / "code" / "gizmo"
    (repo / "docs.md").write_text("# Quasar\n\nThe quasar frobnicator lives in gizmo/quasar.py.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "quasar frobnicator")
    res = runner.invoke(app, ["index", "--quiet"], env={"LOCI_HOME": str(home)})
    assert res.exit_code == 0, res.output
    after = json.loads(service.call("ask", question=question, cwd=""))
    assert service.session() is not first
    texts = [e["text"] for b in after["blocks"] for e in b["episodes"]]
    assert any("quasar" in t.lower() for t in texts)
    assert not any("quasar" in e["text"].lower() for b in before["blocks"] for e in b["episodes"])


# ---------------------------------------------------------------- the command

def test_mcp_without_the_extra_names_the_install_command(home, monkeypatch):
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")] + ["mcp"]:
        monkeypatch.setitem(sys.modules, name, None)
    res = runner.invoke(app, ["mcp"], env={"LOCI_HOME": str(home)})
    assert res.exit_code == 1
    assert "pip install 'loci-scopes[mcp]'" in res.output and MCP_HINT in res.output
    assert "Traceback" not in res.output


def test_cli_help_does_not_import_the_mcp_sdk():
    probe = ("import sys\nfrom loci.front.cli import app\n"
             "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
             "print('MCP-LOADED' if any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules) else 'MCP-ABSENT')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert "mcp " in out and out.strip().endswith("MCP-ABSENT")


# ---------------------------------------------------------------- the server, for real

def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def is_error(result) -> bool:
    flag = getattr(result, "is_error", None)
    return bool(result.isError if flag is None else flag)


def talk(home: Path, tmp_path: Path, body, timeout: float = 40.0):
    """Start `loci mcp` on stdio, run ``body(session)`` against it, and return what it returns."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], cwd=str(tmp_path),
                                   env={"LOCI_HOME": str(home), "HF_HUB_OFFLINE": "1", **GIT_ENV,
                                        "PYTHONPATH": str(Path(__file__).resolve().parents[1])})  # this checkout's code
    errlog_path = tmp_path / "server-stderr.log"

    async def main():
        with open(errlog_path, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    try:
        return asyncio.run(asyncio.wait_for(main(), timeout))
    except BaseException:
        print(errlog_path.read_text() if errlog_path.exists() else "(no server log)")
        raise


def test_server_lists_exactly_three_tools_and_answers_ask(home, tmp_path):
    async def body(session):
        tools = await session.list_tools()
        first = await session.call_tool("ask", {"question": QUESTION})
        second = await session.call_tool("ask", {"question": "which project serves cookies over HTTP?"})
        scopes = await session.call_tool("scopes", {})
        return tools, first, second, scopes

    tools, first, second, scopes = talk(home, tmp_path, body)
    assert sorted(t.name for t in tools.tools) == ["ask", "doctor", "scopes"]
    assert not is_error(first) and not is_error(second)
    out = json.loads(text_of(first))
    assert {"outcome", "scopes", "reason", "candidates", "scores", "blocks"} <= set(out)
    assert out["scopes"][0] == "gizmo"
    episode = out["blocks"][0]["episodes"][0]
    assert set(episode) == {"text", "source", "line", "kind", "score"}
    assert json.loads(text_of(second))["scopes"][0] == "webby"
    assert sorted(r["name"] for r in json.loads(text_of(scopes))) == ["gizmo", "webby"]


def test_a_bad_call_is_a_tool_error_and_the_server_keeps_running(home, tmp_path):
    async def body(session):
        empty = await session.call_tool("ask", {"question": "  "})
        unknown = await session.call_tool("ask", {"question": "anything", "scope": "nope"})
        after = await session.call_tool("ask", {"question": QUESTION, "cwd": ""})
        return empty, unknown, after

    empty, unknown, after = talk(home, tmp_path, body)
    for result, words in ((empty, "empty"), (unknown, "unknown scope 'nope'")):
        assert is_error(result)
        failure = json.loads(text_of(result))
        assert words in failure["error"] and "\n" not in failure["error"]
        assert "Traceback" not in text_of(result) and "Error executing tool" not in text_of(result)
    assert not is_error(after) and json.loads(text_of(after))["outcome"] == "routed"


def cli_failure(home: Path, *args: str) -> dict:
    """The object `loci ... --json` prints for a failure (a usage error: exit code 2)."""
    res = runner.invoke(app, list(args), env={"LOCI_HOME": str(home)})
    assert res.exit_code == 2, res.output
    return json.loads(res.stdout)


def test_a_failing_mcp_tool_returns_the_error_object_the_cli_prints(home, tmp_path):
    missing = str(tmp_path / "no-such-dir")

    async def body(session):
        return [await session.call_tool("ask", arguments) for arguments in (
            {"question": "anything", "scope": "nosuch"},
            {"question": "anything", "group": "nosuch"},
            {"question": "   "},
            {"question": QUESTION, "cwd": missing},
        )]

    scope, group, empty, cwd = talk(home, tmp_path, body)
    assert all(is_error(result) for result in (scope, group, empty, cwd))
    assert json.loads(text_of(scope)) == cli_failure(home, "ask", "--json", "--scope", "nosuch", "anything")
    assert json.loads(text_of(group)) == cli_failure(home, "ask", "--json", "--group", "nosuch", "anything")
    assert json.loads(text_of(empty)) == cli_failure(home, "ask", "--json", "   ")
    assert set(json.loads(text_of(cwd))) == {"error", "hint"}
    assert json.loads(text_of(cwd))["error"] == f"cwd {missing}: no such directory"


def test_a_wrong_argument_type_is_one_line_naming_the_argument_and_the_type_expected(home, tmp_path):
    async def body(session):
        return [await session.call_tool(tool, arguments) for tool, arguments in (
            ("ask", {"question": 42}),
            ("ask", {"question": "anything", "k": "five"}),
            ("ask", {"question": "anything", "cwd": ["/tmp"]}),
            ("ask", {}),
            ("scopes", {"group": 3}),
            ("nosuch", {}),
        )]

    *results, unknown = talk(home, tmp_path, body)
    assert is_error(unknown) and json.loads(text_of(unknown)) == {
        "error": "unknown tool 'nosuch'", "hint": "tools: ask, scopes, doctor"}
    expected = [("question", "a string", "a number"), ("k", "a whole number", "a string"),
                ("cwd", "a string", "an array"), ("question", "a string", "required"),
                ("group", "a string", "a number")]
    for result, (argument, kind, got) in zip(results, expected):
        assert is_error(result)
        failure = json.loads(text_of(result))
        assert set(failure) == {"error", "hint"}
        assert f"`{argument}`" in failure["error"] and kind in failure["error"] and got in failure["error"]
        assert "\n" not in failure["error"] and "pydantic" not in text_of(result)
        assert "validation error" not in text_of(result)


def test_a_number_given_as_a_string_or_a_boolean_is_a_usage_error_not_read_as_a_number(home, tmp_path):
    async def body(session):
        tools = await session.list_tools()
        calls = [await session.call_tool("ask", arguments) for arguments in (
            {"question": QUESTION, "cwd": "", "k": "3"},
            {"question": QUESTION, "cwd": "", "k": "3_0"},
            {"question": QUESTION, "cwd": "", "k": True},
            {"question": QUESTION, "cwd": "", "k": 2.0},
            {"question": QUESTION, "cwd": "", "kk": 3},
            {"question": QUESTION, "cwd": "", "k": 1},
        )]
        return tools, calls

    tools, (*refused, one) = talk(home, tmp_path, body)
    schema = next(t for t in tools.tools if t.name == "ask")
    schema = getattr(schema, "inputSchema", None) or schema.input_schema
    assert schema["properties"]["k"]["type"] == "integer" and schema["required"] == ["question"]
    expected = ['`k` must be a whole number, not a string ("3")', '`k` must be a whole number, not a string ("3_0")',
                "`k` must be a whole number, not a boolean (true)", "`k` must be a whole number, not a number (2.0)",
                "no argument `kk`"]
    for result, words in zip(refused, expected):
        assert is_error(result), text_of(result)
        failure = json.loads(text_of(result))
        assert set(failure) == {"error", "hint"} and words in failure["error"], failure
        assert failure["hint"].startswith("ask takes question (a string), ") and "k (a whole number)" in failure["hint"]
    assert not is_error(one)
    assert [len(b["episodes"]) for b in json.loads(text_of(one))["blocks"]] == [1]   # k=1 is honoured


def test_a_wrong_argument_type_in_process_is_the_same_one_line_failure(home):
    with pytest.raises(ToolFailure) as info:
        Service(home).call("ask", question=42)
    assert "`question` must be a string, not a number (42)" in str(info.value)


def test_an_mcp_cwd_naming_no_directory_is_a_usage_error_as_the_cli_makes_it(home, tmp_path):
    for cwd in (str(tmp_path / "gone"), str(tmp_path / "a-file")):
        (tmp_path / "a-file").write_text("not a directory")
        with pytest.raises(ToolFailure) as info:
            Service(home).call("ask", question=QUESTION, cwd=cwd)
        assert str(info.value).startswith(f"cwd {cwd}: no such directory") and "\n" not in str(info.value)


def test_mcp_ask_with_a_scope_outside_the_group_fails_as_the_cli_does(tmp_path):
    home = build_home(tmp_path)
    res = runner.invoke(app, ["group", "add", "webby", "web"], env={"LOCI_HOME": str(home)})
    assert res.exit_code == 0, res.output
    with pytest.raises(ToolFailure) as failed:
        Service(home).call("ask", question=QUESTION, scope="gizmo", group="web", cwd="")
    cli = runner.invoke(app, ["ask", "--json", "--no-cwd", "--scope", "gizmo", "--group", "web", QUESTION],
                        env={"LOCI_HOME": str(home), "LOCI_SERVER": "off"})
    assert cli.exit_code == 2 and json.loads(cli.stdout) == failed.value.to_json()
    assert "not in group 'web'" in failed.value.to_json()["error"]
    inside = json.loads(Service(home).call("ask", question=QUESTION, scope="webby", group="web", cwd=""))
    assert inside["scopes"] == ["webby"]
