"""The build: scan + index through doit, fingerprints, locks, atomic artifacts."""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import git, make_repo
from loci.kernel.config import layout
from loci.kernel.registry import save_registry
from loci.kernel.atomic import LockHeld, build_lock, write_bytes
from loci_pipeline.runner import run
from loci_pipeline.tasks import BuildContext
from loci_pipeline.scan import scan


def setup_corpus(tmp_path):
    make_repo(tmp_path / "code" / "gizmo", {
        "README.md": "# gizmo\n\nA sprocket calibration toolkit.\n\n## Usage\n\nCall calibrate_sprocket().\n",
        "gizmo/core.py": '"""Core."""\n\ndef calibrate_sprocket(x):\n    """Docstringonlyword appears here."""\n    return x\n',
        "tests/test_core.py": "def test_fixtureword():\n    pass\n",
    })
    make_repo(tmp_path / "code" / "webby", {
        "README.md": "# webby\n\nServe cookies and sessions over HTTP.\n",
        "webby/server.py": "class SessionCookieJar:\n    def send(self):\n        pass\n",
    })
    lay = layout()
    save_registry(lay, scan([tmp_path / "code"]).registry)
    return lay


def routing_rows(lay) -> list[dict]:
    import sqlite3

    con = sqlite3.connect(lay.routing_db)
    names = dict(con.execute("SELECT id, name FROM scopes"))
    rows = [{"token": t, "scope": names[s], "weight": w}
            for t, s, w in con.execute("SELECT token, scope, weight FROM routing")]
    con.close()
    return rows


def built(report):
    return sorted(n.split(":", 1)[1] for n in report.executed if n.startswith("index:"))


def test_index_writes_chunks_routing_and_a_merge_listing_every_scope(tmp_path, loci_home):
    lay = setup_corpus(tmp_path)
    report = run(BuildContext(lay), ["index", "routing"])
    assert report.code == 0 and built(report) == ["gizmo", "webby"]
    from loci.query.store import indexed_metas

    assert set(indexed_metas(lay)) == {"gizmo", "webby"} and "scopes" not in json.loads(lay.manifest.read_text())
    chunks = pq.read_table(lay.chunks("gizmo")).to_pylist()
    assert any(c["kind"] == "readme" and c["path"] == "README.md" for c in chunks)
    assert {c["path_kind"] for c in chunks if c["path"].startswith("tests/")} <= {"test"}
    routing = routing_rows(lay)
    assert {"token": "sprocket", "scope": "gizmo"}.items() <= next(
        r for r in routing if r["token"] == "sprocket").items()


def test_docstrings_feed_retrieval_but_never_routing(tmp_path, loci_home):
    lay = setup_corpus(tmp_path)
    run(BuildContext(lay), ["index", "routing"])
    tokens = {r["token"] for r in routing_rows(lay)}
    assert "docstringonlyword" not in tokens
    texts = " ".join(pq.read_table(lay.chunks("gizmo")).column("text").to_pylist()).lower()
    assert "docstringonlyword" in texts


def test_a_word_seen_only_in_tests_weighs_less_than_source(tmp_path, loci_home):
    lay = setup_corpus(tmp_path)
    run(BuildContext(lay), ["index", "routing"])
    vocab = dict(zip(*[pq.read_table(lay.vocab("gizmo")).column(c).to_pylist() for c in ("token", "weight")]))
    assert vocab["fixtureword"] < vocab["calibrate_sprocket"]


def test_a_second_run_with_nothing_changed_rebuilds_nothing(tmp_path, loci_home):
    lay = setup_corpus(tmp_path)
    run(BuildContext(lay), ["index", "routing"])
    before = lay.manifest.stat().st_mtime_ns
    report = run(BuildContext(lay), ["index", "routing"])
    assert built(report) == [] and "routing" not in report.executed
    assert lay.manifest.stat().st_mtime_ns == before


