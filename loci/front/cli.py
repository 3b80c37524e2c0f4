"""The `loci` entry point. A plain `route` or `ask` is answered by ``loci.front.oneshot``
without importing typer (a one-shot question pays for every import); everything else goes
to the typer app in ``loci.front.cli_app``, which ``app`` here names."""
from __future__ import annotations

import os
import sys

# one-shot commands do little linear algebra; a single BLAS thread starts numpy ~2x faster. The
# warm engine, which encodes every question, takes two unless the user chose (engine_client.start)
BLAS_CHOSEN = os.environ.get("OPENBLAS_NUM_THREADS")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> None:
    from loci.front.oneshot import run

    args = sys.argv[1:] if argv is None else list(argv)
    code = run(args)
    if code is not None:
        sys.stdout.flush()
        raise SystemExit(code)
    from loci.front.cli_app import app

    if "--json" not in args:
        app(args)
        return
    import click

    try:  # with --json, a bad command line is a JSON object too
        code = app(args, standalone_mode=False)
    except click.ClickException as exc:
        from loci.front.oneshot import report_failure

        report_failure(exc.format_message(), True, None)
        code = exc.exit_code
    except click.Abort:
        code = 1
    sys.stdout.flush()
    raise SystemExit(code if isinstance(code, int) else 0)


def __getattr__(name: str):
    """``from loci.front.cli import app`` (and the commands) without loading typer at entry."""
    if name.startswith("__"):  # the import system probing (``__path__``): not a command
        raise AttributeError(name)
    from loci.front import cli_app

    return getattr(cli_app, name)


if __name__ == "__main__":
    main()
