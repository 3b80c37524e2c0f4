"""The MCP server: three tools (ask, scopes, doctor) on stdio, over one warm Session.

Each tool returns the JSON text the matching ``loci ... --json`` command prints.
An expected failure (empty question, unknown scope or group, a cwd that names no
directory, no index, an argument of the wrong type) comes back as a tool error
(``isError``) whose text is the object ``--json`` prints for it, ``{"error",
"hint"}`` (``loci.kernel.errors.error_object``), and the server keeps running. The Session is
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
from loci.kernel.errors import LociError, UsageError, error_object
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
    "k: results per scope (1-50). A block whose scope's stores could not be read carries "
    "`notes`: why, and the fix. A failed call is a tool error whose text is {\"error\", \"hint\"}."
)
SCOPES_DOC = ("List the registered scopes with path, owner, kind, groups and aliases "
              "(the list `loci scopes --json` prints); group: only that group's members.")
DOCTOR_DOC = ("Report coverage gaps per scope (unindexed, stale, no graph, no vectors) "
              "and the command that fixes each (what `loci doctor --json` prints).")


class MissingExtra(LociError, RuntimeError):
    """The ``mcp`` package is not installed; the message names the install command."""


class ToolFailure(Exception):
    """A tool call failed in a way the caller can fix; the message is one line."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(f"{message}; {hint}" if hint else message)
        self.error, self.hint = message, hint

    def to_json(self) -> dict:
        """The object ``--json`` prints for this failure: ``{"error", "hint"}``."""
        return {"error": self.error, "hint": self.hint} if self.hint else error_object(self.error)


_MISSING = object()


def _json_kind(value: Any) -> str:
    """What a JSON value is, in words (the caller wrote JSON, not Python)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _takes(tool: str) -> str:
    args = ", ".join(f"{name} ({kind})" for name, (_, kind) in ARGUMENTS.get(tool, {}).items())
    return f"{tool} takes {args or 'no arguments'}"


def wrong_argument(tool: str, name: str, value: Any = _MISSING) -> ToolFailure:
    """The one-line failure of an argument that is missing, unknown, or of the wrong type."""
    if name not in ARGUMENTS.get(tool, {}):
        return ToolFailure(f"{tool}: no argument `{name}`", _takes(tool))
    kind = ARGUMENTS[tool][name][1]
    if value is _MISSING:
        return ToolFailure(f"{tool}: `{name}` is required ({kind})", _takes(tool))
    shown = json.dumps(value, ensure_ascii=False, default=str)
    shown = shown if len(shown) <= 40 else shown[:40] + "…"
    return ToolFailure(f"{tool}: `{name}` must be {kind}, not {_json_kind(value)} ({shown})", _takes(tool))


def check_arguments(tool: str, arguments: dict) -> None:
    """Raise the ``wrong_argument`` failure of the first argument that is unknown, missing or of
    the wrong type."""
    spec = ARGUMENTS.get(tool, {})
    for name, value in arguments.items():
        if name not in spec:
            raise wrong_argument(tool, name)
        types = spec[name][0]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise wrong_argument(tool, name, value)
    for name in REQUIRED.get(tool, ()):
        if name not in arguments:
            raise wrong_argument(tool, name)


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
        where = _cwd(cwd)
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
            raise ToolFailure(f"unknown tool {tool!r}", f"tools: {', '.join(self.TOOLS)}")
        check_arguments(tool, arguments)
        try:
            out = getattr(self, tool)(**arguments)
        except LociError as exc:
            raise ToolFailure(one_line(exc)) from None
        except Exception as exc:
            _log(f"{tool} failed:\n{traceback.format_exc()}")
            raise ToolFailure(f"internal error in {tool} ({type(exc).__name__}): {one_line(exc)}") from None
        return json.dumps(out, indent=2, ensure_ascii=False)


_KINDS = {str: "a string", int: "a whole number", type(None): "null"}


def _parameters(tool: str) -> list:
    """``Service``'s parameters of ``tool`` but ``self``, their types evaluated: the one place a
    tool's arguments are read, for the check (``ARGUMENTS``) and for the SDK (``_tool_function``)."""
    import inspect

    return [p for p in inspect.signature(getattr(Service, tool), eval_str=True).parameters.values()
            if p.name != "self"]


def _tool_arguments(tools) -> tuple[dict, dict]:
    """Each tool's arguments, read from ``Service``'s signature of it: {tool: {name: (the Python types a
    value may have, the type named when it has another)}}, and {tool: the names without a default}."""
    import inspect
    import typing

    arguments, required = {}, {}
    for tool in tools:
        params = _parameters(tool)
        arguments[tool] = {}
        for p in params:
            types = typing.get_args(p.annotation) or (p.annotation,)
            arguments[tool][p.name] = (tuple(types), " or ".join(_KINDS[t] for t in types))
        required[tool] = tuple(p.name for p in params if p.default is inspect.Parameter.empty)
    return arguments, required


ARGUMENTS, REQUIRED = _tool_arguments(Service.TOOLS)


def _server_cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:   # the directory the server started in was removed
        return None


