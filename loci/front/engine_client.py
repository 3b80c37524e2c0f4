"""The thin client of the warm engine: find it, ask it, start it. Standard library only.

A plain `loci route`/`loci ask` comes here before any heavy import (``loci.front.oneshot``):
connecting, sending the question and reading the reply cost a few milliseconds, where a cold
process pays for numpy, the stores and the encoder. Even the standard library is chosen: the
C ``_socket`` rather than ``socket`` (whose enums and ``selectors`` cost a warm question ~2 ms)
and ``marshal`` (built in) rather than ``json`` (which imports ``re``); the engine sends what to
print already rendered, so a warm question imports neither json nor the renderer.

The wire: a request is one JSON line that any engine reads, ``{"proto": 2, "op": ..., "m": hex}``,
the message itself marshalled inside (an engine of protocol 1 sees another protocol and leaves
for the engine of this code); the engine replies with one frame, its length (4 bytes,
big-endian) and the marshalled reply, or, to a request of another protocol, with one JSON line
(which starts with ``{``, a byte no frame of at most ``MAX_REPLY`` bytes starts with). Client and
engine of one code run the same interpreter (the code digest names it): one marshal format.

An answer must not depend on which client started the engine, whose environment it keeps
(``engine_environment``): each question carries ``environment_digest()``, a hash of the settings
an answer depends on (S3's endpoint, region and credentials, the query side's ``LOCI_*``, where
models are found), never their values. An engine started with other settings does not answer:
it leaves, as an engine of other code does, and the client answers in-process and starts one
with its own.

Every way this can fail (no engine, a stale socket, a socket that is not ours, an engine of other
code or other settings, one that dies mid-answer) comes back as "no answer" and the caller
answers in-process; nothing is printed here.

The engine of a home lives in ``$LOCI_HOME/run/`` (the folder 0700, the socket 0600, the lock
it holds while it serves) and logs to ``$LOCI_HOME/logs/engine.log``; docs/decisions/engine.md.
"""
from __future__ import annotations

import marshal
import os
import sys

from loci.kernel.home import (  # noqa: F401  (the engine server finds its files through these names)
    engine_lock as lock_path, engine_log as log_path, engine_socket as socket_path, manifest_path, run_dir,
)

PROTOCOL = 2             # 2: marshal frames, replies rendered by the engine
CONNECT_TIMEOUT = 2.0    # seconds to connect and send
REPLY_TIMEOUT = 60.0     # seconds to wait for an answer (a first question waits for the warm-up)
PROBE = 0.1              # seconds of silence after which the engine's process is looked at (stopped?)
WEDGED = 2.0             # seconds a status may go unanswered, the engine's process taking no CPU, before it is hung
IDLE_CPU = 0.05          # ...no CPU: under this share of a core (threads waiting for a held interpreter lock wake every 5 ms)
MAX_REPLY = 64 << 20
OFF_VALUES = ("off", "0", "no", "false")


class NoServer(Exception):
    """No engine answered; ``start`` says whether starting one could help."""

    def __init__(self, why: str, start: bool = True, replacing: bool = False, stopped: int | None = None,
                 hung: int | None = None):
        super().__init__(why)
        self.start = start
        self.replacing = replacing   # an engine of other code is leaving, or was ended: start ours even while it holds the lock
        self.stopped = stopped       # the pid of an engine that is stopped (SIGSTOP) and holds the lock
        self.hung = hung             # the pid of an engine that answers nothing and was not ended (not ours to end)


def enabled(no_server: bool = False) -> bool:
    """Whether to use the engine: not with ``--no-server`` or ``LOCI_SERVER=off``, nor where
    the platform has no Unix sockets or ``posix_spawn``."""
    if no_server or os.environ.get("LOCI_SERVER", "").strip().lower() in OFF_VALUES:
        return False
    return os.name == "posix" and hasattr(os, "posix_spawn")


def _uid() -> int:
    return os.getuid()


_DIGEST: list[str] = []


