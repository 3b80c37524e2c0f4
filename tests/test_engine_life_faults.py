"""The warm engine stopped or hung under its clients: a question still answers, soon, and the
status says what is going on. Marked ``engine``: real engines, stopped by the fixture."""
from __future__ import annotations

import json
import os
import signal
import time

import pytest

from test_engine import QUESTION, built, engine_home, in_process, loci, started  # noqa: F401  (fixtures)

pytestmark = pytest.mark.engine


@pytest.fixture
def stopped_engine(engine_home):
    """The home's engine, sent SIGSTOP (a debugger, a `kill -STOP`); continued afterwards so that
    the fixture's teardown can stop it."""
    info = started(engine_home)
    os.kill(info["pid"], signal.SIGSTOP)
    yield info
    os.kill(info["pid"], signal.SIGCONT)


def test_a_question_to_a_stopped_engine_is_answered_in_process_within_seconds(engine_home, stopped_engine):
    begun = time.monotonic()
    got = loci("route", "--no-cwd", QUESTION)
    took = time.monotonic() - begun
    want = in_process("route", "--no-cwd", QUESTION)
    assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, 0)
    assert took < 10, f"{took:.1f} s: the client waited for a stopped engine"


def test_the_status_of_a_stopped_engine_names_it_and_does_not_promise_a_new_one(engine_home, stopped_engine):
    begun = time.monotonic()
    status = loci("server", "status")
    info = json.loads(loci("server", "status", "--json").stdout)
    assert time.monotonic() - begun < 10
    pid = stopped_engine["pid"]
    assert "the next question starts one" not in status.stdout, status.stdout
    assert f"pid {pid}" in status.stdout and "stopped" in status.stdout, status.stdout
    assert not info["running"] and info["refused"] and "stopped" in info["problem"]


def test_server_stop_and_doctor_on_a_stopped_engine_say_what_to_run(engine_home, stopped_engine):
    pid = stopped_engine["pid"]
    got = loci("server", "stop")
    assert got.returncode == 1 and "no warm engine serves" not in got.stdout
    assert f"kill -CONT {pid}" in got.stderr and "Traceback" not in got.stderr
    findings = json.loads(loci("doctor", "--json").stdout)
    engine = [f for f in findings if f["problem"] == "engine_refused"]
    assert len(engine) == 1 and engine[0]["fix"] == f"kill -CONT {pid}", engine
