"""Commands for AI clients: `loci mcp` (the MCP server on stdio) and `loci skill install`.

Registered on the main typer app when loci.front.cli is imported; nothing heavy is
imported until a command runs, so `loci --help` never loads the MCP SDK.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from loci.front.cli import _err, app, handled

skill_app = typer.Typer(help="The agent skill for Claude Code: `loci skill install`.", no_args_is_help=True)
app.add_typer(skill_app, name="skill")


@app.command("mcp")
@handled
def mcp_command():
    """Run the MCP server on stdio (an AI client launches it: `claude mcp add loci -- loci mcp`)."""
    from loci.front.mcp_server import MissingExtra, load_server_class, serve

    try:
        load_server_class()
    except MissingExtra as exc:
        _err(str(exc))
        raise typer.Exit(1)
    if sys.stdin.isatty():
        _err("this speaks MCP on stdin/stdout for an AI client to launch, e.g. "
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
    from loci.front.skill import SkillError, install, skill_text

    if print_:
        typer.echo(skill_text(), nl=False)
        return
    try:
        target = install(dir_)
    except SkillError as exc:
        _err(str(exc))
        raise typer.Exit(1)
    typer.echo(f"installed the loci skill at {target}")
