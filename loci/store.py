"""Read artifacts from $LOCI_HOME. The read side never writes.

``load_routing`` reads only the rows of the tokens a question needs (the
routing table is sorted by token, so Parquet skips the rest) unless asked for
the whole table, as a long-lived server does.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from loci.config import SCHEMA_VERSION, Layout
from loci.errors import StoreError  # noqa: F401  (re-exported)



@dataclass
class RoutingIndex:
    """token -> {scope index: weight}, plus per-scope sizes, over every indexed scope."""

    scopes: list[str]
    size: np.ndarray                       # total routing weight per scope
    updated: list[str]                     # newest commit date per scope ("" if none)
    postings: dict[str, dict[int, float]]  # only the loaded tokens
    complete: bool = False                 # True when every token was loaded
    position: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.position = {s: i for i, s in enumerate(self.scopes)}

    @property
    def median_size(self) -> float:
        return float(np.median(self.size)) if len(self.size) else 1.0

    def get(self, token: str) -> dict[int, float]:
        return self.postings.get(token, {})


def read_manifest(layout: Layout) -> dict:
    path = layout.manifest
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise StoreError("no index yet: run `loci setup DIR` (or `loci scan DIR` then `loci index`)") from None
    except (ValueError, OSError) as exc:
        raise StoreError(f"{path} is unreadable ({exc}); rebuild it with `loci index --force`") from None
    if data.get("schema_version") != SCHEMA_VERSION:
        raise StoreError(f"{path} was written by another version of loci; rebuild with `loci index --force`")
    return data


def load_routing(layout: Layout, tokens: Iterable[str] | None = None,
                 manifest: dict | None = None) -> RoutingIndex:
    """Load the routing index (only ``tokens`` when given)."""
    import pyarrow.parquet as pq

    manifest = manifest if manifest is not None else read_manifest(layout)
    metas = manifest.get("scopes", {})
    scopes = sorted(metas)
    position = {s: i for i, s in enumerate(scopes)}
    wanted = None if tokens is None else sorted(set(tokens))
    try:
        if wanted is None:
            table = pq.read_table(layout.routing)
        elif not wanted:
            table = None
        else:
            table = pq.read_table(layout.routing, filters=[("token", "in", wanted)])
    except FileNotFoundError:
        raise StoreError(f"{layout.routing} is missing; run `loci index`") from None
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise StoreError(f"{layout.routing} is unreadable ({exc}); run `loci index --force`") from None
    postings: dict[str, dict[int, float]] = {}
    if table is not None and table.num_rows:
        toks = table.column("token").to_pylist()
        scope_col = table.column("scope").to_pylist()
        weights = table.column("weight").to_numpy()
        for tok, sc, w in zip(toks, scope_col, weights):
            i = position.get(sc)
            if i is not None:
                postings.setdefault(tok, {})[i] = float(w)
    size = np.asarray([float(metas[s].get("vocab_weight", 0.0)) or 1.0 for s in scopes])
    updated = [metas[s].get("updated", "") for s in scopes]
    return RoutingIndex(scopes, size, updated, postings, complete=wanted is None)


def load_chunks(layout: Layout, scope: str):
    """The scope's chunk table (pyarrow), or None when it has none."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(layout.chunks(scope))
    except FileNotFoundError:
        return None
