"""The warm engine behind `loci route`/`loci ask`: same answers, its lifecycle, and its faults.

Every test here is marked ``engine`` (conftest turns the engine off for all others), works on
its own copy of a tiny home, and stops the engines it started (``engine_home``'s teardown).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import GIT_ENV, GIZMO, WEBBY, git, setup_home
from loci.front import engine_client
from loci.front.cli import app
from loci.kernel.bytecache import ByteBudget

pytestmark = pytest.mark.engine

ENTRY = "from loci.front.cli import main; main()"
TIMEOUT = 60
QUESTION = "how do I calibrate a sprocket?"
CASES = [
    ["route", QUESTION],
    ["route", "--explain", "--no-cwd", "cookies and redirects"],
    ["route", "--json", "sessions over http"],
    ["ask", QUESTION],
    ["ask", "--json", "--k", "2", "cookie middleware"],
    ["ask", "--scope", "webby", "--no-cwd", "redirect"],
    ["route", "what does this project do?"],            # from the gizmo checkout: the cwd decides
    ["ask", "--group", "nope", "anything"],              # an expected error: one line, exit 2
]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("engine")
    home = base / "home"
    old = os.environ.get("LOCI_HOME")
    os.environ["LOCI_HOME"] = str(home)
    try:
        setup_home(base / "code", {"gizmo": GIZMO, "webby": WEBBY})
    finally:
        os.environ.pop("LOCI_HOME") if old is None else os.environ.__setitem__("LOCI_HOME", old)
    return base


@pytest.fixture
def engine_home(built, tmp_path, monkeypatch):
    """A copy of the built home (its scopes still point at ``built``'s repositories); every
    engine serving it is stopped afterwards, and the test fails if one outlives that."""
    home = tmp_path / "home"
    shutil.copytree(built / "home", home)
    monkeypatch.setenv("LOCI_HOME", str(home))
    monkeypatch.delenv("LOCI_SERVER", raising=False)
    monkeypatch.setenv("LOCI_SERVER_IDLE", "60")   # a belt to the teardown's braces
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    yield home
    _stop_all(home)


def _stop_all(home: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:   # an engine may still be starting: ask until none holds the lock
        engine_client.stop(str(home))
        if not _lock_held(home):
            break
        time.sleep(0.2)
    pid = engine_client.holder(str(home))
    if pid:
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the engine of {home} (pid {pid}) did not stop")


def _lock_held(home: Path) -> bool:
    return engine_client._locked(str(home))


def loci(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = TIMEOUT):
    """The console entry point in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True,
                          cwd=cwd or "/", env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
                          timeout=timeout)


