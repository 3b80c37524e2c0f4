"""Progress a log can read: lines at least every interval while a build runs, never a silent log."""
from __future__ import annotations

import io
from loci.front.progress import LogProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def reporter(interval: float = 10.0):
    out, clock = io.StringIO(), Clock()
    return LogProgress("setting up", out, interval=interval, clock=clock, heartbeat=False), out, clock


def lines(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines()


def test_a_planned_run_prints_its_size_at_once():
    progress, out, _ = reporter()
    progress.planned(4)
    assert lines(out) == ["loci setting up: 0/4 tasks (0/s, ETA ?) [elapsed 0 s]"]


def test_events_closer_than_the_interval_print_nothing_more():
    progress, out, clock = reporter()
    progress.planned(4)
    clock.now += 3
    progress.started("index:a")
    progress.finished("index:a")
    assert len(lines(out)) == 1


def test_a_quiet_stretch_gets_a_line_from_the_heartbeat_with_rate_and_eta():
    progress, out, clock = reporter()
    progress.planned(4)
    clock.now += 5
    progress.started("graphs:a")
    progress.finished("graphs:a")
    progress.started("graphs:b")
    clock.now += 5      # 10 s since the last line: due
    progress.tick()
    assert lines(out)[-1] == "loci setting up: 1/4 tasks (0.1/s, ETA 30 s), running graphs:b (5 s) [elapsed 10 s]"


def test_encoding_shows_texts_done_out_of_total_with_their_rate():
    progress, out, clock = reporter()
    progress.planned(2)
    progress.started("vectors:black")
    progress.encoding("black", 0, 1000)
    clock.now += 10
    progress.encoding("black", 400, 1000)
    assert lines(out)[-1] == "loci setting up: 0/2 tasks (0/s, ETA ?); embedding black: 400/1000 texts (40/s, ETA 15 s) [elapsed 10 s]"


def test_the_last_task_always_gets_its_line_and_then_the_heartbeat_is_silent():
    progress, out, clock = reporter()
    progress.planned(1)
    progress.started("index:a")
    clock.now += 1
    progress.finished("index:a")
    assert lines(out)[-1].startswith("loci setting up: 1/1 tasks")
    clock.now += 60
    progress.tick()
    assert len(lines(out)) == 2


def test_tasks_not_counted_up_front_still_get_lines_while_one_runs():
    progress, out, clock = reporter()
    progress.planned(0)
    assert lines(out) == []
    progress.started("index:black")
    clock.now += 12
    progress.tick()
    assert lines(out) == ["loci setting up: 0 tasks done, running index:black (12 s) [elapsed 12 s]"]
    progress.finished("index:black")
    clock.now += 60
    progress.tick()
    assert len(lines(out)) == 1


def test_a_setup_whose_output_is_not_a_terminal_writes_progress_lines(tmp_path, loci_home, monkeypatch):
    from typer.testing import CliRunner

    from loci.front import progress

    from loci.front.cli import app
    from tests.conftest import GIZMO, make_repo

    make_repo(tmp_path / "code" / "gizmo", GIZMO)
    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)   # every event is due
    res = CliRunner().invoke(app, ["setup", str(tmp_path / "code"), "-y", "--no-graphs", "--no-embed",
                                   "--no-calibrate"])
    assert res.exit_code == 0, res.output
    assert "loci setting up: 0/1 tasks" in res.output  # the index step routing pulls in is counted
    assert "running index:gizmo" in res.output and "loci setting up: 1/1 tasks" in res.output


def test_tasks_beyond_the_plan_turn_the_count_open_ended_instead_of_a_negative_eta():
    progress, out, clock = reporter(interval=0.0)
    progress.planned(1)
    for name in ("scan", "index:a", "index:b"):
        clock.now += 1
        progress.started(name)
        progress.finished(name)
    text = out.getvalue()
    assert "2/1" not in text and "3/1" not in text and "ETA -" not in text
    assert any(line.startswith("loci setting up: 2 tasks done") for line in lines(out))


def test_a_finished_build_leaves_no_heartbeat_thread_behind(loci_home, tmp_path):
    import threading

    from conftest import make_repo
    from loci.front.progress import log_progress
    from loci.kernel.config import layout
    from loci_pipeline import build
    from loci_pipeline.tasks import home_context

    make_repo(tmp_path / "code" / "alpha", {"README.md": "# alpha\n\nSprockets.\n"})
    ctx = home_context(layout(), graphs=False)
    ctx.progress = log_progress("building")
    build.scan(ctx, [tmp_path / "code"])
    assert build.update(ctx).code == 0
    assert not [t for t in threading.enumerate() if t.name == "loci-progress" and t.is_alive()]


def test_the_planned_count_includes_the_per_scope_steps_a_target_pulls_in():
    from doit.task import Task

    from loci_pipeline.runner import _reached

    tasks = {t.name: t for t in [
        Task("graphs", None, task_dep=["graphs:a", "graphs:b"]), Task("graphs:a", None), Task("graphs:b", None),
        Task("index", None, task_dep=["index:a", "index:b"]), Task("index:a", None), Task("index:b", None),
        Task("routing", None, task_dep=["index"]), Task("embed", None, task_dep=["vectors"]),
        Task("vectors", None, task_dep=["vectors:a"]), Task("vectors:a", None)]}
    assert _reached(tasks, ["graphs", "routing"]) == {
        "graphs", "graphs:a", "graphs:b", "routing", "index", "index:a", "index:b"}


def test_every_line_says_how_long_the_build_has_run_across_runs():
    progress, out, clock = reporter()
    progress.planned(2)
    clock.now += 95
    progress.finished("index:a")
    progress.idle()
    progress.planned(3)  # a second run of the same command counts again, the clock does not restart
    assert [ln.rsplit(" [", 1)[1] for ln in lines(out)] == ["elapsed 0 s]", "elapsed 1 min 35 s]",
                                                             "elapsed 1 min 35 s]"]


def test_a_finished_encoding_leaves_the_line_while_the_next_one_runs():
    # the multilingual store encodes each scope under its own label, which no task name pops:
    # a log line listed every finished scope of a 22-scope setup
    progress, out, clock = reporter()
    progress.planned(4)
    progress.encoding("black (multilingual)", 0, 500)
    progress.encoding("black (multilingual)", 500, 500)
    clock.now += 10
    progress.encoding("jinja (multilingual)", 100, 200)
    assert "black" not in lines(out)[-1] and "embedding jinja (multilingual): 100/200" in lines(out)[-1]


def test_an_update_that_pulls_first_counts_the_steps_made_once_the_pulls_landed(tmp_path, loci_home, monkeypatch):
    from typer.testing import CliRunner

    from loci.front import progress
    from loci.front.cli import app
    from tests.conftest import GIZMO, make_repo

    make_repo(tmp_path / "code" / "gizmo", GIZMO)
    res = CliRunner().invoke(app, ["setup", str(tmp_path / "code"), "-y", "--no-graphs", "--no-embed",
                                   "--no-calibrate", "--quiet"])
    assert res.exit_code == 0, res.output
    (tmp_path / "code" / "gizmo" / "README.md").write_text("# gizmo\n\nNow with flywheels.\n")
    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    res = CliRunner().invoke(app, ["update", "--no-graphs"])   # `update` is made after the pull step
    assert res.exit_code == 0, res.output
    assert "loci updating: 0/1 tasks" in res.output and "loci updating: 1/1 tasks" in res.output
