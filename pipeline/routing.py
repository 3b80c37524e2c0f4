"""Merge every scope's routing vocabulary into routing.sqlite, then write the manifest last.

Kept free of pyarrow and numpy: it runs in the main build process after the
index workers, where importing them would be most of its cost.
"""
from __future__ import annotations

import time
from typing import Sequence

from loci.kernel import tokens
from loci.kernel.config import SCHEMA_VERSION, Layout
from loci.kernel.atomic import write_json
from pipeline.query_store import write_routing_db


def merge_routing(layout: Layout, names: Sequence[str]) -> dict[str, dict]:
    """Merge the indexed scopes among ``names``; return their metas (as the manifest lists them)."""
    from loci.kernel.state import read_meta

    metas = {}
    for name in names:
        meta = read_meta(layout, name)
        if meta is None:
            continue
        if layout.query_db(name).exists():
            metas[name] = meta
    write_routing_db(layout.routing_db, {n: layout.query_db(n) for n in metas}, metas)
    write_json(layout.manifest, {
        "schema_version": SCHEMA_VERSION,
        "tokenizer": tokens.signature(),
        "scopes": metas,
        "written_at": time.time(),
    })
    return metas
