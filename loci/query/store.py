"""Read artifacts from $LOCI_HOME. The read side never writes.

``load_routing`` reads routing.sqlite for only the tokens a question needs
(a primary-key lookup each) unless asked for the whole table, as a long-lived
server does. Nothing here imports numpy or pyarrow: a one-shot command should
not pay for them.
"""
from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Iterable

from loci.kernel.config import SCHEMA_VERSION, Layout
from loci.kernel.integrity import connect
from loci.kernel.errors import StoreError  # noqa: F401  (re-exported)


@dataclass
class RoutingIndex:
    """token -> {scope index: weight}, plus per-scope sizes, over every indexed scope."""

    scopes: list[str]
    size: list[float]                      # total routing weight per scope
    updated: list[str]                     # newest commit date per scope ("" if none)
    postings: Mapping[str, dict[int, float]]  # only the loaded tokens (every one packed: PackedPostings)
    complete: bool = False                 # True when every token was loaded
    position: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.size = [float(x) for x in self.size]
        self.position = {s: i for i, s in enumerate(self.scopes)}
        self.median_size = _median(self.size) if self.size else 1.0

    def get(self, token: str) -> dict[int, float]:
        return self.postings.get(token, {})


class PackedPostings(Mapping):
    """Every token's postings, as a complete load keeps them for a long-lived session: the tokens
    as one sorted blob (``loci.query.lexical.PackedTerms``), each token's scope ids and weights a
    slice of two flat arrays (12 bytes a posting and ~17 a token, where a pair of arrays per token
    took ~300 bytes a token: 183 MB at 1,000 real-size scopes, now ~50). A token reads as the
    ``{scope index: weight}`` dict it was, made when asked (a question asks for a few dozen, some
    once for each eligible scope: the last ``KEPT`` made are kept).

    ``add`` takes the rows grouped by token in sorted order (SQLite's ``ORDER BY token``: its
    byte order of UTF-8 is Python's order of code points); ``done`` packs them, sorting and
    merging first if they came otherwise."""

    KEPT = 128

    def __init__(self) -> None:
        self._adding: list[str] = []
        self._terms = None
        self._starts = array("q")
        self._ids = array("I")
        self._weights = array("d")
        self._made: dict[str, dict[int, float]] = {}
        self._sorted = True

    def add(self, token: str, scope: int, weight: float) -> None:
        if not self._adding or self._adding[-1] != token:
            if self._adding and token < self._adding[-1]:
                self._sorted = False
            self._adding.append(token)
            self._starts.append(len(self._ids))
        self._ids.append(scope)
        self._weights.append(weight)

    def done(self) -> "PackedPostings":
        from loci.query.lexical import PackedTerms

        self._starts.append(len(self._ids))
        if not self._sorted:
            self._sort()
        self._terms = PackedTerms("\n".join(self._adding).encode("utf-8"))
        self._adding = []
        return self

    def _sort(self) -> None:
        """Rows that came out of token order: each token's runs in token order, merged."""
        runs: dict[str, list[tuple[int, int]]] = {}
        for i, token in enumerate(self._adding):
            runs.setdefault(token, []).append((self._starts[i], self._starts[i + 1]))
        ids, weights, starts = array("I"), array("d"), array("q")
        for token in sorted(runs):
            starts.append(len(ids))
            for a, b in runs[token]:
                ids.extend(self._ids[a:b])
                weights.extend(self._weights[a:b])
        starts.append(len(ids))
        self._adding, self._ids, self._weights, self._starts = sorted(runs), ids, weights, starts

    def _index(self, token: object) -> int | None:
        if not isinstance(token, str) or "\n" in token or not len(self):
            return None
        return self._terms.index_of(token)

    def __getitem__(self, token: str) -> dict[int, float]:
        made = self._made.get(token)
        if made is None:
            i = self._index(token)
            if i is None:
                raise KeyError(token)
            a, b = self._starts[i], self._starts[i + 1]
            made = dict(zip(self._ids[a:b], self._weights[a:b]))
            if len(self._made) >= self.KEPT:
                self._made.pop(next(iter(self._made)))
            self._made[token] = made
        return made

    def __contains__(self, token: object) -> bool:
        return self._index(token) is not None

    def __iter__(self):
        terms = self._terms
        return (terms[i] for i in range(len(self)))

    def __len__(self) -> int:
        return len(self._starts) - 1 if self._terms is not None else 0

    @property
    def nbytes(self) -> int:
        return int((self._terms.nbytes if self._terms is not None else 0) + 8 * len(self._starts)
                   + 4 * len(self._ids) + 8 * len(self._weights))


def _median(values: list[float]) -> float:
    """statistics.median's value, without importing statistics (and random, and hashlib)."""
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def read_manifest(layout: Layout) -> dict:
    """manifest.json checked against its schema; StoreError naming the file and `loci index`. The
    header of the last merge (when, from what, with which tokenizer); the scopes' metas are read
    with ``indexed_metas``."""
    from loci.kernel.jsonfile import read_state
    from loci.kernel.schemas import MANIFEST_FILE

    path = layout.manifest
    data = read_state(path, MANIFEST_FILE)
    if data is None:
        raise StoreError("no index yet: run `loci setup DIR` (or `loci scan DIR` then `loci index`)")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise StoreError(f"{path} was written by another version of loci; rebuild it with `loci index`")
    return data


@dataclass
class Merged:
    """What a question needs of the merged index before it routes: the indexed scopes (name
    order); each one's meta is read when asked (``scope_metas``)."""

    scopes: list[str]
    manifest: dict | None = None   # manifest.json, read only for a routing file without the metas table
    twins: list[tuple[str, ...]] = field(default_factory=list)   # copies of one another (merged_metas.twin_groups)