def code_digest() -> str:
    """Which code answers: the interpreter (its file and its environment, ``sys.prefix``: not the
    name it was called by, so `loci` (bin/python3) and `python -m loci` (bin/python) share one
    engine), the protocol and every source file of the ``loci`` package (path, size, mtime). An
    engine whose digest differs from its client's is replaced, so an upgrade or an edit never
    answers with the old code."""
    if _DIGEST:
        return _DIGEST[0]
    import zlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = [os.path.realpath(sys.executable), sys.prefix, str(PROTOCOL), root]
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            entries = sorted(os.scandir(top), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(entry.path)
            elif entry.name.endswith(".py"):
                st = entry.stat()
                parts.append(f"{entry.path[len(root):]}:{st.st_size}:{st.st_mtime_ns}")
    blob = "\n".join(parts).encode("utf-8", "surrogateescape")
    _DIGEST.append(f"{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}{len(parts):x}")
    return _DIGEST[0]


# the settings an answer depends on: S3's endpoint, region and credentials chain (AWS_*, and HOME,
# under which ~/.aws is read; loci.kernel.remote), the query side's own (LOCI_CACHE_MB: which
# fetched stores stay), where a model is found (HF_*, TRANSFORMERS_*, SENTENCE_TRANSFORMERS_HOME),
# and how S3's HTTP client (curl) reaches an endpoint: its proxies and the certificates it trusts
ANSWER_PREFIXES = ("AWS_", "LOCI_", "HF_", "TRANSFORMERS_", "SENTENCE_TRANSFORMERS_")
ANSWER_NAMES = frozenset({"HOME", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
                          "http_proxy", "https_proxy", "all_proxy", "no_proxy",
                          "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"})
# ...but not: the home (the socket is the home's; a relative LOCI_HOME names it from any folder),
# the engine's own lifetime and memory (LOCI_SERVER*), what every encoding process sets to "1"
# itself (loci.query.semantic.force_offline)
NOT_ANSWER_PREFIXES = ("LOCI_HOME", "LOCI_SERVER")
NOT_ANSWER_NAMES = frozenset({"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"})


def environment_digest(environ=None) -> str:
    """A hash of the settings in ``environ`` (this process's) that an answer depends on: equal for
    two environments exactly when those settings are. A one-way hash (BLAKE2b), never the values,
    which include credentials; ``_blake2`` is a small extension module (~0.5 ms), ``hashlib`` would
    load OpenSSL's (~4 ms)."""
    env = os.environ if environ is None else environ
    try:
        from _blake2 import blake2b
    except ImportError:   # an interpreter built without it
        from hashlib import blake2b
    digest = blake2b(digest_size=16, person=b"loci-env")
    for name in sorted(env):
        if ((name.startswith(ANSWER_PREFIXES) or name in ANSWER_NAMES)
                and not name.startswith(NOT_ANSWER_PREFIXES) and name not in NOT_ANSWER_NAMES):
            # NUL ends each name and value: no environment string holds one
            digest.update(b"%s\0%s\0" % (os.fsencode(name), os.fsencode(env[name])))
    return digest.hexdigest()


class _Address:
    """A socket path usable with bind/connect: as is, or (over the 107 bytes AF_UNIX allows)
    through ``/proc/self/fd`` of its folder, opened for the duration."""

    def __init__(self, path: str):
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> str:
        if len(os.fsencode(self.path)) < 100 or not os.path.isdir("/proc/self/fd"):
            return self.path
        self.fd = os.open(os.path.dirname(self.path), os.O_RDONLY | os.O_DIRECTORY)
        return f"/proc/self/fd/{self.fd}/{os.path.basename(self.path)}"

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)


def peer_uid(sock) -> int | None:
    """The uid of the process at the other end (SO_PEERCRED); None where the platform lacks it."""
    creds = _peer_creds(sock)
    return None if creds is None else int.from_bytes(creds[4:8], sys.byteorder, signed=True)


def peer_pid(sock) -> int | None:
    """The pid of the process at the other end (SO_PEERCRED: the one that listens); None where unknown."""
    creds = _peer_creds(sock)
    return None if creds is None else int.from_bytes(creds[0:4], sys.byteorder, signed=True) or None


def _peer_creds(sock) -> bytes | None:
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    return sock.getsockopt(_socket.SOL_SOCKET, option, 12)   # struct ucred: pid, uid, gid (3 ints)


# /proc/PID/stat's states of a process that will not answer: stopped (SIGSTOP, a debugger's
# trace), a zombie, dead
STOPPED_STATES = frozenset("TtZX")


def stopped(pid: int | None) -> bool:
    """Whether process ``pid`` is stopped or dead, so that it will not answer (Linux's /proc;
    False where that cannot be told)."""
    return _proc_stat(pid)[0] in STOPPED_STATES


