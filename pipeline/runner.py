"""Run the build tasks through doit as a library, and `python -m loci.dodo`.

``namespace(ctx, ...)`` is a doit namespace (task creators + DOIT_CONFIG) for
one BuildContext: the CLI, the MCP server, the demo, ``dodo.py`` and
``python -m loci.dodo`` all load it. doit's own state lives in the home
(sqlite3 backend); ``config_filenames=()`` keeps doit from reading a
pyproject.toml in the cwd. The build lock is taken around ``run`` only: by
``run`` here, and by the reporter when a run begins under plain ``doit``, so
``doit list``/``info``/``forget`` never take it.
"""
from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from doit.reporter import ConsoleReporter

from loci_pipeline import buildlock
from loci_pipeline.workers import default_jobs
from loci_pipeline.tasks import PER_SCOPE, BuildContext, make_tasks


@dataclass
class RunReport:
    """What one doit run did: task names executed, skipped as up to date, failed (with doit's message)."""

    executed: list[str] = field(default_factory=list)
    uptodate: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    blocked: dict[str, str] = field(default_factory=dict)   # not run: a dependency failed (task -> which)
    values: dict[str, dict] = field(default_factory=dict)
    code: int = 0

    def scopes(self, step: str, which: str = "executed") -> list[str]:
        """Scope names of ``step:S`` tasks in ``executed``, ``uptodate`` or ``failed``."""
        names = self.failed if which == "failed" else getattr(self, which)
        return sorted(n.split(":", 1)[1] for n in names if n.startswith(step + ":"))

    def add(self, other: "RunReport") -> None:
        """``other``'s tasks and values added to these (a later run of the same build)."""
        self.executed += other.executed
        self.uptodate += other.uptodate
        self.failed.update(other.failed)
        self.blocked.update(other.blocked)
        self.values.update(other.values)

    def failure(self, task: str) -> str:
        """doit's message for a failed task, as one line (its last non-empty line)."""
        lines = [ln.strip() for ln in self.failed.get(task, "").splitlines() if ln.strip()]
        return lines[-1] if lines else "failed"


def _per_scope(name: str) -> bool:
    return name.split(":", 1)[0] in PER_SCOPE and ":" in name


def _reached(tasks: dict, selected) -> set[str]:
    """The tasks a run of ``selected`` may execute: them, their subtasks and, transitively, what
    they depend on (``task_dep``), so the progress counts the per-scope steps a target pulls in."""
    todo, seen = list(selected), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in tasks:
            continue
        seen.add(name)
        task = tasks[name]
        todo += list(getattr(task, "task_dep", ()) or ()) + list(getattr(task, "setup_tasks", ()) or ())
        todo += _made_later(task)
    return seen


def _made_later(task) -> list[str]:
    """What a step doit makes later (``create_after``: ``update`` once an update's pulls landed)
    would depend on if it were made now; the per-scope steps are counted by scope instead."""
    loader = getattr(task, "loader", None)
    if not loader or task.name in PER_SCOPE or ":" in task.name:
        return []
    made = loader.creator()
    return list(made.get("task_dep", ())) if isinstance(made, dict) else []


def planned_count(tasks: dict, selected, scopes: int) -> int:
    """How many per-scope tasks a run of ``selected`` may execute. A step whose subtasks doit
    makes once the scan ran (``create_after``) counts one per registered scope; scopes the
    scan adds make the count open-ended (the progress says so)."""
    reached = _reached(tasks, selected)
    made = sum(1 for n in reached if _per_scope(n))
    later = sum(1 for n in reached if n in PER_SCOPE and getattr(tasks[n], "loader", None)
                and not any(t.startswith(n + ":") for t in tasks))
    return made + later * scopes


def reporter_class(ctx: BuildContext, report: RunReport, quiet: bool):
    """doit's console reporter that also fills ``report``, tells ``ctx.progress`` and holds the lock."""

    class Reporter(ConsoleReporter):
        desc = "loci: console output, run report, build lock"

        def __init__(self, outstream, options):
            super().__init__(io.StringIO() if quiet else outstream, options)
            self.locked = False

        def initialize(self, tasks, selected_tasks):
            from loci.kernel.atomic import LockHeld

            try:
                buildlock.hold(ctx.layout)
            except LockHeld as exc:  # plain `doit`: one line, no traceback
                sys.stderr.write(f"loci: {exc}\n")
                raise SystemExit(1) from None
            self.locked = True
            ctx.fresh()  # observe the repositories anew in each run
            live = sum(1 for s in ctx.registry().scopes if Path(s.path).is_dir())
            ctx.progress.planned(planned_count(tasks, selected_tasks or (), live))

        def execute_task(self, task):
            super().execute_task(task)
            if _per_scope(task.name):
                ctx.progress.started(task.name)

        def _ended(self, task, bucket: list[str] | None) -> None:
            """A task ran or was skipped: note it (tasks with actions only) and tell the progress."""
            if bucket is not None and task.actions:
                bucket.append(task.name)
            if _per_scope(task.name):
                ctx.progress.finished(task.name)

        def add_success(self, task):
            super().add_success(task)
            if task.values:
                report.values[task.name] = dict(task.values)
            self._ended(task, report.executed)

        def add_failure(self, task, fail):
            from doit.exceptions import UnmetDependency

            super().add_failure(task, fail)
            message = fail.get_msg() if hasattr(fail, "get_msg") else str(fail)
            if isinstance(fail, UnmetDependency):
                report.blocked[task.name] = str(fail)
            else:
                report.failed[task.name] = message
            self._ended(task, None)

        def skip_uptodate(self, task):
            super().skip_uptodate(task)
            self._ended(task, report.uptodate)

        def runtime_error(self, msg):
            super().runtime_error(msg)
            report.failed["runtime"] = msg

        def complete_run(self):
            super().complete_run()
            ctx.progress.idle()
            if self.locked:
                buildlock.release(ctx.layout)
                self.locked = False

    return Reporter


