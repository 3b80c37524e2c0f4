"""The engine's watchdog on an engine served from this process (as the MCP server shares its
own): a question that makes no progress is given up (its client answers in-process within
seconds, the socket and the lock are let go, the process lives on); one that keeps working is
waited for. No process is started; the engine is a stand-in whose ``answer`` blocks or works."""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

import pytest

from loci.front import engine_client, engine_server
from loci.kernel.errors import UsageError
from loci.query.engine import Work


class StandIn:
    """What ``EngineServer`` needs of an Engine; ``answer`` runs ``job`` as the engine's work."""

    loads = 1
    ready = True

    def __init__(self, job):
        self.job = job
        self.work: Work | None = None

    def warm_quietly(self) -> None:
        pass

    def cached_bytes(self) -> int:
        return 0

    def answer(self, op, args, as_json):
        self.work = Work(op, threading.get_ident(), time.monotonic())
        try:
            return self.job()
        finally:
            self.work = None


@contextmanager
def served(home, job):
    (home / "logs").mkdir(parents=True, exist_ok=True)
    engine = StandIn(job)
    server = engine_server.EngineServer(str(home), idle=float("inf"), engine=engine)
    server.bind(lock_wait=0.0)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server._stop.set()
        thread.join(timeout=10)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.delenv("LOCI_SERVER", raising=False)
    return tmp_path / "home"


def _ask(home) -> tuple[object, float]:
    begun = time.monotonic()
    try:
        got = engine_client.ask(str(home), "route", {"question": "anything"}, False)
    except engine_client.NoServer as why:
        got = why
    return got, time.monotonic() - begun


def test_a_question_that_makes_no_progress_is_given_up_and_the_host_lets_go_of_the_home(home):
    release = threading.Event()
    with served(home, release.wait) as server:
        try:
            got, took = _ask(home)
            assert isinstance(got, engine_client.NoServer) and got.start, got
            assert took < engine_server.STALL + 3, f"{took:.1f} s"
            assert server.hung and "no progress" in server.hung
            assert not os.path.lexists(engine_client.socket_path(str(home)))
            deadline = time.monotonic() + 5
            while engine_client._locked(str(home)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not engine_client._locked(str(home)), "the host kept the lock of a hung engine"
            log = (home / "logs" / "engine.log").read_text()
            assert "hung: no progress" in log and "return self.job()" in log, log
        finally:
            release.set()


def test_a_question_that_keeps_working_past_the_stall_bound_is_answered(home):
    def work():
        end = time.monotonic() + engine_server.STALL + 1.5
        while time.monotonic() < end:
            sum(range(1000))
        raise UsageError("worked it out")   # an expected failure: a whole reply, printed

    with served(home, work) as server:
        got, took = _ask(home)
        assert isinstance(got, dict) and "worked it out" in got["err"] and got["code"] == 2, got
        assert server.hung is None and took >= engine_server.STALL + 1.5


def test_the_process_state_and_cpu_of_a_process_are_read_from_proc():
    state, ticks = engine_client._proc_stat(os.getpid())
    assert state == "R" and isinstance(ticks, int)
    assert engine_client._proc_stat(2**22 + 12345) == ("X", None)
    assert engine_client._idle(100, 100) and not engine_client._idle(100, 200)
    assert not engine_client._idle(None, 100)


def test_doctor_names_kill_for_a_hung_process_holding_the_home_not_removing_its_socket(tmp_path, monkeypatch):
    # a process that is no engine of ours (an MCP server sharing the home) answers nothing: the
    # client does not end it, so doctor names the command that does
    from loci.front import doctor, engine_client
    from loci.kernel.config import layout as make_layout

    monkeypatch.setattr(engine_client, "describe", lambda home: {
        "running": False, "refused": True, "stopped": None, "hung": 4242,
        "problem": "the process serving this home (pid 4242) answers nothing", "socket": tmp_path / "engine.sock"})
    (finding,) = doctor._engine(make_layout(tmp_path))
    assert finding.problem == "engine_refused" and finding.fix == "kill 4242"