def wait_for(predicate, timeout: float = 20.0, what: str = "the engine"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def running(home: Path) -> dict:
    info = engine_client.describe(str(home))
    return info if info["running"] else {}


def started(home: Path) -> dict:
    """Ask once (in-process, starting the engine) and wait until the engine answers: warmed (a
    question that reaches it while it warms is answered in-process)."""
    assert loci("route", "--fast", "--no-cwd", QUESTION).returncode == 0
    return wait_for(lambda: (info := running(home)) and info.get("ready") and info)


def in_process(*args: str, cwd: Path | None = None):
    return loci(*args, cwd=cwd, env={"LOCI_SERVER": "off"})


def _case_cwd(built: Path, args: list[str]) -> Path:
    return built / "code" / "gizmo" if "this project" in args[-1] else built


# ---------------------------------------------------------------- same answers

def test_the_first_question_is_answered_in_process_and_starts_the_engine(engine_home, built):
    first = loci("route", QUESTION)
    assert first.returncode == 0 and first.stdout.startswith("ROUTED -> gizmo"), first.stderr
    info = wait_for(lambda: (got := running(engine_home)) and got.get("ready") and got)
    assert info["questions"] == 0 and info["same_code"]
    again = loci("route", QUESTION)
    assert again.stdout == first.stdout
    assert running(engine_home)["questions"] == 1           # the second went through the engine


def test_every_answer_is_byte_identical_through_the_engine_and_in_process(engine_home, built):
    started(engine_home)
    before = running(engine_home)["questions"]
    for args in CASES:
        cwd = _case_cwd(built, args)
        warm, cold = loci(*args, cwd=cwd), in_process(*args, cwd=cwd)
        assert (warm.stdout, warm.stderr, warm.returncode) == (cold.stdout, cold.stderr, cold.returncode), args
        assert "Traceback" not in warm.stderr
    assert running(engine_home)["questions"] == before + len(CASES)


def test_a_note_is_printed_through_the_engine_exactly_when_in_process_prints_it(engine_home, built):
    from loci.query.semantic import STATIC_ID

    (engine_home / "embed.json").write_text(json.dumps({"model": "static", "model_id": STATIC_ID}))
    started(engine_home)                       # its warm-up found the encoder unavailable already
    for args in (["route", "--no-cwd", QUESTION], ["route", "--fast", "--no-cwd", QUESTION],
                 ["ask", "--no-cwd", "cookies"], ["ask", "--fast", "--no-cwd", "cookies"]):
        warm, cold = loci(*args), in_process(*args)
        assert (warm.stdout, warm.stderr, warm.returncode) == (cold.stdout, cold.stderr, cold.returncode), args
        assert warm.stderr.count("answering lexically") == (0 if "--fast" in args else 1), args
    assert running(engine_home)["questions"] == 4


def test_a_question_through_the_engine_imports_nothing_heavy(engine_home):
    started(engine_home)
    probe = ("import sys\nfrom loci.front.cli import main\ntry:\n    main(['route', '--no-cwd', 'sprocket'])\n"
             "except SystemExit:\n    pass\nprint(sorted(m for m in ('numpy', 'sqlite3', 'typer', 'loci.query', "
             "'loci.kernel.config', 'subprocess', 'json', 'socket', 'struct', "
             "'loci.front.render', 'hashlib') if m in sys.modules))")
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd="/", timeout=TIMEOUT)
    assert got.stdout.splitlines() == ["ROUTED -> gizmo", "[]"], got.stderr
    assert running(engine_home)["questions"] == 1


def test_no_server_and_loci_server_off_answer_in_process_and_start_nothing(engine_home):
    assert loci("route", "--no-server", QUESTION).returncode == 0
    assert loci("route", QUESTION, env={"LOCI_SERVER": "off"}).returncode == 0
    time.sleep(0.5)
    assert not _lock_held(engine_home) and not (engine_home / "run" / "engine.sock").exists()


def test_the_socket_is_owner_only_inside_an_owner_only_folder(engine_home):
    started(engine_home)
    run = engine_home / "run"
    assert stat.S_IMODE(run.stat().st_mode) == 0o700
    sock = run / "engine.sock"
    assert stat.S_ISSOCK(sock.lstat().st_mode) and stat.S_IMODE(sock.lstat().st_mode) == 0o600


# ---------------------------------------------------------------- lifecycle

