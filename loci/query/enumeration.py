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
    """``members`` with each fact token replaced by the facts that show it (``_why``):
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
        why = _why(facts(m["scope"]), tokens)
        cited, seen = [], set()
        if tokens or kinds:
            for f in facts(m["scope"]):
                key = (f.get("kind"), f.get("value"))
                if key not in seen and (id(f) in why or not tokens and key[0] in kinds):
                    seen.add(key)
                    cited.append({k: f.get(k) for k in ("kind", "value", "source", "line")})
        out.append({**{k: v for k, v in m.items() if k != "lacks"}, "facts": cited})
    return out


def _why(facts: Sequence[dict], asked: set[str]) -> set[int]:
    """The facts (by ``id``) that show why a member holds the ``asked`` tokens: for each token, of
    the facts holding it those holding the most asked tokens. Of fourteen translations the Chinese
    one holds "chinese" and "translation" and is why; "Python projects that ship py.typed" is
    shown by the language and by the file, one token each."""
    out: set[int] = set()
    for token in asked:
        holding = [(len(set(f.get("tokens") or ()) & asked), id(f)) for f in facts if token in (f.get("tokens") or ())]
        most = max((n for n, _ in holding), default=0)
        out.update(i for n, i in holding if n == most)
    return out
