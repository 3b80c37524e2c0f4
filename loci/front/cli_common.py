"""What every `loci` command module shares: error handling, the home, progress display,
the build context, and ``Commands`` (each module's commands, registered by cli.py)."""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Callable

import typer

from loci.kernel.config import Layout, layout as make_layout


def keep_argument_help() -> None:
    """Show every argument's help in ``--help`` again, once. typer (<0.26) sets a TyperArgument's
    help before calling click's Argument.__init__, which in newer click (8.5 here) takes a ``help``
    of its own and resets it to None, so every argument was listed bare; and that click lists
    documented arguments a second time ("Positional arguments") after typer's "Arguments". A hidden
    argument (an old spelling still read, ``scopes_argument``) is left out of the usage line too."""
    import click
    from typer.core import TyperArgument, TyperCommand

    init = TyperArgument.__init__
    if getattr(init, "keeps_help", False):
        return

    @functools.wraps(init)
    def keeping(self, *args, help: str | None = None, **kwargs):
        init(self, *args, help=help, **kwargs)
        if self.help is None:
            self.help = help

    keeping.keeps_help = True
    TyperArgument.__init__ = keeping
    usage = TyperArgument.get_usage_pieces
    TyperArgument.get_usage_pieces = lambda self, ctx: [] if self.hidden else usage(self, ctx)
    if hasattr(click.Command, "format_arguments"):   # typer's format_options writes them already
        TyperCommand.format_arguments = lambda self, ctx, formatter: None


def quiet_flag():
    """The ``--quiet`` option of every command that shows progress."""
    return typer.Option(False, "--quiet", "-q", help="No progress bar or progress lines, no report.")


def json_flag():
    """The ``--json`` option every command that reports something offers."""
    return typer.Option(False, "--json", help='Print JSON instead of text; a failure too, as {"error", "hint"}.')


def scope_flag(help: str = "Only this scope (repeatable; default: every scope)."):
    """``--scope NAME``: how every command whose work some scopes can narrow is narrowed to them."""
    return typer.Option(None, "--scope", help=help, autocompletion=complete_scope)


def scopes_argument():
    """The scopes some commands once took as arguments (``loci export gizmo --to DIR``): read still,
    so that no script breaks, and left out of ``--help``, which shows ``--scope``."""
    return typer.Argument(None, hidden=True, autocompletion=complete_scope)


def chosen_scopes(flagged, named) -> list[str]:
    """The scopes given with ``--scope`` and as arguments (the old spelling), each once, in order."""
    return list(dict.fromkeys([*(flagged or []), *(named or [])]))


def json_or(as_json: bool, report) -> bool:
    """With ``--json``, print the build API's ``report`` as it is (True: the text is not shown)."""
    if as_json:
        from loci.front.render import dump_json, report_json

        dump_json(report_json(report))
    return as_json


def complete_scope(incomplete: str) -> list[str]:
    """Shell completion of a scope name: the registered names starting with what is typed
    (scopes.json read, nothing else; nothing on any error)."""
    try:
        from loci.kernel.registry import load_registry

        names = load_registry(make_layout()).names()
    except Exception:   # completion must never print a traceback into the shell
        return []
    return sorted(n for n in names if n.startswith(incomplete))


def err(msg: str) -> None:
    typer.echo(f"loci: {msg}", err=True)


def scoped(name: str, msg: str) -> str:
    """``msg`` as a line about scope ``name``: prefixed with it unless it already begins so."""
    return msg if msg.startswith(f"{name}:") else f"{name}: {msg}"


def refuse_unscannable(report, dirs) -> None:
    """A scan given no folder that exists is bad input (UsageError, exit 2), whatever the home
    holds already: `loci scan` and `loci setup` both refuse it before building anything."""
    if not any(Path(d).expanduser().is_dir() for d in dirs):
        from loci.kernel.errors import UsageError

        raise UsageError(", ".join(report.problems) or "no folder to scan")


