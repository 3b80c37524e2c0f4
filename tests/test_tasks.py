"""The build as doit's DAG: which tasks run after an edit, under doit, loci update and a hook."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import make_repo
from loci.kernel.config import layout
from loci_pipeline import build
from loci_pipeline.runner import RunReport, doit_main, run, run_scopes
from loci_pipeline.tasks import BuildContext, home_context
from test_embed import FakeEncoder

ROOT = Path(__file__).resolve().parent.parent
REPOS = {
    "alpha": {"README.md": "# alpha\n\nSprocket calibration toolkit.\n",
              "alpha/core.py": "def calibrate_sprocket():\n    pass\n"},
    "beta": {"README.md": "# beta\n\nCookie sessions over HTTP.\n",
             "beta/server.py": "class SessionJar:\n    pass\n"},
    "gamma": {"README.md": "# gamma\n\nWeather station logger.\n",
              "gamma/log.py": "def log_reading():\n    pass\n"},
}


def built(code: Path, repos: dict[str, dict[str, str]]) -> Path:
    """``repos`` made under ``code``, scanned and built once (no graphs, no vectors)."""
    for name, files in repos.items():
        make_repo(code / name, files)
    ctx = BuildContext(layout())
    build.scan(ctx, [code])
    assert build.update(ctx).code == 0
    return code


@pytest.fixture
def three(tmp_path, loci_home):
    """Three scopes, scanned and built once (no graphs, no vectors): returns the code folder."""
    return built(tmp_path / "code", REPOS)


def home(lay, **overrides) -> BuildContext:
    """The home's context without code graphs (graphify takes seconds; one test asks for them)."""
    return home_context(lay, **{"graphs": False, **overrides})


def doit(ctx: BuildContext, *args: str) -> RunReport:
    """`doit run ARGS` in-process, through DoitMain and the project's loader."""
    report = RunReport()
    report.code = doit_main(ctx, report, quiet=True).run(["run", *args])
    return report


def edit(repo: Path, word: str) -> None:
    (repo / "README.md").write_text((repo / "README.md").read_text() + f"\nNow with {word}.\n")


def routed_tokens(lay) -> set[str]:
    import sqlite3

    con = sqlite3.connect(lay.routing_db)
    try:
        return {t for (t,) in con.execute("SELECT token FROM routing")}
    finally:
        con.close()


def test_doit_alone_after_one_edit_reindexes_that_scope_and_merges_routing(three):
    edit(three / "beta", "websockets")
    report = doit(home(layout()))
    assert report.code == 0
    assert report.executed == ["scan", "index:beta", "routing"]
    assert sorted(report.uptodate) == ["index:alpha", "index:gamma"]
    assert "websocket" in routed_tokens(layout())


def test_loci_update_after_one_edit_runs_the_same_tasks(three):
    edit(three / "beta", "websockets")
    report = build.update(home(layout()))
    assert report.tasks == ["scan", "index:beta", "routing"]
    assert report.index.rebuilt == ["beta"] and report.index.routed


def test_a_hook_run_rebuilds_its_scope_and_the_routing_it_feeds_only(three):
    edit(three / "beta", "websockets")
    edit(three / "gamma", "barometers")  # dirty, but not the hook's repository
    report = run_scopes(home(layout()), ["beta"])
    assert report.executed == ["index:beta", "routing"]
    assert "websocket" in routed_tokens(layout()) and "barometer" not in routed_tokens(layout())


def test_an_edit_below_a_glob_directory_rebuilds_its_scope(three, tmp_path):
    from loci.kernel.registry import load_registry, save_registry
    from loci_pipeline.scan import add_scope

    notes = tmp_path / "notes" / "deep" / "er"
    notes.mkdir(parents=True)
    (notes / "plan.md").write_text("# plan\n\nRoadmap for sprockets.\n")
    save_registry(layout(), add_scope(load_registry(layout()), three / "alpha", glob=[str(tmp_path / "notes")]))
    assert doit(home(layout())).scopes("index") == ["alpha"]
    (notes / "plan.md").write_text("# plan\n\nRoadmap for sprockets and zeppelins.\n")
    os.utime(notes / "plan.md", (time.time() + 5, time.time() + 5))  # a new mtime even on a coarse clock
    report = doit(home(layout()))
    assert report.scopes("index") == ["alpha"]
    import pyarrow.parquet as pq

    assert any("zeppelins" in t for t in pq.read_table(layout().chunks("alpha")).column("text").to_pylist())


