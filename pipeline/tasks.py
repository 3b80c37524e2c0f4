"""doit task creators: ``scan`` and ``index`` (one subtask per scope), then ``routing``.

The same creators serve ``doit`` run from a checkout (dodo.py imports them) and
the CLI, which runs them in-process through ``run_tasks``. Non-file inputs
enter through ``uptodate``: a scope's fingerprint (pipeline.fingerprint).
"""
from __future__ import annotations

import json
import os
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from doit.tools import config_changed

from loci.kernel.config import DEFAULT_PARAMS, Layout, Params, layout as make_layout
from pipeline import buildlock
from loci.kernel.atomic import write_json
from loci.kernel.integrity import home_index_problems, scope_index_problems, vector_problems
from loci.kernel.state import read_meta
from pipeline.facts import dependencies, fact_vocabulary
from pipeline.fingerprint import scope_fingerprint


def _layout() -> Layout:
    return make_layout()


def error_path(layout: Layout, name: str) -> Path:
    return layout.error(name)


def meta_path(layout: Layout, name: str) -> Path:
    return layout.meta(name)


def _registry(layout: Layout):
    from loci.kernel.registry import load_registry
    return load_registry(layout)


def _graph_mtime(layout: Layout, scope) -> float | None:
    try:
        from pipeline.graphs import graph_source
    except ImportError:
        return None
    try:
        src = graph_source(scope.name, Path(scope.path), layout)
    except Exception:  # a broken graph must not stop indexing
        return None
    return src.stat().st_mtime if src is not None else None


def _structure(layout: Layout, scope, params: Params):
    """Write the scope's structure tables from its graph; return (tables, routing vocabulary, problems)."""
    try:
        from pipeline.graphs import graph_source
        from pipeline.structure_tables import graph_tables, symbol_vocabulary, write_structure
    except ImportError:
        return None, None, []
    src = graph_source(scope.name, Path(scope.path), layout)
    if src is None:
        return None, None, []
    tables = graph_tables(src, Path(scope.path), scope=scope.name)
    write_structure(scope.name, tables, layout)  # even when empty: no stale store survives
    if tables.symbols.num_rows == 0:
        return tables, None, list(tables.problems)
    return tables, symbol_vocabulary(tables.symbols, params), list(tables.problems)


def index_scope(name: str, fingerprint: str, params: Params = DEFAULT_PARAMS) -> dict:
    """Collect, redact and write one scope; record failures instead of raising."""
    from pipeline.collect import collect_scope
    from pipeline.index import ScopeMeta, newest_commit_date, routing_vocabulary, write_scope
    from pipeline.uses import scope_refs, write_refs

    layout = _layout()
    err = error_path(layout, name)
    try:
        scope = _registry(layout).get(name)
        if scope is None:
            raise RuntimeError(f"scope {name!r} is no longer registered")
        collected = collect_scope(scope.name, Path(scope.path), exclude=scope.excludes,
                                  globs=scope.globs, params=params)
        tables, symbol_vocab, problems = _structure(layout, scope, params)
        vocab = routing_vocabulary(collected.definitions, collected.paths, collected.chunks,
                                   params, symbol_vocab)
        root, relpaths = Path(scope.path), [p for p, _k in collected.paths]
        manifest_problems: list[str] = []  # a bad value is skipped, the rest indexed, the file reported
        deps = dependencies(root, relpaths, manifest_problems)  # read once: routing facts and cross-scope references
        vocab.update(fact_vocabulary(root, relpaths, deps))
        write_scope(layout, name, collected.chunks, vocab, params, tables)
        write_refs(layout, name, scope_refs(root, relpaths, collected.imports, deps))
        meta = ScopeMeta(
            name=name, fingerprint=fingerprint, chunks=len(collected.chunks),
            vocab_tokens=len(vocab), vocab_weight=float(sum(vocab.values())),
            updated=newest_commit_date(collected.chunks), has_graph=symbol_vocab is not None,
            redactions=dict(collected.redactions),
            stats={**dict(collected.stats), "graph_problems": problems,
                   "manifest_problems": manifest_problems},
        )
        write_json(meta_path(layout, name), asdict(meta))
        if err.exists():
            err.unlink()
        return {"chunks": meta.chunks, "redactions": meta.redactions}
    except Exception as exc:  # recorded, reported by the CLI, retried next run
        write_json(err, {"scope": name, "error": f"{type(exc).__name__}: {exc}",
                         "trace": traceback.format_exc(limit=5), "at": time.time()})
        return {"error": str(exc)}


