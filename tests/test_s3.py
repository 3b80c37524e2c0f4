"""push and pull through S3: a moto server on 127.0.0.1 started by the tests (no other traffic)."""
from __future__ import annotations

import json
import socket

import pytest

from pathlib import Path

import loci.query.semantic
from test_bundle import FakeEncoder
from test_pull import CHANGED_Q, GIZMO_Q, ask_json, change_webby, cli, corpus, snapshot  # noqa: F401

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")


@pytest.fixture
def s3(s3_server):
    """An S3-compatible server on loopback with one empty bucket; AWS_* set for it (conftest)."""
    return s3_server


@pytest.fixture
def requests(s3, monkeypatch):
    """The requests the server answers, as "METHOD key" (query strings kept for multipart calls)."""
    import logging
    import re

    seen: list[str] = []

    class Count(logging.Handler):
        def emit(self, record):
            plain = re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage())   # the server colours some lines
            found = re.search(r'"(GET|PUT|POST|HEAD|DELETE) /([^ ]*) HTTP', plain)
            if found:
                seen.append(f"{found[1]} {found[2]}")

    werkzeug = logging.getLogger("werkzeug")
    monkeypatch.setattr(werkzeug, "disabled", False)
    monkeypatch.setattr(werkzeug, "level", logging.INFO)
    monkeypatch.setattr(werkzeug, "propagate", False)
    monkeypatch.setattr(werkzeug, "handlers", [Count()])
    return seen