def test_doit_with_nothing_changed_only_rescans(three):
    report = doit(home(layout()))
    assert report.executed == ["scan"]
    assert sorted(report.uptodate) == ["index:alpha", "index:beta", "index:gamma", "routing"]


def test_doit_and_loci_update_leave_byte_identical_routing_after_the_same_edit(tmp_path, monkeypatch):
    code = tmp_path / "code"
    for name, files in REPOS.items():
        make_repo(code / name, files)
    homes = {how: layout(tmp_path / how) for how in ("doit", "update")}
    for lay in homes.values():
        build.scan(BuildContext(lay), [code])
        build.update(BuildContext(lay))
    edit(code / "beta", "websockets")
    assert doit(home(homes["doit"])).code == 0
    assert build.update(home(homes["update"])).code == 0
    assert homes["doit"].routing_db.read_bytes() == homes["update"].routing_db.read_bytes()


def test_doit_index_embed_in_one_run_embeds_the_fresh_chunks(three):
    ctx = home(layout(), open_encoder=lambda name, lay: FakeEncoder())
    ctx.encoder()
    first = doit(ctx, "index", "embed")
    assert first.code == 0 and sorted(first.scopes("vectors")) == ["alpha", "beta", "gamma"]
    assert json.loads((layout().home / "embed.json").read_text())["model_id"] == "fake"
    edit(three / "beta", "websockets")
    again = doit(ctx, "index", "embed")
    assert again.scopes("index") == ["beta"] and again.scopes("vectors") == ["beta"]
    assert again.values["vectors:beta"]["encoded"] >= 1


def test_a_hook_run_refreshes_the_vector_stores_of_its_scopes_only(three):
    from loci.kernel.vectorstore import multilingual_vectors
    from test_multilingual import BilingualEncoder

    def ctx(**kw):
        return home(layout(), open_encoder=lambda name, lay: FakeEncoder(),
                    open_multilingual=lambda lay: BilingualEncoder(), **kw)

    assert doit(ctx(), "embed").code == 0
    assert doit(ctx(), "embed").scopes("multilingual") == []   # nothing changed: nothing encoded
    stamps = {n: multilingual_vectors(layout(), n).with_suffix(".json").stat().st_mtime_ns for n in REPOS}
    edit(three / "beta", "websockets")
    edit(three / "gamma", "barometers")
    report = run_scopes(ctx(embed=True), ["beta", "gamma"])
    assert report.scopes("vectors") == ["beta", "gamma"] and report.scopes("multilingual") == ["beta", "gamma"]
    after = {n: multilingual_vectors(layout(), n).with_suffix(".json").stat().st_mtime_ns for n in REPOS}
    assert [n for n in REPOS if after[n] != stamps[n]] == ["beta", "gamma"]


def test_vectors_built_by_doit_alone_are_the_ones_queries_read(three):
    from loci.kernel.config import read_embed_config

    ctx = home(layout(), open_encoder=lambda name, lay: FakeEncoder())
    ctx.encoder()
    assert doit(ctx, "embed").code == 0
    assert read_embed_config(layout())["model_id"] == "fake"
    from loci.query.semantic import vector_files

    assert all(p.is_file() for p in vector_files(layout().vectors("fake", "alpha")))


def test_doit_graphs_index_indexes_against_the_new_graph(three):
    pytest.importorskip("graphify")
    ctx = home_context(layout(), graphs=True)
    assert doit(ctx, "graphs", "index").code == 0
    (three / "alpha" / "alpha" / "core.py").write_text(
        "def calibrate_sprocket():\n    pass\n\ndef freshly_added_gizmo():\n    pass\n")
    report = doit(ctx, "graphs", "index")
    assert "graphs:alpha" in report.executed and report.scopes("index") == ["alpha"]
    import pyarrow.parquet as pq

    labels = pq.read_table(layout().symbols("alpha")).column("label").to_pylist()
    assert any("freshly_added_gizmo" in label for label in labels)


@pytest.fixture
def beta_breaks(monkeypatch):
    import loci_pipeline.collect

    real = loci_pipeline.collect.collect_scope

    def collect(name, *args, **kwargs):
        if name == "beta":
            raise RuntimeError("beta's README cannot be read")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(loci_pipeline.collect, "collect_scope", collect)


