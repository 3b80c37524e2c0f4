"""Groups: overlapping labels on scopes, and the policy that says what each one does.

Membership has two sources. ``scopes.json`` carries what a scan computes
(``me`` / ``vendor:<org>`` from git provenance, a monorepo's own id);
``groups.json`` carries the user's edits (``members``: per group, scopes added
and removed by hand) and the modes. A rescan rewrites scopes.json whole and
never touches groups.json, so nothing asserted by hand is lost.

Modes: ``explicit`` < ``soft`` < ``hard`` in strictness; the default is soft.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from loci.kernel.errors import LociError, UsageError, unknown_name
from loci.kernel.config import SCHEMA_VERSION, Layout
from loci.kernel.registry import Registry

MODES = ("explicit", "soft", "hard")
_STRICTNESS = {mode: rank for rank, mode in enumerate(MODES)}
PROVENANCE_ME = "me"
VENDOR_PREFIX = "vendor:"


class GroupError(LociError, ValueError):
    """A bad group, scope or mode name, or an unreadable groups.json."""


class GroupUsageError(GroupError, UsageError):
    """A bad group, scope or mode name given on the command line (exit code 2, as any bad input)."""


@dataclass(frozen=True)
class Policy:
    """groups.json in memory. ``members[group]`` is ``{"add": (...), "rm": (...)}``."""

    default_mode: str = "soft"
    modes: Mapping[str, str] = field(default_factory=dict)
    members: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    extra: Mapping[str, object] = field(default_factory=dict)  # unknown keys, written back


@dataclass(frozen=True)
class GroupRow:
    group: str
    mode: str
    count: int
    members: tuple[str, ...] = ()   # sorted


@dataclass(frozen=True)
class Confinement:
    """What a group does to one question.

    ``eligible``: the only scopes routing may select (None: all of them).
    ``demoted``: scopes whose evidence base is multiplied down (None: none).
    ``strict``: abstain (out_of_group) when the best answer lies outside ``eligible``.
    """

    eligible: frozenset[str] | None = None
    demoted: frozenset[str] | None = None
    strict: bool = False
    group: str | None = None
    via: str | None = None  # "flag" | "cwd" | None


NO_CONFINEMENT = Confinement()


def provenance_group(owner: str) -> str | None:
    """The group an owner label implies: ``me``, ``vendor:<org>``, or none for ``unknown``."""
    if owner == PROVENANCE_ME or owner.startswith(VENDOR_PREFIX):
        return owner
    return None


def is_provenance(group: str) -> bool:
    return provenance_group(group) is not None


def infer(registry: Registry) -> dict[str, str]:
    """The provenance group of every scope whose owner is known (scope -> me | vendor:<org>)."""
    out = {}
    for scope in registry.scopes:
        group = provenance_group(scope.owner)
        if group:
            out[scope.name] = group
    return out


def mode_of(group: str, policy: Policy) -> str:
    return policy.modes.get(group, policy.default_mode)


def effective_groups(registry: Registry, policy: Policy) -> dict[str, set[str]]:
    """scope -> groups: the registry's computed groups, plus hand additions, minus removals."""
    out = {s.name: set(s.groups) for s in registry.scopes}
    for group, edits in policy.members.items():
        for name in edits.get("add", ()):
            if name in out:
                out[name].add(group)
        for name in edits.get("rm", ()):
            if name in out:
                out[name].discard(group)
    return out


def members_of(group: str, groups_of: Mapping[str, Iterable[str]]) -> frozenset[str]:
    return frozenset(s for s, gs in groups_of.items() if group in gs)


def list_groups(registry: Registry, policy: Policy) -> list[GroupRow]:
    """One row per group (members or a mode set by name), sorted by name."""
    groups_of = effective_groups(registry, policy)
    names = {g for gs in groups_of.values() for g in gs} | set(policy.modes)
    return [group_row(g, groups_of, policy) for g in sorted(names)]


def group_row(group: str, groups_of: Mapping[str, Iterable[str]], policy: Policy) -> GroupRow:
    """One group's mode and members (none: a group no scope is in, or not made yet)."""
    members = sorted(members_of(group, groups_of))
    return GroupRow(group, mode_of(group, policy), len(members), tuple(members))


# ---- editing (pure: each returns a new Policy)

