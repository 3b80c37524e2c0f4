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
from typing import Sequence

from doit.reporter import ConsoleReporter

from pipeline import buildlock
from pipeline.tasks import BuildContext, make_tasks

PER_SCOPE = ("graphs", "index", "vectors", "multilingual")


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
    return seen


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
            reached = _reached(tasks, selected_tasks or ())
            ctx.progress.planned(sum(1 for n in reached if _per_scope(n)))

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


LIGHT_STEPS = ("scan", "graphs", "index", "routing")   # need no embedding step


def namespace(ctx: BuildContext, report: RunReport | None = None, *, quiet: bool = False,
              targets: Sequence[str] = ()) -> dict:
    """A doit namespace: the task creators for ``ctx`` and a DOIT_CONFIG whose state is in the home.

    Makes the home if it is missing (so `doit list` on a fresh machine works). With ``targets``
    that need no embedding step, the embedding steps' creators are left out (loading them
    imports numpy: most of a no-change run's start-up)."""
    ctx.layout.home.mkdir(parents=True, exist_ok=True)
    ns = dict(make_tasks(ctx))
    if targets and all(t.split(":", 1)[0] in LIGHT_STEPS for t in targets):
        ns = {f"task_{step}": ns[f"task_{step}"] for step in LIGHT_STEPS}
    ns["DOIT_CONFIG"] = {
        "dep_file": str(ctx.layout.doit_db), "backend": "sqlite3", "default_tasks": ["update"],
        "continue": True, "verbosity": 0,
        "reporter": reporter_class(ctx, report if report is not None else RunReport(), quiet),
    }
    return ns


def _entry_points_once():
    """doit looks its plugins up in the installed packages' entry points on every run (three
    groups, each a scan of every installed distribution); an update makes up to three runs in
    one process, so the lookups are made once. doit.plugin.entry_points_impl is its seam for this."""
    import functools
    from importlib.metadata import entry_points

    import doit.plugin

    if getattr(doit.plugin.entry_points_impl, "loci_cached", False):
        return
    cached = functools.lru_cache(maxsize=None)(lambda group: tuple(entry_points(group=group)))

    def impl():
        return lambda group: cached(group)
    impl.loci_cached = True
    doit.plugin.entry_points_impl = impl


