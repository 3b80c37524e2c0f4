"""`loci uses`: which registered projects reference which, read from ``uses.parquet``
(the names each scope provides and the uses of them, joined here; ``loci_pipeline.uses`` writes it)."""
from __future__ import annotations

from dataclasses import dataclass, field

from loci.kernel.config import Layout
from loci.kernel.errors import StoreError, UsageError, unknown_name

MISSING = "no cross-project references recorded yet: run `loci index` (or `loci uses --refresh`)"


@dataclass
class Use:
    """One scope referencing another: every citation, dependencies first."""

    source: str
    target: str
    citations: list[dict] = field(default_factory=list)   # {"target", "how", "path", "line"}

    def to_json(self) -> dict:
        return {"from": self.source, "to": self.target, "uses": list(self.citations)}


Edge = tuple  # (from, to, target, how, path, line)
LINKED = {"scope", "role", "norm", "target", "how", "path", "line", "rank"}   # loci_pipeline.uses.USES_SCHEMA
EDGES = {"from", "to", "target", "how", "path", "line"}                      # the file an older loci wrote


def edges(rows, scope: str | None = None) -> list[Edge]:
    """The edges of ``uses.parquet``'s rows (scope, role, norm, target, how, path, line, rank): each
    use of a name joined with every other scope that provides it (none when the user provides the
    name itself: a clone imports its own code), from or to ``scope`` when given.
    Linear in the rows and the edges returned: a name many scopes provide costs only when asked."""
    owners: dict[str, list[str]] = {}
    uses = []
    for row in rows:
        if row[1] == "provides":
            owners.setdefault(row[2], []).append(row[0])
        else:
            uses.append(row)
    for who in owners.values():
        who.sort()
    out = set()
    for source, _role, norm, target, how, path, line, rank in uses:
        who = owners.get(norm, ())
        if source in who:   # its own name (a clone importing itself): no other provider is used
            continue
        if scope is not None and source != scope:
            who = (scope,) if scope in who else ()
        for owner in who:
            if owner != source:
                out.add((source, owner, rank, path, line, target, how))
    return [(f, t, target, how, path, line) for f, t, _r, path, line, target, how in sorted(out)]


def _read_edges(layout: Layout, scope: str | None) -> list[Edge]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(layout.uses)
    except FileNotFoundError:
        raise UsageError(MISSING) from None
    except (OSError, ValueError, KeyError) as exc:  # ArrowInvalid (a torn file) is a ValueError
        raise StoreError(f"{layout.uses} is unreadable ({str(exc).splitlines()[0]}); "
                         "run `loci index` to rebuild it") from None
    names = set(table.column_names)
    if LINKED <= names:
        cols = table.to_pydict()
        return edges(zip(*(cols[c] for c in ("scope", "role", "norm", "target", "how", "path", "line", "rank"))),
                     scope)
    if EDGES <= names:
        cols = table.to_pydict()
        return [e for e in zip(*(cols[c] for c in ("from", "to", "target", "how", "path", "line")))
                if scope is None or scope in e[:2]]
    raise StoreError(f"{layout.uses} lacks the columns loci writes; run `loci index` to rebuild it")


def load_uses(layout: Layout, scope: str | None = None, known: set[str] | None = None) -> list[Use]:
    """Edges from or to ``scope`` (all of them without), grouped per (from, to) pair."""
    if scope is not None and known is not None and scope not in known:
        raise UsageError(unknown_name("scope", scope, known, listing="loci scopes"))
    pairs: dict[tuple[str, str], Use] = {}
    for source, target_scope, target, how, path, line in _read_edges(layout, scope):
        use = pairs.setdefault((source, target_scope), Use(source, target_scope))
        use.citations.append({"target": target, "how": how, "path": path, "line": line})
    return sorted(pairs.values(), key=lambda u: (-len(u.citations), u.source, u.target))


def use_lines(uses: list[Use], limit: int = 3) -> list[str]:
    """One line per pair, then its first citations (dependencies first)."""
    if not uses:
        return ["no registered project references another (imports and declared dependencies checked)"]
    width = max(len(f"{u.source} -> {u.target}") for u in uses)
    lines = []
    for u in uses:
        files = len({c["path"] for c in u.citations})
        lines.append(f"{f'{u.source} -> {u.target}':<{width}}  {files} file(s)")
        for c in u.citations[:limit]:
            lines.append(f"    [{c['how']}] {c['target']}  {c['path']}:{c['line']}")
        if len(u.citations) > limit:
            lines.append(f"    ... and {len(u.citations) - limit} more (--json lists them all)")
    return lines
