"""Run the build tasks in-process through doit as a library.

``config_filenames=()`` keeps doit from reading a pyproject.toml in the cwd;
doit's own state lives in $LOCI_HOME (sqlite3 backend).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from loci.kernel.config import Layout


@dataclass
class RunReport:
    executed: list[str] = field(default_factory=list)
    uptodate: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict] = field(default_factory=dict)
    code: int = 0


def _reporter_class(report: RunReport, on_event: Callable[[str, str], None] | None):
    class Reporter:
        desc = "loci progress reporter"

        def __init__(self, outstream, options):
            pass

        def initialize(self, tasks, selected_tasks):
            if on_event:
                chosen = set(selected_tasks or ())
                subtasks = [n for n in tasks if ":" in n and (n in chosen or n.split(":", 1)[0] in chosen)]
                on_event("total", str(len(subtasks)))

        def get_status(self, task):
            pass

        def execute_task(self, task):
            if on_event and ":" in task.name:
                on_event("start", task.name)

        def add_success(self, task):
            if ":" in task.name or task.actions:
                report.executed.append(task.name)
            if task.values:
                report.values[task.name] = dict(task.values)
            if on_event and ":" in task.name:
                on_event("done", task.name)

        def add_failure(self, task, fail):
            report.failed[task.name] = fail.get_msg() if hasattr(fail, "get_msg") else str(fail)
            if on_event and ":" in task.name:
                on_event("done", task.name)

        def skip_uptodate(self, task):
            report.uptodate.append(task.name)
            if on_event and ":" in task.name:
                on_event("done", task.name)

        def skip_ignore(self, task):
            pass

        def cleanup_error(self, exception):
            report.failed["cleanup"] = str(exception)

        def runtime_error(self, msg):
            report.failed["runtime"] = msg

        def teardown_task(self, task):
            pass

        def complete_run(self):
            pass

    return Reporter


def default_jobs() -> int:
    import os

    return max(1, min(4, os.cpu_count() or 1))


def run_tasks(layout: Layout, targets: Sequence[str], *, force: bool = False, jobs: int | None = None,
              on_event: Callable[[str, str], None] | None = None) -> RunReport:
    """Run doit ``targets`` (e.g. ["index", "routing"]) against ``layout.home``."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    import pipeline.tasks as tasks_module

    tasks_module.forget_fingerprints()  # the working trees may have moved since the last run

    layout.home.mkdir(parents=True, exist_ok=True)
    report = RunReport()
    namespace = {k: getattr(tasks_module, k) for k in dir(tasks_module) if k.startswith("task_")}
    namespace["DOIT_CONFIG"] = {
        "dep_file": str(layout.doit_db), "backend": "sqlite3",
        "reporter": _reporter_class(report, on_event), "verbosity": 0,
    }
    args = ["run", "--continue"]
    if jobs is None:  # worker processes pay off only when several scopes need work
        from pipeline.tasks import stale_scopes

        many = any(t.startswith("graphs") for t in targets) or len(stale_scopes(layout)) > 1
        jobs = default_jobs() if force or many else 1
    if jobs > 1:
        args += ["-n", str(jobs), "-P", "process"]
    if force:
        args.append("--always-execute")
    args.extend(targets)
    from pipeline import buildlock

    buildlock.hold(layout)  # refuse here, cleanly, rather than from inside doit's task loader
    from loci.kernel.integrity import set_aside_if_damaged

    note = set_aside_if_damaged(layout.doit_db)  # a torn build state: start it afresh
    if note:
        import sys

        print(f"loci: {note}", file=sys.stderr)
    try:
        report.code = DoitMain(ModuleTaskLoader(namespace), config_filenames=()).run(args)
    finally:
        buildlock.release(layout)  # a later run in this process takes it again
    return report