def doit_main(ctx: BuildContext, report: RunReport | None = None, *, quiet: bool = False,
              targets: Sequence[str] = ()):
    """doit's DoitMain over ``namespace(ctx)`` (tests and `python -m loci.dodo` run it)."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    _entry_points_once()
    return DoitMain(ModuleTaskLoader(namespace(ctx, report, quiet=quiet, targets=targets)),
                    config_filenames=())


def default_jobs() -> int:
    import os

    return max(1, min(4, os.cpu_count() or 1))


def _jobs(ctx: BuildContext, targets: Sequence[str], force: bool) -> int:
    """Worker processes pay off only when several scopes need work (their graph or their index)."""
    if force:
        return default_jobs()
    graphs = ctx.graphs or any(t.split(":", 1)[0] == "graphs" for t in targets)
    stale = 0
    for scope in ctx.registry().scopes:
        if scope.name in ctx.git_states() and not (_built_from(ctx, scope) and
                                                   (not graphs or ctx.graph_fresh(scope.name))):
            stale += 1
            if stale > 1:
                return default_jobs()
    return 1


def _built_from(ctx: BuildContext, scope) -> bool:
    from loci.kernel.state import read_meta

    return (read_meta(ctx.layout, scope.name) or {}).get("fingerprint") == ctx.fingerprint(scope)


def run(ctx: BuildContext, targets: Sequence[str], *, force: bool = False, jobs: int | None = None,
        quiet: bool = True, single: bool = False) -> RunReport:
    """Run doit ``targets`` (e.g. ["update"], ["index", "routing"]) for ``ctx``; LockHeld if busy.

    When a scope's index fails, doit skips routing (a dependency failed); it is then merged
    alone, so the other scopes' new artifacts are routed to. ``single``: run only ``targets``,
    not their ``task_dep`` (doit's ``-s``)."""
    report = RunReport()
    ctx.fresh()
    buildlock.hold(ctx.layout)  # refuse here, cleanly, before doit starts
    try:
        _reset_damaged_state(ctx.layout)
        n = _jobs(ctx, targets, force) if jobs is None else jobs
        args = ["run"] + (["-n", str(n), "-P", "process"] if n > 1 else [])
        args += (["--always-execute"] if force else []) + (["-s"] if single else []) + list(targets)
        report.code = doit_main(ctx, report, quiet=quiet, targets=targets).run(args)
        if report.code and not report.failed and not report.blocked:  # doit refused before any task ran
            report.failed["doit"] = (f"doit could not run {' '.join(targets)} "
                                     f"(exit {report.code}; its message is above)")
        if report.scopes("index", "failed") and "routing" in report.blocked:
            from pipeline.tasks import routing_action

            routing_action(ctx)  # a scope failed: route to what the other scopes built
            report.executed.append("routing")
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


DOIT_COMMANDS = {"list", "info", "forget", "help", "clean", "dumpdb", "ignore", "reset-dep", "strace",
                 "tabcompletion", "auto"}


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


def run_scopes(ctx: BuildContext, names: Sequence[str], *, force: bool = False, quiet: bool = True) -> RunReport:
    """``index:S`` for ``names``, then the routing they feed, then their vectors when the home has them
    (what a commit hook asks for: no rescan)."""
    ctx.scan = False
    report = run(ctx, [f"index:{n}" for n in names], force=force, quiet=quiet)
    if report.scopes("index"):
        merged = run(ctx, ["routing"], single=True, quiet=quiet)
        report.executed += merged.executed
        report.failed.update(merged.failed)
    if ctx.embed and report.scopes("index"):
        changed = [n for n in names if f"index:{n}" in report.executed]
        stores = ["vectors"] + (["multilingual"] if ctx.multilingual() else [])
        # not ``single``: doit's -s runs only the first of several targets (a hook on two scopes
        # re-embedded one); these tasks' own task_dep (the multilingual cache) is cheap when current
        embedded = run(ctx, [f"{store}:{n}" for store in stores for n in changed], jobs=1, quiet=quiet)
        report.executed += embedded.executed
        report.failed.update(embedded.failed)
    report.code = report.code or (1 if report.failed else 0)
    return report


def run_update(ctx: BuildContext, *, force: bool = False, jobs: int | None = None, quiet: bool = True) -> RunReport:
    """The ``update`` task in runs: scan (so the tasks load from the new registry), graphs to
    routing with worker processes, then embed and calibrate in this process (one model load;
    progress reaches ``ctx.progress``)."""
    report = RunReport()
    steps = [(["scan"], 1)] if ctx.scan else []
    steps.append(((["graphs"] if ctx.graphs else []) + ["routing"], jobs))
    later = (["embed"] if ctx.embed else []) + (["calibrate"] if ctx.calibrate else [])
    if later:
        steps.append((later, 1))
    graphs = ctx.graphs
    try:
        for targets, n in steps:
            more = run(ctx, targets, force=force, jobs=n, quiet=quiet)
            if targets != ["scan"]:  # graphs and index are current now: later runs need not look again
                ctx.settled, ctx.graphs = True, False
            ctx.scan = False  # done, or not wanted
            report.executed += [t for t in more.executed if t not in report.executed]
            report.uptodate += [t for t in more.uptodate if t not in report.uptodate and t not in report.executed]
            report.failed.update(more.failed)
            report.blocked.update(more.blocked)
            report.values.update(more.values)
            report.code = report.code or more.code
    finally:
        ctx.settled, ctx.graphs = False, graphs
    return report


def main(argv: Sequence[str], layout) -> int:
    """`python -m loci.dodo [--wait] [doit command | run options and targets]`."""
    from loci.kernel.errors import LociError
    from pipeline.tasks import home_context

    argv = list(argv)
    wait = "--wait" in argv
    argv = [a for a in argv if a != "--wait"]
    ctx = home_context(layout)
    if argv and argv[0] in DOIT_COMMANDS:  # nothing runs: no lock
        return doit_main(ctx).run(argv)
    if argv[:1] == ["run"]:
        argv = argv[1:]
    force = any(a in ("-a", "--always-execute") for a in argv)
    jobs = None
    if "-n" in argv:
        jobs = int(argv[argv.index("-n") + 1])
        del argv[argv.index("-n"):argv.index("-n") + 2]
    targets = [a for a in argv if not a.startswith("-")]
    unknown = [a for a in argv if a.startswith("-") and a not in ("-a", "--always-execute")]
    if unknown:
        sys.stderr.write(f"loci: {unknown[0]} is not an option here (-a, -n N, --wait); "
                         "for the rest of doit's, run `doit -f $(loci dodo-path) ...`\n")
        return 2
    try:
        if wait:
            wait_and_hold(layout)
        try:
            names = scope_targets(ctx, targets)
            if names and len(names) == len(targets):
                report = run_scopes(ctx, names, force=force, quiet=False)
            elif targets in ([], ["update"]):
                report = run_update(ctx, force=force, jobs=jobs, quiet=False)
            else:
                report = run(ctx, targets, force=force, jobs=jobs, quiet=False)
        finally:
            if wait:
                buildlock.release(layout)
    except LociError as exc:
        sys.stderr.write(f"loci: {exc}\n")
        return exc.exit_code
    if report.failed:
        return 1
    return report.code