def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise GroupUsageError(f"unknown mode {mode!r}; modes are: {', '.join(MODES)}")


def _check_scope(registry: Registry, scope: str) -> None:
    if registry.get(scope) is None:
        raise GroupUsageError(unknown_name("scope", scope, registry.names(), listing="loci scopes",
                                           none="none registered yet"))


def _check_group_name(group: str) -> None:
    if not group or group != group.strip() or any(c.isspace() for c in group):
        raise GroupUsageError(f"invalid group name {group!r}: use a non-empty name without spaces")


def set_mode(policy: Policy, registry: Registry, group: str, mode: str) -> Policy:
    """Set one group's mode; a group not known yet is created with no members (``loci group add``
    fills it), so a mode can be set before the scopes are put in."""
    _check_mode(mode)
    _check_group_name(group)
    return Policy(policy.default_mode, {**policy.modes, group: mode}, policy.members, policy.extra)


def set_default_mode(policy: Policy, mode: str) -> Policy:
    _check_mode(mode)
    return Policy(mode, policy.modes, policy.members, policy.extra)


def _edits(policy: Policy, group: str) -> tuple[set[str], set[str]]:
    edits = policy.members.get(group, {})
    return set(edits.get("add", ())), set(edits.get("rm", ()))


def _with_edits(policy: Policy, group: str, added: set[str], removed: set[str]) -> Policy:
    members = {k: v for k, v in policy.members.items() if k != group}
    if added or removed:
        members[group] = {"add": tuple(sorted(added)), "rm": tuple(sorted(removed))}
    return Policy(policy.default_mode, policy.modes, members, policy.extra)


def add_member(policy: Policy, registry: Registry, scope: str, group: str) -> Policy:
    """Put ``scope`` in ``group`` by hand (kept in groups.json, so it survives a rescan)."""
    _check_scope(registry, scope)
    _check_group_name(group)
    added, removed = _edits(policy, group)
    return _with_edits(policy, group, added | {scope}, removed - {scope})


def remove_member(policy: Policy, registry: Registry, scope: str, group: str) -> Policy:
    """Take ``scope`` out of ``group``, whether the scan or a hand edit put it there."""
    _check_scope(registry, scope)
    current = effective_groups(registry, policy)[scope]
    if group not in current:
        raise GroupUsageError(
            f"scope {scope!r} is not in group {group!r}; "
            + (f"its groups: {', '.join(sorted(current))}" if current else "it is in no group")
        )
    added, removed = _edits(policy, group)
    if group in registry.get(scope).groups:  # type: ignore[union-attr]  # computed by the scan
        removed = removed | {scope}
    return _with_edits(policy, group, added - {scope}, removed)


# ---- confinement (pure)

def counts_for_cwd(group: str, policy: Policy) -> bool:
    """Whether a group of the cwd scope may confine or demote a question.

    Provenance groups (``me``, ``vendor:<org>``) do not, unless groups.json names
    their mode: nearly every scope carries one, so with the soft default,
    standing in any of your own repositories would demote every vendor scope.
    Hand-assigned groups and monorepo ids count with their mode.
    """
    return not is_provenance(group) or group in policy.modes


def confinement(
    question_group: str | None,
    cwd_scope: str | None,
    groups_of: Mapping[str, Iterable[str]],
    policy: Policy,
) -> Confinement:
    """Resolve which scopes a question may reach, from ``--group`` or else the cwd scope.

    ``--group X`` confines to X's members in every mode (strict only when X is
    hard). Otherwise the cwd scope's strictest counted group decides: hard
    confines strictly, soft demotes every scope outside it, explicit does
    nothing. Equally strict groups act together (their members are united).
    An unknown ``--group`` raises GroupError listing the known groups.
    """
    if question_group:
        members = members_of(question_group, groups_of)
        if not members and (question_group in policy.modes or question_group in policy.members):
            # a group `loci groups` lists (a mode or an edit of its own) whose last member left
            raise GroupUsageError(f"group {question_group!r} has no members; add one: "
                                  f"loci group add SCOPE {shlex.quote(question_group)}")
        if not members:
            known = {g for gs in groups_of.values() for g in gs}
            raise GroupUsageError(unknown_name("group", question_group, known, listing="loci groups",
                                               none="none registered yet"))
        strict = mode_of(question_group, policy) == "hard"
        return Confinement(eligible=members, strict=strict, group=question_group, via="flag")
    if cwd_scope is None or cwd_scope not in groups_of:
        return NO_CONFINEMENT
    counted = [g for g in groups_of[cwd_scope] if counts_for_cwd(g, policy)]
    if not counted:
        return NO_CONFINEMENT
    top = max(_STRICTNESS[mode_of(g, policy)] for g in counted)
    mode = MODES[top]
    if mode == "explicit":
        return NO_CONFINEMENT
    tied = sorted(g for g in counted if _STRICTNESS[mode_of(g, policy)] == top)
    inside = frozenset().union(*(members_of(g, groups_of) for g in tied))
    name = "+".join(tied)
    if mode == "hard":
        return Confinement(eligible=inside, strict=True, group=name, via="cwd")
    return Confinement(demoted=frozenset(groups_of) - inside, group=name, via="cwd")


