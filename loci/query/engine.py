"""The warm query engine: one Session per home kept across questions, replaced when a rebuild lands.

The MCP server and the background engine behind the CLI (``loci.front.engine_server``) are
front ends of ``Engine``; a one-shot command answers with a fresh Session. Either way a
question becomes the same ``answer`` payload, which the client renders (``loci.front.render.show``):
``{"notes": [...], "json": ...}`` for ``--json``, else ``{"notes": [...], "view": ...}``, the
result as plain data, so what is printed is byte-identical whichever process answered.
"""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable

from loci.kernel.config import Layout, layout as make_layout
from loci.kernel.errors import LociError
from loci.query.store import local_scopes

# at boot, the largest local scopes' stores (by chunks) are opened and searched once, at most
# WARM_SCOPES of them, while the byte budget is under WARM_SHARE full: a small home's stores all
# fit (the 22 development repositories take 107 MB of 128), and its first questions read none
WARM_SCOPES = 64
WARM_SHARE = 0.75
OPS = ("route", "ask")


@dataclass(frozen=True)
class Work:
    """What holds an Engine: ``what`` (a question's op, "load" for a session being made and
    warmed, "check" for its freshness stamp), on which thread, since when (``time.monotonic``)."""

    what: str
    thread: int
    since: float


def plain(obj: Any) -> Any:
    """A result as JSON-ready data: a dataclass as a dict of its fields and its properties
    (``ScopeScore.total``), tuples as lists; what the text renderers read by attribute."""
    if is_dataclass(obj) and not isinstance(obj, type):
        out = {f.name: plain(getattr(obj, f.name)) for f in fields(obj)}
        out.update({name: plain(getattr(obj, name)) for name, attr in vars(type(obj)).items()
                    if isinstance(attr, property)})
        return out
    if isinstance(obj, dict):
        return {key: plain(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [plain(value) for value in (sorted(obj) if isinstance(obj, (set, frozenset)) else obj)]
    return obj


def answer(session, op: str, args: dict, as_json: bool) -> dict:
    """One question's payload (see the module's docstring). ``args``: question, cwd, group, fast,
    and for ``ask`` also scope and k. Expected failures raise LociError."""
    from loci.query.ask import ask, route_question

    session.notes.clear()   # what is noted below is this answer's (answers run one at a time)
    if op == "route":
        result = route_question(session, args["question"], cwd=args.get("cwd"), group=args.get("group"),
                                fast=bool(args.get("fast")))
    elif op == "ask":
        result = ask(session, args["question"], cwd=args.get("cwd"), scope=args.get("scope"),
                     group=args.get("group"), k=int(args.get("k", session.params.k)), fast=bool(args.get("fast")))
    else:
        raise ValueError(f"unknown operation {op!r}")
    out: dict = {"notes": list(dict.fromkeys(session.notes))}   # each once
    if as_json:
        out["json"] = result.to_json(explain=True) if args.get("explain") else result.to_json()
    else:
        out["view"] = plain(result.for_text())
    return out


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return None


class Engine:
    """One warm Session on a home: warmed when made, replaced when the artifacts on disk change.

    Thread-safe: a question asked while the session is warming or being replaced waits for it
    rather than loading the same files twice; ``answer`` runs one question at a time (a Session's
    caches are not shared-write safe, and the interpreter's lock would serialise them anyway).
    """

    def __init__(self, home: str | os.PathLike | None = None, *, warm_scopes: int = WARM_SCOPES,
                 log: Callable[[str], None] | None = None, cache_bytes: int | None = None):
        self.layout: Layout = make_layout(Path(home) if home is not None else None)
        self.cache_bytes = cache_bytes      # None: Params.engine_cache_bytes
        self.warm_scopes = warm_scopes
        import threading   # here: a one-shot question imports this module, not threads

        self.log = log or (lambda msg: None)
        self.loads = 0                      # sessions made so far (a reload after a rebuild counts)
        self.ready = False                  # a session is loaded and warmed
        self.work: Work | None = None       # what holds the engine now (a watchdog reads it)
        self._lock = threading.RLock()
        self._session = None
        self._stamp: tuple | None = None
        self._manifest_key: tuple | None = None
        self._written_at: Any = None

    # ------------------------------------------------------------ freshness
    def _current_stamp(self) -> tuple:
        """Moves when a rebuild lands (manifest written_at) or scopes.json / groups.json /
        calibration.json / embed.json change."""
        try:
            st = os.stat(self.layout.manifest)
            key: tuple | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            key = None
        if key != self._manifest_key:
            self._manifest_key = key
            self._written_at = self._read_written_at() if key else None
        return (self._written_at, _mtime(self.layout.scopes), _mtime(self.layout.groups),
                _mtime(self.layout.calibration), _mtime(self.layout.embed_config))

    def _read_written_at(self) -> Any:
        try:
            data = json.loads(self.layout.manifest.read_text())
        except (OSError, ValueError):
            return ("unreadable", self._manifest_key)
        return (data.get("written_at") if isinstance(data, dict) else None) or ("no-stamp", self._manifest_key)

    def session(self):
        """The current Session: the same object until the artifacts on disk change."""
        from loci.query.ask import open_session

        with self._lock, self._working("check"):
            stamp = self._current_stamp()
            if self._session is None or stamp != self._stamp:
                with self._working("load"):
                    if self._session is not None:
                        self._drop_session()
                    self._session = open_session(self.layout.home, keep_full_index=True)
                    if self.cache_bytes is not None:
                        self._session.budget.cap = self.cache_bytes
                    self._stamp = stamp
                    self.loads += 1
                    self.warm(self._session)
                    self.ready = True
            return self._session

    def _drop_session(self) -> None:
        """Let the replaced Session go before its successor loads: a Session and its semantic side
        refer to each other (bound methods), so only the cyclic collector frees them, and its
        heuristics counted objects, not bytes: each reload of a real home kept ~50 MB (the
        encoder's resident layers, the stores) until a full collection, 545 MB after 13."""
        import gc

        self._session = None
        self.ready = False
        gc.collect()

    def warm(self, session) -> None:
        """Load the full routing index and the largest local scopes' stores while the byte budget
        has room (not those of scopes pulled as a map: a question fetches what it needs); best
        effort, never raises."""
        from loci.query import ask
        from loci.query.question import Plan

        try:
            session.routing_for("")
            metas = session.metas(local_scopes(self.layout, session.indexed()))
            largest = sorted(metas, key=lambda s: -int(metas[s].get("chunks", 0)))[: self.warm_scopes]
            side = session.semantic()
            for scope in largest:   # with their passages and labels
                if session.budget.used >= WARM_SHARE * session.budget.cap:
                    break
                ask.search_block(session, scope, "warm up", Plan(k=1), semantic=side)
            session.warm()   # the encoder and the matrices the second opinion reads
            if side is not None:   # a second encoding: the numpy BERT keeps its weights resident
                side.encoder.encode(["warm up"])   # from its second call, which the first question paid
        except LociError as exc:
            self.log(f"not warmed: {one_line(exc)}")
        except Exception as exc:  # warming must never take the server down
            self.log(f"not warmed ({type(exc).__name__}): {one_line(exc)}")

    def warm_quietly(self) -> None:
        """Make (and so warm) the first session; for a boot thread, which must not die loudly."""
        try:
            self.session()
        except Exception as exc:
            self.log(f"not warmed ({type(exc).__name__}): {one_line(exc)}")

    def answer(self, op: str, args: dict, as_json: bool) -> dict:
        """``answer`` over the current session, one question at a time."""
        with self._lock, self._working(op):
            session = self.session()
            with self._working(op):   # the question's own time starts when its session is there
                return answer(session, op, args, as_json)

    @contextmanager
    def _working(self, what: str):
        """Mark the engine as held by this thread for ``what`` (under ``_lock``), then put back
        what held it before."""
        import threading
        import time

        before = self.work
        self.work = Work(what, threading.get_ident(), time.monotonic())
        try:
            yield
        finally:
            self.work = before

    def cached_bytes(self) -> int:
        """What the session's byte budget holds now: scopes' stores and vectors (0 before a session)."""
        session = self._session
        return session.budget.used if session is not None else 0


def one_line(exc: BaseException) -> str:
    """An exception's message collapsed to one line (its type name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__