def test_a_failing_scope_fails_its_task_only_and_the_others_still_build(three, beta_breaks):
    for name, word in (("alpha", "flywheels"), ("beta", "websockets"), ("gamma", "barometers")):
        edit(three / name, word)
    report = run(home(layout()), ["update"])
    assert list(report.failed) == ["index:beta"]
    assert "beta's README cannot be read" in report.failure("index:beta")
    assert report.scopes("index") == ["alpha", "gamma"] and "routing" in report.executed
    assert {"flywheel", "barometer"} <= routed_tokens(layout())
    assert layout().error("beta").exists()


def test_plain_doit_reports_the_failed_scope_and_still_merges_the_others_routing(three, beta_breaks):
    edit(three / "alpha", "flywheels")
    edit(three / "beta", "websockets")
    report = doit(home(layout()))
    assert report.code != 0 and list(report.failed) == ["index:beta"]
    assert report.scopes("index") == ["alpha"] and report.scopes("index", "uptodate") == ["gamma"]
    assert "routing" in report.executed and "flywheel" in routed_tokens(layout())


def test_loci_index_names_the_failed_scope_and_its_fix(three, beta_breaks):
    from typer.testing import CliRunner

    from loci.front.cli import app

    edit(three / "beta", "websockets")
    res = CliRunner().invoke(app, ["index"])
    assert res.exit_code == 1
    assert "beta: RuntimeError: beta's README cannot be read" in res.output and "loci index" in res.output


def test_doit_list_on_a_fresh_machine_makes_the_home_and_takes_no_lock(tmp_path, monkeypatch):
    home = tmp_path / "nowhere-yet"
    monkeypatch.setenv("LOCI_HOME", str(home))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        home.mkdir()
        (home / ".build.lock").write_text(json.dumps({"pid": sleeper.pid, "what": "build"}))
        out = subprocess.run([sys.executable, "-m", "loci.dodo", "list"], capture_output=True, text=True,
                             cwd=ROOT, env={**os.environ, "LOCI_HOME": str(home / "inner")})
        assert out.returncode == 0, out.stderr
        assert "index" in out.stdout and "Traceback" not in out.stderr
        assert (home / "inner" / ".doit.db").exists()
        listed = subprocess.run([sys.executable, "-m", "loci.dodo", "list"], capture_output=True, text=True,
                                cwd=ROOT)
        assert listed.returncode == 0 and "routing" in listed.stdout  # the busy home: listing needs no lock
        busy = subprocess.run([sys.executable, "-m", "loci.dodo"], capture_output=True, text=True, cwd=ROOT)
        assert busy.returncode == 1 and "another loci build is running" in busy.stderr
        assert "Traceback" not in busy.stderr
    finally:
        sleeper.kill()
        sleeper.wait()