def _no_error(layout: Layout, name: str) -> Callable[[], bool]:
    return lambda: not error_path(layout, name).exists()


def _sound(problems: Callable[[], list]) -> Callable[[], bool]:
    """An ``uptodate`` check: the step's files are whole (a torn or damaged one is rebuilt)."""
    return lambda: not problems()


def task_scan():
    """Rescan the roots remembered in scopes.json (registers new repositories)."""
    def rescan():
        from loci.kernel.registry import editing_registry
        from pipeline.scan import scan

        with editing_registry(_layout()) as edit:
            if edit.registry.roots:
                edit.registry = scan([Path(r) for r in edit.registry.roots], prior=edit.registry).registry
        return True

    return {"actions": [rescan], "uptodate": [False], "verbosity": 0}


_FINGERPRINTS: dict[tuple[str, str], str] = {}


def fingerprint_of(layout: Layout, scope, params: Params = DEFAULT_PARAMS) -> str:
    """The scope's build fingerprint, computed once per process."""
    key = (str(layout.home), scope.name)
    if key not in _FINGERPRINTS:
        _FINGERPRINTS[key] = scope_fingerprint(
            Path(scope.path), excludes=scope.excludes, globs=scope.globs,
            graph_mtime=_graph_mtime(layout, scope), params=params)
    return _FINGERPRINTS[key]


def forget_fingerprints() -> None:
    _FINGERPRINTS.clear()


def stale_scopes(layout: Layout) -> list[str]:
    """Registered scopes whose last successful build used another fingerprint."""
    from concurrent.futures import ThreadPoolExecutor

    scopes = [s for s in _registry(layout).scopes if Path(s.path).is_dir()]
    with ThreadPoolExecutor(max_workers=8) as pool:  # one `git status` each: waiting, not computing
        list(pool.map(lambda s: fingerprint_of(layout, s), scopes))
    out = []
    for scope in scopes:
        built = (read_meta(layout, scope.name) or {}).get("fingerprint")
        if built != fingerprint_of(layout, scope) or layout.error(scope.name).exists():
            out.append(scope.name)
    return out


def build_graph_action(name: str, force: bool = False) -> dict:
    """Extract one scope's code graph (graphify decides nothing changed in ~10 ms)."""
    from pipeline.graphs import build_graph

    layout = _layout()
    scope = _registry(layout).get(name)
    if scope is None:
        return {"status": "failed", "message": f"scope {name!r} is no longer registered"}
    r = build_graph(scope.name, Path(scope.path), layout, excludes=scope.excludes, force=force)
    return {"status": r.status, "message": r.message}


def task_graphs():
    """Build or refresh every scope's code graph under $LOCI_HOME/graphs (nothing in the repos)."""
    layout = _layout()
    buildlock.hold(layout)
    yield {"name": None, "doc": "graphify's AST extraction, one subtask per scope"}
    for scope in _registry(layout).scopes:
        if Path(scope.path).is_dir():
            yield {"name": scope.name, "actions": [(build_graph_action, [scope.name])],
                   "uptodate": [False], "verbosity": 0}


EMBED_PROGRESS: Callable[[str, int, int], None] | None = None  # set by the CLI (one process)
_ENCODERS: dict[str, object] = {}


