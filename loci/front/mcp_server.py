"""The MCP server: three tools (ask, scopes, doctor) on stdio, over one warm Session.

Each tool returns the JSON text the matching ``loci ... --json`` command prints.
An expected failure (empty question, unknown scope or group, no index) comes
back as a one-line tool error and the server keeps running. The Session is
warmed at boot and replaced when a rebuild lands (the manifest's
``written_at`` moves), so a long-lived server never answers from stale
artifacts. ``mcp`` is imported only by ``build_server``/``serve``.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Callable

from loci.kernel.dist import install_hint
from loci.kernel.errors import LociError, UsageError
from loci.query.engine import WARM_SCOPES, Engine, one_line

MCP_HINT = f"the MCP server needs the `mcp` extra: {install_hint('mcp')}"
MAX_K = 50

INSTRUCTIONS = (
    "loci is the user's local memory of their repositories. Call `ask` with the question "
    "and `cwd` set to the project directory the user is working in; it picks the "
    "repositories the question is about and returns cited passages (path:line) and code "
    "symbols. outcome 'abstained' is an answer: read `reason` and `candidates`, then "
    "retry with `scope` set to a candidate rather than rephrasing. `same_content` names "
    "identical copies of a chosen repository (another clone at the same commit): the answer holds "
    "for them too. To learn what an unfamiliar project is, ask it plainly with its `cwd`: 'what does "
    "this project do?', 'how do I use this?', 'what changed recently?' open with its README, usage "
    "section, newest commits. `scopes` lists what is registered; `doctor` reports coverage gaps and the fix for each."
)
ASK_DOC = (
    "Route a question to the repositories it is about and answer from their docs, "
    "comments, commits and code structure (the object `loci ask --json` prints). "
    "cwd: the directory the question is asked from, the strongest routing signal "
    "(default: the server's working directory; \"\" for none). scope: skip routing and "
    "answer from this scope. group: confine routing to a group's members. "
    "k: results per scope (1-50)."
)
SCOPES_DOC = ("List the registered scopes with path, owner, kind, groups and aliases "
              "(the list `loci scopes --json` prints); group: only that group's members.")
DOCTOR_DOC = ("Report coverage gaps per scope (unindexed, stale, no graph, no vectors) "
              "and the command that fixes each (what `loci doctor --json` prints).")


class MissingExtra(LociError, RuntimeError):
    """The ``mcp`` package is not installed; the message names the install command."""


class ToolFailure(Exception):
    """A tool call failed in a way the caller can fix; the message is one line."""


def _log(msg: str) -> None:
    """Server diagnostics go to stderr: stdout carries the protocol."""
    print(f"loci mcp: {msg}", file=sys.stderr, flush=True)


class Service:
    """The tools' logic, a front end of one warm ``Engine`` (``loci.query.engine``), whose
    Session is warmed when first made and replaced after a rebuild."""

    TOOLS = ("ask", "scopes", "doctor")

    def __init__(self, home: str | os.PathLike | None = None, *, warm_scopes: int = WARM_SCOPES):
        self.engine = Engine(home, warm_scopes=warm_scopes, log=_log)
        self.layout = self.engine.layout

    def session(self):
        """The engine's current Session: the same object until the artifacts on disk change."""
        return self.engine.session()

    # ------------------------------------------------------------ the tools
    def ask(self, question: str, cwd: str | None = None, group: str | None = None,
            scope: str | None = None, k: int = 5) -> dict:
        if not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise UsageError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
        where = _server_cwd() if cwd is None else (Path(cwd).expanduser() if str(cwd).strip() else None)
        args = {"question": question, "cwd": where, "scope": scope or None, "group": group or None, "k": k}
        return self.engine.answer("ask", args, as_json=True)["json"]

    def scopes(self, group: str | None = None) -> list[dict]:
        from loci.front.listing import scopes_listing

        return scopes_listing(self.layout, group or None)

    def doctor(self) -> list[dict]:
        from loci.front.doctor import diagnose

        return [finding.to_json() for finding in diagnose(self.layout)]

    def call(self, tool: str, **arguments: Any) -> str:
        """Run one tool and return its JSON text; any failure becomes a one-line ToolFailure."""
        if tool not in self.TOOLS:
            raise ToolFailure(f"unknown tool {tool!r}; tools: {', '.join(self.TOOLS)}")
        try:
            out = getattr(self, tool)(**arguments)
        except LociError as exc:
            raise ToolFailure(one_line(exc)) from None
        except Exception as exc:
            _log(f"{tool} failed:\n{traceback.format_exc()}")
            raise ToolFailure(f"internal error in {tool} ({type(exc).__name__}): {one_line(exc)}") from None
        return json.dumps(out, indent=2, ensure_ascii=False)


def _server_cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:   # the directory the server started in was removed
        return None


# ---------------------------------------------------------------- the protocol

def load_server_class() -> tuple[type, type[Exception]]:
    """The SDK's high-level server class and its ToolError (mcp 2.x, else 1.x); MissingExtra if absent."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        return MCPServer, ToolError
    except ImportError:
        pass
    try:
        from mcp.server.fastmcp import FastMCP
        from mcp.server.fastmcp.exceptions import ToolError
        return FastMCP, ToolError
    except ImportError:
        raise MissingExtra(MCP_HINT) from None


def _register(server, name: str, description: str, fn: Callable) -> None:
    try:
        server.tool(name=name, description=description, structured_output=False)(fn)
    except TypeError:   # an SDK older than structured output
        server.tool(name=name, description=description)(fn)


def build_server(service: Service):
    """An MCP server exposing exactly ``ask``, ``scopes`` and ``doctor`` over ``service``."""
    server_cls, tool_error = load_server_class()
    from loci.kernel.dist import installed_version

    version = installed_version() or "0+source"
    try:
        server = server_cls(name="loci", version=version, instructions=INSTRUCTIONS, log_level="WARNING")
    except TypeError:  # an SDK whose server class takes no version: set it on the low-level server
        server = server_cls(name="loci", instructions=INSTRUCTIONS, log_level="WARNING")
        setattr(getattr(server, "_mcp_server", server), "version", version)

    def run(tool: str, **arguments: Any) -> str:
        try:
            return service.call(tool, **arguments)
        except ToolFailure as exc:
            raise tool_error(str(exc)) from None

    def ask(question: str, cwd: str | None = None, group: str | None = None,
            scope: str | None = None, k: int = 5) -> str:
        return run("ask", question=question, cwd=cwd, group=group, scope=scope, k=k)

    def scopes(group: str | None = None) -> str:
        return run("scopes", group=group)

    def doctor() -> str:
        return run("doctor")

    _register(server, "ask", ASK_DOC, ask)
    _register(server, "scopes", SCOPES_DOC, scopes)
    _register(server, "doctor", DOCTOR_DOC, doctor)
    return server


def serve(home: str | os.PathLike | None = None) -> None:
    """Run the server on stdio until the client closes it; warming starts at once, in the background."""
    from loci.front.engine_server import share

    service = Service(home)
    server = build_server(service)
    threading.Thread(target=service.engine.warm_quietly, name="loci-warm", daemon=True).start()
    share(service.engine)   # the CLI's questions use this warm engine while it runs
    server.run("stdio")