def test_plain_doit_from_the_checkout_runs_the_same_tasks(three):
    pytest.importorskip("graphify")
    doit(home_context(layout()))  # the checkout's dodo refreshes graphs too: build them first
    edit(three / "beta", "websockets")
    out = subprocess.run([sys.executable, "-m", "doit", "-f", str(ROOT / "dodo.py")], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert sorted(ln[3:] for ln in lines if ln.startswith(".  ")) == ["index:beta", "routing", "scan"]
    assert {"-- index:alpha", "-- index:gamma", "-- graphs:beta"} <= set(lines)


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(entry.name))
    return kids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_multi_scope_build_runs_its_scopes_side_by_side_without_forking_workers(three, tmp_path):
    for name in REPOS:
        edit(three / name, "lighthouses")
    started = tmp_path / "started"
    started.mkdir()
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        import loci_pipeline.tasks
        from loci.kernel.config import layout
        from loci_pipeline.runner import run

        def slow(layout, name, *a, **k):   # a scope that takes its time
            (Path({str(started)!r}) / name).touch()
            time.sleep(120)
        loci_pipeline.tasks.index_scope = slow
        run(loci_pipeline.tasks.BuildContext(layout()), ["index"], jobs=2)
    """))
    main = subprocess.Popen([sys.executable, str(driver)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})  # this checkout's code
    try:
        deadline = time.monotonic() + 60
        while len(list(started.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(list(started.iterdir())) == 2  # two scopes at once
        assert _children(main.pid) == []           # in threads of the build: nothing to outlive it
    finally:
        main.kill()
        main.wait()


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer, forbidden", [
    ("kernel", ("loci_pipeline", "loci.query", "loci.front")),
    ("query", ("loci_pipeline", "loci.front")),
])
def test_the_read_side_never_imports_the_build_side(layer, forbidden):
    modules = sorted((ROOT / "loci" / layer).rglob("*.py"))
    assert modules
    offenders = {f"{m.relative_to(ROOT)} imports {name}"
                 for m in modules for name in _imports(m)
                 if any(name == f or name.startswith(f + ".") for f in forbidden)}
    assert offenders == set()


def _graph_record_for_the_code_as_it_is(lay, name: str, repo: Path) -> None:
    """What graphs:S leaves behind, without running graphify: a record of the current code."""
    from loci.kernel.atomic import write_json
    from loci_pipeline.graphs import _setup, code_fingerprint, fingerprint_path

    fingerprint_path(name, lay).parent.mkdir(parents=True, exist_ok=True)
    write_json(fingerprint_path(name, lay), {"fingerprint": code_fingerprint(repo)[0], "status": "built",
                                             "setup": _setup([])})


def test_a_graph_checked_at_an_unchanged_repository_state_is_not_fingerprinted_again(three, monkeypatch):
    import loci_pipeline.graphs

    lay = layout()
    _graph_record_for_the_code_as_it_is(lay, "alpha", three / "alpha")
    record = loci_pipeline.graphs.fingerprint_path("alpha", lay)
    written = record.read_bytes()
    assert home(lay).graph_fresh("alpha")  # by its code fingerprint
    assert record.read_bytes() == written   # an up-to-date check writes nothing
    home(lay).remember_graph_state("alpha")  # what index:alpha does once it ran: the record learns the state
    real = loci_pipeline.graphs.code_fingerprint
    monkeypatch.setattr(loci_pipeline.graphs, "code_fingerprint", lambda *a, **k: pytest.fail("fingerprinted"))
    assert home(lay).graph_fresh("alpha")
    edit(three / "alpha", "docs")  # a prose edit moves the git state, not the code
    monkeypatch.setattr(loci_pipeline.graphs, "code_fingerprint", real)
    assert home(lay).graph_fresh("alpha")
    (three / "alpha" / "alpha" / "core.py").write_text("def calibrate_sprocket():\n    return 1\n")
    assert not home(lay).graph_fresh("alpha")


def test_a_no_change_check_opens_no_database_but_still_sees_a_truncated_one(three):
    from loci.kernel.integrity import scope_index_problems

    lay = layout()
    assert scope_index_problems(lay, "alpha", open_db=False) == []
    db = lay.query_db("alpha")
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    assert [p for p, _why in scope_index_problems(lay, "alpha", open_db=False)] == [db]


def test_a_no_change_run_imports_neither_numpy_nor_pyarrow(three):
    assert _dodo().returncode == 0  # settle: the home's steps (graphs, when graphify is here) built
    code = ("import sys\nfrom loci.dodo import main\n"
            "main([])\nprint(sorted(m for m in ('numpy', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "LOCI_HOME": str(layout().home)}, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_damaged_owner_memo_is_read_as_empty_and_written_anew(three):
    lay = layout()
    lay.owners.write_text("{not json")
    ctx = home(lay)
    assert build.update(ctx).code == 0  # rescans the roots with the memo ignored
    assert json.loads(lay.owners.read_text())  # whole again, one entry a repository


def _dodo(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m loci.dodo ARGS` with its output going to pipes (not a terminal, as in a CI log)."""
    return subprocess.run([sys.executable, "-m", "loci.dodo", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "LOCI_HOME": str(layout().home), **(env or {})}, timeout=300)


def test_python_m_loci_dodo_prints_what_loci_update_prints_after_the_same_edit(three, tmp_path):
    from shutil import copytree

    assert _dodo().returncode == 0  # settle: the home's steps (graphs, when graphify is here) built
    twin = tmp_path / "twin-home"
    copytree(layout().home, twin)
    edit(three / "beta", "websockets")
    dodo = _dodo()
    update = subprocess.run([sys.executable, "-m", "loci", "update"], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "LOCI_HOME": str(twin)}, timeout=300)
    assert dodo.returncode == update.returncode == 0, dodo.stderr + update.stderr
    assert "indexed 1 scope(s), 2 unchanged" in dodo.stdout
    assert dodo.stdout == update.stdout


def test_python_m_loci_dodo_writes_progress_lines_when_its_output_is_not_a_terminal(three):
    edit(three / "beta", "websockets")
    out = _dodo()
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith("loci updating: 0/")


def test_every_way_into_the_tasks_runs_on_one_blas_thread(three):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    show = "import os, loci.dodo; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    for code in (show, "import runpy, os; runpy.run_path('dodo.py'); print(os.environ.get('OPENBLAS_NUM_THREADS'))"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                             env={**env, "LOCI_HOME": str(layout().home)}, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["1"]