DOIT_COMMANDS = {"list", "info", "forget", "help", "clean", "dumpdb", "ignore", "reset-dep", "strace",
                 "tabcompletion", "auto"}   # doit's commands besides run: loci.dodo takes no lock for them


def namespace(ctx: BuildContext, report: RunReport | None = None, *, quiet: bool = False,
              command: str = "run") -> dict:
    """A doit namespace: the task creators for ``ctx`` and a DOIT_CONFIG whose state is in the home.

    Makes the home if it is missing (so `doit list` on a fresh machine works). ``command``:
    the doit command it is loaded for (one that runs nothing gets every task made at once)."""
    ctx.layout.home.mkdir(parents=True, exist_ok=True)
    ns = dict(make_tasks(ctx, delayed=command not in DOIT_COMMANDS))
    ns["DOIT_CONFIG"] = {
        "dep_file": str(ctx.layout.doit_db), "backend": "sqlite3", "default_tasks": ["update"],
        "continue": True, "verbosity": 0,
        # worker threads, never forked processes: graphify is a subprocess, the encoder releases
        # the GIL, and one process keeps one model load and one progress (build-schedule.md)
        "num_process": default_jobs(), "par_type": "thread",
        "reporter": reporter_class(ctx, report if report is not None else RunReport(), quiet),
    }
    return ns


