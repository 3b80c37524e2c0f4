"""The warm engine's process: one ``Engine`` on one home, served on a Unix socket inside it.

``python -m loci.front.engine_server HOME`` (``engine_client.start`` runs it, detached).
Exactly one serves a home: it holds ``run/engine.lock`` while it lives, and a second one
that cannot take the lock within ``LOCK_WAIT`` seconds exits. Holding the lock, it knows a
socket file left in ``run/`` is stale (its engine was killed) and replaces it. It answers
one request per connection with one reply (``engine_client``'s wire: a question, and what to
print for it, rendered here by ``oneshot.printed``), after checking the peer is its own user.
It answers only clients whose settings are its own (``engine_client.environment_digest``, taken
when it starts: it runs with its starter's environment). It exits after ``LOCI_SERVER_IDLE``
seconds without a question, on ``stop``, when a client of other code or other settings asks
(that client starts the engine of its code and settings), or when its socket file is taken
away. It logs to ``logs/engine.log`` when it can, and serves just the same when it cannot (a
full disk). docs/decisions/engine.md.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import traceback

from loci.front import engine_client as client
from loci.front.oneshot import failure, printed
from loci.kernel.envnumber import env_number

LOCK_WAIT = 3.0          # seconds a starting engine waits for the lock (an old one may be leaving)
POLL = 0.5               # seconds between checks of idleness and of the socket file
READ_TIMEOUT = 10.0      # seconds a client may take to send its question
MAX_REQUEST = 4 << 20
DRAIN = 5.0              # seconds given to questions in flight at exit
START_DELAY = 0.2        # seconds before loading anything: the client that started it is still exiting
WARM_DELAY = 0.3         # seconds more before warming up (a question meanwhile is answered by its client)
WATCH = 0.5              # seconds between the watchdog's looks at what holds the engine
STALL = 3.0              # seconds without progress after which the engine is hung (and exits)
TICK_CPU = 0.01          # CPU seconds in one WATCH that count as progress (the idle threads take ~0.2 ms)
RUNAWAY = 30.0           # seconds a question may run (its session loaded) before the engine gives it up


class Log:
    """Lines to the home's engine log; a write that fails (a full disk) is dropped, never raised."""

    def __init__(self, home: str, own_stderr: bool = True):
        self.fd: int | None = None
        try:
            os.makedirs(os.path.dirname(client.log_path(home)), mode=0o700, exist_ok=True)
            self.fd = client.open_log(home)
            if own_stderr:
                os.dup2(self.fd, 2)   # what the interpreter itself reports lands there too
        except OSError:
            self.fd = None

    def __call__(self, msg: str) -> None:
        if self.fd is not None:
            client.log_line(self.fd, f"engine[{os.getpid()}] {msg}")


def idle_seconds() -> float:
    """``LOCI_SERVER_IDLE`` seconds, else ``Params.engine_idle_seconds``."""
    from loci.kernel.config import DEFAULT_PARAMS

    return env_number("LOCI_SERVER_IDLE", DEFAULT_PARAMS.engine_idle_seconds)


def cache_bytes() -> int | None:
    """``LOCI_SERVER_CACHE_MB`` in bytes, else None (``Params.engine_cache_bytes``)."""
    mb = env_number("LOCI_SERVER_CACHE_MB", None)
    return int(mb * 2**20) if mb else None


class Refusal(Exception):
    """The engine cannot serve this home (another serves it, or the run folder is not ours)."""


def _own_dir(path: str) -> None:
    """Make ``path`` a folder of this user, mode 0700; Refusal when it is someone else's."""
    import stat

    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != client._uid():
        raise Refusal(f"{path} is not a folder of this user")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def _take_lock(path: str, wait: float) -> int:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())   # who holds it (engine_client.holder)
            return fd
        except OSError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise Refusal("another engine serves this home") from None
            time.sleep(0.05)