def _cwd(cwd: str | None) -> Path | None:
    """The directory a question is asked from: the server's own when not given, none for "";
    one that names no directory is a usage error, as `loci ask --cwd` makes it."""
    from loci.kernel.asked_from import asked_from

    if cwd is None:
        return _server_cwd()
    if not cwd.strip():
        return None
    if "\x00" in cwd:   # ``context_for`` names it
        return Path(cwd)
    try:
        return Path(asked_from(cwd, "cwd"))
    except UsageError as exc:
        raise UsageError(f"{exc}; give the directory the question is asked from, or \"\" for none") from None


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


def _error_result(failure: ToolFailure):
    """A tool error as MCP reports one (``isError``), its text the object ``--json`` prints."""
    from mcp.types import CallToolResult, TextContent

    text = json.dumps(failure.to_json(), indent=2, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], isError=True)


def _argument_failure(tool: str, arguments: Any, exc: BaseException) -> ToolFailure | None:
    """The ``wrong_argument`` failure for the SDK's refusal of a call's arguments (its
    pydantic ValidationError, several lines long and naming a URL), else None."""
    cause = exc.__cause__
    errors = getattr(cause, "errors", None)
    if tool not in ARGUMENTS or not callable(errors) or type(cause).__name__ != "ValidationError":
        return None
    given = arguments if isinstance(arguments, dict) else {}
    for err in errors():
        loc = err.get("loc") or ()
        name = str(loc[0]) if loc else ""
        if name in ARGUMENTS[tool]:
            return wrong_argument(tool, name, given.get(name, _MISSING))
    return ToolFailure(f"{tool}: the arguments are not what it takes", _takes(tool))


def _server_class(server_cls: type, tool_error: type[Exception]) -> type:
    """``server_cls`` whose refusal of a call (its arguments' types, an unknown tool) is the
    error object too, not the SDK's text (pydantic's several lines and a URL). The arguments
    are checked as the client wrote them (``check_arguments``), before the SDK reads them: its
    pydantic would take ``"3"``, ``"3_0"``, ``true`` or ``2.0`` for a whole number, and drop an
    argument that is not the tool's."""

    class Server(server_cls):
        async def call_tool(self, name, arguments, *args, **kwargs):
            if name in Service.TOOLS:
                try:
                    check_arguments(name, arguments if isinstance(arguments, dict) else {})
                except ToolFailure as failure:
                    return _error_result(failure)
            try:
                return await super().call_tool(name, arguments, *args, **kwargs)
            except tool_error as exc:
                if name not in Service.TOOLS:
                    tools = ", ".join(Service.TOOLS)
                    return _error_result(ToolFailure(f"unknown tool {name!r}", f"tools: {tools}"))
                failure = _argument_failure(name, arguments, exc)
                if failure is None:
                    raise
                return _error_result(failure)

    Server.__name__ = Server.__qualname__ = f"Loci{server_cls.__name__}"
    return Server


def _tool_function(tool: str, run: Callable[..., Any]) -> Callable[..., Any]:
    """What the SDK registers as ``tool``: ``run(tool, **arguments)`` under ``Service``'s
    signature of it, from which the SDK reads the schema it lists (as ``ARGUMENTS`` is read)."""
    import inspect

    def fn(**arguments: Any) -> str:
        return run(tool, **arguments)

    fn.__name__ = fn.__qualname__ = tool
    fn.__signature__ = inspect.Signature(_parameters(tool), return_annotation=str)
    return fn


def _register(server, name: str, description: str, fn: Callable) -> None:
    try:
        server.tool(name=name, description=description, structured_output=False)(fn)
    except TypeError:   # an SDK older than structured output
        server.tool(name=name, description=description)(fn)


def build_server(service: Service):
    """An MCP server exposing exactly ``ask``, ``scopes`` and ``doctor`` over ``service``."""
    server_cls, tool_error = load_server_class()
    server_cls = _server_class(server_cls, tool_error)
    from loci.kernel.dist import installed_version

    version = installed_version() or "0+source"
    try:
        server = server_cls(name="loci", version=version, instructions=INSTRUCTIONS, log_level="WARNING")
    except TypeError:  # an SDK whose server class takes no version: set it on the low-level server
        server = server_cls(name="loci", instructions=INSTRUCTIONS, log_level="WARNING")
        setattr(getattr(server, "_mcp_server", server), "version", version)

    def run(tool: str, **arguments: Any):
        try:
            return service.call(tool, **arguments)
        except ToolFailure as exc:
            return _error_result(exc)

    for tool, description in {"ask": ASK_DOC, "scopes": SCOPES_DOC, "doctor": DOCTOR_DOC}.items():
        _register(server, tool, description, _tool_function(tool, run))
    return server


def serve(home: str | os.PathLike | None = None) -> None:
    """Run the server on stdio until the client closes it; warming starts at once, in the background."""
    from loci.front.engine_server import share

    service = Service(home)
    server = build_server(service)
    threading.Thread(target=service.engine.warm_quietly, name="loci-warm", daemon=True).start()
    share(service.engine)   # the CLI's questions use this warm engine while it runs
    server.run("stdio")
