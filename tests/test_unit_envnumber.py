"""loci.kernel.envnumber: a number setting read from the environment; a bad one is the default, said once."""
from __future__ import annotations

import logging

import pytest

from loci.kernel import envnumber, territory


@pytest.fixture(autouse=True)
def nothing_warned_yet(monkeypatch):
    monkeypatch.setattr(envnumber, "_warned", set())


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize("value", ["abc", "-3", "0", "nan"])
def test_a_bad_fetch_seconds_takes_the_default_and_warns_naming_the_variable(value, monkeypatch, caplog):
    monkeypatch.setenv("LOCI_FETCH_SECONDS", value)
    with caplog.at_level(logging.WARNING):
        assert territory.fetch_seconds() == territory.FETCH_SECONDS
    [line] = warnings_of(caplog)
    assert "LOCI_FETCH_SECONDS" in line and repr(value) in line and str(territory.FETCH_SECONDS) in line


def test_a_good_fetch_seconds_is_taken_without_a_word(monkeypatch, caplog):
    monkeypatch.setenv("LOCI_FETCH_SECONDS", "7.5")
    with caplog.at_level(logging.WARNING):
        assert territory.fetch_seconds() == 7.5
    assert warnings_of(caplog) == []


def test_an_unset_or_empty_setting_is_the_default_without_a_word(monkeypatch, caplog):
    monkeypatch.delenv("LOCI_FETCH_SECONDS", raising=False)
    with caplog.at_level(logging.WARNING):
        assert territory.fetch_seconds() == territory.FETCH_SECONDS
        monkeypatch.setenv("LOCI_FETCH_SECONDS", " ")
        assert territory.fetch_seconds() == territory.FETCH_SECONDS
    assert warnings_of(caplog) == []


def test_a_bad_value_is_warned_once_however_often_it_is_read(monkeypatch, caplog):
    monkeypatch.setenv("LOCI_FETCH_SECONDS", "abc")
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            territory.fetch_seconds()
    assert len(warnings_of(caplog)) == 1


def test_the_cache_cap_takes_zero_and_warns_of_a_bad_value(monkeypatch, caplog):
    monkeypatch.setenv("LOCI_CACHE_MB", "0")
    assert territory.cap_bytes() == 0                          # cache nothing: a value, not a mistake
    monkeypatch.setenv("LOCI_CACHE_MB", "lots")
    with caplog.at_level(logging.WARNING):
        assert territory.cap_bytes() == territory.CACHE_MB << 20
    [line] = warnings_of(caplog)
    assert "LOCI_CACHE_MB" in line and "'lots'" in line


def test_the_engine_settings_are_read_the_same_way(monkeypatch, caplog):
    from loci.front import engine_server
    from loci.kernel.config import DEFAULT_PARAMS

    monkeypatch.setenv("LOCI_SERVER_IDLE", "soon")
    monkeypatch.setenv("LOCI_SERVER_CACHE_MB", "-1")
    with caplog.at_level(logging.WARNING):
        assert engine_server.idle_seconds() == DEFAULT_PARAMS.engine_idle_seconds
        assert engine_server.cache_bytes() is None               # Params.engine_cache_bytes
    assert [w.split("=")[0].split()[-1] for w in warnings_of(caplog)] == ["LOCI_SERVER_IDLE", "LOCI_SERVER_CACHE_MB"]
    monkeypatch.setenv("LOCI_SERVER_CACHE_MB", "64")
    assert engine_server.cache_bytes() == 64 << 20
