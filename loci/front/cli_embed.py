"""`loci embed`: local vectors for semantic recall."""
from __future__ import annotations

from typing import Optional

import typer

from loci.front.cli_common import (
    Commands, build_context, err, handled, interruptible, json_flag, json_or, quiet_flag, scoped, writable_home,
)

commands = Commands()


def _rechecked(scopes: list[str], encoded: int, reused: int) -> str:
    done = f"{encoded} new or changed chunk(s) encoded" if encoded else "no chunk needed encoding"
    return f"{len(scopes)} scope(s) rechecked, {done}, {reused} vector(s) kept"


def embed_line(report) -> str:
    """A loci_pipeline.build.EmbedReport in one line: scopes rechecked (chunks encoded, vectors kept)
    apart from scopes skipped as up to date, so "0 encoded, 9877 kept" never reads as nothing done;
    then what the multilingual store's step encoded, when it ran."""
    parts = []
    if report.embedded:
        parts.append(_rechecked(report.embedded, report.encoded, report.reused))
    if report.unchanged:
        parts.append(f"{len(report.unchanged)} scope(s) already up to date")
    if report.multilingual:
        parts.append("multilingual store: " + _rechecked(report.multilingual, report.multilingual_encoded,
                                                          report.multilingual_reused))
    return "embeddings: " + ("; ".join(parts) or "no scope to embed")


def show_embed(report, quiet: bool) -> int:
    """Display a loci_pipeline.build.EmbedReport; returns the exit code."""
    for name, msg in report.failed.items():
        err(scoped(name, msg))
    if not quiet:
        typer.echo(embed_line(report))
    return report.code


@commands.command()
@interruptible
@handled
def embed(model: Optional[str] = typer.Option(None, "--model", help="transformer (the packaged "
                                              "all-MiniLM-L6-v2), static (a small model distilled locally "
                                              "from it on first use, a one-time cost of half a minute to a "
                                              "few minutes of CPU; then thousands of chunks a second; "
                                              "weaker on paraphrases), or any sentence-transformers name "
                                              "or path. Default: the model the home's vectors were made "
                                              "with; for a home without vectors, transformer."),
          quiet: bool = quiet_flag(), as_json: bool = json_flag()):
    """Encode every chunk and symbol label locally; only new or changed chunks are encoded."""
    from loci.query.semantic import STATIC_ID, is_static_model, static_model_dir
    from loci_pipeline import build

    layout = writable_home()
    # like `loci index`: no code graph is extracted here (setup and update do that)
    # no --model: the model the home already uses (embed.json), the default only for a home without vectors
    quiet = quiet or as_json
    ctx = build_context(layout, quiet=quiet, label="embedding", model=model, graphs=False)
    if not layout.manifest.exists():
        build.embed(ctx)  # raises: nothing indexed yet, before any model is loaded
    if ctx.model_id() == STATIC_ID and not is_static_model(static_model_dir(layout)) and not quiet:
        typer.echo("distilling the static embedding model from the packaged one (once: half a minute "
                   "to a few minutes, by the load)...")
    report = build.embed(ctx)
    raise typer.Exit(show_embed(report, json_or(as_json, report) or quiet))
