"""`loci embed`: local vectors for semantic recall (registers itself on the CLI app)."""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from loci.front.cli import _err, _writable_home, app, handled


def do_embed(model: Optional[str], quiet: bool) -> int:
    """Encode every indexed scope; returns an exit code. Shared by embed, setup and update."""
    from loci.query.semantic import EncoderUnavailable
    from pipeline import tasks
    from loci.kernel.atomic import write_json
    from pipeline.embed import EmbedError, open_encoder
    from pipeline.runner import run_tasks

    layout = _writable_home()
    if not (layout.home / "manifest.json").exists():
        _err("nothing indexed yet: run `loci setup DIR` (or `loci index`) before `loci embed`")
        return 1
    name = model or "default"
    from loci.query.semantic import STATIC_ID, is_static_model, model_id_for, static_model_dir

    if model_id_for(model) == STATIC_ID and not is_static_model(static_model_dir(layout)) and not quiet:
        typer.echo("distilling the static embedding model from the packaged one (once, about half a minute)...")
    try:  # load (and on first use distil) the model up front: a clear error before any work
        tasks._ENCODERS[name] = open_encoder(model, layout)
    except (EncoderUnavailable, EmbedError) as exc:
        _err(str(exc))
        return 1
    os.environ["LOCI_EMBED_MODEL"] = name
    progress = None
    if not quiet and sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        progress = Progress(TextColumn("embedding {task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), transient=True)
        bars: dict[str, int] = {}

        def on_progress(scope: str, done: int, total: int) -> None:
            if scope not in bars:
                bars[scope] = progress.add_task(scope, total=total, rate="")
            task = progress.tasks[bars[scope]]
            rate = f"{done / task.elapsed:,.0f} chunks/s" if task.elapsed and done else ""
            progress.update(bars[scope], completed=done, total=total, rate=rate)

        tasks.EMBED_PROGRESS = on_progress
        progress.start()
    try:
        report = run_tasks(layout, ["embed"], jobs=1)
    finally:
        tasks.EMBED_PROGRESS = None
        if progress is not None:
            progress.stop()
    failed = {k: v for k, v in report.failed.items()}
    for key, msg in failed.items():
        _err(f"{key.split(':', 1)[-1]}: {msg.strip().splitlines()[-1] if msg.strip() else 'failed'}")
    if not failed:
        write_json(layout.home / "embed.json", {"model": name, "model_id": tasks._ENCODERS[name].model_id})
    if not quiet:
        enc = sum(v.get("encoded", 0) for v in report.values.values())
        reused = sum(v.get("reused", 0) for v in report.values.values())
        typer.echo(f"embedded {len(report.values)} scope(s): {enc} encoded, {reused} reused "
                   f"({len(report.uptodate)} unchanged)")
    return 1 if failed or report.code else 0


@app.command()
@handled
def embed(model: Optional[str] = typer.Option(None, "--model", help="transformer (default: the packaged "
                                              "all-MiniLM-L6-v2), static (a small model distilled locally "
                                              "from it: 60x faster to build, weaker on paraphrases), or any "
                                              "sentence-transformers name or path."),
          quiet: bool = typer.Option(False, "--quiet", "-q")):
    """Encode every chunk and symbol label locally; only new or changed chunks are encoded."""
    raise typer.Exit(do_embed(model, quiet))
