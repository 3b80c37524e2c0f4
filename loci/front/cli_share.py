"""`loci export`, `loci pull`, `loci push`: bundles of scopes between machines."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from loci.front.cli_common import (
    Commands, chosen_scopes, err as _err, handled, json_flag, json_or, quiet_flag, scope_flag, scopes_argument,
    writable_home as _writable_home,
)
from loci.kernel.config import layout as make_layout
from loci.kernel.errors import UsageError

commands = Commands()


@commands.command()
@handled
def export(to: str = typer.Option(..., "--to", help="The folder that receives one bundle folder per scope."),
           scopes: Optional[List[str]] = scope_flag("Only this scope (repeatable; default: every local scope)."),
           named: Optional[List[str]] = scopes_argument(),
           no_vectors: bool = typer.Option(False, "--no-vectors", help="Leave the embeddings out."),
           quiet: bool = quiet_flag(),
           as_json: bool = json_flag()):
    """Write each scope's bundle (its Parquet tables and a manifest of their checksums) into a folder.

    \b
    Examples:
      loci export --to bundles
      loci export --scope flask --scope click --to bundles --no-vectors
    """
    from loci_pipeline.share.push import export as run_export

    if not to.strip():
        raise UsageError("--to names no folder; give the folder that receives one bundle folder per scope")
    dest = export_folder(Path(to))   # the folder, then every named scope, checked before anything is written
    report = run_export(make_layout(), dest, chosen_scopes(scopes, named) or None, no_vectors=no_vectors)
    if not (json_or(as_json, report) or quiet):
        for name, folder in report.exported.items():
            typer.echo(f"{name}: {folder}")


def export_folder(to: Path) -> Path:
    """The folder ``--to`` names, checked before anything is written (each bundle's folder is made
    when it is written): a file in the way (UsageError), or a folder that cannot be written or
    made (BundleError), is one line naming it."""
    import os

    from loci.kernel.remote import not_a_folder
    from loci_pipeline.share.bundle import BundleError

    dest = to.expanduser()
    where = dest.resolve()
    blocked = not_a_folder(where)
    if blocked is not None:
        raise UsageError(f"{blocked} is a file, not a folder; --to takes the folder that receives "
                         f"one bundle folder per scope")
    existing = next(p for p in (where, *where.parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BundleError(f"cannot write in the folder {existing}; --to takes a folder you can write")
    return dest


def pull_lines(report) -> list[str]:
    lines = [f"pulled {len(report.imported)} scope(s) from {report.source}, {len(report.unchanged)} unchanged"]
    renamed = {local: scope for scope, local in report.renamed.items()}
    lines += [f"  {name}" + (f"  ({renamed[name]!r} was taken here)" if name in renamed else "")
              for name in report.imported]
    lines += [f"  {name}: no longer in the store (kept; `loci doctor` lists it)" for name in report.gone]
    return lines


@commands.command()
@handled
def pull(source: str = typer.Argument(..., help="A folder, file://PATH or s3://bucket/prefix holding bundles."),
         no_vectors: bool = typer.Option(False, "--no-vectors", help="Take the tables, not the embeddings "
                                         "(for vectors of another model than this home's; `loci embed` "
                                         "re-embeds them here)."),
         no_calibrate: bool = typer.Option(False, "--no-calibrate", help="Keep the thresholds as they are "
                                           "(`loci calibrate` fits them to the scopes pulled)."),
         everything: bool = typer.Option(False, "--all", help="Copy every store now (for offline use), "
                                         "not only what routing reads."),
         scopes: Optional[List[str]] = scope_flag("Only this scope (repeatable; default: every scope in the "
                                                  "store); `loci update` pulls the same ones again."),
         quiet: bool = quiet_flag(),
         as_json: bool = json_flag()):
    """Fetch the bundles that changed, verify every checksum, merge them into this home, and fit
    the calibration again when what was merged moved it. Without --all a scope's stores (its
    query file, its vectors) stay in the store until a question needs them; then they are
    fetched, verified and cached (at most LOCI_CACHE_MB megabytes, least recently used out).

    \b
    Examples:
      loci pull s3://bucket/prefix
      loci pull ./bundles --scope flask --scope click --all
    """
    from loci.front.render import dump_json, report_json

    pulled = pull_calibrated(_writable_home(), source, no_vectors=no_vectors, calibrate=not no_calibrate,
                             full=everything, scopes=chosen_scopes(scopes, None) or None)
    report = pulled.bundles
    if as_json:
        dump_json({**report_json(report), "calibrated": bool(pulled.calibrate and pulled.calibrate.fitted)})
    elif not quiet:
        typer.echo("\n".join(pull_lines(report) + calibrate_lines(pulled)))
    raise typer.Exit(max(show_refused(report), show_missing(report), show_uncalibrated(pulled)))


def pull_calibrated(layout, source: str, *, no_vectors: bool = False, calibrate: bool = True,
                    full: bool = False, scopes: list[str] | None = None):
    """The build API's pull: the bundles, then the calibrate step (nothing rescanned or re-embedded)."""
    from loci_pipeline import build
    from loci_pipeline.tasks import home_context

    ctx = home_context(layout, scan=False, graphs=False, embed=False, calibrate=calibrate)
    return build.pull(ctx, source, no_vectors=no_vectors, calibrate=calibrate, full=full, scopes=scopes)