def embed_action(name: str, model: str) -> dict:
    """Encode the scope's new or changed chunks (and symbol labels) under ``model``."""
    from pipeline.embed import embed_scope, open_encoder

    layout = _layout()
    if model not in _ENCODERS:
        _ENCODERS[model] = open_encoder(None if model == "default" else model, layout)
    progress = (lambda done, total: EMBED_PROGRESS(name, done, total)) if EMBED_PROGRESS else None
    r = embed_scope(name, layout, _ENCODERS[model], progress=progress)
    return {"encoded": r.encoded, "reused": r.reused, "dropped": r.dropped}


def task_embed():
    """Local embeddings of every indexed scope's chunks, keyed by chunk hash (unchanged ones reused)."""
    layout = _layout()
    buildlock.hold(layout)
    model = os.environ.get("LOCI_EMBED_MODEL", "default")
    encoder = _ENCODERS.get(model)
    if encoder is not None:
        model_id = encoder.model_id
    else:  # `doit embed` from a checkout: the model the last `loci embed` used
        from loci.kernel.config import read_embed_config
        from loci.query.semantic import model_id_for

        cfg = read_embed_config(layout)
        model_id = cfg["model_id"] if cfg else model_id_for(None if model == "default" else model)
    from loci.query.semantic import keys_path, matrix_path

    yield {"name": None, "doc": "encode chunks locally, one subtask per scope"}
    for scope in _registry(layout).scopes:
        meta = read_meta(layout, scope.name)
        if meta is None:
            continue  # not indexed: nothing to encode
        built = meta["fingerprint"]
        yield {"name": scope.name, "actions": [(embed_action, [scope.name, model])],
               "uptodate": [config_changed(f"{model_id}:{built}"),
                            _sound(lambda name=scope.name: vector_problems(layout.vectors(model_id, name)))],
               "targets": [str(layout.vectors(model_id, scope.name)),
                           str(matrix_path(layout.vectors(model_id, scope.name))),
                           str(keys_path(layout.vectors(model_id, scope.name)))], "verbosity": 0}


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


def task_index():
    """Index every registered scope whose fingerprint moved."""
    layout = _layout()
    buildlock.hold(layout)
    params = DEFAULT_PARAMS
    registry = _registry(layout)
    yield {"name": None, "doc": "build the episode store and routing vocabulary, one subtask per scope"}
    for scope in sorted(registry.scopes, key=lambda s: -_size_hint(layout, s)):  # biggest first
        if not Path(scope.path).is_dir():
            continue
        fp = fingerprint_of(layout, scope, params)
        yield {
            "name": scope.name,
            "actions": [(index_scope, [scope.name, fp])],
            "uptodate": [config_changed(fp), _no_error(layout, scope.name),
                         _sound(lambda name=scope.name: scope_index_problems(layout, name))],
            "targets": [str(layout.chunks(scope.name)), str(layout.vocab(scope.name)),
                        str(layout.query_db(scope.name)), str(layout.refs(scope.name)),
                        str(meta_path(layout, scope.name))],
            "verbosity": 0,
        }


def task_routing():
    """Merge every scope's vocabulary into routing.sqlite and write the manifest last."""
    layout = _layout()
    registry = _registry(layout)
    names = [s.name for s in registry.scopes]

    def state() -> str:  # evaluated when doit checks the task, i.e. after the index subtasks ran
        parts = []
        for n in names:
            try:
                parts.append(f"{n}={meta_path(layout, n).stat().st_mtime_ns}")
            except OSError:
                parts.append(f"{n}=none")
        return ";".join(parts)

    def merge() -> dict:
        from pipeline.routing import merge_routing
        from pipeline.uses import merge_uses

        merge_routing(layout, names)
        merge_uses(layout, [n for n in names if layout.refs(n).is_file()])
        return {"state": state()}

    return {
        "actions": [merge],
        "task_dep": ["index"],
        "uptodate": [lambda task, values: values.get("state") == state(),
                     _sound(lambda: home_index_problems(layout))],
        "targets": [str(layout.routing_db), str(layout.uses), str(layout.manifest)],
        "verbosity": 0,
    }
