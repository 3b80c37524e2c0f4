"""`loci uses`: which registered projects reference which, read from ``uses.parquet``."""
from __future__ import annotations

from dataclasses import dataclass, field

from loci.kernel.config import Layout
from loci.kernel.errors import StoreError, UsageError

MISSING = "no cross-project references recorded yet: run `loci index` (or `loci uses --refresh`)"


@dataclass
class Use:
    """One scope referencing another: every citation, dependencies first."""

    source: str
    target: str
    citations: list[dict] = field(default_factory=list)   # {"target", "how", "path", "line"}

    def to_json(self) -> dict:
        return {"from": self.source, "to": self.target, "uses": list(self.citations)}


def load_uses(layout: Layout, scope: str | None = None, known: set[str] | None = None) -> list[Use]:
    """Edges from or to ``scope`` (all of them without), grouped per (from, to) pair."""
    import pyarrow.parquet as pq

    if scope is not None and known is not None and scope not in known:
        raise UsageError(f"unknown scope {scope!r}; known scopes: {', '.join(sorted(known)) or 'none'}")
    try:
        rows = pq.read_table(layout.uses).to_pylist()
    except FileNotFoundError:
        raise UsageError(MISSING) from None
    except (OSError, ValueError, KeyError) as exc:  # ArrowInvalid (a torn file) is a ValueError
        raise StoreError(f"{layout.uses} is unreadable ({str(exc).splitlines()[0]}); "
                         "run `loci index` to rebuild it") from None
    if rows and not {"from", "to", "target", "how", "path", "line"} <= set(rows[0]):
        raise StoreError(f"{layout.uses} lacks the columns loci writes; run `loci index` to rebuild it")
    pairs: dict[tuple[str, str], Use] = {}
    for r in rows:
        if scope is not None and scope not in (r["from"], r["to"]):
            continue
        use = pairs.setdefault((r["from"], r["to"]), Use(r["from"], r["to"]))
        use.citations.append({"target": r["target"], "how": r["how"], "path": r["path"], "line": r["line"]})
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
