"""Merge every scope's routing vocabulary into routing.sqlite, then write the manifest last.

Kept free of pyarrow and numpy: it runs in the main build process after the
index workers, where importing them would be most of its cost.
"""
from __future__ import annotations

import time
from typing import Iterable, Sequence

from loci.kernel import tokens
from loci.kernel.config import SCHEMA_VERSION, Layout
from loci.kernel.atomic import write_json
from loci_pipeline.query_store import update_routing_db, write_routing_db


def merge_routing(layout: Layout, names: Sequence[str], changed: Iterable[str] | None = None) -> dict[str, dict]:
    """Merge the indexed scopes among ``names``; return their metas (as the manifest lists them).

    With ``changed`` (a pull), only those scopes' rows are rewritten in the existing
    routing.sqlite, and only their metas (and any written since the last merge) are read
    again; the others are kept as the last manifest has them."""
    from loci.kernel.stamps import existing, file_stat
    from loci.kernel.state import read_meta
    from loci.kernel.territory import vocab_db

    old, merged_at = _merged_metas(layout) if changed is not None else ({}, 0.0)
    moved = set(changed or ())
    stats = {name: file_stat(layout.meta(name)) for name in names}   # one stat a meta serves both uses
    # a scope pulled as a map routes by its vocabulary alone until its query file is fetched
    queries = {name: layout.query_db(name) for name in names}
    maps = {name: vocab_db(layout, name) for name in names}
    have_query, have_map = existing(queries), existing(maps)
    metas, dbs, reread = {}, {}, set()
    for name in names:
        meta = old.get(name) if name not in moved else None
        if meta is None or stats[name] is None or stats[name].st_mtime >= merged_at:   # written since
            meta = read_meta(layout, name)
            reread.add(name)
        if meta is None:
            continue
        if name in have_query or name in have_map:
            metas[name], dbs[name] = meta, queries[name] if name in have_query else maps[name]
    if changed is None or not layout.routing_db.is_file() or not update_routing_db(
            layout.routing_db, dbs, metas, changed, metas_moved=reread):
        write_routing_db(layout.routing_db, dbs, metas)
    write_json(layout.manifest, {
        "schema_version": SCHEMA_VERSION,
        "tokenizer": tokens.signature(),
        "scopes": metas,
        "merged_from": metas_state(layout, names, stats),
        "written_at": time.time(),
    }, compact=True)   # thousands of scopes' metas: written at C speed
    return metas


def _merged_metas(layout: Layout) -> tuple[dict[str, dict], float]:
    """The metas the last manifest holds, and when it was written ({} when unreadable)."""
    import json

    try:
        data = json.loads(layout.manifest.read_text())
        return dict(data["scopes"]), float(data["written_at"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}, 0.0


def metas_state(layout: Layout, names: Sequence[str], stats: dict | None = None) -> str:
    """The metas' stats: what a merge of ``names`` was made from (routing is up to date while
    none of them moved, whoever merged: the routing step, or a pull for its changed scopes), and
    which of their fields the merge keeps for questions (a loci that keeps more merges once more).
    ``stats``: the metas' stats already taken (``stamps.file_stat``), by name."""
    from loci.kernel.merged_metas import QUERY_FIELDS
    from loci.kernel.stamps import file_stat, stats_state

    stats = stats or {}
    return (stats_state((n, stats[n] if n in stats else file_stat(layout.meta(n))) for n in names)
            + "|fields:" + ",".join(QUERY_FIELDS))


def merged_from(layout: Layout) -> str | None:
    """The metas' state the manifest was last merged from (None before any merge recorded it)."""
    import json

    try:
        value = json.loads(layout.manifest.read_text()).get("merged_from")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
