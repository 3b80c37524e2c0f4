"""Staging a pull: fetch and verify each changed bundle into a folder inside the home, then
build its derived files there (the query file, the vector stores in the home's form).

Nothing here touches the home's live files; ``loci_pipeline.share.pull`` moves what is staged.
"""
from __future__ import annotations

import os

from dataclasses import dataclass
from pathlib import Path

from loci.kernel.config import Params
from loci_pipeline.share.bundle import (
    MAP_ROLES, NO_VECTORS_OUT, RAW_ROLES, ROLES, SUMMARY_OF, VECTOR_KEYS, VECTOR_ROLES, BundleError, Manifest,
    check_copied, check_size,
)
from loci_pipeline.share.store import Entry, Store


@dataclass
class Incoming:
    entry: Entry
    manifest: Manifest
    digest: str
    name: str = ""
    mapped: bool = False   # pulled as a map: only MAP_ROLES fetched, the stores left remote


def wanted(inc: Incoming, no_vectors: bool) -> list:
    """The files of ``inc`` a pull fetches: a map's, or every table (a query file and the
    summaries are built here from them); no vectors with ``no_vectors``, and multilingual ones
    only of the encoder this loci runs (of another, the scope lands without them)."""
    roles = MAP_ROLES if inc.mapped else [r for r in ROLES if r not in RAW_ROLES]
    return [f for f in inc.manifest.files if f.role in roles and not (no_vectors and f.role in NO_VECTORS_OUT)
            and readable(inc.manifest, f.role)]


def readable(manifest: Manifest, role: str) -> bool:
    """Whether this loci reads a role's vectors: not the multilingual store (nor its summary) of
    another encoder than the one it runs."""
    from loci.kernel.vectorstore import MULTILINGUAL_ID

    return (SUMMARY_OF.get(role, role) != "multilingual"
            or manifest.model_of("multilingual").get("model") == MULTILINGUAL_ID)


FETCH_THREADS = 8  # requests in flight: an object store answers each after a round trip


def fetch_all(fn, items: list) -> list:
    """``fn`` over ``items`` in order, several at a time (waiting on the store, not computing);
    the first error is raised once every request has returned."""
    from concurrent.futures import ThreadPoolExecutor

    if len(items) < 2:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=FETCH_THREADS) as pool:
        return list(pool.map(fn, items))


def _fetch_file(stage: Path, store: Store, inc: Incoming, f) -> Path:
    """Fetch and verify one file of a bundle into ``stage`` (its size checked before a byte is read)."""
    where = f"{store.url}/{inc.entry.folder}"
    check_size(f, store.size(inc.entry.folder, f.path), where)
    target = stage / f.path
    check_copied(f, *store.copy(inc.entry.folder, f.path, f.size, target), where)
    return target


def _fetch(folders: list[Path], store: Store, incoming: list[Incoming],
           no_vectors: bool) -> list[dict[str, Path] | BundleError]:
    """Every file of every bundle fetched and verified into its folder, several at a time
    (one bounded pool over all the files, so one changed bundle's files also come together);
    for each bundle, its staged file of each role, or the first BundleError of its files."""
    jobs = [(folder, inc, f) for folder, inc in zip(folders, incoming) for f in wanted(inc, no_vectors)]
    for folder in folders:
        folder.mkdir(parents=True)
    got = fetch_all(lambda job: kept(_fetch_file, job[0], store, job[1], job[2]), jobs)
    out: dict[Path, dict[str, Path] | BundleError] = {folder: {} for folder in folders}
    for (folder, _inc, f), result in zip(jobs, got):
        if isinstance(out[folder], BundleError):
            continue
        if isinstance(result, BundleError):
            out[folder] = result
        else:
            out[folder][f.role] = result
    return [out[folder] for folder in folders]


def _build(stage: Path, staged: dict[str, Path], manifest: Manifest, where: str,
           params: Params, mapped: bool = False) -> dict[str, Path]:
    """The staged files plus the derived ones built from them (runs in a worker for big pulls);
    for a map, its routing vocabulary as the SQLite table routing merges."""
    from loci_pipeline.share.tables import check_summary, check_tables

    try:
        summaries = {role: staged.pop(role) for role in SUMMARY_OF if role in staged}
        tables = check_tables(staged, manifest, where)
        if mapped:
            from loci_pipeline.query_store import write_vocab_db

            for role, path in summaries.items():
                check_summary(path, manifest.model_of(SUMMARY_OF[role]), where)
            out = stage / "map_vocab.sqlite"
            vocab = tables["vocab"].to_pydict()
            write_vocab_db(out, list(zip(vocab["token"], vocab["weight"])))
            stores = _vector_stores(stage, staged, manifest)   # takes the vector tables out of staged
            return {**staged, **stores, "map_vocab": out, **summaries}
        derived = _derived(stage, staged, manifest, params, tables)   # takes the vector tables out of staged
        return {**staged, **derived}
    except BundleError:
        raise
    except Exception as exc:  # checksums held, so the publisher wrote a bad table
        raise BundleError(f"{where}: a file cannot be read ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:120] if str(exc) else ''}); re-export the bundle") from None