def doit_main(ctx: BuildContext, report: RunReport | None = None, *, quiet: bool = False,
              command: str = "run"):
    """doit's DoitMain over ``namespace(ctx)`` (tests and `python -m loci.dodo` run it)."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    return DoitMain(ModuleTaskLoader(namespace(ctx, report, quiet=quiet, command=command)),
                    config_filenames=())


def run(ctx: BuildContext, targets: Sequence[str], *, force: bool = False, jobs: int | None = None,
        quiet: bool = True, single: bool = False, options: Sequence[str] = ()) -> RunReport:
    """Run doit ``targets`` (e.g. ["update"], ["index", "routing"]) for ``ctx`` in one doit run;
    LockHeld if busy. ``jobs``: worker threads (DOIT_CONFIG's default otherwise); ``options``:
    more of doit's run options, as given on a command line.

    When a scope's index fails, routing still merges what the other scopes built (a task of
    the same run, see ``task_indexed``). ``single``: run only ``targets``,
    not their ``task_dep`` (doit's ``-s``), in the order given (one worker)."""
    report = RunReport()
    ctx.fresh()
    buildlock.hold(ctx.layout)  # refuse here, cleanly, before doit starts
    try:
        _reset_damaged_state(ctx.layout)
        n = 1 if single else jobs
        args = ["run"] + (["-n", str(n)] if n is not None else []) + (["--always-execute"] if force else [])
        args += (["-s"] if single else []) + list(options) + list(targets)
        report.code = doit_main(ctx, report, quiet=quiet).run(args)
        if report.code and not report.failed and not report.blocked:  # doit refused before any task ran
            report.failed["doit"] = (f"doit could not run {' '.join(targets)} "
                                     f"(exit {report.code}; its message is above)")
    finally:
        buildlock.release(ctx.layout)
    return report


def _reset_damaged_state(layout) -> None:
    """A torn .doit.db is set aside (every step then runs again) instead of failing every build."""
    import sys

    from loci.kernel.integrity import set_aside_if_damaged

    note = set_aside_if_damaged(layout.doit_db)
    if note:
        print(f"loci: {note}", file=sys.stderr)


def wait_and_hold(layout, seconds: float = 1800.0, poll: float = 0.5) -> None:
    """Take the build lock, waiting (up to ``seconds``) for a running build to finish."""
    import time

    from loci.kernel.atomic import LockHeld

    deadline = time.monotonic() + seconds
    while True:
        try:
            buildlock.hold(layout)
            return
        except LockHeld:
            if time.monotonic() > deadline:
                raise
            time.sleep(poll)


def scope_targets(ctx: BuildContext, targets: Sequence[str]) -> list[str]:
    """The scopes named by ``index:S`` targets (what a hook asks for)."""
    return [t.split(":", 1)[1] for t in targets if t.startswith("index:")]


def encoding_steps(ctx: BuildContext, names: Sequence[str]) -> list[str]:
    """Each scope's encoding steps a commit hook asks for: its vectors and its multilingual store,
    when the home has them."""
    if not ctx.embed:
        return []
    stores = ["vectors"] + (["multilingual"] if ctx.multilingual() else [])
    return [f"{store}:{n}" for store in stores for n in names]


def run_scopes(ctx: BuildContext, names: Sequence[str], *, force: bool = False, quiet: bool = True) -> RunReport:
    """A commit hook's work, in `loci update`'s order, one doit run per phase: the scopes' index
    steps (after their graphs), following only their own dependencies, so another scope's edits
    wait; routing alone, which questions read, before the encoding (an interrupted hook leaves
    the new words routed); the encoding steps of the scopes that indexed; then, each alone, the
    home's steps that follow in an update (the merged summaries, the calibration), so the home
    is left as an update would leave it. Each phase runs only what is out of date. Not one
    ``-s`` run: doit's ``-s`` runs only the first of several targets. Not one run of all:
    routing's own dependencies are every scope's index (``indexed``), and the encoding steps
    wait for routing (``merge_first``, off here for that reason)."""
    ctx.scan, merge_first, ctx.merge_first = False, ctx.merge_first, False
    try:
        report = run(ctx, [f"index:{n}" for n in names], force=force, quiet=quiet)
        indexed = [n for n in names if f"index:{n}" not in report.failed]   # the rest would only fail again
        phases = [(["routing"], True), (encoding_steps(ctx, indexed), False)]   # (targets, alone)
        phases += [([step], True) for step in ("embed", "calibrate") if getattr(ctx, step)]
        for targets, alone in phases:
            if not targets:
                continue
            more = run(ctx, targets, force=force and not alone, single=alone, quiet=quiet)
            report.add(more)
            if more.failed:   # what follows reads it, as a task_dep would hold it back
                break
    finally:
        ctx.merge_first = merge_first
    report.code = report.code or (1 if report.failed else 0)
    return report


def run_update(ctx: BuildContext, *, force: bool = False, jobs: int | None = None, quiet: bool = True) -> RunReport:
    """The ``update`` task, in one doit run: the pulls first when ``ctx.pull`` (``pull:SOURCE``),
    then scan, the per-scope steps doit makes from the registry the scan left (``create_after``),
    routing, and the home's embed and calibrate steps."""
    return run(ctx, ["update"], force=force, jobs=jobs, quiet=quiet)


def run_options(argv: Sequence[str]) -> tuple[list[str], list[str], bool]:
    """``argv`` of `doit run` split by doit's own parser: (options, targets, always-execute).
    Raises doit's CmdParseError for an option it does not know."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.cmd_run import Run

    params, targets = Run(task_loader=ModuleTaskLoader({}), config={}).cmdparser.parse(list(argv))
    options = list(argv)[:len(argv) - len(targets)]
    return options, list(targets), bool(params["always"])


def main(argv: Sequence[str], ctx: BuildContext) -> int:
    """`python -m loci.dodo [--wait] [doit command | run options and targets]` for named targets
    (loci.dodo sends the update itself, no targets, to `loci update`), with the home's context
    ``ctx`` (its progress display included). A run's options are doit's; only ``--wait``
    (queue behind a running build) is loci's."""
    from doit.cmdparse import CmdParseError

    from loci.kernel.errors import LociError

    argv = list(argv)
    wait = "--wait" in argv
    argv = [a for a in argv if a != "--wait"]
    layout = ctx.layout
    if argv and argv[0] in DOIT_COMMANDS:  # nothing runs: no lock
        return doit_main(ctx, command=argv[0]).run(argv)
    if argv[:1] == ["run"]:
        argv = argv[1:]
    try:
        options, targets, force = run_options(argv)
    except CmdParseError as exc:
        why = str(exc).split(" (parsing options", 1)[0].removeprefix("Error parsing Command: ")
        sys.stderr.write(f"loci: {why} (`python -m loci.dodo help run` lists doit's run options)\n")
        return 2
    try:
        if wait:
            wait_and_hold(layout)
        try:
            names = scope_targets(ctx, targets)
            if names and len(names) == len(targets):
                report = run_scopes(ctx, names, force=force, quiet=False)
            else:
                report = run(ctx, targets, quiet=False, options=options)
        finally:
            if wait:
                buildlock.release(layout)
    except LociError as exc:
        sys.stderr.write(f"loci: {exc}\n")
        return exc.exit_code
    if report.failed:
        return 1
    return report.code
