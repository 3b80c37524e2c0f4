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
from loci.kernel import transfers
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


def _fetching(seconds: float, due: float = 30.0, then=None):
    """A job that waits ``seconds`` on a fetch due within ``due`` seconds (no CPU, nothing read:
    a slow link), then runs ``then``."""
    def job():
        with transfers.track(due):
            time.sleep(seconds)
        if then is not None:
            then()
        raise UsageError("fetched")   # an expected failure: a whole reply, printed
    return job


def test_a_question_waiting_on_a_fetch_within_its_time_is_answered_not_given_up(home):
    with served(home, _fetching(engine_server.STALL + 2)) as server:
        got, took = _ask(home)
        assert isinstance(got, dict) and "fetched" in got["err"], got
        assert server.hung is None and took >= engine_server.STALL + 2


def test_a_fetch_that_does_not_stop_at_its_deadline_is_given_up_as_a_hang(home, monkeypatch):
    monkeypatch.setattr(transfers, "GRACE", 0.5)
    release = threading.Event()

    def stuck():   # a read that never returns (a hung mount): the copy never reaches its next check
        with transfers.track(0.5):
            release.wait()

    with served(home, stuck) as server:
        try:
            got, took = _ask(home)
            assert isinstance(got, engine_client.NoServer), got
            assert took < 1 + engine_server.STALL + 3, f"{took:.1f} s"
            assert "no progress" in server.hung and "past its deadline" in server.hung, server.hung
        finally:
            release.set()


def test_the_wait_on_a_fetch_does_not_count_toward_the_runaway_bound(home):
    def work():
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            sum(range(1000))

    with served(home, _fetching(2.5, then=work)) as server:
        server.runaway = 1.5
        got, _ = _ask(home)
        assert isinstance(got, dict) and "fetched" in got["err"], (got, server.hung)


def test_a_question_that_still_runs_away_after_its_fetch_is_given_up(home):
    done = threading.Event()

    def spin():   # until the test ends: a thread left spinning holds the interpreter's lock for every later test
        while not done.is_set():
            sum(range(1000))

    try:
        with served(home, _fetching(1.0, then=spin)) as server:
            server.runaway = 1.5
            got, took = _ask(home)
            assert isinstance(got, engine_client.NoServer) and "a question ran" in server.hung, server.hung
            assert took < 1.0 + 1.5 + 2, f"{took:.1f} s"
    finally:
        done.set()


def test_the_client_waits_past_its_reply_timeout_while_the_engine_says_it_is_fetching(home):
    timeout = engine_client.WEDGED + 0.5
    with served(home, _fetching(timeout + 2.5)):
        got = engine_client.request(str(home), {"proto": engine_client.PROTOCOL, "digest": engine_client.code_digest(),
                                                "env": engine_client.environment_digest(), "op": "route",
                                                "args": {"question": "anything"}, "json": False}, timeout=timeout)
        assert "fetched" in got.get("err", ""), got


def test_the_status_of_an_engine_waiting_on_a_fetch_says_what_came_and_how_long_is_left(home):
    from loci.front.cli_server import status_lines

    with served(home, _fetching(engine_server.STALL)):
        asking = threading.Thread(target=_ask, args=(home,))
        asking.start()
        time.sleep(1.0)
        info = engine_client.describe(str(home))
        asking.join()
    fetch = info["busy"]["fetching"]
    assert fetch["scopes"] == 1 and fetch["mb"] == 0.0 and 25 < fetch["left_s"] <= 29.5, info["busy"]
    line = status_lines(info, True)[-1]
    assert "now answering a question (route)" in line and "fetching a mapped scope's stores for" in line, line


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