def _proc_stat(pid: int | None) -> tuple[str, int | None]:
    """Process ``pid``'s state letter ("X" when it is gone, "" when unknown) and the CPU time its
    threads have taken (utime + stime, in clock ticks; None when unknown), from /proc/PID/stat."""
    from loci.kernel.procfs import proc_fields

    fields = proc_fields(pid) if pid else None
    if not fields:
        return ("X" if fields == [] else ""), None
    try:
        cpu = int(fields[11]) + int(fields[12])
    except (IndexError, ValueError):
        cpu = None
    return fields[0], cpu


OPS = ("route", "ask", "status", "stop")


def request_line(message: dict) -> bytes:
    """A request as sent (see the module's docstring)."""
    op = message["op"]
    if op not in OPS:
        raise ValueError(f"unknown operation {op!r}")
    return b'{"proto": %d, "op": "%s", "m": "%s"}\n' % (PROTOCOL, op.encode(), marshal.dumps(message).hex().encode())


def reply_frame(reply: dict) -> bytes:
    """A reply as sent to a client of this protocol: its length, then the marshalled dict."""
    blob = marshal.dumps(reply)
    return len(blob).to_bytes(4, "big") + blob


def _await_reply(sock, timeout: float, home: str | None = None, ping: bool = False) -> None:
    """Wait until the engine starts its reply (or closes), up to ``timeout`` seconds; then leave
    the rest of that time to read it. Every ``PROBE`` seconds of silence the engine's process is
    looked at: a stopped one (SIGSTOP, a debugger) still takes connections, which its kernel
    queues, and would have kept every question waiting the whole timeout. NoServer then, with
    ``start`` False: it holds the lock, so no other engine can serve meanwhile.

    Every ``WEDGED`` seconds of silence the engine of ``home`` is asked whether it is alive: for a
    question (``ping``) by a ``status`` of its own, which the engine answers from a thread of its
    own while a question works (an engine hung on a question ends itself: its watchdog,
    ``engine_server.EngineServer._watch``); a ``status`` by itself. An engine that says it waits
    on a fetch (a mapped scope's stores, over a slow link) has ``timeout`` seconds again from
    then: the fetch has a deadline of its own (``territory.fetch_seconds``), which the engine's
    watchdog holds it to. One that has answered nothing
    for ``WEDGED`` seconds while its process took (next to) no CPU time is wedged (stuck in C with the
    interpreter's lock held: no thread of it runs) and is ended (``_wedged``)."""
    import _socket
    import time

    begun = time.monotonic()
    deadline = begun + timeout
    pid = None
    look_at, cpu = begun + WEDGED, None
    while True:
        now = time.monotonic()
        left = deadline - now
        sock.settimeout(max(min(PROBE, left), 0.001))
        try:
            sock.recv(1, _socket.MSG_PEEK)   # the reply's first byte (or the end), left unread
        except TimeoutError:
            if left <= PROBE:
                raise
            pid = pid or peer_pid(sock)
            state, ticks = _proc_stat(pid)
            if state in STOPPED_STATES:
                raise NoServer(f"its engine (pid {pid}) is stopped: `kill -CONT {pid}` lets it go on, "
                               f"`kill {pid}` ends it", start=False, stopped=pid) from None
            if cpu is None:
                cpu = ticks
            if time.monotonic() >= look_at:
                if ping:   # raises NoServer when the engine is wedged
                    status = request(home, {"proto": PROTOCOL, "op": "status"},
                                     timeout=max(deadline - time.monotonic(), 0.001))
                    if _fetching(status):   # waiting on a slow link, within its time: wait on
                        deadline = max(deadline, time.monotonic() + timeout)
                elif home is not None and _idle(cpu, ticks):
                    _wedged(home, pid, time.monotonic() - begun)
                look_at, cpu = time.monotonic() + WEDGED, ticks
            continue
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        return


def _fetching(status: dict) -> bool:
    """Whether an engine's ``status`` reply says it waits on a fetch within its time
    (``EngineServer._busy``): the reply timeout then counts from now, the fetch bounding the wait."""
    info = status.get("ok")
    busy = info.get("busy") if isinstance(info, dict) else None
    return isinstance(busy, dict) and isinstance(busy.get("fetching"), dict)