class EngineServer:
    """The socket side of an Engine: its own (this process is the engine) or a host's (the MCP
    server's, ``share``), which keeps its stderr and never exits for idleness."""

    def __init__(self, home: str, *, idle: float | None = None, engine=None):
        from loci.query.engine import Engine

        self.home = home
        self.idle = idle if idle is not None else idle_seconds()
        self.digest = client.code_digest()
        self.environment = client.environment_digest()   # the settings its answers depend on (a host's: now)
        self.log = Log(home, own_stderr=engine is None)
        self.engine = engine if engine is not None else Engine(home, log=self.log, cache_bytes=cache_bytes())
        self.started = time.time()
        self.questions = 0
        self._active = 0
        self._last = time.monotonic()
        self._state = threading.Lock()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._conns: set[socket.socket] = set()
        self.runaway = env_number("LOCI_SERVER_RUNAWAY", RUNAWAY)
        self.hung: str | None = None      # why this engine gave up (``_watch``)
        self._version: str | None = None
        self._warming: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle
    def bind(self, lock_wait: float = LOCK_WAIT, lock_fd: int | None = None) -> None:
        """Take the lock (unless ``lock_fd`` holds it), replace a stale socket, listen; Refusal
        when this engine must not serve."""
        _own_dir(client.run_dir(self.home))
        self._lock_fd = lock_fd if lock_fd is not None else _take_lock(client.lock_path(self.home), lock_wait)
        path = client.socket_path(self.home)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is not None:
            if st.st_uid != client._uid():
                raise Refusal(f"{path} belongs to uid {st.st_uid}: not replacing it")
            os.unlink(path)   # we hold the lock: whoever made it is gone
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            with client._Address(path) as address:
                sock.bind(address)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        sock.listen(128)
        sock.settimeout(POLL)
        self._sock = sock
        self._inode = os.lstat(path).st_ino

    def serve(self) -> None:
        """Accept until stopped, idle, or the socket file is no longer ours; then clean up."""
        self.log(f"serving {self.home} (idle exit after {self.idle:g} s, code {self.digest}, "
                 f"settings {self.environment})")
        self._warm_in_background(WARM_DELAY)
        threading.Thread(target=self._watch, name="engine-watch", daemon=True).start()
        try:
            while not self._stop.is_set():
                try:
                    conn, _ = self._sock.accept()
                except socket.timeout:
                    conn = None
                except OSError as exc:
                    self.log(f"accept failed: {exc}")
                    break
                if conn is not None:
                    with self._state:
                        self._active += 1
                    threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
                if self._idle_for() >= self.idle:
                    self.log(f"idle for {self.idle:g} s: exiting")
                    break
                if not self._socket_is_ours():
                    self.log("the socket file was removed or replaced: exiting")
                    break
        finally:
            self.close()

    def _warm_in_background(self, delay: float = 0.0) -> None:
        """Warm the session in a thread of its own, unless one is at it. The first waits ``delay``
        (the client that started this engine answers its question in-process meanwhile, and must not
        share the cores with the warm-up); a question that finds the engine not ready after a failed
        warm-up (an index read mid-rebuild) starts another. Questions meanwhile are answered by
        their clients (``_reply``)."""
        with self._state:
            if self._warming is not None and self._warming.is_alive():
                return
            self._warming = threading.Thread(target=self._warm_later, args=(delay,), name="engine-warm", daemon=True)
            self._warming.start()

    def _warm_later(self, delay: float) -> None:
        if not self._stop.wait(delay):
            self.engine.warm_quietly()

    def _watch(self) -> None:
        """The watchdog: while something holds the engine (``Engine.work``), look every ``WATCH``
        seconds whether the process makes progress (CPU time, bytes read from storage or fetched,
        or a fetch in flight within its time: ``transfers.now``). Hung when it has made none for
        ``STALL`` seconds (a deadlock, a read that never returns, a fetch past its deadline that
        does not stop) or a question has run ``runaway`` seconds, not counting its waits on
        fetches: then ``_give_up``, so that its clients answer in-process at once and the next
        question starts a new engine. A slow question that keeps working, one waiting on a slow
        link, or a session loading on a big home, is left alone."""
        from loci.kernel import transfers

        last, quiet_since = _progress(), time.monotonic()
        seen, waited = None, 0.0   # the work last looked at, and the fetch waits before it began
        while not self._stop.wait(WATCH):
            now, sample, work, fetch = time.monotonic(), _progress(), self.engine.work, transfers.now()
            moved = sample[0] - last[0] >= TICK_CPU or sample[1:] != last[1:] or (fetch is not None and fetch.timely)
            last = sample
            if work is None or moved:
                quiet_since = now
            if work is None:
                continue
            if work is not seen:
                seen, waited = work, transfers.waited()
            ran = now - work.since - (transfers.waited() - waited)
            if now - quiet_since >= STALL:
                why = f"no progress for {now - quiet_since:.1f} s"
                if fetch is not None:
                    why += f", a fetch {-fetch.left_s:.0f} s past its deadline"
            elif work.what in ("route", "ask") and ran >= self.runaway:
                why = f"a question ran {ran:.0f} s"
            else:
                continue
            self._give_up(f"{why} ({work.what})", work.thread)
            return

    def _give_up(self, why: str, thread: int) -> None:
        """A hung engine: log where it is stuck, let go of its socket (new clients start another
        engine) and close every connection (their clients answer in-process now); ``serve`` then
        stops, and an engine of its own process exits (``main``)."""
        frame = sys._current_frames().get(thread)
        stack = "".join(traceback.format_stack(frame)) if frame is not None else "(its thread is gone)\n"
        self.hung = why
        self.log(f"hung: {why}; giving up, where it was stuck:\n{stack.rstrip()}")
        self._stop.set()
        self._give_up_socket()
        with self._state:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _idle_for(self) -> float:
        with self._state:
            return 0.0 if self._active else time.monotonic() - self._last

    def _socket_is_ours(self) -> bool:
        try:
            return os.lstat(client.socket_path(self.home)).st_ino == self._inode
        except OSError:
            return False

    def close(self) -> None:
        """Stop listening, remove the socket if it is still ours, let questions in flight finish."""
        if self._sock is not None:
            if self._socket_is_ours():
                try:
                    os.unlink(client.socket_path(self.home))
                except OSError:
                    pass
            self._sock.close()
            self._sock = None
        deadline = time.monotonic() + (0.0 if self.hung else DRAIN)   # hung: what is in flight never ends
        while time.monotonic() < deadline:
            with self._state:
                if not self._active:
                    break
            time.sleep(0.02)
        os.close(self._lock_fd)   # a host (the MCP server) lives on: let another engine serve
        self.log("stopped")

    # ------------------------------------------------------------ one connection
    def _handle(self, conn: socket.socket) -> None:
        with self._state:
            self._conns.add(conn)
        try:
            conn.settimeout(READ_TIMEOUT)
            uid = client.peer_uid(conn)
            if uid is not None and uid != client._uid():
                self.log(f"refused a client of uid {uid}")
                return
            message, legacy = _unwrap(_read_line(conn))
            if message is None:
                return
            reply = self._reply(message)
            try:
                conn.sendall(json.dumps(reply, ensure_ascii=True).encode() + b"\n" if legacy
                             else client.reply_frame(reply))
            except OSError:
                pass   # the client went away; it answers in-process
            if message.get("op") in ("route", "ask"):
                _trim_heap()
        except Exception:
            self.log(f"connection failed:\n{traceback.format_exc()}")
        finally:
            conn.close()
            with self._state:
                self._conns.discard(conn)
                self._active -= 1
                self._last = time.monotonic()

    def _reply(self, message: dict) -> dict:
        op = message.get("op")
        if op == "status":
            return {"ok": self.status()}
        if op == "stop":
            self.log("asked to stop")
            self._stop.set()
            return {"ok": True}
        if op not in ("route", "ask"):
            return {"fault": f"unknown operation {op!r}"}
        if message.get("proto") != client.PROTOCOL or message.get("digest") != self.digest:
            self.log(f"a client of other code ({message.get('digest')}) asked: exiting for its engine")
            self._give_up_socket()
            self._stop.set()
            return {"mismatch": self.digest}
        if message.get("env") != self.environment:   # its answers could differ from the client's own
            self.log(f"a client with other settings ({message.get('env')}) asked: exiting for its engine")
            self._give_up_socket()
            self._stop.set()
            return {"mismatch": self.digest, "environment": self.environment}
        if not self.engine.ready:   # warming (or replacing its session): held, a question would wait for
            self._warm_in_background()   # all of it (seconds beside 1,000 scopes); its client answers it now
            return {"warming": True}
        return self._answer(op, message.get("args") or {}, bool(message.get("json")))

    def _answer(self, op: str, args: dict, as_json: bool) -> dict:
        """What the client prints (``printed``): the answer, or an expected failure's line and
        exit code; a fault (a bug, logged) when the client must answer in-process."""
        self.questions += 1
        try:
            payload = self.engine.answer(op, args, as_json)
        except Exception as exc:
            known = failure(exc)
            if known is not None:
                return printed(op, None, as_json=as_json, failed=known)
            self.log(f"{op} failed:\n{traceback.format_exc()}")
            return {"fault": f"{type(exc).__name__}"}
        return printed(op, payload, explain=bool(args.get("explain")), as_json=as_json)

    def _give_up_socket(self) -> None:
        """Unlink the socket now, so that new clients start the engine of their code."""
        if self._socket_is_ours():
            try:
                os.unlink(client.socket_path(self.home))
            except OSError:
                pass

    def _busy(self) -> dict | None:
        """What holds the engine now and for how long: ``{"what", "for_s"}``, and while it waits on
        a fetch ``"fetching": {"scopes", "mb", "for_s", "left_s"}`` (the client waits on for it);
        None when idle."""
        from loci.kernel import transfers

        work = self.engine.work
        if work is None:
            return None
        busy: dict = {"what": work.what, "for_s": round(time.monotonic() - work.since, 1)}
        fetch = transfers.now()
        if fetch is not None and fetch.timely:
            busy["fetching"] = {"scopes": fetch.scopes, "mb": round(fetch.bytes / 2**20, 1),
                                "for_s": round(fetch.for_s, 1), "left_s": round(fetch.left_s, 1)}
        return busy

    def status(self) -> dict:
        if self._version is None:   # read once: a client waiting on a question asks every 2 s, and
            from loci.kernel.dist import installed_version   # the watchdog must not take that for progress

            self._version = installed_version() or "0+source"
        return {"pid": os.getpid(), "home": self.home, "version": self._version,
                "digest": self.digest, "environment": self.environment, "python": sys.executable,
                "started": self.started,
                "uptime_s": round(time.time() - self.started, 1), "questions": self.questions,
                "sessions": self.engine.loads, "ready": self.engine.ready, "busy": self._busy(), "idle_exit_s": self.idle, "rss_mb": _rss_mb(), "rss_anon_mb": _rss_mb("RssAnon"),
                "cached_mb": round(self.engine.cached_bytes() / 2**20, 1)}


