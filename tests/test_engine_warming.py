"""A question that reaches an engine still warming up is answered in-process, not held.

Beside 1,000 scopes a fresh engine warms for seconds (the whole routing index, the largest scopes'
stores); a question that reached it then waited for all of it (the third question of a fresh engine:
3.3 s on the 1,000-scope bed, where a one-shot answers in 0.3-0.5 s). The engine now says it is
warming at once, and the client answers as it does with no engine, starting none."""
from __future__ import annotations

import threading
import time

import pytest

from loci.front import engine_client, engine_server
from loci.kernel.errors import UsageError


class Warming:
    """What ``EngineServer`` needs of an Engine, warming until ``ready`` is set."""

    loads = 0
    ready = False
    work = None

    def __init__(self):
        self.answered = 0
        self.warmups = 0

    def warm_quietly(self) -> None:   # a warm-up that fails: the engine stays not ready
        self.warmups += 1

    def cached_bytes(self) -> int:
        return 0

    def answer(self, op, args, as_json):
        self.answered += 1
        raise UsageError("answered warm")   # an expected failure: a whole reply, printed


@pytest.fixture
def served(tmp_path, monkeypatch):
    monkeypatch.delenv("LOCI_SERVER", raising=False)
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    engine = Warming()
    server = engine_server.EngineServer(str(home), idle=float("inf"), engine=engine)
    server.bind(lock_wait=0.0)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    yield home, engine
    server._stop.set()
    thread.join(timeout=10)


def test_a_question_to_an_engine_still_warming_is_answered_in_process_and_starts_no_other(served):
    home, engine = served
    with pytest.raises(engine_client.NoServer) as why:
        engine_client.ask(str(home), "route", {"question": "anything"}, False)
    assert not why.value.start and "warming" in str(why.value)
    assert engine.answered == 0
    engine.ready = True
    assert "answered warm" in engine_client.ask(str(home), "route", {"question": "anything"}, False)["err"]
    assert engine.answered == 1


def test_the_engines_status_says_it_is_warming_until_it_is_ready(served):
    home, engine = served
    assert engine_client.describe(str(home))["ready"] is False
    engine.ready = True
    assert engine_client.describe(str(home))["ready"] is True


def test_a_question_after_a_failed_warm_up_starts_another(served):
    """An index read mid-rebuild fails the warm-up; no question would reach the engine again (each
    is answered by its client), so the next one starts another warm-up."""
    home, engine = served
    deadline = time.monotonic() + 10
    while engine.warmups < 1 and time.monotonic() < deadline:   # the first, after WARM_DELAY
        time.sleep(0.05)
    assert engine.warmups == 1
    with pytest.raises(engine_client.NoServer):
        engine_client.ask(str(home), "route", {"question": "anything"}, False)
    deadline = time.monotonic() + 10
    while engine.warmups < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert engine.warmups == 2