def test_server_status_and_stop_show_and_end_it(engine_home):
    assert "no warm engine serves" in loci("server", "status").stdout
    info = started(engine_home)
    status = json.loads(loci("server", "status", "--json").stdout)
    assert status["running"] and status["pid"] == info["pid"] and status["same_code"]
    assert "a warm engine serves" in loci("server", "status").stdout
    stopped = loci("server", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not _lock_held(engine_home)          # "stopped" is true when said, not a second later
    assert "no warm engine serves" in loci("server", "status").stdout
    assert not (engine_home / "run" / "engine.sock").exists()


def test_doctor_reports_the_running_engine(engine_home):
    info = started(engine_home)
    findings = json.loads(loci("doctor", "--json").stdout)
    engine = [f for f in findings if f["problem"] == "engine_running"]
    assert len(engine) == 1 and f"pid {info['pid']}" in engine[0]["message"]
    assert engine[0]["fix"] is None and engine[0]["severity"] == "note"   # a healthy engine: nothing to run


def test_the_engine_exits_after_its_idle_time(engine_home, monkeypatch):
    monkeypatch.setenv("LOCI_SERVER_IDLE", "1")
    started(engine_home)
    wait_for(lambda: not _lock_held(engine_home), timeout=15, what="the idle engine to exit")
    assert not (engine_home / "run" / "engine.sock").exists()


def test_an_engine_of_other_code_is_replaced(engine_home, tmp_path):
    other_python = tmp_path / "other-python"          # another interpreter path: another code digest
    other_python.symlink_to(sys.executable)
    proc = subprocess.Popen([str(other_python), "-m", "loci.front.engine_server", str(engine_home)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    old = wait_for(lambda: running(engine_home))
    assert not old["same_code"] and old["pid"] == proc.pid
    reply = loci("route", QUESTION)
    assert reply.returncode == 0 and reply.stdout.startswith("ROUTED -> gizmo")
    assert proc.wait(timeout=TIMEOUT) == 0                           # the old one left
    new = wait_for(lambda: running(engine_home))
    assert new["same_code"] and new["pid"] != old["pid"]


def routed(home: str, args: dict) -> dict:
    """The engine's `route --json` answer, as its client prints it."""
    reply = engine_client.ask(home, "route", args, True)
    assert reply["code"] == 0 and reply["err"] == ""
    return json.loads(reply["out"])


def test_a_client_of_the_old_protocol_gets_a_json_mismatch_and_the_engine_leaves(engine_home):
    old = started(engine_home)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with engine_client._Address(str(engine_home / "run" / "engine.sock")) as address:
        sock.connect(address)
    sock.sendall(b'{"proto": 1, "digest": "old", "op": "route", "args": {"question": "x"}, "json": true}\n')
    reply = sock.makefile("rb").readline()
    sock.close()
    assert json.loads(reply) == {"mismatch": old["digest"]}
    wait_for(lambda: not _lock_held(engine_home), what="the engine to leave for the old client's")


def test_an_engine_of_the_old_protocol_is_told_to_leave_and_replaced(engine_home):
    listener = _listener(engine_home)
    heard: list[dict] = []

    def old_engine():   # protocol 1: reads a JSON line, answers one; sees protocol 2 and leaves
        with listener, listener.accept()[0] as conn:
            heard.append(json.loads(conn.makefile("rb").readline()))
            conn.sendall(b'{"mismatch": "old"}\n')

    thread = threading.Thread(target=old_engine, daemon=True)
    thread.start()
    with pytest.raises(engine_client.NoServer) as why:
        engine_client.ask(str(engine_home), "route", {"question": QUESTION, "cwd": None}, True)
    thread.join(timeout=TIMEOUT)
    assert why.value.replacing and heard[0]["proto"] == engine_client.PROTOCOL and heard[0]["op"] == "route"


def test_a_rebuild_during_a_burst_of_questions_is_picked_up_without_a_lost_answer(engine_home, built, tmp_path):
    started(engine_home)
    home = str(engine_home)
    args = {"question": "zeppelin dirigible", "cwd": None, "group": None, "fast": True}
    assert routed(home, args)["outcome"] == "abstained"
    repo = tmp_path / "webby2"                         # the module's repositories stay as they are
    shutil.copytree(built / "code" / "webby", repo, symlinks=True)
    (repo / "ZEPPELIN.md").write_text("# zeppelin\n\nA zeppelin dirigible hangar for airship mooring.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "zeppelin docs")
    replies: list = []
    stop = threading.Event()

    def burst():
        while not stop.is_set():
            try:
                replies.append(routed(home, dict(args, question=QUESTION)))
            except engine_client.NoServer as why:
                replies.append(why)

    threads = [threading.Thread(target=burst) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        res = CliRunner().invoke(app, ["setup", str(repo), "-y", "--quiet", "--no-graphs", "--no-embed",
                                       "--no-calibrate"], env={"LOCI_HOME": home, "LOCI_SERVER": "off"})
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=TIMEOUT)
    assert res.exit_code == 0, res.output
    # while the engine replaces its session it says so at once, and its client answers in-process
    answered = [r for r in replies if isinstance(r, dict)]
    assert answered and all(r["scopes"] == ["gizmo"] for r in answered)
    assert all(isinstance(r, dict) or not r.start and "warming" in str(r) for r in replies), replies
    after = routed(home, args)
    assert after["outcome"] == "routed" and after["scopes"] == ["webby2"]
    assert running(engine_home)["sessions"] >= 2


def test_the_mcp_server_shares_its_engine_with_the_cli_while_it_runs(engine_home):
    pytest.importorskip("mcp")
    mcp = subprocess.Popen([sys.executable, "-c", ENTRY, "mcp"], stdin=subprocess.PIPE,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                           env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        info = wait_for(lambda: (got := running(engine_home)) and got.get("ready") and got)
        assert info["pid"] == mcp.pid and info["same_code"]
        got = loci("route", QUESTION)
        assert got.returncode == 0 and got.stdout.startswith("ROUTED -> gizmo")
        assert running(engine_home)["questions"] == 1
    finally:
        mcp.stdin.close()                                            # the client hangs up: MCP exits
        mcp.wait(timeout=TIMEOUT)
    assert not _lock_held(engine_home)


# ---------------------------------------------------------------- the asker's settings

@pytest.fixture
def s3_store(s3_server):
    """An S3-compatible server on loopback with one empty bucket, ``corpus`` (conftest); its address."""
    return s3_server.meta.endpoint_url


def test_an_engine_started_with_another_environment_does_not_answer_for_this_one(engine_home, s3_store,
                                                                                  tmp_path, monkeypatch):
    res = CliRunner().invoke(app, ["push", "s3://corpus/bundles", "--quiet"])   # the engine home's scopes
    assert res.exit_code == 0, res.output
    pulled = tmp_path / "pulled"                          # a map: the stores stay in S3 until asked for
    monkeypatch.setenv("LOCI_HOME", str(pulled))
    res = CliRunner().invoke(app, ["pull", "s3://corpus/bundles", "--quiet", "--no-calibrate"])
    assert res.exit_code == 0, res.output
    question = ("ask", "--fast", "--no-cwd", QUESTION)
    try:
        wrong = loci(*question, env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})   # nobody serves it
        assert wrong.returncode == 0 and "A sprocket calibration toolkit" not in wrong.stdout   # it starts the engine
        wait_for(lambda: running(pulled))
        got = loci(*question)                             # this shell's settings reach the store
        assert "no episode store" not in got.stdout and "A sprocket calibration toolkit" in got.stdout, got.stdout
        want = in_process(*question)
        assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, 0)
    finally:
        _stop_all(pulled)


def test_an_engine_started_with_other_answer_settings_leaves_for_one_started_with_the_askers(engine_home):
    first = loci("route", QUESTION, env={"LOCI_CACHE_MB": "1"})
    old = wait_for(lambda: running(engine_home))
    assert not old["same_environment"]                   # this process has no LOCI_CACHE_MB
    again = loci("route", QUESTION)
    assert (again.stdout, again.returncode) == (first.stdout, 0)
    new = wait_for(lambda: (info := running(engine_home)) and info["pid"] != old["pid"] and info.get("ready") and info,
                   what="the engine of this environment")
    assert new["same_environment"] and new["questions"] == 0   # the second was answered in-process
    assert loci("route", QUESTION).stdout == first.stdout
    assert running(engine_home)["questions"] == 1


def test_an_engine_keeps_answering_a_client_whose_other_settings_change_no_answer(engine_home):
    old = started(engine_home)
    unrelated = {"OPENBLAS_NUM_THREADS": "3", "LOCI_SERVER_IDLE": "30", "LOCI_SERVER_CACHE_MB": "64",
                 "HF_HUB_OFFLINE": "0", "TERM": "dumb", "LANGUAGE": "C"}
    got = loci("route", QUESTION, env=unrelated)
    assert got.returncode == 0 and got.stdout.startswith("ROUTED -> gizmo")
    now = running(engine_home)
    assert now["pid"] == old["pid"] and now["questions"] == 1


def test_a_question_carries_a_digest_of_the_askers_environment_and_none_of_its_values(engine_home, monkeypatch):
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    listener = _listener(engine_home)
    heard: list[bytes] = []

    def fake_engine():
        with listener, listener.accept()[0] as conn:
            heard.append(conn.makefile("rb").readline())
            conn.sendall(engine_client.reply_frame({"out": "", "err": "", "code": 0}))

    thread = threading.Thread(target=fake_engine, daemon=True)
    thread.start()
    engine_client.ask(str(engine_home), "route", {"question": QUESTION, "cwd": None}, True)
    thread.join(timeout=TIMEOUT)
    import marshal

    line = heard[0]
    message = marshal.loads(bytes.fromhex(json.loads(line)["m"]))
    assert message["env"] == engine_client.environment_digest()
    for form in (secret.encode(), secret.encode().hex().encode()):
        assert form not in line and form not in marshal.dumps(message)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret[::-1])
    assert engine_client.environment_digest() != message["env"]


# ---------------------------------------------------------------- faults

def test_a_stale_socket_left_by_a_killed_engine_is_replaced(engine_home):
    old = started(engine_home)
    os.kill(old["pid"], signal.SIGKILL)
    wait_for(lambda: not _lock_held(engine_home), what="the killed engine's lock")
    assert (engine_home / "run" / "engine.sock").exists()            # left behind
    reply = loci("route", QUESTION)
    assert reply.returncode == 0 and reply.stdout.startswith("ROUTED -> gizmo") and not reply.stderr
    new = wait_for(lambda: running(engine_home))
    assert new["pid"] != old["pid"]


def test_two_clients_racing_to_start_one_leave_exactly_one_engine(engine_home):
    procs = [subprocess.Popen([sys.executable, "-m", "loci.front.engine_server", str(engine_home)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(3)]
    try:
        info = wait_for(lambda: running(engine_home))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and sum(p.poll() is None for p in procs) > 1:
            time.sleep(0.1)
        alive = [p for p in procs if p.poll() is None]
        assert [p.pid for p in alive] == [info["pid"]] == [engine_client.holder(str(engine_home))]
        assert all(p.returncode == 0 for p in procs if p not in alive)
    finally:
        _stop_all(engine_home)
        for p in procs:
            p.wait(timeout=TIMEOUT)


def _listener(home: Path) -> socket.socket:
    """A listening socket of this test on the home's engine socket file (a fake engine's)."""
    run = home / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with engine_client._Address(str(run / "engine.sock")) as address:
        listener.bind(address)
    listener.listen(4)
    listener.settimeout(TIMEOUT)
    return listener


def _fake_engine(home: Path, behaviour: str) -> threading.Thread:
    """A listener on the home's socket that reads a question and then fails: ``silent`` closes
    without a word, ``half`` sends half a reply first (an engine killed mid-answer)."""
    listener = _listener(home)

    def serve():
        try:
            conn, _ = listener.accept()
            with conn:
                conn.recv(1 << 16)
                if behaviour == "half":
                    conn.sendall(b'{"ok": {"notes": [], "json": {"outcome": "rou')
        except OSError:
            pass
        finally:
            listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("behaviour", ["silent", "half"])
def test_an_engine_dying_mid_answer_leaves_one_in_process_answer(engine_home, built, behaviour):
    fake = _fake_engine(engine_home, behaviour)
    got = loci("route", "--json", QUESTION)
    fake.join(timeout=TIMEOUT)
    assert not fake.is_alive()                                      # the client did reach it
    want = in_process("route", "--json", QUESTION)
    assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, 0)
    assert got.stdout.count('"outcome"') == 1


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="chown to another user needs root")
def test_a_socket_file_of_another_user_is_refused(engine_home):
    fake = _fake_engine(engine_home, "half")
    os.chown(engine_home / "run" / "engine.sock", 65534, 65534)     # nobody's
    got = loci("route", QUESTION)
    assert got.returncode == 0 and got.stdout.startswith("ROUTED -> gizmo") and not got.stderr
    assert fake.is_alive()                                          # never connected to
    info = engine_client.describe(str(engine_home))
    assert not info["running"] and info["refused"]
    time.sleep(0.5)
    assert not _lock_held(engine_home)                               # and no engine started over it
    _unblock(engine_home, fake)


def _unblock(home: Path, fake: threading.Thread) -> None:
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with engine_client._Address(str(home / "run" / "engine.sock")) as address:
            sock.connect(address)
        sock.sendall(b"{}\n")
        sock.close()
    except OSError:
        pass
    fake.join(timeout=TIMEOUT)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="running a peer as another user needs root")
def test_an_engine_process_of_another_user_is_refused_by_its_peer_credentials(engine_home):
    run = engine_home / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with engine_client._Address(str(run / "engine.sock")) as address:
        listener.bind(address)                                      # our file, their process
    pid = os.fork()
    if pid == 0:   # the child: another user's process listening on our socket file
        try:
            os.setgid(65534)
            os.setuid(65534)
            listener.listen(4)
            listener.settimeout(30)
            conn, _ = listener.accept()
            conn.recv(1 << 16)
            conn.sendall(b'{"ok": {"notes": [], "json": "fake"}}\n')
        finally:
            os._exit(0)
    listener.close()
    try:
        time.sleep(0.5)
        with pytest.raises(engine_client.NoServer, match="uid 65534"):
            engine_client.ask(str(engine_home), "route", {"question": QUESTION, "cwd": None}, True)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_the_peer_uid_comparison_refuses_a_stranger(engine_home, monkeypatch):
    started(engine_home)
    with monkeypatch.context() as patch:
        patch.setattr(engine_client, "peer_uid", lambda sock: os.getuid() + 4242)
        with pytest.raises(engine_client.NoServer) as why:
            engine_client.ask(str(engine_home), "route", {"question": QUESTION, "cwd": None}, True)
    assert not why.value.start


def test_sixteen_concurrent_clients_get_the_in_process_answer(engine_home, built):
    started(engine_home)
    want = in_process("ask", "--json", "--no-cwd", QUESTION)
    with ThreadPoolExecutor(max_workers=16) as pool:
        got = list(pool.map(lambda _: loci("ask", "--json", "--no-cwd", QUESTION, timeout=120), range(16)))
    assert all((g.stdout, g.stderr, g.returncode) == (want.stdout, want.stderr, 0) for g in got)
    assert running(engine_home)["questions"] >= 16 - 2     # a client may time out to in-process, not more


def test_an_unwritable_log_does_not_stop_the_engine(engine_home):
    logs = engine_home / "logs"
    logs.mkdir()
    (logs / "engine.log").symlink_to("/dev/full")                    # every write: no space left
    started(engine_home)
    warm = loci("route", QUESTION)
    assert warm.returncode == 0 and warm.stdout.startswith("ROUTED -> gizmo") and not warm.stderr
    assert running(engine_home)["questions"] >= 1


def test_the_engine_warms_its_encoder_past_the_first_call(built, monkeypatch):
    """The numpy BERT keeps its weights resident from its second call on: the warm-up makes
    that call, so the first question does not pay for it."""
    from types import SimpleNamespace

    from loci.query import ask as ask_mod
    from loci.query.engine import Engine

    calls: list = []
    encoder = SimpleNamespace(encode=lambda texts: calls.append(list(texts)))
    side = SimpleNamespace(encoder=encoder, affinities=lambda *a, **k: calls.append("affinities") or {})
    monkeypatch.setattr(ask_mod.Session, "semantic", lambda self: side)
    monkeypatch.setattr(ask_mod, "search_block", lambda session, scope, q, plan=None, semantic=None:
                        calls.append(("searched", semantic is side)))
    Engine(built / "home").session()
    assert calls == [("searched", True), ("searched", True), "affinities", ["warm up"]]


def test_the_engine_warms_the_largest_local_scopes_while_its_budget_has_room(built, monkeypatch):
    """The byte budget holds a small home's stores whole: the warm-up reads them, largest first,
    until the budget is three quarters full, and never fetches the stores of a scope pulled as a map."""
    from loci.query import ask as ask_mod
    from loci.query import engine as engine_mod
    from loci.query.engine import Engine

    searched: list[str] = []

    def search(session, scope, question, plan=None, **kw):
        searched.append(scope)
        session.budget.used += 800      # each scope's stores take 800 bytes of a 1,000-byte budget

    monkeypatch.setattr(ask_mod, "search_block", search)
    monkeypatch.setattr(ask_mod.Session, "semantic", lambda self: None)
    monkeypatch.setattr(engine_mod, "local_scopes", lambda layout, names: [n for n in names if n != "webby"])
    Engine(built / "home", cache_bytes=10_000).session()
    assert searched == ["gizmo"]                          # webby is a map: not fetched at boot
    searched.clear()
    monkeypatch.setattr(engine_mod, "local_scopes", lambda layout, names: list(names))
    Engine(built / "home", cache_bytes=1_000).session()
    assert len(searched) == 1                              # the budget was 3/4 full after one
    searched.clear()
    Engine(built / "home", cache_bytes=10_000).session()
    assert sorted(searched) == ["gizmo", "webby"]


# ---------------------------------------------------------------- memory

def test_a_byte_budget_drops_the_least_recently_used_entry_of_any_view():
    import numpy as np

    budget = ByteBudget(cap=3000)
    matrices, vectors = budget.view(), budget.view()
    matrices["a"] = np.zeros(250, dtype=np.float32)   # 1000 bytes
    vectors["q"] = np.zeros(250, dtype=np.float32)
    matrices["b"] = np.zeros(250, dtype=np.float32)
    assert matrices["a"] is not None                  # a is now more recent than q
    matrices["c"] = np.zeros(250, dtype=np.float32)
    assert "q" not in vectors and "a" in matrices and "b" in matrices and "c" in matrices
    assert budget.used == 3000


def test_the_newest_entry_stays_even_over_the_budget_and_fetch_returns_it():
    import numpy as np

    budget = ByteBudget(cap=100)
    view = budget.view()
    view["small"] = np.zeros(10, dtype=np.float32)
    big = view.fetch("big", lambda: np.zeros(1000, dtype=np.float32))
    assert big.nbytes == 4000 and "big" in view and "small" not in view
    assert view.fetch("big", lambda: pytest.fail("loaded twice")) is big


def test_a_session_s_stores_and_vectors_share_one_budget_from_params(built):
    from dataclasses import replace

    from loci.kernel.config import DEFAULT_PARAMS
    from loci.query.ask import open_session
    from loci.query.semantic_search import SemanticSide

    session = open_session(built / "home", params=replace(DEFAULT_PARAMS, engine_cache_bytes=1234),
                           keep_full_index=True)
    side = SemanticSide(layout=None, model="m", model_id="m", budget=session.budget)
    assert session.budget.cap == 1234
    side._vectors["s"] = b"x" * 2000
    lex = session.lexical("gizmo")                  # a store, measured as it is read
    assert lex.packed and "s" not in side._vectors and list(session._lexical) == ["gizmo"]
    lex.gram_scores("calibrate a sprocket")
    assert session.lexical("gizmo") is lex and session.budget.used == lex.nbytes > 4096


def test_a_store_that_grows_past_the_budget_pushes_out_the_least_recently_used():
    class Store:
        def __init__(self):
            self.size = 10

        @property
        def nbytes(self):
            return self.size

    budget = ByteBudget(cap=100)
    view = budget.view()
    old, grows = Store(), Store()
    view["old"], view["grows"] = old, grows
    grows.size = 95
    assert view["grows"] is grows and "old" not in view and budget.used == 95


def test_packed_gram_terms_read_as_the_split_list_and_score_alike_to_the_bit_in_order(built, monkeypatch):
    from bisect import bisect_left

    from loci.query.lexical import PackedTerms, load_lexical

    monkeypatch.setattr(PackedTerms, "BLOCK", 2)      # blocks of two: every path of index_of runs
    words = sorted({"abc", "ab\u00e9", "xyz", "", "zz", "a", "\u4e2d\u6587", "mm", "mn"})
    blob = "\n".join(words).encode()
    packed_terms = PackedTerms(blob)
    assert list(packed_terms) == words
    for term in words + ["0", "ab", "abd", "zzz", "\uffff", "m"]:
        i = bisect_left(words, term)
        assert packed_terms.index_of(term) == (i if i < len(words) and words[i] == term else None), term
    for scope in ("gizmo", "webby"):
        path = built / "home" / "query" / f"{scope}.sqlite"
        plain, packed = load_lexical(path), load_lexical(path)
        packed.packed = True
        for text in ("calibrate a sprocket", "cogwheel ratchet flywheel", "nothing here at all",
                     "sessions cookies redirects middleware http", "calibrate calibrate sprocket sprocket"):
            want, got = plain.gram_scores(text), packed.gram_scores(text)
            assert (got is None) == (want is None) and list((got or {}).items()) == list((want or {}).items())
        assert isinstance(packed._gram_arrays()[0], PackedTerms)
