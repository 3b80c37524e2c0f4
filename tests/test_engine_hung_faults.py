"""The warm engine hung without being stopped: a question blocked on a lock that never comes, a
runaway question, the whole process wedged with the interpreter lock held. A question asked of
it is answered in-process within seconds (not after the 60 s reply timeout), the hung engine is
ended so that the next question does not wait again, and a question that is slow but working is
not cut off. Marked ``engine``: real engines, stopped by the fixture.

The hang is made inside the engine's process only: a ``sitecustomize`` on ``PYTHONPATH`` (which
the client hands on to the engine it starts) wraps ``loci.query.engine.answer`` there, keyed by
a word of the question; the client and the in-process answers run the real code.
"""
from __future__ import annotations

import os
import time

import pytest

from test_engine import QUESTION, built, engine_home, in_process, loci, running, wait_for  # noqa: F401  (fixtures)
from loci.front import engine_client

pytestmark = pytest.mark.engine

HOOK = '''
import sys
if "loci.front.engine_server" in sys.orig_argv:
    import threading, time
    import loci.query.engine as engine

    real = engine.answer

    def answer(session, op, args, as_json):
        question = args.get("question", "")
        if "HANGLOCK" in question:            # a deadlock: waits for what never comes, no CPU
            threading.Event().wait()
        if "HANGSPIN" in question:            # a runaway question: CPU, never done
            while True:
                pass
        if "HANGWEDGE" in question:           # stuck in C with the interpreter lock held
            import ctypes
            ctypes.PyDLL(None).sleep(3600)
        if "SLOWWORK" in question:            # slow, but working all along
            end = time.monotonic() + 5.0
            while time.monotonic() < end:
                sum(range(1000))
        return real(session, op, args, as_json)

    engine.answer = answer
'''
SLOW = 90   # longer than the client's reply timeout: what a question took before is measured, not cut


@pytest.fixture
def hooked(engine_home, tmp_path, monkeypatch):
    """The home, with the hang hook in every engine started for it; the engine started and warm."""
    return _hooked_here(engine_home, tmp_path, monkeypatch)


def _timed(*args: str, **kw):
    begun = time.monotonic()
    got = loci(*args, timeout=SLOW, **kw)
    return got, time.monotonic() - begun


def _alive(pid: int) -> bool:
    return not engine_client.stopped(pid)


def _same_as_in_process(got, *args: str) -> None:
    want = in_process(*args)
    assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, 0)


@pytest.mark.parametrize("word", ["HANGLOCK", "HANGWEDGE"])
def test_a_question_the_engine_hangs_on_is_answered_in_process_within_seconds(engine_home, hooked, word):
    question = f"{word} how do I calibrate a sprocket?"
    got, took = _timed("route", "--no-cwd", question)
    _same_as_in_process(got, "route", "--no-cwd", question)
    assert took < 12, f"{took:.1f} s: the client waited for a hung engine"


@pytest.mark.parametrize("word", ["HANGLOCK", "HANGWEDGE"])
def test_a_hung_engine_is_ended_and_the_next_question_does_not_wait_again(engine_home, hooked, word):
    pid = hooked["pid"]
    _timed("route", "--no-cwd", f"{word} sprocket")
    wait_for(lambda: not _alive(pid), timeout=10, what=f"the hung engine (pid {pid}) to end")
    got, took = _timed("route", "--no-cwd", QUESTION)
    _same_as_in_process(got, "route", "--no-cwd", QUESTION)
    assert took < 5, f"{took:.1f} s: the next question waited again"
    status, took = _timed("server", "status")
    assert took < 5 and "TimeoutError" not in status.stdout, status.stdout


def test_a_question_queued_behind_a_hung_one_is_answered_within_seconds(engine_home, hooked):
    got, took = _asked_meanwhile("HANGLOCK sprocket", "route", "--no-cwd", QUESTION, after=0.5)
    _same_as_in_process(got, "route", "--no-cwd", QUESTION)
    assert took < 12, f"{took:.1f} s behind a hung question"


def test_the_hang_is_logged_with_where_the_engine_was_stuck(engine_home, hooked):
    _timed("route", "--no-cwd", "HANGLOCK sprocket")
    log = wait_for(lambda: "hung" in (text := (engine_home / "logs" / "engine.log").read_text()) and text,
                   timeout=10, what="the hang in the log")
    assert "sitecustomize.py" in log and "threading.Event().wait()" in log, log[-2000:]


def test_a_runaway_question_is_given_up_after_the_runaway_bound(engine_home, monkeypatch, tmp_path):
    monkeypatch.setenv("LOCI_SERVER_RUNAWAY", "2")
    hooked = _hooked_here(engine_home, tmp_path, monkeypatch)
    got, took = _timed("route", "--no-cwd", "HANGSPIN sprocket")
    _same_as_in_process(got, "route", "--no-cwd", "HANGSPIN sprocket")
    assert took < 12, f"{took:.1f} s: the client waited for a runaway question"
    wait_for(lambda: not _alive(hooked["pid"]), timeout=10, what="the runaway engine to end")


def test_a_slow_question_that_keeps_working_is_answered_by_the_engine(engine_home, hooked):
    question = "SLOWWORK how do I calibrate a sprocket?"
    got, took = _timed("route", "--no-cwd", question)
    _same_as_in_process(got, "route", "--no-cwd", question)
    info = running(engine_home)
    assert info["pid"] == hooked["pid"] and info["questions"] == hooked["questions"] + 1, info
    assert took >= 5


def _hooked_here(engine_home, tmp_path, monkeypatch):
    """``hooked`` for a test that sets the engine's environment first."""
    folder = tmp_path / "hook"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(HOOK)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))
    assert loci("route", "--fast", "--no-cwd", QUESTION).returncode == 0
    return wait_for(lambda: (running(engine_home) or {}).get("ready") and running(engine_home))


def _asked_meanwhile(question: str, *args: str, after: float):
    """``args`` asked ``after`` seconds into ``question`` (asked by another client, left to finish)."""
    import subprocess
    import sys

    from test_engine import ENTRY

    first = subprocess.Popen([sys.executable, "-c", ENTRY, "route", "--no-cwd", question],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
    try:
        time.sleep(after)
        return _timed(*args)
    finally:
        first.wait(timeout=SLOW)


def test_the_status_of_an_engine_on_a_slow_question_says_what_it_is_doing(engine_home, hooked):
    status, took = _asked_meanwhile("SLOWWORK sprocket", "server", "status", after=1.5)
    assert "now answering a question (route) for" in status.stdout, status.stdout


def test_the_status_of_a_wedged_engine_comes_within_seconds_and_says_it_was_ended(engine_home, hooked):
    status, took = _asked_meanwhile("HANGWEDGE sprocket", "server", "status", after=0.5)
    assert took < 6, f"{took:.1f} s"
    assert "TimeoutError" not in status.stdout, status.stdout
    pid = hooked["pid"]
    assert not _alive(pid) or f"pid {pid}" not in status.stdout, status.stdout


def test_server_stop_on_a_wedged_engine_ends_it_within_seconds(engine_home, hooked):
    got, took = _asked_meanwhile("HANGWEDGE sprocket", "server", "stop", after=0.5)
    assert got.returncode == 0 and took < 6, (got.stdout, got.stderr, f"{took:.1f} s")
    wait_for(lambda: not _alive(hooked["pid"]), timeout=5, what="the wedged engine to end")
