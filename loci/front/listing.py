"""The registered scopes as `loci scopes --json` prints them and the MCP ``scopes`` tool returns
them: one function for both front ends."""
from __future__ import annotations

from pathlib import Path

from loci.kernel.config import Layout


def scopes_listing(layout: Layout, group: str | None = None) -> list[dict]:
    """One row a registered scope (``group``: its members only; an unknown group is a UsageError
    naming the known ones). A scope that is an identical copy of another indexed one names the
    scope that answers for it (``copy_of``)."""
    from loci.kernel.errors import UsageError, unknown_name
    from loci.kernel.groups import effective_groups, load_policy
    from loci.kernel.registry import load_registry

    reg = load_registry(layout)
    policy = load_policy(layout)
    gof = effective_groups(reg, policy)
    rows = [s for s in reg.scopes if group is None or group in gof.get(s.name, ())]
    if group and not rows and (group in policy.modes or group in policy.members):
        return []   # a group `loci groups` lists whose last member left: it has none
    if group and not rows:
        known = sorted({g for gs in gof.values() for g in gs})
        raise UsageError(unknown_name("group", group, known, listing="loci groups"))
    copies = copy_of(layout, {s.name for s in reg.scopes if s.kind == "pulled"})
    return [{"name": s.name, "path": s.path, "owner": s.owner, "kind": s.kind,
             "groups": sorted(gof.get(s.name, ())), "aliases": list(s.aliases),
             "exists": Path(s.path).is_dir(), **({"copy_of": copies[s.name]} if s.name in copies else {})}
            for s in rows]


def copy_of(layout: Layout, pulled: set[str]) -> dict[str, str]:
    """Each identical copy in the home, with the scope that answers for it as a question without a
    cwd is answered (``router.answered_by``); empty without an index."""
    from loci.kernel.errors import StoreError
    from loci.query.router import answered_by
    from loci.query.store import read_merged

    try:
        return answered_by(read_merged(layout).twins, pulled)
    except (StoreError, OSError):
        return {}
