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

    import click

    as_json = "--json" in args
    try:   # a command line loci cannot read is one line (with --json, one object) and exit code 2
        code = app(args, prog_name="loci", standalone_mode=False)
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as exc:   # `loci hook`: its help
        exc.show()
        code = exc.exit_code
    except click.ClickException as exc:
        from loci.front.cli_common import err
        from loci.front.oneshot import report_failure

        report_failure(usage_line(exc), as_json, err)
        code = exc.exit_code
    except click.Abort:
        sys.stderr.write("Aborted!\n")
        code = 1
    sys.stdout.flush()
    raise SystemExit(code if isinstance(code, int) else 0)


def usage_line(exc) -> str:
    """A click error in one line, with the help that says what the command takes: "No such option
    '--scop' (Did you mean ...?); see `loci ask --help`"."""
    import click

    message = exc.format_message().strip().replace(". (Did you mean", " (did you mean")
    low = message.lower()
    first = low.find("did you mean")
    twice = low.find("did you mean", first + 1) if first >= 0 else -1
    if twice > 0:   # typer and click each suggested the close command names: keep the first
        cut = message.rfind(" (", 0, twice)
        message = message[:cut if cut > first else twice].strip()
    ctx = getattr(exc, "ctx", None)
    if not isinstance(exc, click.UsageError) or ctx is None:
        return message
    command = ctx.command_path
    if ctx.info_name in ("ask", "route") and message.startswith("Got unexpected extra argument"):
        return (f"{message}; the question is one argument: quote it, "
                f'`{command} "how do I ...?"` (`{command} --help` says what it takes)')
    return f"{message.rstrip('.')}; see `{command} --help`"


def __getattr__(name: str):
    """``from loci.front.cli import app`` (and the commands) without loading typer at entry."""
    if name.startswith("__"):  # the import system probing (``__path__``): not a command
        raise AttributeError(name)
    from loci.front import cli_app

    return getattr(cli_app, name)


if __name__ == "__main__":
    main()