def test_a_push_sends_each_small_file_in_one_request(requests, corpus, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    cli("push", "s3://corpus/bundles", "--quiet")
    files = sorted(p.relative_to(corpus.v1) for p in corpus.v1.rglob("*") if p.is_file())
    puts = sorted(r.split(" ", 1)[1] for r in requests if r.startswith("PUT "))
    assert puts == [f"corpus/bundles/{f}" for f in files]       # one PUT a file, the manifests included
    assert not [r for r in requests if r.startswith("POST ")]    # no multipart upload
    assert requests[0].startswith("GET corpus?list-type=2") and len(requests) == len(files) + 1   # nothing else
    requests.clear()
    assert "pushed 0 bundle(s)" in cli("push", "s3://corpus/bundles").stdout
    assert not [r for r in requests if not r.startswith(("GET ", "HEAD "))]   # verified, nothing written
    assert sum(r.startswith("GET corpus/bundles/") for r in requests) == len(files)   # each file read back


def test_a_pull_takes_sizes_from_the_listing_and_reads_each_file_once(requests, corpus, loci_home, monkeypatch):
    from collections import Counter

    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    cli("push", "s3://corpus/bundles", "--quiet")
    # a full copy builds its own query file and summary: the publisher's are not fetched
    files = sorted(str(p.relative_to(corpus.v1)) for p in corpus.v1.rglob("*")
                   if p.is_file() and p.name not in ("query.sqlite", "summary.npy"))
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    requests.clear()
    cli("pull", "s3://corpus/bundles", "--all", "--quiet", "--no-calibrate")
    assert sum(r.startswith("GET corpus?list-type=2") for r in requests) == 1
    gets = Counter(r.split(" ", 1)[1] for r in requests if r.startswith("GET corpus/"))
    heads = Counter(r.split(" ", 1)[1] for r in requests if r.startswith("HEAD "))
    assert sorted(gets) == [f"corpus/bundles/{f}" for f in files] and set(gets.values()) == {1}
    assert set(heads.values()) == {1}   # pyarrow's own before its GET; no size request of ours
    assert len(requests) == 1 + 2 * len(files)


def _etags(client) -> dict[str, str]:
    listing = client.list_objects_v2(Bucket="corpus", Prefix="bundles/")
    return {o["Key"]: o["ETag"] for o in listing.get("Contents", [])}


def _upload(client, version: Path) -> None:
    for path in sorted(version.rglob("*")):
        if path.is_file():
            client.put_object(Bucket="corpus", Key=f"bundles/{path.relative_to(version)}", Body=path.read_bytes())


def test_push_then_pull_through_s3_and_only_the_changed_bundle_moves(s3, corpus, loci_home, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    assert "pushed 2 bundle(s)" in cli("push", "s3://corpus/bundles").stdout
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    out = json.loads(cli("pull", "s3://corpus/bundles", "--all", "--json").stdout)
    assert sorted(out["imported"]) == ["gizmo", "webby"]
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    assert ask_json(CHANGED_Q)["scopes"] == ["webby"]  # with the second opinion (the fake model)

    before = _etags(s3)
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    change_webby(corpus.code, "s3://corpus/bundles", monkeypatch, "rotate_keys_on_schedule")
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    after = _etags(s3)
    assert {k.split("/")[1] for k in after if before.get(k) != after[k]} == {"webby"}
    out = json.loads(cli("pull", "s3://corpus/bundles", "--all", "--json").stdout)
    assert out["imported"] == ["webby"] and out["unchanged"] == ["gizmo"]
    assert ask_json("--fast", "In webby, how do I rotate keys on a schedule?")["scopes"] == ["webby"]


def test_a_question_fetches_a_mapped_scope_from_s3_file_by_file(requests, corpus, loci_home, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    cli("push", "s3://corpus/bundles", "--quiet")
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    cli("pull", "s3://corpus/bundles", "--quiet", "--no-calibrate")
    got = {r.split(" ", 1)[1].rsplit("/", 1)[1] for r in requests if r.startswith("GET corpus/bundles/gizmo/")}
    assert "query.sqlite" not in got and "chunks.parquet" not in got and "vocab.parquet" in got
    requests.clear()
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: FakeEncoder())
    assert ask_json(GIZMO_Q)["scopes"] == ["gizmo"]
    gets = sorted(r.split(" ", 1)[1] for r in requests if r.startswith("GET "))
    stores = sorted(p.name for p in (corpus.v1 / "gizmo").iterdir() if p.name == "query.sqlite"
                    or p.name.endswith("vectors.parquet"))
    assert "vectors.parquet" in stores
    assert [g for g in gets if "/gizmo/" in g] == [f"corpus/bundles/gizmo/{f}" for f in stores]
    requests.clear()
    assert ask_json(GIZMO_Q)["scopes"] == ["gizmo"]
    assert not [r for r in requests if "/gizmo/" in r]     # cached: the store is not asked again


def _flip(client, key: str) -> None:
    body = client.get_object(Bucket="corpus", Key=key)["Body"].read()
    client.put_object(Bucket="corpus", Key=key, Body=body[:-1] + bytes([body[-1] ^ 1]))


def test_a_damaged_remote_bundle_is_skipped_by_pull_and_replaced_by_one_push(s3, corpus, loci_home, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    cli("push", "s3://corpus/bundles", "--quiet")
    _flip(s3, "bundles/webby/chunks.parquet")   # same size, same manifest: only a checksum tells
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    res = cli("pull", "s3://corpus/bundles", "--all", code=1)
    assert "pulled 1 scope(s)" in res.stdout
    refusal = res.stderr.strip().splitlines()
    assert len(refusal) == 1 and "'webby'" in refusal[0] and "sha256" in refusal[0]
    assert ask_json("--fast", GIZMO_Q)["scopes"] == ["gizmo"]

    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    out = cli("push", "s3://corpus/bundles").stdout
    assert "pushed 1 bundle(s)" in out and "1 unchanged" in out and "webby  (the published copy was damaged" in out
    assert "pushed 0 bundle(s)" in cli("push", "s3://corpus/bundles").stdout   # repaired: nothing left to do
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    assert json.loads(cli("pull", "s3://corpus/bundles", "--all", "--json").stdout)["imported"] == ["webby"]


def test_a_file_missing_from_the_store_is_put_back_and_force_uploads_everything(s3, corpus, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))
    cli("push", "s3://corpus/bundles", "--quiet")
    s3.delete_object(Bucket="corpus", Key="bundles/gizmo/vocab.parquet")
    assert "pushed 1 bundle(s)" in cli("push", "s3://corpus/bundles").stdout   # seen in the listing
    assert "bundles/gizmo/vocab.parquet" in _etags(s3)
    assert "pushed 2 bundle(s)" in cli("push", "s3://corpus/bundles", "--force").stdout


def test_a_damaged_object_is_refused_and_the_home_is_untouched(s3, corpus, loci_home):
    _upload(s3, corpus.v1)
    cli("pull", "s3://corpus/bundles", "--all", "--quiet")
    before = snapshot(loci_home)
    _upload(s3, corpus.v2)  # webby's manifest moved, so the pull fetches it again
    _flip(s3, "bundles/webby/chunks.parquet")
    res = cli("pull", "s3://corpus/bundles", "--all", code=1)
    assert "sha256" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert snapshot(loci_home) == before


def test_an_unreachable_endpoint_is_one_line(loci_home, monkeypatch):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    res = cli("pull", "s3://corpus/bundles", "--all", code=1)
    assert "cannot list s3://corpus/bundles" in res.output and len(res.output.strip().splitlines()) == 1
    assert f"127.0.0.1:{port}" in res.output   # the store's own words, whole: they name the host
    assert not (loci_home / "manifest.json").exists()


def test_a_missing_bucket_is_one_line(s3, loci_home):
    res = cli("pull", "s3://no-such-bucket/x", "--all", code=1)
    assert "s3://no-such-bucket/x" in res.output and len(res.output.strip().splitlines()) == 1


def test_unauthorised_credentials_are_one_line(s3, loci_home, monkeypatch):
    import moto.settings

    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # from now on, keys must exist
    res = cli("pull", "s3://corpus/bundles", "--all", code=1)
    assert "credentials" in res.output and len(res.output.strip().splitlines()) == 1
    assert not (loci_home / "manifest.json").exists()