# ---- groups.json

def _fix(path: Path) -> str:
    return f"fix it by hand, or delete {path} to return to the defaults (every group soft)"


def policy_from_json(obj: object, source: Path) -> Policy:
    """Validate the decoded contents of groups.json; raise GroupError naming ``source``."""
    if not isinstance(obj, dict):
        raise GroupError(f"{source} must hold a JSON object; {_fix(source)}")
    default = obj.get("default_mode", "soft")
    modes = obj.get("modes", {})
    members = obj.get("members", {})
    if default not in MODES:
        raise GroupError(f"{source}: default_mode {default!r} is not one of {', '.join(MODES)}; {_fix(source)}")
    if not isinstance(modes, dict) or any(m not in MODES for m in modes.values()):
        raise GroupError(f"{source}: `modes` must map group names to one of {', '.join(MODES)}; {_fix(source)}")
    clean: dict[str, dict[str, tuple[str, ...]]] = {}
    if not isinstance(members, dict):
        raise GroupError(f"{source}: `members` must map group names to {{\"add\": [...], \"rm\": [...]}}; {_fix(source)}")
    for group, edits in members.items():
        ok = isinstance(edits, dict) and all(
            isinstance(edits.get(k, []), list) and all(isinstance(s, str) for s in edits.get(k, []))
            for k in ("add", "rm"))
        if not ok:
            raise GroupError(f"{source}: members of {group!r} must be {{\"add\": [...], \"rm\": [...]}}; {_fix(source)}")
        clean[group] = {"add": tuple(edits.get("add", [])), "rm": tuple(edits.get("rm", []))}
    extra = {k: v for k, v in obj.items()
             if k not in ("default_mode", "modes", "members", "schema_version")}
    return Policy(default, dict(modes), clean, extra)


def policy_to_json(policy: Policy) -> dict:
    return {
        **policy.extra,
        "schema_version": SCHEMA_VERSION,
        "default_mode": policy.default_mode,
        "modes": dict(sorted(policy.modes.items())),
        "members": {g: {"add": list(e.get("add", ())), "rm": list(e.get("rm", ()))}
                    for g, e in sorted(policy.members.items())},
    }


def load_policy(layout: Layout) -> Policy:
    """Read groups.json; missing means the defaults, damaged is an error naming the file."""
    from loci.kernel.jsonfile import read_json

    obj = read_json(layout.groups, GroupError, _fix(layout.groups))
    return Policy() if obj is None else policy_from_json(obj, layout.groups)


def save_policy(layout: Layout, policy: Policy) -> None:
    from loci.kernel.atomic import write_json

    write_json(layout.groups, policy_to_json(policy))


def edit_group(layout: Layout, group: str, edit, *args: str) -> GroupRow:
    """Apply one edit of ``group`` (``set_mode``, ``add_member``, ``remove_member`` of this module,
    called as ``edit(policy, registry, *args)``) to groups.json and write it back; the group after
    it (no members once the last is taken out). A bad name raises GroupUsageError and leaves the
    file as it was."""
    from loci.kernel.atomic import file_lock
    from loci.kernel.registry import load_registry

    with file_lock(layout.groups_lock):      # two edits side by side never lose each other's
        registry = load_registry(layout)
        policy = edit(load_policy(layout), registry, *args)
        save_policy(layout, policy)
    return group_row(group, effective_groups(registry, policy), policy)