PARALLEL_FROM = 16  # bundles: below this, worker processes cost more than they save


def die_with_parent(_registered=None) -> None:
    """In a worker process: be killed when the build's main process dies (Linux's PR_SET_PDEATHSIG).

    Runs in every process the pull forks, before it waits for its first bundle, so an idle
    worker goes too."""
    import multiprocessing
    import signal
    import sys

    parent = multiprocessing.parent_process()
    if parent is None or not sys.platform.startswith("linux"):
        return
    import ctypes

    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent.pid:  # the parent died before the call: nothing will signal us
        os._exit(1)


def stage_all(stage: Path, store: Store, incoming: list[Incoming], no_vectors: bool,
               params: Params) -> dict[str, dict[str, Path] | BundleError]:
    """Fetch and verify every incoming bundle (several at a time), then build the derived
    files; a big pull (a cold start) builds them in forked workers, which touch no store.
    A bundle refused on the way maps to its BundleError instead of its staged files."""
    folders = [stage / f"s{i}" for i in range(len(incoming))]
    fetched = _fetch(folders, store, incoming, no_vectors)
    out = {inc.name: got for inc, got in zip(incoming, fetched) if isinstance(got, BundleError)}
    good = [i for i, got in enumerate(fetched) if not isinstance(got, BundleError)]
    incoming, folders, fetched = [incoming[i] for i in good], [folders[i] for i in good], [fetched[i] for i in good]
    args = (folders, fetched, [inc.manifest for inc in incoming],
            [f"{store.url}/{inc.entry.folder}" for inc in incoming], [params] * len(incoming),
            [inc.mapped for inc in incoming])
    jobs = 1
    if len(incoming) >= PARALLEL_FROM:
        from loci_pipeline import workers

        jobs = workers.default_jobs()
    if jobs < 2:
        built = list(map(_build_kept, *args))
    else:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork"),
                                 initializer=die_with_parent) as pool:   # a killed pull leaves no worker
            built = list(pool.map(_build_kept, *args, chunksize=8))
    return {**out, **{inc.name: b for inc, b in zip(incoming, built)}}


def kept(fn, *args):
    """``fn(*args)``, or the BundleError that refused it: one bad bundle is not the whole pull's."""
    try:
        return fn(*args)
    except BundleError as exc:
        return exc


def _build_kept(*args):
    return kept(_build, *args)


def _derived(stage: Path, staged: dict[str, Path], manifest: Manifest, params: Params,
             tables: dict) -> dict[str, Path]:
    """The query file and the vectors' .npy pairs, built from the staged Parquet tables
    (``tables``: those already read, by role)."""
    from types import SimpleNamespace

    import pyarrow.parquet as pq

    from loci_pipeline.chunks import Chunk
    from loci_pipeline.index import write_query_file

    out: dict[str, Path] = {}
    cols = [c for c in Chunk.__dataclass_fields__ if c != "redactions"]
    def read(role: str):
        return tables[role] if role in tables else pq.ParquetFile(staged[role]).read()

    table = read("chunks").select(cols).to_pydict()
    chunks = [Chunk(**dict(zip(cols, row))) for row in zip(*(table[c] for c in cols))]
    vocab = read("vocab").to_pydict()
    structure = None
    if "symbols" in staged and "calls" in staged:
        structure = SimpleNamespace(symbols=read("symbols"), calls=read("calls"))
    out["query"] = stage / "query.sqlite"
    write_query_file(out["query"], chunks, list(zip(vocab["token"], vocab["weight"])), params, structure)
    return {**out, **_vector_stores(stage, staged, manifest)}


def _vector_stores(stage: Path, staged: dict[str, Path], manifest: Manifest) -> dict[str, Path]:
    """Each staged vector table (taken out of ``staged``) written as the home's store, a matrix
    and its manifest: ``{"<role>.matrix", "<role>.meta"}``."""
    from loci.kernel.vectorfiles import store_from_parquet
    from loci.query.semantic import matrix_path, meta_path

    out: dict[str, Path] = {}
    for role in [r for r in VECTOR_ROLES if r in staged]:
        store = stage / f"{role}.store"
        meta = store_from_parquet(staged.pop(role), store, VECTOR_KEYS[role])
        want = manifest.model_of(role)
        if meta.get("model") != want.get("model") or meta.get("dim") != want.get("dim"):
            raise BundleError(f"{role}.parquet holds vectors of {meta.get('model')} "
                              f"(dim {meta.get('dim')}), not the manifest's {want.get('model')}; re-export it")
        out[f"{role}.matrix"], out[f"{role}.meta"] = matrix_path(store), meta_path(store)
    return out