def test_python_m_loci_dodo_dash_a_is_loci_update_force(three):
    out = _dodo("-a")
    assert out.returncode == 0, out.stderr
    assert "indexed 3 scope(s), 0 unchanged" in out.stdout


def test_an_update_with_every_step_is_one_doit_run(three, monkeypatch):
    import loci_pipeline.runner

    runs = []
    real = loci_pipeline.runner.doit_main
    monkeypatch.setattr(loci_pipeline.runner, "doit_main", lambda *a, **k: runs.append(a) or real(*a, **k))
    ctx = home(layout(), embed=True, calibrate=True, open_encoder=lambda name, lay: FakeEncoder())
    edit(three / "beta", "websockets")
    report = build.update(ctx)
    assert report.code == 0, report.failed
    assert len(runs) == 1
    assert report.tasks[0] == "scan" and report.tasks[-1] == "calibrate"
    assert {"index:beta", "routing", "vectors:alpha", "embed"} <= set(report.tasks)
    assert report.tasks.index("index:beta") < report.tasks.index("vectors:beta")


def test_a_repository_the_scan_finds_is_built_in_the_same_doit_run(three):
    make_repo(three / "delta", {"README.md": "# delta\n\nLighthouse keeper rota.\n"})
    report = doit(home(layout()))
    assert report.code == 0
    assert report.executed == ["scan", "index:delta", "routing"]
    assert "lighthouse" in routed_tokens(layout())


def test_the_progress_count_of_an_update_never_goes_back(three):
    from loci.front.progress import LogProgress

    class Clock:
        now = 0.0

        def __call__(self):
            self.now += 100.0  # every event is due
            return self.now

    import io

    out = io.StringIO()
    ctx = home(layout(), embed=True, calibrate=True, open_encoder=lambda name, lay: FakeEncoder())
    ctx.progress = LogProgress("updating", out, clock=Clock(), heartbeat=False)
    edit(three / "beta", "websockets")
    assert build.update(ctx).code == 0
    import re

    counts = [tuple(map(int, m.groups())) for m in re.finditer(r"(\d+)/(\d+) tasks", out.getvalue())]
    assert counts[0] == (0, 6) and counts[-1] == (6, 6)  # index:S and vectors:S of three scopes
    assert [c for c, _ in counts] == sorted(c for c, _ in counts) and {t for _, t in counts} == {6}


def test_doit_s_own_commands_name_each_scope_s_steps(three):
    listed = _dodo("list", "--all")
    assert listed.returncode == 0, listed.stderr
    assert {"index:alpha", "vectors:beta", "routing"} <= set(listed.stdout.split())
    assert _dodo("info", "index:alpha").returncode == 0
    assert _dodo("forget", "index:alpha").returncode == 0
    plain = subprocess.run([sys.executable, "-m", "doit", "-f", str(ROOT / "dodo.py"), "info", "index:beta"],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert plain.returncode == 0, plain.stderr


def test_python_m_loci_dodo_takes_doit_s_run_options_and_names_an_unknown_one(three):
    edit(three / "beta", "websockets")
    ran = _dodo("-n", "1", "--continue", "index:beta")
    assert ran.returncode == 0, ran.stderr
    assert "websocket" in routed_tokens(layout())
    bad = _dodo("--bogus", "index:beta")
    assert bad.returncode == 2 and "option --bogus not recognized" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.splitlines()) == 1


def test_worker_threads_encode_one_scope_at_a_time_with_one_encoder(three):
    import threading

    class Watched(FakeEncoder):
        def __init__(self):
            super().__init__()
            self.active = self.most = 0
            self.guard = threading.Lock()

        def encode(self, texts):
            with self.guard:
                self.active += 1
                self.most = max(self.most, self.active)
            time.sleep(0.05)
            try:
                return super().encode(texts)
            finally:
                with self.guard:
                    self.active -= 1

    opened = []
    ctx = home(layout(), embed=True, open_encoder=lambda name, lay: opened.append(Watched()) or opened[-1])
    report = run(ctx, ["embed"], jobs=3)
    assert report.code == 0 and report.scopes("vectors") == ["alpha", "beta", "gamma"]
    assert len(opened) == 1 and opened[0].most == 1


def test_a_hook_s_run_writes_progress_lines_to_its_log(three):
    edit(three / "beta", "websockets")
    out = _dodo("--wait", "index:beta")
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith("loci building: 0/")
