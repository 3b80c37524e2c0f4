"""`loci hook install|uninstall|status`: commit hooks that rebuild a repository's scopes in the background."""
from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from loci.front.cli_common import Commands, handled, json_flag, writable_home
from loci.kernel.config import layout as make_layout

commands = Commands()
hook_app = commands.typer(typer.Typer(help="Commit hooks that keep a repository's scopes fresh "
                                           "(post-commit, post-merge, post-checkout).", no_args_is_help=True),
                          "hook")
REPOS = typer.Argument(None, help="Repositories, as folders or scope names (default: the repository this "
                                   "command is run in; --all: every registered scope's).")
STATUS_REPOS = typer.Argument(None, help="Repositories, as folders or scope names (default: every registered "
                                          "scope's).")
ALL = typer.Option(False, "--all", help="Every registered scope's repository.")
SAY = {"loci": "loci", "loci+chained": "loci (runs your previous hook first)", "absent": "none",
       "other": "not loci's"}


def _repos(repos: List[Path] | None, layout, every: bool = False) -> list[Path]:
    """The repositories a hook command acts on: those given (a folder, or a registered scope's name
    for its repository), every registered one with ``every``, else the one it is run in."""
    from loci.front.hook import registered_repos, repo_root
    from loci.kernel.errors import UsageError, unknown_name
    from loci.kernel.registry import load_registry

    if every:
        return registered_repos(layout)
    if repos:
        registry = load_registry(layout)
        out = []
        for given in repos:
            scope = registry.get(str(given)) if not Path(given).exists() else None
            if scope is None and not Path(given).exists():
                raise UsageError(unknown_name("scope", str(given), registry.names(), listing="loci scopes")
                                 + "; or give the repository's folder")
            out.append(Path(scope.path) if scope is not None else Path(given))
        return out
    try:   # the scope this is run in (the registry's paths: no git call per registered scope)
        scope = load_registry(layout).containing(Path.cwd())
    except OSError:   # the folder is gone
        scope = None
    if scope is None or scope.kind == "pulled":
        raise UsageError("not inside a registered repository: name one (a folder or a scope), or --all for "
                         "every registered one")
    return [repo_root(Path(scope.path))]


def _show(states) -> None:
    by_repo: dict[Path, list] = {}
    for st in states:
        by_repo.setdefault(st.repo, []).append(st)
    for repo, rows in by_repo.items():
        scopes = next((r.scopes for r in rows if r.scopes), ())
        typer.echo(f"{repo}" + (f"  (rebuilds {', '.join(scopes)})" if scopes else ""))
        for r in rows:
            typer.echo(f"  {r.hook:<14} {SAY[r.state]}")


@hook_app.command("install")
@handled
def install(repos: List[Path] = REPOS, every: bool = ALL):
    """Install the hooks (idempotent; an existing hook is kept and run first). Each commit, merge or
    checkout then runs `python -m loci.dodo index:SCOPE` in the background; log: $LOCI_HOME/logs/hooks.log."""
    from loci.front.hook import install as put, log_path

    layout = writable_home()
    _show(put(layout, _repos(repos, layout, every)))
    typer.echo(f"log: {log_path(layout)}")


@hook_app.command("uninstall")
@handled
def uninstall(repos: List[Path] = REPOS, every: bool = ALL):
    """Remove loci's hooks and restore whatever hook was there before."""
    from loci.front.hook import uninstall as remove

    _show(remove(_repos(repos, make_layout(), every)))


@hook_app.command("status")
@handled
def status(repos: List[Path] = STATUS_REPOS, as_json: bool = json_flag()):
    """Which of the three hooks are loci's in each repository (default: every registered one), and what
    they rebuild."""
    from loci.front.hook import status as look
    from loci.front.render import dump_json, report_json

    layout = make_layout()
    states = look(_repos(repos, layout, every=not repos))
    if as_json:
        dump_json([report_json(s) for s in states])
    else:
        _show(states)