def read_merged(layout: Layout) -> Merged:
    """The indexed scopes as routing.sqlite lists them, once its stamp says this loci's schema
    (``loci.kernel.merged_metas``): a question does not read the whole-corpus manifest.json. A
    routing file from before the stamp is read through the manifest, as before."""
    from loci.kernel import merged_metas

    path = layout.routing_db
    if not path.exists():
        read_manifest(layout)   # no index at all: say so
        raise StoreError(f"{path} is missing; run `loci index` to rebuild it")
    try:
        con = connect(path)
        try:
            stamp = merged_metas.read_stamp(con)
            names = [r[0] for r in con.execute("SELECT name FROM scopes")] if stamp is not None else []
            twins = merged_metas.twins_in(stamp) if stamp is not None else []
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is unreadable ({exc}); run `loci index` to rebuild it") from None
    if stamp is None:
        manifest = read_manifest(layout)
        return Merged(sorted(manifest.get("scopes", {})), manifest)
    if stamp.get("schema_version") != str(SCHEMA_VERSION):
        raise StoreError(f"{path} was written by another version of loci; rebuild it with `loci index`")
    return Merged(sorted(names), twins=twins)


def scope_metas(layout: Layout, merged: Merged, names: Iterable[str]) -> dict[str, dict]:
    """What a question reads of the metas of ``names`` (``merged_metas.QUERY_FIELDS``; those the
    merge recorded), one row each of routing.sqlite."""
    from loci.kernel import merged_metas

    names = list(names)
    if merged.manifest is not None:
        scopes = merged.manifest.get("scopes", {})
        return {n: merged_metas.project(scopes[n]) for n in names if n in scopes}
    return _merged_rows(layout, lambda con: {n: m for n in names
                                             if (m := merged_metas.read_meta(con, n)) is not None})


def _merged_rows(layout: Layout, read):
    """``read(con)`` on routing.sqlite; StoreError naming the file and `loci index` when it is unreadable."""
    try:
        con = connect(layout.routing_db)
        try:
            return read(con)
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{layout.routing_db} is unreadable ({exc}); run `loci index` to rebuild it") from None


def indexed_metas(layout: Layout, merged: Merged | None = None) -> dict[str, dict]:
    """Every indexed scope's meta as the last merge recorded it (``merged_metas.QUERY_FIELDS``), by
    name: the one reader for those that want every scope's (the calibration, doctor, the embedding
    estimate). manifest.json is a header; one an older loci wrote with every scope's meta in it is
    read only beside a routing file from before the metas rows (``read_merged``)."""
    from loci.kernel import merged_metas

    merged = merged if merged is not None else read_merged(layout)
    if merged.manifest is not None:
        return scope_metas(layout, merged, merged.scopes)
    listed = set(merged.scopes)
    return {n: m for n, m in _merged_rows(layout, merged_metas.read_metas).items() if n in listed}


def open_scope(layout: Layout, scope: str, notes: list[str]):
    """The scope's query file, its stores fetched first when the scope was pulled as a map
    (``loci.kernel.territory``: the vectors come with it); when they cannot be, a note in
    ``notes`` and the scope reads as having no store (answered without it)."""
    from loci.kernel.territory import ensure

    note = ensure(layout, scope)
    if note:
        notes.append(note)
    return layout.query_db(scope)


def local_scopes(layout: Layout, names: Iterable[str]) -> list[str]:
    """``names`` but the scopes pulled as a map whose stores are not fetched yet: what a warm-up
    may read without fetching a thousand scopes' stores that no question asked for."""
    from loci.kernel.territory import state

    return [n for n in names if state(layout, n) != "mapped"]


def load_routing(layout: Layout, tokens: Iterable[str] | None = None,
                 merged: Merged | None = None) -> RoutingIndex:
    """Load the routing index (only ``tokens`` when given)."""
    merged = merged if merged is not None else read_merged(layout)
    path = layout.routing_db
    if not path.exists():
        raise StoreError(f"{path} is missing; run `loci index` to rebuild it")
    try:
        con = connect(path)
        try:
            rows = con.execute("SELECT id, name, size, updated FROM scopes ORDER BY id").fetchall()
            postings: dict[str, dict[int, float]] | PackedPostings = {} if tokens is not None else PackedPostings()
            # scope order within a token, however the file was written (a pull appends a changed
            # scope's rows last): the router's sums then add in one order in every home
            if tokens is None:
                cur = con.execute("SELECT token, scope, weight FROM routing ORDER BY token, scope")
            else:
                wanted = sorted(set(tokens))
                cur = []
                for i in range(0, len(wanted), 900):
                    batch = wanted[i:i + 900]
                    cur.extend(con.execute(
                        f"SELECT token, scope, weight FROM routing WHERE token IN ({','.join('?' * len(batch))}) "
                        "ORDER BY token, scope", batch))
            if tokens is None:
                for tok, scope, weight in cur:
                    postings.add(tok, scope, weight)
                postings.done()
            else:
                for tok, scope, weight in cur:
                    postings.setdefault(tok, {})[scope] = weight
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is unreadable ({exc}); run `loci index` to rebuild it") from None
    if [r[1] for r in rows] != merged.scopes:
        if merged.manifest is None:
            raise StoreError(f"{path} changed while it was read (a pull or an index ran); ask again")
        raise StoreError(f"{path} does not match {layout.manifest}; run `loci index` to rebuild it")
    return RoutingIndex([r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows], postings,
                        complete=tokens is None)