def open_log(home: str) -> int:
    """The home's engine log opened to append (made, owner only, when missing); OSError when it cannot be."""
    return os.open(log_path(home), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def log_line(fd: int, line: str) -> None:
    """Append ``line`` to the engine log open at ``fd``, stamped as every line of it is (local
    time to the second); a write that fails (a full disk) is dropped, never raised."""
    import time

    try:
        os.write(fd, f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n".encode("utf-8", "replace"))
    except OSError:
        pass


def _note(home: str, line: str) -> None:
    """One line in the home's engine log, as the engine writes them; dropped when it cannot be written."""
    try:
        fd = open_log(home)
    except OSError:
        return
    try:
        log_line(fd, line)
    finally:
        os.close(fd)


def _idle(before: int | None, after: int | None) -> bool:
    """Whether a process took under ``IDLE_CPU`` of a core in the ``WEDGED`` seconds between two
    readings of its CPU ticks (False when either is unknown)."""
    if before is None or after is None:
        return False
    try:
        per_second = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):
        per_second = 100
    return after - before < IDLE_CPU * WEDGED * per_second


def _wedged(home: str, pid: int | None, silent: float) -> None:
    """An engine that answered nothing for ``silent`` seconds and took no CPU time: ended when it
    is an engine's own process (``loci.front.engine_server``; it cannot end itself: no thread of
    it runs), so that the next question starts a new one; another process serving the home (an
    MCP server's) is named, not ended. Raises NoServer either way."""
    import signal

    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            ours = b"loci.front.engine_server" in f.read().split(b"\0")
    except OSError:
        ours = False
    if ours:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        _note(home, f"engine[{pid}] answered nothing for {silent:.1f} s, taking no CPU (wedged): "
                    f"ended by a client (pid {os.getpid()})")
        raise NoServer(f"its engine (pid {pid}) answered nothing for {silent:.1f} s and was ended", replacing=True)
    raise NoServer(f"the process serving it (pid {pid}) answered nothing for {silent:.1f} s: hung; "
                   f"`kill {pid}` ends it", start=False, hung=pid)


def read_reply(sock, limit: int = MAX_REPLY) -> dict | None:
    """The engine's reply: a dict, or None when it closed before a whole one came. Raises OSError
    (a timeout, a reset) or ValueError (over ``limit`` bytes, not a reply)."""
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    if head[:1] == b"{":   # a JSON line: an engine of another protocol (it says so, and leaves)
        rest = _read_line(sock, limit, head)
        if rest is None:
            return None
        import json

        reply = json.loads(rest)
    else:
        size = int.from_bytes(head, "big")
        if size > limit:
            raise ValueError("reply too long")
        blob = _read_exactly(sock, size)
        if blob is None:
            return None
        try:
            reply = marshal.loads(blob)
        except (EOFError, TypeError) as exc:
            raise ValueError(str(exc)) from None
    if not isinstance(reply, dict):
        raise ValueError("the reply is not a dict")
    return reply


def _read_line(sock, limit: int, start: bytes = b"") -> bytes | None:
    """Bytes up to and including a newline (None if the peer closes first)."""
    chunks, size = [start], len(start)
    while not chunks[-1].endswith(b"\n"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            return None
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise ValueError("message too long")
    return b"".join(chunks)


def _read_exactly(sock, size: int) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def connect(home: str, timeout: float = CONNECT_TIMEOUT):
    """A connection to the home's engine, checked to be ours; NoServer otherwise."""
    import _socket   # here: the first question of a home, which finds no socket, never pays for it
    import stat

    path = socket_path(home)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise NoServer("no engine") from None
    except OSError as exc:
        raise NoServer(f"engine socket unreadable: {exc}", start=False) from None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != _uid():
        raise NoServer(f"{path} is not a socket of this user: refused", start=False)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        with _Address(path) as address:
            sock.connect(address)
    except OSError:   # refused: a socket left by an engine that was killed; a new one takes it over
        sock.close()
        raise NoServer("stale socket") from None
    uid = peer_uid(sock)
    if uid is not None and uid != _uid():
        sock.close()
        raise NoServer(f"the engine at {path} runs as uid {uid}: refused", start=False)
    return sock


def request(home: str, message: dict, timeout: float = REPLY_TIMEOUT) -> dict:
    """Send one request and read its one-line reply; NoServer on any failure on the way."""
    sock = connect(home)
    try:
        sock.sendall(request_line(message))
        _await_reply(sock, timeout, home, ping=message["op"] in ("route", "ask"))
        reply = read_reply(sock)
    except (OSError, ValueError) as exc:
        raise NoServer(f"the engine failed: {type(exc).__name__}") from None
    finally:
        sock.close()
    if reply is None:
        raise NoServer("the engine closed the connection before answering")
    return reply


def ask(home: str, op: str, args: dict, as_json: bool) -> dict:
    """What the command prints, as the engine rendered it: ``{"out": stdout, "err": stderr,
    "code": exit code}`` (``loci.front.oneshot.printed``); NoServer when it cannot give one
    (including an engine of other code, which then exits)."""
    if not os.path.lexists(socket_path(home)):   # the first question of a home: no digest to compute
        raise NoServer("no engine")
    reply = request(home, {"proto": PROTOCOL, "digest": code_digest(), "env": environment_digest(), "op": op,
                           "args": args, "json": as_json})
    if isinstance(reply.get("out"), str) and isinstance(reply.get("err"), str) and isinstance(reply.get("code"), int):
        return reply
    if reply.get("warming"):   # this engine answers once it is warm: none other is started
        raise NoServer("the engine is warming up", start=False)
    if "mismatch" in reply:
        what = "was started with other settings" if reply.get("environment") else "runs other code"
        raise NoServer(f"the engine {what}; it is being replaced", replacing=True)
    raise NoServer(f"the engine could not answer: {reply.get('fault', 'unknown reply')}")


def describe(home: str) -> dict:
    """The home's engine as `loci server status --json` prints it: ``running``, and what the
    engine says of itself (pid, version, digest, uptime, memory...) or, when none answers and
    that is not simply because none runs, the ``problem``; ``same_code`` and ``same_environment``:
    whether it answers this client (else the next question replaces it)."""
    out: dict = {"home": home, "socket": socket_path(home), "running": False}
    try:
        reply = request(home, {"proto": PROTOCOL, "op": "status"}, timeout=10.0)
    except NoServer as why:
        out["problem"] = None if str(why) == "no engine" else str(why)
        out["refused"] = not why.start
        out["stopped"] = why.stopped
        out["hung"] = why.hung
        return out
    info = reply.get("ok") if isinstance(reply.get("ok"), dict) else {}
    out.update(info, running=True, same_code=info.get("digest") == code_digest(),
               same_environment=info.get("environment") == environment_digest())
    return out


def stop(home: str, wait: float = 5.0) -> bool:
    """Ask the running engine to exit, and wait (up to ``wait`` seconds) until it has let go of its
    lock, so that "stopped" is true when said; whether one was running. NoServer when one holds
    the home but cannot be asked (it is stopped: SIGSTOP; or hung, and not an engine's own process)."""
    try:
        request(home, {"proto": PROTOCOL, "op": "stop"}, timeout=10.0)
    except NoServer as why:
        if why.stopped or why.hung:
            raise
        if not why.replacing:   # replacing: it was wedged, and ended (``_wedged``)
            return False
    import time

    deadline = time.monotonic() + wait
    while _locked(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


def start(home: str, replacing: bool = False) -> bool:
    """Start the home's engine, detached, unless the home has no index or an engine holds (or is
    taking) the lock (``replacing``: one that is leaving does); whether one was started. It may
    still lose a race to another: the lock decides (``loci.front.engine_server``)."""
    if not os.path.exists(manifest_path(home)) or not replacing and _locked(home):
        return False
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:   # its own session: no terminal's signal reaches it; the log replaces its stderr
        os.posix_spawn(sys.executable, [sys.executable, "-m", "loci.front.engine_server", home],
                       engine_environment(), file_actions=null, setsid=True)
    except OSError:
        return False
    return True


ENGINE_BLAS_THREADS = 2   # a question's encoding: 11 -> 7.7 ms p50 with two (docs/decisions/engine.md)


def engine_environment() -> dict[str, str]:
    """The started engine's environment: this one, with BLAS threads for encoding questions, unless
    the user set ``OPENBLAS_NUM_THREADS`` (the entry point sets one thread for a one-shot)."""
    cli = sys.modules.get("loci.front.cli")
    chosen = getattr(cli, "BLAS_CHOSEN", None) if cli is not None else os.environ.get("OPENBLAS_NUM_THREADS")
    threads = chosen or str(max(1, min(ENGINE_BLAS_THREADS, os.cpu_count() or 1)))
    return {**os.environ, "OPENBLAS_NUM_THREADS": threads}


def holder(home: str) -> int | None:
    """The pid of the engine holding the home's lock, None when none does."""
    if not _locked(home):
        return None
    try:
        with open(lock_path(home)) as f:
            return int(f.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def _locked(home: str) -> bool:
    """Whether an engine holds the home's lock now (running, or starting)."""
    import fcntl

    try:
        fd = os.open(lock_path(home), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