def calibrate_lines(pulled) -> list[str]:
    if pulled.calibrate is None or not pulled.calibrate.fitted:
        return []
    floor = pulled.calibrate.data.get("params", {}).get("evidence_floor")
    return [f"calibrated to the scopes pulled: evidence floor {floor} (`loci calibrate --show` for the fit)"]


def show_uncalibrated(pulled) -> int:
    if not pulled.failed:
        return 0
    _err(f"pulled, but not calibrated ({pulled.failed}): run `loci calibrate`")
    return 1


def show_missing(report) -> int:
    """One line on stderr for each scope named with ``--scope`` that the store lacks; the exit code."""
    for name in report.missing:
        _err(f"no bundle of the scope {name!r} in {report.source}, so not pulled; check the name "
             f"(a store holds one folder per scope, named as the scope)")
    return 1 if report.missing else 0


def show_refused(report) -> int:
    """One line on stderr for each refused bundle; the exit code (1 if any was refused)."""
    for folder, why in sorted(report.refused.items()):
        _err(f"refused the bundle {folder!r}: {why}")
    return 1 if report.refused else 0


@commands.command()
@handled
def push(dest: str = typer.Argument(..., help="A folder, file://PATH or s3://bucket/prefix."),
         scopes: Optional[List[str]] = scope_flag("Only this scope (repeatable; default: every local scope)."),
         no_vectors: bool = typer.Option(False, "--no-vectors", help="Leave the embeddings out."),
         force: bool = typer.Option(False, "--force", help="Upload every bundle without comparing "
                                    "it with the published copy."),
         quiet: bool = quiet_flag(),
         as_json: bool = json_flag()):
    """Publish every local scope's bundle; only bundles whose manifest changed, or whose published
    copy no longer matches its checksums, are uploaded.

    \b
    Examples:
      loci push s3://bucket/prefix
      loci push --scope flask ./bundles
    """
    from loci_pipeline.share.push import push as run_push

    report = run_push(make_layout(), dest, chosen_scopes(scopes, None) or None, no_vectors=no_vectors, force=force)
    if not (json_or(as_json, report) or quiet):
        typer.echo(f"pushed {len(report.uploaded)} bundle(s) to {report.dest}, {len(report.unchanged)} unchanged")
        for name in report.uploaded:
            typer.echo(f"  {name}" + ("  (the published copy was damaged: replaced)"
                                      if name in report.repaired else ""))

