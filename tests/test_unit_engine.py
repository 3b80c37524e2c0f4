"""loci.query.engine: one answer payload, whichever process answers."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from loci.query.engine import plain


@dataclass
class Part:
    name: str
    weights: tuple
    tags: frozenset

    @property
    def total(self) -> float:
        return sum(self.weights)


def test_plain_turns_a_result_into_json_ready_data_with_its_properties():
    out = plain({"parts": [Part("a", (1.0, 2.0), frozenset({"z", "b"}))]})
    assert out == {"parts": [{"name": "a", "weights": [1.0, 2.0], "tags": ["b", "z"], "total": 3.0}]}


def test_an_unknown_operation_is_refused(tmp_path):
    from loci.query.engine import answer

    class Session:
        notes: list = []

    with pytest.raises(ValueError, match="unknown operation 'drop'"):
        answer(Session(), "drop", {"question": "q"}, as_json=True)


def _many_scores(n: int = 40):
    from loci.query.router import RouteResult, ScopeScore

    details = [ScopeScore(f"s{i:02d}", evidence=float(n - i), matched={"word": 1.0}) for i in range(n)]
    chosen = ["s30", "s02"]   # the first named scope far down the score order (as the vectors may lead)
    return RouteResult("routed", chosen, None, [], {d.scope: d.total for d in details}, gate="semantic",
                       details=details, tokens=["word"])


@pytest.mark.parametrize("explain", [False, True])
def test_the_text_view_of_a_route_over_many_scopes_carries_only_what_is_shown_and_prints_the_same(explain):
    from loci.front.render import View, ask_lines, route_lines
    from loci.query.ask import AskResult, Block

    route = _many_scores()
    shown = route.for_text()
    assert len(shown.details) < len(route.details) and "s30" in {d.scope for d in shown.details}
    assert route_lines(View(plain(shown)), explain) == route_lines(View(plain(route)), explain)
    answer = AskResult(route, [Block("s30"), Block("s02")])
    assert ask_lines(View(plain(answer.for_text()))) == ask_lines(View(plain(answer)))


@pytest.mark.parametrize("chosen, expected", [(None, "2"), ("3", "3")])
def test_the_engine_encodes_with_two_blas_threads_unless_the_user_chose(tmp_path, monkeypatch, chosen, expected):
    """A one-shot question runs one BLAS thread (numpy starts faster); the engine, which encodes every
    question, takes two on a machine that has them, or what the user set."""
    import os

    from loci.front import cli, engine_client

    spawned = []
    monkeypatch.setattr(cli, "BLAS_CHOSEN", chosen)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(engine_client, "_locked", lambda home: False)
    monkeypatch.setattr(engine_client, "manifest_path", lambda home: str(tmp_path))
    monkeypatch.setattr(os, "posix_spawn", lambda path, argv, env, **kw: spawned.append(env))
    assert engine_client.start(str(tmp_path))
    assert spawned[0]["OPENBLAS_NUM_THREADS"] == expected


def test_the_status_line_counts_one_question_in_the_singular():
    from loci.front.cli_server import status_lines

    info = {"running": True, "home": "/h", "pid": 1, "version": "0", "same_code": True, "uptime_s": 3,
            "sessions": 1, "rss_mb": 100, "cached_mb": 9.5, "idle_exit_s": 600}
    assert "1 question answered," in status_lines({**info, "questions": 1})[1]
    assert "2 questions answered," in status_lines({**info, "questions": 2})[1]


def test_the_status_line_of_an_engine_without_an_idle_limit_says_how_long_it_lives():
    from loci.front.cli_server import status_lines

    info = {"running": True, "home": "/h", "pid": 1, "version": "0", "same_code": True, "uptime_s": 3,
            "sessions": 1, "rss_mb": 100, "cached_mb": 9.5, "questions": 2}
    assert "exits after 600 s idle" in status_lines({**info, "idle_exit_s": 600})[1]
    line = status_lines({**info, "idle_exit_s": float("inf")})[1]
    assert "inf" not in line and "as long as the process holding it" in line


BASE_ENV = {"PATH": "/usr/bin", "HOME": "/home/u", "LOCI_HOME": "/h", "AWS_REGION": "eu-west-1"}


@pytest.mark.parametrize("name, value", [
    ("AWS_ENDPOINT_URL", "http://127.0.0.1:9000"), ("AWS_ENDPOINT_URL_S3", "http://minio:9000"),
    ("AWS_REGION", "us-east-1"), ("AWS_ACCESS_KEY_ID", "AKIA"), ("AWS_SECRET_ACCESS_KEY", "s3cr3t"),
    ("AWS_SESSION_TOKEN", "tok"), ("AWS_PROFILE", "work"), ("AWS_SHARED_CREDENTIALS_FILE", "/c"),
    ("LOCI_CACHE_MB", "1"), ("HF_HOME", "/models"), ("HOME", "/home/other"),
    ("https_proxy", "http://proxy:3128"), ("SSL_CERT_FILE", "/etc/ca.pem"),
])
def test_the_environment_digest_moves_with_each_setting_an_answer_depends_on(name, value):
    from loci.front.engine_client import environment_digest

    assert environment_digest({**BASE_ENV, name: value}) != environment_digest(BASE_ENV)


@pytest.mark.parametrize("name, value", [
    ("OPENBLAS_NUM_THREADS", "2"), ("LOCI_SERVER", "on"), ("LOCI_SERVER_IDLE", "30"),
    ("LOCI_SERVER_CACHE_MB", "64"), ("LOCI_HOME", "relative/h"), ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"), ("PATH", "/bin"), ("TERM", "dumb"), ("PWD", "/tmp"),
])
def test_the_environment_digest_ignores_what_no_answer_depends_on(name, value):
    from loci.front.engine_client import environment_digest

    assert environment_digest({**BASE_ENV, name: value}) == environment_digest(BASE_ENV)


def test_the_environment_digest_tells_a_value_from_a_name_that_swallowed_it():
    from loci.front.engine_client import environment_digest

    assert environment_digest({"AWS_A": "B=C"}) != environment_digest({"AWS_A=B": "C"})
    assert environment_digest({"AWS_A": "x", "AWS_B": ""}) != environment_digest({"AWS_A": "xAWS_B", "AWS_B": ""})
