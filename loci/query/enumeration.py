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
    ``{"kind", "value", "source", "line"}``; ``facts_of(scope)`` gives a scope's recorded facts."""
    out = []
    for m in members:
        tokens = list(m.get("facts") or [])
        cited, seen = [], set()
        if tokens:
            for f in facts_of(m["scope"]):
                key = (f.get("kind"), f.get("value"))
                if key not in seen and set(f.get("tokens") or ()) & set(tokens):
                    seen.add(key)
                    cited.append({k: f.get(k) for k in ("kind", "value", "source", "line")})
        out.append({**m, "facts": cited})
    return out