def share(engine) -> EngineServer | None:
    """Serve ``engine`` (the MCP server's) on its home's socket from a thread, so that the CLI's
    questions use the same warm Session while the host runs; None when another engine serves
    the home already, or the engine is turned off (``LOCI_SERVER=off``)."""
    if not client.enabled():
        return None
    server = EngineServer(str(engine.layout.home.resolve()), idle=float("inf"), engine=engine)
    try:
        server.bind(lock_wait=0.0)
    except (Refusal, OSError) as exc:
        server.log(f"not sharing the MCP server's engine: {exc}")
        return None
    threading.Thread(target=server.serve, name="engine-socket", daemon=True).start()
    return server


_LIBC: list = []


def one_heap() -> None:
    """Set up a resident process's allocators, before its first thread: glibc's heap thresholds
    stay dynamic (unlike a one-shot's ``_return_big_buffers``: fixed, every buffer of a question's
    encoding was mapped and faulted in again, 2-2.5x slower), and its threads share one arena
    (each connection and each of ``ask``'s searches runs on a thread; an arena a thread each
    kept ~20 MB more after the 266 development questions); pyarrow, which a fetch imports,
    allocates from the same heap rather than its own pool. ``_trim_heap`` after each reply gives
    the freed heap back (docs/decisions/engine.md)."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, 1)   # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def _trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc), after the reply has gone: stores
    pushed out of the byte budget and read again leave free holes that otherwise stay resident
    (266 development questions: 249 -> 224 MB anonymous, `bench/engine_memory.py`)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        if not _LIBC:
            import ctypes

            _LIBC.append(ctypes.CDLL("libc.so.6"))
        _LIBC[0].malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _read_line(conn: socket.socket) -> dict | None:
    chunks, size = [], 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return None
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
        if size > MAX_REQUEST:
            return None
    try:
        message = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _unwrap(message: dict | None) -> tuple[dict | None, bool]:
    """(the request, whether its client speaks another protocol and reads a JSON line back).
    A request of this protocol carries its message marshalled, as hex, in ``m``; one that does
    not is answered in JSON, as its client expects (it is of other code: ``mismatch``)."""
    if message is None or message.get("proto") != client.PROTOCOL or not isinstance(message.get("m"), str):
        return message, True
    import marshal

    try:
        inner = marshal.loads(bytes.fromhex(message["m"]))
    except (ValueError, EOFError, TypeError):
        return None, False
    return (inner if isinstance(inner, dict) else None), False


def _progress() -> tuple[float, int, int]:
    """What a working engine moves: this process's CPU time (every thread's, BLAS's included),
    the bytes it has read from storage (Linux's /proc/self/io; 0 where it cannot be read) and
    those its fetches have brought (``transfers.moved``: a socket's reads are not storage's)."""
    from loci.kernel.transfers import moved

    read = 0
    try:
        with open("/proc/self/io", "rb") as f:
            for line in f:
                if line.startswith(b"read_bytes:"):
                    read = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return time.process_time(), read, moved()


def _rss_mb(kind: str = "VmRSS") -> float | None:
    """Resident memory now (Linux), in MB: all of it (VmRSS), or its anonymous part (RssAnon;
    the rest is mapped files, mostly the encoder's weights, which the OS can drop and re-read)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(kind + ":"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        from loci.kernel.home import home_dir

        args = [home_dir()]
    home = os.path.abspath(args[0])
    os.chdir("/")   # hold no directory of the user's
    os.umask(0o077)
    one_heap()
    try:   # the lock first: a client that asks meanwhile sees an engine starting, and starts none
        _own_dir(client.run_dir(home))
        lock_fd = _take_lock(client.lock_path(home), LOCK_WAIT)
    except (Refusal, OSError) as exc:
        Log(home, own_stderr=False)(f"not serving: {exc}")
        return 0
    time.sleep(START_DELAY)
    server = EngineServer(home)
    try:
        server.bind(lock_fd=lock_fd)
    except (Refusal, OSError) as exc:
        server.log(f"not serving: {exc}")
        return 0
    server.serve()
    if server.hung:   # a thread is stuck for good (and may hold what the interpreter's exit needs)
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