def handled(fn):
    """The one place the CLI turns an expected error into one line on stderr (with ``--json``, one
    object on stdout) and its exit code."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from loci.front.oneshot import failure, report_failure

        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            known = failure(exc)
            if known is None:
                raise
            report_failure(known[0], kwargs.get("as_json", False), err)
            raise typer.Exit(known[1])
    return wrapper


class Commands:
    """A module's commands and sub-apps, recorded with the decorators and added by ``register``."""

    def __init__(self) -> None:
        self._commands: list[tuple[tuple, dict, Callable]] = []
        self._typers: list[tuple[typer.Typer, str]] = []

    def command(self, *args, **kwargs):
        def decorate(fn):
            self._commands.append((args, kwargs, fn))
            return fn
        return decorate

    def typer(self, sub: typer.Typer, name: str) -> typer.Typer:
        self._typers.append((sub, name))
        return sub

    def register(self, app: typer.Typer) -> None:
        for args, kwargs, fn in self._commands:
            app.command(*args, **kwargs)(fn)
        for sub, name in self._typers:
            app.add_typer(sub, name=name)


def writable_home() -> Layout:
    """The home's layout, once the kernel has made sure the home can be written to."""
    from loci.kernel.atomic import ensure_writable

    layout = make_layout()
    ensure_writable(layout.home)
    return layout


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def build_context(layout: Layout, *, quiet: bool = False, label: str = "building", **overrides):
    """The home's build context (loci_pipeline.tasks.home_context) with a progress display on a terminal."""
    from loci_pipeline.tasks import home_context

    ctx = home_context(layout, **overrides)
    if not quiet:  # bars on a terminal, a line at least every 10 s anywhere else (a CI log)
        from loci.front.progress import log_progress

        ctx.progress = bar_progress(label) if sys.stderr.isatty() else log_progress(label)
    return ctx


def bar_progress(label: str):
    """A rich progress display: one bar over the per-scope tasks, one per scope being encoded."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from loci_pipeline.tasks import Progress as BuildProgress

    class Bars(BuildProgress):
        def __init__(self) -> None:
            self.display = Progress(TextColumn("{task.fields[what]}"), BarColumn(), MofNCompleteColumn(),
                                    TextColumn("{task.description}"), TimeElapsedColumn(), transient=True)
            self.bar = None
            self.encoding_bars: dict[str, int] = {}

        def planned(self, total: int) -> None:
            if total:
                self.display.start()
                self.bar = self.display.add_task("", total=total, what=label)

        def started(self, task: str) -> None:
            if self.bar is not None:
                self.display.update(self.bar, description=task)

        def finished(self, task: str) -> None:
            if self.bar is not None:
                self.display.advance(self.bar)
                if self.display.tasks[self.bar].finished:
                    self.display.stop()

        def encoding(self, scope: str, done: int, total: int) -> None:
            if scope not in self.encoding_bars:
                self.display.start()
                self.encoding_bars[scope] = self.display.add_task(scope, total=total, what="embedding")
            self.display.update(self.encoding_bars[scope], completed=done, total=total)

    return Bars()


def index_lines(report) -> tuple[list[str], list[str]]:
    """What `loci index` prints for a loci_pipeline.build.IndexReport: (stdout lines, stderr lines)."""
    if not (report.rebuilt or report.unchanged or report.failed):   # a home of pulled scopes only
        return ["no local scope to index (a pulled scope is brought up to date by pulling it again)"], []
    out = [f"indexed {len(report.rebuilt)} scope(s), {len(report.unchanged)} unchanged"]
    for name in report.rebuilt:
        meta = report.metas.get(name)
        if not meta:
            continue
        red = meta.get("redactions") or {}
        red_s = ", ".join(f"{k} x{v}" for k, v in sorted(red.items()))
        skipped = {k: v for k, v in meta.get("stats", {}).items() if k.startswith("skipped") and v}
        line = f"  {name}: {meta['chunks']} chunks, {meta['vocab_tokens']} routing tokens"
        if red_s:
            line += f"; redacted {red_s}"
        if skipped:
            line += "; " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in skipped.items())
        out.append(line)
    notes = [f"{name}: {problem}" for name in report.rebuilt
             for problem in (report.metas.get(name) or {}).get("stats", {}).get("manifest_problems") or ()]
    return out, notes + [f"{name}: {msg}" for name, msg in report.failed.items()]


def interruptible(fn):
    """A build command stopped by Ctrl-C: one line saying what is kept, exit 130, at once.

    By the time the interrupt reaches here the runner has released the build lock; every step
    that finished is in place (each file is replaced whole) and the next `loci update` does the
    rest. The process ends with ``os._exit``: a doit worker thread may still be inside the
    encoder, and a normal interpreter exit under it aborts ("terminate called...", exit 134)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            err("interrupted: every step that finished is kept, nothing is half written; "
                "`loci update` finishes the rest")
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
    return wrapper
