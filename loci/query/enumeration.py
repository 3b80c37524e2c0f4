"""Citations for the members of an enumeration: each fact a member was chosen for, with the
file and line that show it (recorded at index time in the scope's meta record)."""
from __future__ import annotations

import json
from typing import Sequence

from loci.kernel.config import Layout


def scope_facts(layout: Layout, scope: str) -> list[dict]:
    """The facts recorded for ``scope`` (empty when its meta record is missing or older)."""
    try:
        data = json.loads(layout.meta(scope).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    facts = data.get("facts") if isinstance(data, dict) else None
    return [f for f in facts or [] if isinstance(f, dict)]


def cite(members: Sequence[dict], facts_of) -> list[dict]:
    """``members`` with each fact token replaced by the facts holding it:
    ``{"kind", "value", "source", "line"}``; ``facts_of(scope)`` gives a scope's recorded facts.

    A member kept for lacking a fact (``lacks``: the fact token and a scope holding it, "aren't
    written in Python") is cited by its own facts of that kind: "language: rust" at Cargo.toml."""
    read: dict[str, list[dict]] = {}

    def facts(scope: str) -> list[dict]:   # each scope's record read once, member or holder
        if scope not in read:
            read[scope] = facts_of(scope)
        return read[scope]

    out = []
    for m in members:
        tokens = set(m.get("facts") or ())
        kinds = {f.get("kind") for t, holder in (m.get("lacks") or {}).items()
                 for f in facts(holder) if t in (f.get("tokens") or ())}
        cited, seen = [], set()
        if tokens or kinds:
            for f in facts(m["scope"]):
                key = (f.get("kind"), f.get("value"))
                if key not in seen and (set(f.get("tokens") or ()) & tokens or not tokens and key[0] in kinds):
                    seen.add(key)
                    cited.append({k: f.get(k) for k in ("kind", "value", "source", "line")})
        out.append({**{k: v for k, v in m.items() if k != "lacks"}, "facts": cited})
    return out
