"""`loci server status` and `loci server stop`: the warm engine behind `loci route`/`loci ask`."""
from __future__ import annotations

import typer

from loci.front.cli_common import Commands, handled, json_flag

commands = Commands()
server_app = commands.typer(typer.Typer(help="The warm engine that answers `loci route`/`loci ask` "
                                        "(started by the first question; exits when idle).",
                                        no_args_is_help=True), "server")


def status_lines(info: dict, enabled: bool = True) -> list[str]:
    """The engine's state in a few lines (``engine_client.describe``'s object); ``enabled``: whether
    questions use an engine here (``engine_client.enabled``)."""
    if not info["running"]:
        if not enabled:
            nxt = "questions are answered in their own process (LOCI_SERVER=off)"
        elif info.get("refused"):   # a socket not ours, a stopped engine: starting one cannot help
            nxt = "questions are answered in their own process"
        else:
            nxt = "the next question starts one"
        lines = [f"no warm engine serves {info['home']}: {nxt}"]
        if info.get("problem"):
            lines.append(f"  ({info['problem']})")
        return lines
    code = "this loci's code" if info.get("same_code") else "other code (the next question replaces it)"
    return [f"a warm engine serves {info['home']}: pid {info.get('pid')}, loci {info.get('version')}, {code}",
            f"  up {info.get('uptime_s')} s, {_questions(info.get('questions'))} answered, "
            f"{info.get('sessions')} session(s) loaded, {info.get('rss_mb')} MB resident "
            f"({info.get('cached_mb')} MB of stores and vectors cached), {_lifetime(info.get('idle_exit_s'))}"
            ] + _busy(info.get("busy"))


BUSY = {"route": "answering a question (route)", "ask": "answering a question (ask)",
        "load": "loading and warming its session", "check": "checking whether the index changed"}


def _busy(busy) -> list[str]:
    """What holds the engine now (``EngineServer.status``'s ``busy``): one line, none when idle."""
    if not isinstance(busy, dict):
        return []
    line = f"  now {BUSY.get(busy.get('what'), busy.get('what'))} for {busy.get('for_s')} s"
    fetch = busy.get("fetching")
    if isinstance(fetch, dict):
        line += (f", fetching a mapped scope's stores for {fetch.get('for_s')} s ({fetch.get('mb')} MB so far, "
                 f"{fetch.get('scopes')} scope(s) at once, up to {fetch.get('left_s')} s more)")
    return [line]


def _lifetime(idle_exit_s) -> str:
    """When the engine exits: after so long idle, or (an MCP server's: it lives as long as its client) never."""
    if idle_exit_s is None or idle_exit_s == float("inf"):
        return "runs as long as the process holding it (an MCP server's)"
    return f"exits after {idle_exit_s:g} s idle"


def _questions(n) -> str:
    return f"{n} question" if n == 1 else f"{n} questions"


@server_app.command("status")
@handled
def server_status(as_json: bool = json_flag()):
    """Whether a warm engine serves $LOCI_HOME, and its pid, version, uptime and memory."""
    from loci.front.engine_client import describe, enabled
    from loci.front.render import dump_json
    from loci.kernel.home import home_dir

    info = describe(home_dir())
    if as_json:
        dump_json(info)
    else:
        typer.echo("\n".join(status_lines(info, enabled())))


@server_app.command("stop")
@handled
def server_stop():
    """Stop the warm engine of $LOCI_HOME (the next question starts a new one)."""
    from loci.front.engine_client import NoServer, stop
    from loci.kernel.errors import LociError
    from loci.kernel.home import home_dir

    home = home_dir()
    try:
        done = stop(home)
    except NoServer as why:   # a stopped engine cannot be asked to exit
        raise LociError(f"the warm engine of {home} was not stopped: {why}") from None
    typer.echo(f"stopped the warm engine of {home}" if done else f"no warm engine serves {home}")
