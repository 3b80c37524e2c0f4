"""A damaged or hostile home: no traceback, one line naming the file and the fix, and the fix works.

Each case damages a copy of one small built home (two repositories, indexed, calibrated,
embedded with a tiny fake encoder), runs the command a user would run, checks the message
names the file and a command, runs that command, and checks the home answers again.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import GIT_ENV, make_repo
from loci.front.cli import app

runner = CliRunner()
MODEL = "fake-concepts"
QUESTION = "alpha sprocket widgets"

ALPHA = {
    "README.md": "# alpha\n\nThe alpha project parses sprocket widgets and ratchets.\n",
    "alpha/core.py": 'def run_alpha():\n    """Run the alpha sprocket."""\n    return 1\n',
    "pyproject.toml": '[project]\nname = "alpha"\ndependencies = ["requests"]\n',
}
BETA = {
    "README.md": "# beta\n\nThe beta project renders flywheel diagrams for dashboards.\n",
    "beta/draw.py": 'def draw_beta():\n    """Draw the beta flywheel."""\n    return 2\n',
    "package.json": '{"name": "beta", "dependencies": {"left-pad": "1"}}\n',
}


class FakeEncoder:
    """Deterministic little vectors: enough for `loci embed` and `ask` to run end to end."""

    model_id = MODEL
    dim = 8
    batch_size = 16

    def encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, sum(map(ord, word)) % self.dim] += 1.0
            out[i, 0] += 0.01
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _fake_models(mp: pytest.MonkeyPatch) -> None:
    import loci.query.semantic
    import loci_pipeline.embed

    mp.setattr(loci_pipeline.embed, "open_encoder", lambda name, layout: FakeEncoder())
    mp.setattr(loci.query.semantic, "load_encoder", lambda name, layout, **kw: FakeEncoder())


def ok(res) -> bool:
    """The command ended by itself (an exit code), not by an exception's traceback."""
    return (res.exception is None or isinstance(res.exception, SystemExit)) and "Traceback" not in res.output


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(code dir, pristine home copy): built once, copied back for every case."""
    root = tmp_path_factory.mktemp("hostile")
    code, home = root / "code", root / "home"
    with pytest.MonkeyPatch.context() as mp:
        for k, v in GIT_ENV.items():
            mp.setenv(k, v)
        mp.setenv("LOCI_HOME", str(home))
        _fake_models(mp)
        make_repo(code / "alpha", ALPHA)
        make_repo(code / "beta", BETA)
        res = runner.invoke(app, ["setup", str(code), "-y", "--quiet", "--no-graphs"])
        assert res.exit_code == 0, res.output
        assert json.loads((home / "embed.json").read_text())["model_id"] == MODEL
    shutil.copytree(home, root / "pristine", symlinks=True)
    return code, root / "pristine"


@pytest.fixture
def home(built, monkeypatch):
    code, pristine = built
    target = pristine.parent / "home"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(pristine, target, symlinks=True)
    monkeypatch.setenv("LOCI_HOME", str(target))
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    _fake_models(monkeypatch)
    return target


def answers(home: Path) -> bool:
    res = runner.invoke(app, ["ask", "--json", "--no-cwd", QUESTION])
    if res.exit_code != 0 or not ok(res):
        return False
    out = json.loads(res.stdout)
    return out["scopes"][:1] == ["alpha"] and any(b["episodes"] for b in out["blocks"])


def vectors(home: Path, scope: str) -> Path:
    from loci.kernel.config import safe_name

    return home / "vectors" / safe_name(MODEL) / f"{scope}.parquet"


def summary(home: Path, scope: str) -> Path:
    from loci.kernel.config import safe_name

    return home / "vectors" / safe_name(MODEL) / "summary" / f"{scope}.npy"


def rewrite_json(path: Path, change: Callable[[object], object]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def truncate(path: Path, keep: int = 200) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def scope_groups_five(obj):
    obj["scopes"][0]["groups"] = 5
    return obj


def calibration_with_a_string_table(obj):
    obj["semantic"] = "fitted"
    return obj


@dataclass(frozen=True)
class Case:
    name: str
    damage: Callable[[Path], None]
    probe: tuple[str, ...]            # what the user runs and sees fail (or doctor)
    file: str                         # the file the message must name
    fix: tuple[str, ...]              # the command the message names, run as the repair


CASES = [
    Case("scope groups is a number", lambda h: rewrite_json(h / "scopes.json", scope_groups_five),
         ("scopes",), "scopes.json", ("scan", "{code}")),
    # a question reads routing.sqlite, not the manifest (loci.kernel.merged_metas): doctor names it
    Case("manifest is null", lambda h: (h / "manifest.json").write_text("null"),
         ("doctor",), "manifest.json", ("index",)),
    Case("manifest is a list", lambda h: (h / "manifest.json").write_text("[]"),
         ("doctor",), "manifest.json", ("index",)),
    Case("calibration holds a string where a table belongs",
         lambda h: rewrite_json(h / "calibration.json", calibration_with_a_string_table),
         ("calibrate", "--show"), "calibration.json", ("calibrate",)),
    Case("meta is a list", lambda h: (h / "meta" / "alpha.json").write_text("[]"),
         ("doctor",), "alpha.json", ("index",)),
    Case("error record is a list", lambda h: (h / "errors").mkdir() or (h / "errors" / "alpha.json").write_text("[]"),
         ("doctor",), "alpha.json", ("index",)),
    Case("embed.json is a list", lambda h: (h / "embed.json").write_text("[1]"),
         ("doctor",), "embed.json", ("embed",)),
    Case("doit's build state is truncated", lambda h: truncate(h / ".doit.db", 4096),
         ("doctor",), ".doit.db", ("index",)),
    Case("uses.parquet is truncated", lambda h: truncate(h / "uses.parquet"),
         ("uses",), "uses.parquet", ("index",)),
    Case("a vector matrix is empty", lambda h: vectors(h, "alpha").with_suffix(".npy").write_bytes(b""),
         ("doctor",), "alpha.npy", ("embed",)),
    Case("a query file is truncated", lambda h: truncate(h / "query" / "alpha.sqlite", 1024),
         ("doctor",), "alpha.sqlite", ("index",)),
    Case("routing.sqlite is truncated", lambda h: truncate(h / "routing.sqlite", 1024),
         ("ask", "--no-cwd", QUESTION), "routing.sqlite", ("index",)),
    Case("a chunk table is truncated", lambda h: truncate(h / "chunks" / "alpha.parquet"),
         ("doctor",), "alpha.parquet", ("index",)),
    # questions still answer from routing.sqlite; `loci update` writes the manifest and refits the
    # calibration that reads it in one run (`loci index` would leave the calibration to refit)
    Case("manifest.json is deleted", lambda h: (h / "manifest.json").unlink(),
         ("doctor",), "manifest.json", ("update",)),
    Case("a symbols table is torn", lambda h: (h / "symbols").mkdir(exist_ok=True)
         or (h / "symbols" / "alpha.parquet").write_bytes(b"PAR1" + b"\0" * 100),
         ("doctor",), "symbols/alpha.parquet", ("index",)),
    Case("a vector summary is empty", lambda h: summary(h, "alpha").write_bytes(b""),
         ("doctor",), "summary/alpha.npy", ("embed",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_damage_is_named_with_a_fix_that_restores_the_home(case, home, built):
    code, _ = built
    case.damage(home)
    seen = runner.invoke(app, list(case.probe))
    assert ok(seen), seen.output
    assert seen.exit_code != 0, seen.output
    fix = " ".join(a.replace("{code}", "DIR") for a in case.fix)
    assert case.file in seen.output and f"loci {fix}" in seen.output, seen.output
    repaired = runner.invoke(app, [a.replace("{code}", str(code)) for a in case.fix])
    assert ok(repaired) and repaired.exit_code == 0, repaired.output
    again = runner.invoke(app, list(case.probe))
    assert ok(again) and again.exit_code == 0 or case.file not in again.output, again.output
    assert answers(home)


def test_an_empty_vector_summary_does_not_wedge_update(home):
    summary(home, "alpha").write_bytes(b"")
    res = runner.invoke(app, ["update", "--quiet", "--no-graphs"])
    assert ok(res) and res.exit_code == 0, res.output
    assert np.load(summary(home, "alpha")).ndim == 2
    assert answers(home)


def test_a_lock_holding_a_list_does_not_block_a_build(home):
    (home / ".build.lock").write_text("[1, 2]")
    res = runner.invoke(app, ["index", "--force", "--quiet"])
    assert ok(res) and res.exit_code == 0, res.output
    assert answers(home)


def test_a_lock_whose_pid_was_reused_by_another_process_is_broken(home):
    from loci.kernel.atomic import process_start

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = process_start(sleeper.pid)
        if started is None:
            pytest.skip("no /proc: start times are unknown here")
        (home / ".build.lock").write_text(json.dumps({"pid": sleeper.pid, "what": "index", "start": started - 1}))
        res = runner.invoke(app, ["index", "--force", "--quiet"])
        assert ok(res) and res.exit_code == 0, res.output
        (home / ".build.lock").write_text(json.dumps({"pid": sleeper.pid, "what": "index", "start": started}))
        res = runner.invoke(app, ["index", "--force", "--quiet"])
        assert res.exit_code == 1 and "another loci index is running" in res.output
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_truncated_graph_is_named_and_rebuilt(home, built):
    from loci_pipeline.graphs import graphify_available

    if not graphify_available():
        pytest.skip("needs the graph extra")
    assert runner.invoke(app, ["graphs", "alpha", "--quiet"]).exit_code == 0
    assert runner.invoke(app, ["index", "--quiet"]).exit_code == 0
    graph = home / "graphs" / "alpha" / "graph.json.gz"
    truncate(graph)
    seen = runner.invoke(app, ["doctor"])
    assert ok(seen) and "graph.json.gz" in seen.output and "loci graphs --scope alpha" in seen.output
    for args in (["graphs", "alpha"], ["index"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
    assert json.loads(gzip.decompress(graph.read_bytes()))["nodes"]
    out = json.loads(runner.invoke(app, ["ask", "--json", "--scope", "alpha", "where is run_alpha defined"]).stdout)
    assert any(s["label"].startswith("run_alpha") for b in out["blocks"] for s in b["structure"]), out
    assert "graph.json" not in runner.invoke(app, ["doctor"]).output


@pytest.mark.parametrize("manifest,text", [
    ("pyproject.toml", '[project]\nname = "gamma"\ndependencies = 5\n'),
    ("package.json", '{"name": "gamma", "dependencies": 5}\n'),
])
def test_a_bad_dependency_value_is_skipped_and_the_repository_still_indexed(tmp_path, loci_home, manifest, text):
    make_repo(tmp_path / "code" / "gamma", {
        manifest: text, "README.md": "# gamma\n\nGamma tracks quasar telescope mirrors.\n"})
    res = runner.invoke(app, ["setup", str(tmp_path / "code"), "-y", "--no-graphs", "--no-embed", "--no-calibrate"])
    assert ok(res) and res.exit_code == 0, res.output
    assert f"gamma: {manifest}: `dependencies`" in res.output or f"gamma: {manifest}: `project.dependencies`" in res.output
    out = json.loads(runner.invoke(app, ["ask", "--json", "--scope", "gamma", "quasar telescope mirrors"]).stdout)
    assert any("quasar" in e["text"] for b in out["blocks"] for e in b["episodes"])


def test_a_file_name_that_is_not_utf8_does_not_stop_the_graph(tmp_path, loci_home):
    from loci_pipeline.graphs import graphify_available

    if not graphify_available():
        pytest.skip("needs the graph extra")
    repo = make_repo(tmp_path / "code" / "odd", {"good.py": "def good_function():\n    return 1\n"})
    (repo / os.fsdecode(b"bad\xff.py")).write_bytes(b"def bad_function():\n    return 2\n")
    res = runner.invoke(app, ["setup", str(tmp_path / "code"), "-y", "--no-embed", "--no-calibrate"])
    assert ok(res) and res.exit_code == 0, res.output
    assert b"good_function" in gzip.decompress((loci_home / "graphs" / "odd" / "graph.json.gz").read_bytes())


def test_a_home_path_with_url_characters_works_and_leaves_nothing_outside(tmp_path, monkeypatch):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    make_repo(tmp_path / "code" / "alpha", ALPHA)
    parent = tmp_path / "homes"
    parent.mkdir()
    home = parent / "we#ird?h%20ome"
    monkeypatch.setenv("LOCI_HOME", str(home))
    res = runner.invoke(app, ["setup", str(tmp_path / "code"), "-y", "--quiet", "--no-graphs", "--no-embed"])
    assert res.exit_code == 0, res.output
    assert answers(home)
    assert sorted(p.name for p in parent.iterdir()) == [home.name]


def test_adding_an_alias_while_scans_run_never_loses_it(tmp_path, loci_home):
    from loci.kernel.config import layout
    from loci.kernel.registry import editing_registry, load_registry
    from loci_pipeline.scan import add_scope, scan

    code = tmp_path / "code"
    for name in ("one", "two", "three"):
        make_repo(code / name, {"README.md": f"# {name}\n"})
    lay = layout()
    with editing_registry(lay) as edit:
        edit.registry = scan([code], prior=edit.registry).registry
    errors: list[BaseException] = []

    def scans():
        try:
            for _ in range(15):
                with editing_registry(lay) as edit:
                    edit.registry = scan([code], prior=edit.registry).registry
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def aliases():
        try:
            for i in range(15):
                with editing_registry(lay) as edit:
                    edit.registry = add_scope(edit.registry, code / "two", alias=[f"nick{i}"])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=scans), threading.Thread(target=scans), threading.Thread(target=aliases)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    two = load_registry(lay).get("two")
    assert {f"nick{i}" for i in range(15)} <= set(two.aliases)


def test_reading_a_repository_never_takes_its_index_lock(home, built):
    code, _ = built
    index = code / "alpha" / ".git" / "index"
    (code / "alpha" / "README.md").touch()       # a stat change `git status` would refresh
    os.utime(index, (1_000_000_000, 1_000_000_000))
    before = index.stat().st_mtime_ns, index.read_bytes()
    for args in (["doctor"], ["index", "--quiet"], ["scan", str(code)]):
        runner.invoke(app, args)
    assert (index.stat().st_mtime_ns, index.read_bytes()) == before


def test_a_registered_scope_shows_its_owner(home, built):
    rows = json.loads(runner.invoke(app, ["scopes", "--json"]).stdout)
    assert all(r["owner"] for r in rows)
    text = runner.invoke(app, ["scopes"]).stdout
    assert all(r["owner"] in line for r, line in zip(rows, text.splitlines()))


# ---- rough edges a new user hits

def test_setup_without_a_directory_or_a_terminal_asks_for_one(tmp_path, loci_home, monkeypatch):
    make_repo(tmp_path / "here", {"README.md": "# here\n"})
    monkeypatch.chdir(tmp_path / "here")
    res = runner.invoke(app, ["setup", "-y"])
    assert ok(res) and res.exit_code == 2
    assert "loci setup DIR" in res.output and not (loci_home / "scopes.json").exists()


def test_setup_of_a_folder_that_does_not_exist_is_refused_even_in_a_home_with_scopes(tmp_path, loci_home):
    make_repo(tmp_path / "code" / "here", {"README.md": "# here\n"})
    assert runner.invoke(app, ["setup", "-y", "--no-graphs", "--no-embed", str(tmp_path / "code")]).exit_code == 0
    built = (loci_home / "manifest.json").stat().st_mtime_ns
    res = runner.invoke(app, ["setup", "-y", "--no-graphs", "--no-embed", str(tmp_path / "cdoe")])
    assert ok(res) and res.exit_code == 2, res.output
    assert "cdoe" in res.output and (loci_home / "manifest.json").stat().st_mtime_ns == built


def test_a_failure_that_names_its_scope_is_not_prefixed_with_it_again():
    from loci.front.cli_common import scoped

    assert scoped("webby", "webby: cannot load the model") == "webby: cannot load the model"
    assert scoped("webby", "cannot load the model") == "webby: cannot load the model"


def test_an_abstention_gives_one_cause_and_one_fix(home):
    from loci.front.render import FIXES, REASONS

    for question in ("how do I install it?", "zebra quokka narwhal"):
        lines = runner.invoke(app, ["route", "--no-cwd", question]).stdout.splitlines()
        assert lines[0].startswith("ABSTAINED")
        causes = [r for r in REASONS.values() if any(r in line for line in lines)]
        fixes = [line for line in lines if line.strip() in FIXES.values()]
        assert len(causes) == 1 and len(fixes) == 1, lines


def test_the_demo_leaves_no_folder_behind_and_explains_every_line(tmp_path, monkeypatch):
    import tempfile

    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "mine"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    res = runner.invoke(app, ["demo"])
    assert ok(res) and res.exit_code == 0, res.output
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not any(line.strip().startswith("unknown:") for line in res.output.splitlines())
    assert os.environ["LOCI_HOME"] == str(tmp_path / "mine")


def test_the_mcp_server_reports_a_version():
    pytest.importorskip("mcp")
    from loci.front.mcp_server import Service, build_server

    server = build_server(Service())
    low = getattr(server, "_mcp_server", server)
    assert getattr(low, "version", None)


def test_the_cli_offers_shell_completion():
    res = runner.invoke(app, ["--help"])
    assert "--install-completion" in res.output


def test_the_distribution_name_is_used_in_every_install_hint():
    from loci.kernel.dist import DIST, install_hint
    from loci_pipeline.graphs import INSTALL_HINT

    text = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert f'name = "{DIST}"' in text and f"{DIST}[graph,embed,mcp,multilingual]" in text
    assert INSTALL_HINT == install_hint("graph") == f"pip install '{DIST}[graph]'"
    assert "loci-mem" not in DIST


def test_pages_overwritten_in_place_are_found_and_force_rebuilt(home):
    path = home / "query" / "alpha.sqlite"
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page + 8: 2 * page] = b"\xff" * (page - 8)       # the second page: same size, garbage inside
    path.write_bytes(bytes(data))
    seen = runner.invoke(app, ["doctor"])
    assert ok(seen) and "alpha.sqlite" in seen.output and "loci index --force" in seen.output, seen.output
    assert runner.invoke(app, ["index", "--force", "--quiet"]).exit_code == 0
    assert "alpha.sqlite" not in runner.invoke(app, ["doctor"]).output
    assert answers(home)
