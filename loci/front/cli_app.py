"""The `loci` command line (typer): parse, call one function, render. No logic of its own.

`loci.front.cli` is the entry point; it answers a plain `route` or `ask` without loading
this module (``loci.front.oneshot``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from loci.front.cli_common import (
    complete_scope, err as _err, handled, json_flag, json_or, keep_argument_help, writable_home as _writable_home,
)
from loci.front.oneshot import K_DEFAULT, K_RANGE


def no_server_flag():
    """``--no-server`` of the query commands (a plain command line is answered by ``oneshot``,
    which reads it; one that reaches typer is answered in this process anyway)."""
    return typer.Option(False, "--no-server", help="Answer in this process, not through the warm "
                        "engine (also LOCI_SERVER=off).")
from loci.kernel.config import layout as make_layout

keep_argument_help()
HELP = """Scoped memory for coding agents: route a question to the right repositories, then
answer from their code structure and their prose.

Everything is written under $LOCI_HOME (default ~/.loci), nothing inside your repositories
but the commit hooks `loci hook install` puts in .git/hooks. Start with `loci setup DIR`,
then `loci ask "QUESTION"`; `loci COMMAND --help` says more."""
app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=True, rich_markup_mode=None)
groups_app = typer.Typer(help="List groups, or label scopes me / vendor:<org> from git (`groups infer`).",
                         invoke_without_command=True)
group_app = typer.Typer(help="Edit one group: its mode, or one scope's membership.", no_args_is_help=True)
app.add_typer(groups_app, name="groups")


def _version(value: bool) -> None:
    if value:
        from loci.kernel.dist import installed_version

        typer.echo(f"loci {installed_version() or '(not installed as a package)'}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """The options before any command (the app's help is ``HELP``)."""
app.add_typer(group_app, name="group")


# ---------------------------------------------------------------- build side

@app.command()
@handled
def scopes(group: Optional[str] = typer.Option(None, "--group", help="Only members of this group."),
           as_json: bool = json_flag()):
    """List registered scopes with their path, owner and groups (and, for an identical copy of
    another scope, the scope that answers for it)."""
    from loci.front.listing import scopes_listing
    from loci.front.render import dump_json

    rows = scopes_listing(make_layout(), group)
    if as_json:
        dump_json(rows)
        return
    if not rows:
        typer.echo("no scopes registered: run `loci setup DIR`")
    for s in rows:
        gone = "  [pulled]" if s["kind"] == "pulled" else "" if s["exists"] else "  [missing on disk]"
        copy = f"  [copy of {s['copy_of']}]" if "copy_of" in s else ""
        typer.echo(f"{s['name']:<28} {s['owner']:<20} {', '.join(s['groups']):<28} {s['path']}{gone}{copy}")


# ---------------------------------------------------------------- read side

@app.command()
@handled
def route(question: str = typer.Argument(..., help="The question, in plain words."),
          explain: bool = typer.Option(False, "--explain", help="Show every scope's score parts and the deciding gate."),
          group: Optional[str] = typer.Option(None, "--group", help="Confine routing to this group's members."),
          cwd: Optional[Path] = typer.Option(None, "--cwd", help="Route as if asked from this directory."),
          no_cwd: bool = typer.Option(False, "--no-cwd", help="Ignore the working directory."),
          fast: bool = typer.Option(False, "--fast", help="Vocabulary only: skip the embeddings' second "
                                    "opinion (which can add a scope close in meaning, or answer an abstention)."),
          as_json: bool = json_flag(), no_server: bool = no_server_flag()):
    """Show which scopes a question routes to (or why it abstains), without searching them.

    \b
    Examples:
      loci route --explain "how do I retry failed connections?"
      loci route --json --no-cwd "where is the session cookie set?"
    """
    from loci.front.oneshot import route_command

    route_command(question, explain=explain, group=group, cwd=cwd, no_cwd=no_cwd, fast=fast,
                  as_json=as_json, echo=typer.echo, err=_err)


@app.command()
@handled
def ask(question: str = typer.Argument(..., help="The question, in plain words."),
        scope: Optional[str] = typer.Option(None, "--scope", help="Skip routing: answer from this scope.",
                                            autocompletion=complete_scope),
        group: Optional[str] = typer.Option(None, "--group", help="Confine routing to this group's members."),
        k: int = typer.Option(K_DEFAULT, "--k", min=K_RANGE[0], max=K_RANGE[1], help="Results per scope."),
        fast: bool = typer.Option(False, "--fast", help="Lexical only: no embeddings in routing or ranking."),
        cwd: Optional[Path] = typer.Option(None, "--cwd", help="Ask as if from this directory."),
        no_cwd: bool = typer.Option(False, "--no-cwd", help="Ignore the working directory."),
        as_json: bool = json_flag(), no_server: bool = no_server_flag()):
    """Route the question, then answer from each selected scope's stores with citations.

    Asked from inside a project, "what does this project do?", "how do I use this?", "what
    changed recently?" or "what license is this under?" open with the file that says it
    (README, usage section, newest commits, licence file); in other languages too, with the
    multilingual extra.

    \b
    Examples:
      loci ask "why was the session cookie dropped on localhost?"
      loci ask --scope flask --k 10 "how are blueprints registered?"
      cd ~/code/myproject && loci ask "what does this project do?"
    """
    from loci.front.oneshot import ask_command

    ask_command(question, scope=scope, group=group, k=k, fast=fast, cwd=cwd, no_cwd=no_cwd,
                as_json=as_json, echo=typer.echo, err=_err)


# ---------------------------------------------------------------- groups

@groups_app.callback()
@handled
def groups_list(ctx: typer.Context, as_json: bool = json_flag()):
    """List groups, their mode, and how many scopes each holds."""
    if ctx.invoked_subcommand:
        return
    from loci.kernel.groups import list_groups, load_policy
    from loci.kernel.registry import load_registry
    from loci.front.render import dump_json, report_json

    layout = make_layout()
    registry = load_registry(layout)
    rows = list_groups(registry, load_policy(layout))
    if as_json:
        dump_json([report_json(r) for r in rows])
        return
    if not rows and not registry.scopes:
        typer.echo("no scopes registered, so no groups: run `loci setup DIR`")
    elif not rows:
        n = len(registry.scopes)
        why = (" (git names no owner for any: `loci groups infer` says why, scope by scope)"
               if all(s.owner == "unknown" for s in registry.scopes) else "")
        typer.echo(f"no groups: none of the {n} scope{'s' if n != 1 else ''} is in a group{why}; "
                   "`loci group add SCOPE GROUP` makes one")
    for r in rows:
        typer.echo(f"{r.group:<28} {r.mode:<9} {r.count}")


@groups_app.command("infer")
@handled
def groups_infer(as_json: bool = json_flag()):
    """Label every scope `me` or `vendor:<org>` from git provenance."""
    from loci_pipeline import build
    from loci_pipeline.tasks import BuildContext

    report = build.infer_groups(BuildContext(_writable_home()))
    if json_or(as_json, report):
        return
    for name, owner in sorted(report.owners.items()):
        why = f"  ({report.why[name]})" if name in report.why else ""
        typer.echo(f"{name:<28} {owner}{why}")


def _edit_group(group: str, edit_name: str, *args: str):
    """Apply one loci.kernel.groups edit of ``group`` (set_mode, add_member, remove_member) to
    groups.json; the group after it (a GroupRow: its mode and members)."""
    from loci.kernel import groups

    return groups.edit_group(_writable_home(), group, getattr(groups, edit_name), *args)


@group_app.command("set")
@handled
def group_set(group: str = typer.Argument(..., help="The group (made when it does not exist yet)."),
              mode: str = typer.Option(..., "--mode", help="explicit: only --group confines to it; soft: asked "
                                       "from inside a member, other projects' evidence counts for less; "
                                       "hard: only its members answer such a question."),
              as_json: bool = json_flag()):
    """Set how much GROUP confines: explicit, soft (default) or hard."""
    row = _edit_group(group, "set_mode", group, mode)
    if not json_or(as_json, row):
        empty = f" (no members yet: `loci group add SCOPE {group}` puts one in)" if not row.count else ""
        typer.echo(f"{group}: {mode}{empty}")


@group_app.command("add")
@handled
def group_add(scope: str = typer.Argument(..., help="The scope (`loci scopes` lists them).",
                                         autocompletion=complete_scope),
              group: str = typer.Argument(..., help="The group (made when it does not exist yet)."),
              as_json: bool = json_flag()):
    """Put SCOPE into GROUP (kept in groups.json, so a rescan keeps it)."""
    if not json_or(as_json, _edit_group(group, "add_member", scope, group)):
        typer.echo(f"{scope} is in {group}")


@group_app.command("rm")
@handled
def group_rm(scope: str = typer.Argument(..., help="The scope (`loci scopes` lists them).",
                                        autocompletion=complete_scope),
             group: str = typer.Argument(..., help="The group it is in."),
             as_json: bool = json_flag()):
    """Take SCOPE out of GROUP."""
    if not json_or(as_json, _edit_group(group, "remove_member", scope, group)):
        typer.echo(f"{scope} is no longer in {group}")


def _compose() -> None:
    """Each command module records its own commands; they are added here, in one place."""
    from loci.front import cli_build, cli_diag, cli_embed, cli_hook, cli_mcp, cli_server, cli_share

    for module in (cli_build, cli_diag, cli_embed, cli_mcp, cli_hook, cli_server, cli_share):
        module.commands.register(app)


_compose()


def main() -> None:
    app()
