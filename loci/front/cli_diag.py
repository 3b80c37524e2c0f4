"""`loci calibrate`, `loci eval`, `loci uses` and `loci doctor`."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from loci.front.cli_common import (
    Commands, build_context, complete_scope, err, handled, index_lines, json_flag, scope_flag, writable_home,
)

commands = Commands()


@commands.command()
@handled
def calibrate(show: bool = typer.Option(False, "--show", help="Print the thresholds in force; fit nothing."),
              full: bool = typer.Option(False, "--full", help="Fit the evidence floor again on every scope, even "
                                        "when few scopes moved since its fit (a pull of one bundle among "
                                        "hundreds keeps it)."),
              reset: bool = typer.Option(False, "--reset", help="Route with the shipped thresholds again: remove "
                                         "the fit and record the choice, which `loci update` and `loci pull` "
                                         "keep until `loci calibrate` fits again."),
              as_json: bool = json_flag()):
    """Fit the evidence floor (and, with embeddings, per-scope semantic floors and the router's
    second-opinion floors) to your corpus; writes calibration.json.

    \b
    Examples:
      loci calibrate --show      (the thresholds in force, fitted or shipped)
      loci calibrate --reset     (back to the shipped thresholds, kept by `loci update`)
    """
    from loci.query.calibration import read_calibration
    from loci.kernel.config import layout as make_layout
    from loci.front.render import dump_json
    from loci_pipeline.calibrate import render, standing
    from loci_pipeline.home_steps import thresholds_in_force

    modes = [flag for flag, on in (("--show", show), ("--full", full), ("--reset", reset)) if on]
    if len(modes) > 1:
        from loci.kernel.errors import UsageError

        raise UsageError(f"{' and '.join(modes)} do different things (--show prints the thresholds, --full "
                         "fits them whole, --reset goes back to the shipped ones): give one of them")
    if reset:
        from loci_pipeline import build

        layout = writable_home()
        shown = build.reset_calibration(build_context(layout, quiet=True))
        if as_json:
            dump_json(shown)
        else:
            typer.echo(f"the shipped thresholds are in force: {layout.calibration} removed; `loci update` and "
                       "`loci pull` keep them until `loci calibrate` fits them again")
        return
    if show:
        layout = make_layout()
        data = read_calibration(layout)
        if data is None:
            shown = thresholds_in_force(layout, None)
            if as_json:
                dump_json(shown)
            elif shown["chosen"]:
                typer.echo("the shipped thresholds are in use, as chosen with `loci calibrate --reset` "
                           "(`loci calibrate` fits them to this corpus)")
            else:
                typer.echo("not calibrated yet: the shipped thresholds are in use (run `loci calibrate`)")
            return
    else:
        from loci_pipeline import build

        layout = writable_home()
        report = build.calibrate(build_context(layout, quiet=True, graphs=False, calibrate_full=full))
        data = report.data
    if as_json:
        dump_json(thresholds_in_force(layout, data))
        return
    typer.echo("\n".join(render(data, standing(layout, data) if show else None)))
    if not show:
        typer.echo(f"\nwritten to {layout.calibration}" if report.fitted
                   else f"\nunchanged: {layout.calibration} already fits this index")


@commands.command(name="eval")
@handled
def eval_(misses: bool = typer.Option(False, "--misses", help="List the questions routing got wrong."),
          questions: Optional[Path] = typer.Option(None, "--questions", help="A JSONL file of labelled questions "
                                                   "(the dev-questions.jsonl format) to score instead."),
          as_json: bool = json_flag()):
    """Measure routing on your own corpus with questions whose answer is known by construction."""
    from loci.query import evalgen
    from loci.query.ask import open_session
    from loci.front.render import dump_json

    session = open_session(keep_full_index=True)
    if questions is None:
        report = evalgen.run_generated(session)
        if as_json:
            dump_json(report.to_json(misses=True))
        else:
            typer.echo("\n".join(evalgen.render(report, misses)))
        return
    from loci.query import scoring
    from loci.kernel.errors import UsageError

    try:
        labelled = scoring.load_questions(questions)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {questions}: {exc}" if isinstance(exc, OSError) else str(exc)) from None
    report, results, notes = evalgen.run_labelled(session, labelled)
    wrong = evalgen.labelled_misses(report, results, labelled)
    if as_json:
        dump_json({**report.as_dict(), "wrong": wrong, "notes": notes})
        return
    typer.echo(scoring.render_markdown(report).rstrip())
    for note in notes:
        typer.echo(f"note: {note}")
    if misses:
        typer.echo(f"\nmisses ({len(wrong)}):")
        for w in wrong:
            got = w["outcome"] + (f" {', '.join(w['scopes'])}" if w["scopes"] else "")
            want = "abstain" if w["mode"] == "abstain" else ", ".join(w["gold"])
            typer.echo(f"  {w['id']}: {w['question']}\n      wanted {want}, got {got}")


def print_doctor(as_json: bool = False) -> list:
    """Run the doctor on $LOCI_HOME, print its report (``loci setup`` ends with this) and
    return the findings."""
    from loci.kernel.config import layout as make_layout
    from loci.front.doctor import diagnose, render
    from loci.kernel.registry import RegistryError, load_registry
    from loci.front.render import dump_json

    layout = make_layout()
    findings = diagnose(layout)
    if as_json:
        dump_json([f.to_json() for f in findings])
        return findings
    try:
        n = len(load_registry(layout).scopes)
    except RegistryError:
        n = None
    typer.echo("\n".join(render(findings, n)))
    return findings


@commands.command()
@handled
def uses(scope: Optional[str] = scope_flag("Only references from or to this scope."),
         named: Optional[str] = typer.Argument(None, hidden=True, autocompletion=complete_scope),
         refresh: bool = typer.Option(False, "--refresh", help="Re-index what changed first (as `loci index`)."),
         as_json: bool = json_flag()):
    """Which of your projects reference another (imports and declared dependencies), with citations."""
    from loci.query.ask import open_session
    from loci.front.render import dump_json
    from loci.query.uses import load_uses, use_lines

    if refresh:
        from loci_pipeline import build

        report = build.index(build_context(writable_home(), quiet=True, graphs=False))
        for line in index_lines(report)[1]:
            err(line)
        if report.code:
            raise typer.Exit(report.code)
    session = open_session()
    if scope and named and scope != named:
        from loci.kernel.errors import UsageError

        raise UsageError(f"`loci uses` reads one scope: --scope {scope} or {named}, not both")
    found = load_uses(session.layout, scope or named, set(session.indexed()))
    if as_json:
        dump_json([u.to_json() for u in found])
    else:
        typer.echo("\n".join(use_lines(found)))


@commands.command()
@handled
def doctor(as_json: bool = json_flag()):
    """Name what is missing or stale per scope, and the one command that fixes each; writes nothing.
    Exits 1 when a gap has a command to run."""
    from loci.front.doctor import needs_fixing

    if needs_fixing(print_doctor(as_json)):
        raise typer.Exit(1)
