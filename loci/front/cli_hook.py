"""`loci hook install|uninstall|status`: commit hooks that rebuild a repository's scopes in the background."""
from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from loci.front.cli_common import Commands, handled, writable_home
from loci.kernel.config import layout as make_layout

commands = Commands()
hook_app = commands.typer(typer.Typer(help="Commit hooks that keep a repository's scopes fresh "
                                           "(post-commit, post-merge, post-checkout).", no_args_is_help=True),
                          "hook")
REPOS = typer.Argument(None, help="Repositories (default: every registered scope's repository).")
SAY = {"loci": "loci", "loci+chained": "loci (runs your previous hook first)", "absent": "none",
       "other": "not loci's"}


def _repos(repos: List[Path] | None, layout) -> list[Path]:
    from loci.front.hook import registered_repos

    return list(repos) if repos else registered_repos(layout)


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
def install(repos: List[Path] = REPOS):
    """Install the hooks (idempotent; an existing hook is kept and run first). Each commit, merge or
    checkout then runs `python -m loci.dodo index:SCOPE` in the background; log: $LOCI_HOME/logs/hooks.log."""
    from loci.front.hook import install as put, log_path

    layout = writable_home()
    _show(put(layout, _repos(repos, layout)))
    typer.echo(f"log: {log_path(layout)}")


@hook_app.command("uninstall")
@handled
def uninstall(repos: List[Path] = REPOS):
    """Remove loci's hooks and restore whatever hook was there before."""
    from loci.front.hook import uninstall as remove

    _show(remove(_repos(repos, make_layout())))


@hook_app.command("status")
@handled
def status(repos: List[Path] = REPOS):
    """Which of the three hooks are loci's in each repository, and what they rebuild."""
    from loci.front.hook import status as look

    _show(look(_repos(repos, make_layout())))
