"""doit over loci's build tasks, from the installed package (no checkout needed).

    python -m loci.dodo                  `loci update` itself (the same command: progress lines,
                                         summary, exit code); -a is its --force
    python -m loci.dodo index:NAME       one scope's index, the routing, then its vectors, the
                                         summaries and calibration (what the commit hooks run;
                                         add --wait to queue behind a build)
    python -m loci.dodo list | info T | forget T     doit's own commands
    doit -f $(loci dodo-path) [...]      the same tasks under plain doit

The home is $LOCI_HOME, else ~/.loci; doit's state lives in it (.doit.db). Every way in
goes through the `loci` entry module first, so the process is set up as `loci`'s (one
BLAS thread: on a busy machine several made the same update three times slower).
"""
from __future__ import annotations

import sys
from typing import Sequence

from loci.front import cli as _entry  # noqa: F401  (the `loci` process settings, before numpy loads)
from loci.kernel.config import layout as _layout

UPDATE_TARGETS = ([], ["update"])


def _namespace() -> dict:
    """For plain `doit -f`: the command doit was given decides whether the per-scope steps wait
    for the scan (``run``) or are made at once (``list``, ``info T``, ``forget T``). The default
    run (``update``) pulls again every source the home pulled from first, as `loci update` does;
    a hook's ``index:S`` does not."""
    from loci_pipeline.runner import DOIT_COMMANDS, namespace
    from loci_pipeline.tasks import home_context

    command = next((a for a in sys.argv[1:] if a in DOIT_COMMANDS), "run")
    return namespace(home_context(_layout(), pull=True), command=command)


def _context(quiet: bool):
    """The home's build context as `loci update` makes it (progress lines in a log, bars on a terminal)."""
    from loci.front.cli_common import build_context

    return build_context(_layout(), quiet=quiet, label="building")


def main(argv: Sequence[str]) -> int:
    """`python -m loci.dodo [--wait] [doit command | run options | targets]`: the update itself
    (no target, or `update`, with at most -a) goes to `loci update`, everything else to
    loci_pipeline.runner."""
    from doit.cmdparse import CmdParseError

    from loci_pipeline import buildlock, runner

    argv = list(argv)
    if argv and argv[0] in runner.DOIT_COMMANDS:  # nothing runs: no progress
        return runner.main(argv, _context(quiet=True))
    try:
        options, targets, force = runner.run_options([a for a in argv if a not in ("--wait", "run")])
    except CmdParseError:
        options, targets, force = ["?"], [], False  # runner.main says what is wrong
    if targets not in UPDATE_TARGETS or set(options) - {"-a", "--always-execute"}:
        return runner.main(argv, _context(quiet=False))
    layout = _layout()
    if "--wait" in argv:
        from loci.kernel.errors import LociError

        try:
            runner.wait_and_hold(layout)
        except LociError as exc:
            sys.stderr.write(f"loci: {exc}\n")
            return exc.exit_code
    try:
        try:
            _entry.main(["update"] + (["--force"] if force else []))
        except SystemExit as done:
            return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        return 0
    finally:
        if "--wait" in argv:
            buildlock.release(layout)


if __name__ != "__main__":  # loaded by `doit -f`: the task creators and DOIT_CONFIG
    globals().update(_namespace())
else:
    sys.exit(main(sys.argv[1:]))
