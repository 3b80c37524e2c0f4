"""The warm engine waits for a mapped scope's stores on a slow link instead of taking the wait for
a hang. Marked ``engine``: real engines, a real S3-compatible server (moto, conftest's
``s3_server``) and, between them, a proxy on loopback that holds each request for a store
``DELAY`` seconds before passing it on: the engine's fetch waits on its socket, taking no CPU and
reading nothing from storage, as it does behind a slow connect or a slow first byte."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import SlowProxy
from test_engine import QUESTION, _stop_all, built, engine_home, in_process, loci, running, wait_for  # noqa: F401
from loci.front.cli import app

pytestmark = pytest.mark.engine

DELAY = 4.0   # over the watchdog's 3 s without progress (engine_server.STALL)


@pytest.fixture
def mapped(engine_home, s3_server, tmp_path, monkeypatch):
    """A home that pulled the engine home's scopes from S3 as maps (their stores stay in the
    bucket), asked through a proxy that holds each request for a store ``DELAY`` seconds."""
    invoke = CliRunner().invoke
    res = invoke(app, ["push", "s3://corpus/bundles", "--quiet"])
    assert res.exit_code == 0, res.output
    home = tmp_path / "pulled"
    monkeypatch.setenv("LOCI_HOME", str(home))
    res = invoke(app, ["pull", "s3://corpus/bundles", "--quiet", "--no-calibrate"])
    assert res.exit_code == 0, res.output
    assert not list(home.rglob("query.sqlite"))            # nothing fetched yet
    proxy = SlowProxy(s3_server.meta.endpoint_url, DELAY)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    try:
        yield home, proxy
    finally:
        _stop_all(home)
        proxy.close()


def _warm(home):
    """The engine started (by a question that fetches nothing) and ready."""
    assert loci("route", "--fast", "--no-cwd", QUESTION).returncode == 0
    return wait_for(lambda: (info := running(home)) and info.get("ready") and info)


def test_a_question_that_waits_on_a_slow_fetch_is_answered_by_the_engine_not_given_up(mapped):
    home, proxy = mapped
    engine = _warm(home)
    question = ("ask", "--fast", "--no-cwd", QUESTION)
    got = loci(*question)
    assert proxy.held, "the fetch did not go through the slow proxy"
    assert got.returncode == 0 and "A sprocket calibration toolkit" in got.stdout, (got.stdout, got.stderr)
    now = running(home)
    assert now.get("pid") == engine["pid"] and now["questions"] == engine["questions"] + 1, now
    log = (home / "logs" / "engine.log").read_text()
    assert "hung" not in log, log[-2000:]
    want = in_process(*question)                            # the stores are here now: no wait
    assert (got.stdout, got.stderr) == (want.stdout, want.stderr)


def test_the_status_of_an_engine_waiting_on_a_fetch_says_so(mapped):
    import subprocess
    import sys

    from test_engine import ENTRY

    home, proxy = mapped
    _warm(home)
    asking = subprocess.Popen([sys.executable, "-c", ENTRY, "ask", "--fast", "--no-cwd", QUESTION],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
    try:
        status = wait_for(lambda: "fetching" in (out := loci("server", "status").stdout) and out,
                          timeout=DELAY * 2, what="a status that names the fetch")
        assert "now answering a question (ask)" in status and "fetching" in status, status
    finally:
        asking.wait(timeout=60)


def test_a_fetch_past_its_time_is_answered_by_the_engine_with_the_note_a_one_shot_prints(mapped, monkeypatch):
    home, proxy = mapped
    monkeypatch.setenv("LOCI_FETCH_SECONDS", "1")          # before the engine starts: it keeps its starter's
    engine = _warm(home)
    question = ("ask", "--fast", "--no-cwd", QUESTION)
    got = loci(*question)
    assert proxy.held and got.returncode == 0
    assert "could not be fetched" in got.stdout and "not fetched within 1 s" in got.stdout, got.stdout
    now = running(home)
    assert now.get("pid") == engine["pid"] and now["questions"] == engine["questions"] + 1, now
    want = in_process(*question)                            # still not here: it waits and gives up alike
    assert (got.stdout, got.stderr) == (want.stdout, want.stderr)
