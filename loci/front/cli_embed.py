"""`loci embed`: local vectors for semantic recall."""
from __future__ import annotations

from typing import Optional

import typer

from loci.front.cli_common import Commands, build_context, err, handled, quiet_flag, writable_home

commands = Commands()


def show_embed(report, quiet: bool) -> int:
    """Display a pipeline.build.EmbedReport; returns the exit code."""
    for name, msg in report.failed.items():
        err(f"{name}: {msg}")
    if not quiet:
        typer.echo(f"embedded {len(report.embedded)} scope(s): {report.encoded} encoded, {report.reused} reused "
                   f"({len(report.unchanged)} unchanged)")
    return report.code


@commands.command()
@handled
def embed(model: Optional[str] = typer.Option(None, "--model", help="transformer (default: the packaged "
                                              "all-MiniLM-L6-v2), static (a small model distilled locally "
                                              "from it: builds in seconds, weaker on paraphrases), or any "
                                              "sentence-transformers name or path."),
          quiet: bool = quiet_flag()):
    """Encode every chunk and symbol label locally; only new or changed chunks are encoded."""
    from loci.query.semantic import STATIC_ID, is_static_model, model_id_for, static_model_dir
    from pipeline import build

    layout = writable_home()
    ctx = build_context(layout, quiet=quiet, label="embedding", model=model or "default")
    if not layout.manifest.exists():
        build.embed(ctx)  # raises: nothing indexed yet, before any model is loaded
    if model_id_for(model) == STATIC_ID and not is_static_model(static_model_dir(layout)) and not quiet:
        typer.echo("distilling the static embedding model from the packaged one (once, about half a minute)...")
    raise typer.Exit(show_embed(build.embed(ctx), quiet))
