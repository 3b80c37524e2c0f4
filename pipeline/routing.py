"""Merge every scope's routing vocabulary into routing.sqlite, then write the manifest last.

Kept free of pyarrow and numpy: it runs in the main build process after the
index workers, where importing them would be most of its cost.
"""
from __future__ import annotations

import hashlib
import time
from typing import Iterable, Sequence

from loci.kernel import tokens
from loci.kernel.config import SCHEMA_VERSION, Layout
from loci.kernel.atomic import write_json
from loci_pipeline.query_store import merged_records, update_routing_db, write_routing_db


def merge_routing(layout: Layout, names: Sequence[str], changed: Iterable[str] | None = None) -> list[str]:
    """Merge the indexed scopes among ``names``; return them (name order). manifest.json, written
    last, is a header of the merge (``header``): each scope's meta stays in its own file, and what
    a question reads of it in routing.sqlite (``loci.kernel.merged_metas``).

    With ``changed`` (a pull), only those scopes' rows are rewritten in the existing
    routing.sqlite, and only their metas (and any written since the last merge) are read
    again; the others are kept as routing.sqlite has them (``query_store.merged_records``)."""
    from loci.kernel.stamps import existing, file_stat
    from loci.kernel.state import read_meta
    from loci.kernel.territory import vocab_db

    kept, merged_at = _last_merge(layout) if changed is not None else ({}, 0.0)
    moved = set(changed or ())
    stats = {name: file_stat(layout.meta(name)) for name in names}   # one stat a meta serves both uses
    # a scope pulled as a map routes by its vocabulary alone until its query file is fetched
    queries = {name: layout.query_db(name) for name in names}
    maps = {name: vocab_db(layout, name) for name in names}
    have_query, have_map = existing(queries), existing(maps)
    metas, dbs, reread = {}, {}, set()
    for name in names:
        meta = kept.get(name) if name not in moved else None
        if meta is None or stats[name] is None or stats[name].st_mtime >= merged_at:   # written since
            meta = read_meta(layout, name)
            reread.add(name)
        if meta is None:
            continue
        if name in have_query or name in have_map:
            metas[name], dbs[name] = meta, queries[name] if name in have_query else maps[name]
    if changed is None or not kept or not update_routing_db(
            layout.routing_db, dbs, metas, changed, metas_moved=reread):
        if set(metas) - reread:   # a routing file this merge cannot update: every meta, read again
            return merge_routing(layout, names)
        write_routing_db(layout.routing_db, dbs, metas)
    write_json(layout.manifest, header(metas_state(layout, names, stats)), compact=True)
    return sorted(metas)


def header(merged_from: str) -> dict:
    """manifest.json: what the query side checks before it trusts the index (this loci's schema
    and tokenizer), what the merge was made from (``metas_state``) and when it was written (a
    long-lived session reloads when it moves, a calibration records it). Its size does not grow
    with the scopes."""
    return {"schema_version": SCHEMA_VERSION, "tokenizer": tokens.signature(),
            "merged_from": merged_from, "written_at": time.time()}


def _last_merge(layout: Layout) -> tuple[dict[str, dict], float]:
    """What routing.sqlite recorded of each scope's meta, and when the last merge's manifest was
    written (({}, 0.0): nothing to start from)."""
    import json

    try:
        written_at = float(json.loads(layout.manifest.read_text())["written_at"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}, 0.0
    return merged_records(layout.routing_db), written_at


def metas_state(layout: Layout, names: Sequence[str], stats: dict | None = None) -> str:
    """A digest of the metas' stats: what a merge of ``names`` was made from (routing is up to date while
    none of them moved, whoever merged: the routing step, or a pull for its changed scopes), and
    which of their fields the merge keeps for questions (a loci that keeps more merges once more).
    ``stats``: the metas' stats already taken (``stamps.file_stat``), by name."""
    from loci.kernel.merged_metas import QUERY_FIELDS
    from loci.kernel.stamps import file_stat, stats_state

    stats = stats or {}
    state = (stats_state((n, stats[n] if n in stats else file_stat(layout.meta(n))) for n in names)
             + "|fields:" + ",".join(QUERY_FIELDS))
    return "sha256:" + hashlib.sha256(state.encode()).hexdigest()   # the manifest's size, not the corpus's


def merged_from(layout: Layout) -> str | None:
    """The metas' state the manifest was last merged from (None before any merge recorded it)."""
    import json

    try:
        value = json.loads(layout.manifest.read_text()).get("merged_from")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