def test_editing_one_tracked_file_rebuilds_that_scope_only(tmp_path, loci_home):
    lay = setup_corpus(tmp_path)
    run(BuildContext(lay), ["index", "routing"])
    (tmp_path / "code" / "webby" / "README.md").write_text("# webby\n\nNow with websockets.\n")
    report = run(BuildContext(lay), ["index", "routing"])
    assert built(report) == ["webby"] and "routing" in report.executed
    tokens = {r["token"] for r in routing_rows(lay)}
    assert "websocket" in tokens


def test_a_new_commit_rebuilds_the_scope(tmp_path, loci_home):
    lay = setup_corpus(tmp_path)
    run(BuildContext(lay), ["index", "routing"])
    repo = tmp_path / "code" / "gizmo"
    (repo / "NOTES.md").write_text("# notes\n\nflux capacitor\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Add notes")
    assert built(run(BuildContext(lay), ["index", "routing"])) == ["gizmo"]


def test_force_rebuilds_everything(tmp_path, loci_home):
    lay = setup_corpus(tmp_path)
    run(BuildContext(lay), ["index", "routing"])
    assert built(run(BuildContext(lay), ["index", "routing"], force=True)) == ["gizmo", "webby"]


def test_a_repository_with_no_commits_is_indexed(tmp_path, loci_home):
    repo = tmp_path / "code" / "empty"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "README.md").write_text("# empty\n\nnothing committed yet\n")
    lay = layout()
    save_registry(lay, scan([tmp_path / "code"]).registry)
    report = run(BuildContext(lay), ["index", "routing"])
    assert built(report) == ["empty"]
    from loci.query.store import indexed_metas

    assert "empty" in indexed_metas(lay)


def test_a_live_lock_makes_a_second_build_refuse(tmp_path):
    lock = tmp_path / ".build.lock"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock.write_text(json.dumps({"pid": sleeper.pid, "what": "index"}))
        with pytest.raises(LockHeld, match="another loci index is running"):
            with build_lock(lock):
                pass
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_dead_process_lock_is_broken(tmp_path):
    lock = tmp_path / ".build.lock"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock.write_text(json.dumps({"pid": dead.pid, "what": "index"}))
    with build_lock(lock):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert not lock.exists()


def test_readers_never_see_a_torn_file_during_writes(tmp_path):
    target = tmp_path / "artifact.bin"
    payloads = [bytes([i]) * 200_000 for i in range(1, 6)]
    write_bytes(target, payloads[0])
    stop = threading.Event()
    torn = []

    def writer():
        i = 0
        while not stop.is_set():
            write_bytes(target, payloads[i % len(payloads)])
            i += 1

    def reader():
        while not stop.is_set():
            data = target.read_bytes()
            if data not in payloads:
                torn.append(len(data))

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    threading.Event().wait(1.0)
    stop.set()
    for t in threads:
        t.join()
    assert torn == []


def test_build_signature_reads_every_source_that_shapes_artifacts_including_the_language_rules():
    from loci_pipeline.fingerprint import build_sources

    sources = build_sources()
    missing = [str(p) for p in sources if not p.is_file()]
    assert not missing, f"build signature names files that do not exist: {missing}"
    assert any(p.parts[-2:] == ("kernel", "language.py") for p in sources)


def test_build_signature_reads_every_build_module_a_listed_one_imports():
    """A rule moved into a new module (help_text, dependencies) still rebuilds every scope."""
    import ast

    from loci_pipeline.fingerprint import build_sources

    listed = {p.stem for p in build_sources() if p.parent.name == "pipeline"}
    unlisted = {}
    for name in listed:
        tree = ast.parse((Path(__file__).resolve().parents[1] / "pipeline" / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("loci_pipeline"):
                used = ({a.name for a in node.names} if node.module == "loci_pipeline"
                        else {node.module.split(".")[1]})
                unlisted.update({u: name for u in used - listed})
    assert unlisted == {}
