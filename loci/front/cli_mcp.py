"""Commands for AI clients: `loci mcp` (the MCP server on stdio) and `loci skill install`.

Nothing heavy is imported until a command runs, so `loci --help` never loads the MCP SDK.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from loci.front.cli_common import Commands, err, handled

commands = Commands()
skill_app = commands.typer(typer.Typer(help="The agent skill for Claude Code: `loci skill install`.",
                                       no_args_is_help=True), "skill")


@commands.command("mcp")
@handled
def mcp_command():
    """Run the MCP server on stdio, with three tools: ask (what `loci ask --json` prints), scopes
    and doctor. An AI client launches it: `claude mcp add loci --scope user -- loci mcp`."""
    from loci.front.mcp_server import load_server_class, serve

    load_server_class()  # MissingExtra: one line with the install command
    if sys.stdin.isatty():
        err("this speaks MCP on stdin/stdout for an AI client to launch, e.g. "
            "`claude mcp add loci --scope user -- loci mcp`; Ctrl-C stops it")
    try:
        serve()
    except KeyboardInterrupt:
        raise typer.Exit(130)


@skill_app.command("install")
@handled
def skill_install(dir_: Optional[Path] = typer.Option(None, "--dir", help="Install into DIR/SKILL.md "
                                                      "(default: ~/.claude/skills/loci)."),
                  print_: bool = typer.Option(False, "--print", help="Write the skill to stdout instead.")):
    """Install the `/loci` skill for Claude Code (re-run after upgrading loci)."""
    from loci.front.skill import install, skill_text

    if print_:
        typer.echo(skill_text(), nl=False)
        return
    target = install(dir_)
    typer.echo(f"installed the loci skill at {target}")
