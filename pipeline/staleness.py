"""Is a scope's graph or index current? The one answer the tasks' ``uptodate`` checks,
``loci doctor`` and the reporter all ask for; it reads and never writes.

A scope's index is current when its meta holds the fingerprint the scope has now
(``index_fingerprint``). The fingerprint names the code graph it was built against by
the graph's content digest when loci wrote the graph (the graph record keeps it), so a
home copied without its file times (``cp -r``) is still current; a user's own
``graphify-out/graph.json`` is named by its time, the only thing known of it. A graph is
current when the graph record's code fingerprint is the code's now; when the record also
saw the repository's present git state, the code is not fingerprinted again.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from loci.kernel.config import Layout, Params


def graph_identity(layout: Layout, scope) -> str | None:
    """What an index was built against: ``sha1:<digest>`` of loci's graph, the modification
    time of a user's own graph, None when there is no graph."""
    from loci_pipeline.graphs import graph_path, graph_source, read_record

    try:
        src = graph_source(scope.name, Path(scope.path), layout)
        if src is None:
            return None
        digest = read_record(scope.name, layout).get("sha1")
        if src == graph_path(scope.name, layout) and isinstance(digest, str):
            return f"sha1:{digest}"
        return f"{src.stat().st_mtime:.6f}"
    except OSError:  # a broken graph must not stop indexing
        return None


def index_fingerprint(layout: Layout, scope, params: Params, git: str | None = None) -> str:
    """The fingerprint the scope's index would be built with now (``git``: its git state when
    the caller observed it already, one `git status` per run)."""
    from loci_pipeline.fingerprint import scope_fingerprint

    return scope_fingerprint(Path(scope.path), excludes=scope.excludes, globs=scope.globs,
                             graph=graph_identity(layout, scope), params=params, git=git)


def index_fresh(layout: Layout, scope, meta: dict | None, params: Params, git: str | None = None) -> bool:
    """The scope's meta was written for the scope as it is now."""
    return meta is not None and meta.get("fingerprint") == index_fingerprint(layout, scope, params, git)


def stale_cause(layout: Layout, scope, meta: dict | None, params: Params, git: str | None = None) -> str | None:
    """Why the scope's index is not current: None when it is, "build" when it was built by other
    build rules than this loci's (an upgrade rebuilds it; its repository may be as it was), else
    "repository". A meta that names no build rules was written by a loci older than that record
    (every build since writes one): an upgrade too."""
    from loci_pipeline import fingerprint

    if index_fresh(layout, scope, meta, params, git):
        return None
    if meta is None:
        return "repository"
    return "build" if meta.get("build") != fingerprint.build_signature() else "repository"


def graph_fresh(layout: Layout, scope, git: str | None = None,
                code: Callable[[], str | None] | None = None) -> bool | None:
    """The scope's graph was built from its code as it is now; None when no graph was ever
    built. ``git``: the observed git state (a match with the record's skips the code
    fingerprint); ``code``: how to fingerprint the code (default: read it now)."""
    from loci_pipeline.graphs import code_fingerprint, read_record, same_setup

    record = read_record(scope.name, layout)
    if not record.get("fingerprint"):
        return None
    if git and record.get("git") == git and same_setup(record, scope.excludes):
        return True
    if code is None:
        try:
            current = code_fingerprint(Path(scope.path), scope.excludes)[0]
        except OSError:
            current = None
    else:
        current = code()
    return record["fingerprint"] == current
