"""The scope registry: what is registered, where it lives, and what it is called.

``scopes.json`` is machine-managed: every scan rewrites it whole. It is read
here (the query side) and written only through ``save_registry`` (the build
side). A missing file is an empty registry; a damaged one is an error that
names the file, and the file is left as it was.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Iterator

from loci.kernel.errors import LociError
from loci.kernel.config import SCHEMA_VERSION, Layout

SCOPE_KINDS = ("repo", "subscope", "added")


class RegistryError(LociError, ValueError):
    """scopes.json cannot be read; the message names the file and the fix."""


class RegistryNewer(RegistryError):
    """scopes.json was written by a newer loci: only an upgrade reads it; nothing here rewrites it
    (a rescan would drop what that loci records)."""


def upgrade_command() -> str:
    from loci.kernel.dist import DIST

    return f"pip install -U {DIST}"


@dataclass(frozen=True)
class Scope:
    """One registered scope. ``aliases`` already include ``user_aliases``."""

    name: str
    path: str
    aliases: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    kind: str = "repo"
    parent: str | None = None
    excludes: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    owner: str = "unknown"
    user_aliases: tuple[str, ...] = ()
    head: str = ""          # the commit HEAD named at the last scan: a repository that moved is known by it


@dataclass
class Registry:
    """Every scope, plus the roots scans were pointed at (for ``loci update``)."""

    scopes: list[Scope] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)

    def get(self, name: str) -> Scope | None:
        return next((s for s in self.scopes if s.name == name), None)

    def names(self) -> list[str]:
        return [s.name for s in self.scopes]

    def at_path(self, path: str | Path) -> Scope | None:
        """The scope registered at exactly this (resolved) path."""
        target = str(Path(path).expanduser().resolve())
        return next((s for s in self.scopes if s.path == target), None)

    def containing(self, path: str | Path) -> Scope | None:
        """The deepest scope whose directory holds ``path``; a sub-scope beats its parent."""
        target = Path(path).expanduser().resolve()
        best: Scope | None = None
        for scope in self.scopes:
            root = Path(scope.path)
            if target == root or root in target.parents:
                if best is None or len(root.parts) > len(Path(best.path).parts):
                    best = scope
        return best


def _fix(path: Path) -> str:
    return f"run `loci scan DIR` to rebuild it, or restore it ({path})"


def registry_from_json(obj: object, source: Path) -> Registry:
    """Validate the decoded contents of scopes.json; raise RegistryError naming ``source``."""
    from loci.kernel.schemas import SCOPES, problem

    version = obj.get("schema_version", SCHEMA_VERSION) if isinstance(obj, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise RegistryNewer(f"{source} was written by a newer loci (schema {version}, this one reads "
                            f"{SCHEMA_VERSION}): upgrade loci (`{upgrade_command()}`); the file is left as it is")
    if not isinstance(obj, dict) or not isinstance(obj.get("scopes", []), list):
        raise RegistryError(f"{source} does not hold a scope registry; {_fix(source)}")
    found = problem(obj, SCOPES)
    if found:
        raise RegistryError(f"{source} is damaged ({found}); {_fix(source)}")
    scopes = []
    known = set(Scope.__dataclass_fields__)
    for i, raw in enumerate(obj.get("scopes", [])):
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) \
                or not isinstance(raw.get("path"), str):
            raise RegistryError(f"{source}: scope entry {i} has no name or path; {_fix(source)}")
        try:
            fields = {k: (tuple(v) if isinstance(v, list) else v)
                      for k, v in raw.items() if k in known}
            scopes.append(Scope(**fields))
        except TypeError as exc:
            raise RegistryError(f"{source}: scope entry {i} is malformed ({exc}); {_fix(source)}") from None
    roots = obj.get("roots", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise RegistryError(f"{source}: `roots` must be a list of paths; {_fix(source)}")
    return Registry(scopes=scopes, roots=list(roots))


def registry_to_json(registry: Registry) -> dict:
    """What scopes.json holds. A scope's fields are read one by one (``dataclasses.asdict`` deep-copies
    every value: a seventh of a pull's time at 1,000 scopes)."""
    names = [f.name for f in fields(Scope)]
    return {
        "schema_version": SCHEMA_VERSION,
        "roots": list(registry.roots),
        "scopes": [{k: (list(v) if isinstance(v, tuple) else v) for k in names for v in (getattr(s, k),)}
                   for s in registry.scopes],
    }


def load_registry(layout: Layout) -> Registry:
    """Read scopes.json; a missing file is an empty registry, a damaged one an error."""
    from loci.kernel.jsonfile import read_json

    obj = read_json(layout.scopes, RegistryError, _fix(layout.scopes))
    return Registry() if obj is None else registry_from_json(obj, layout.scopes)


def save_registry(layout: Layout, registry: Registry) -> None:
    """Write scopes.json whole and atomically, with the schema version; on one line (it grows with
    the corpus: a pulled home of 1,000 scopes rewrites it on every pull)."""
    from loci.kernel.atomic import write_json  # the build side's writer; imported only when saving

    write_json(layout.scopes, registry_to_json(registry), compact=True)


def salvage_registry(layout: Layout) -> Registry:
    """scopes.json as far as it can be read: the sound entries of a damaged file, else empty.

    What a rescan starts from, so `loci scan DIR` repairs the file it names. A file written by a
    newer loci is not salvaged (RegistryNewer): rewriting it in this loci's schema would lose
    what the newer one records."""
    from loci.kernel.jsonfile import read_json
    from loci.kernel.schemas import NAMES, SCOPE, problem

    try:
        return load_registry(layout)
    except RegistryNewer:
        raise
    except RegistryError:
        pass
    try:
        obj = read_json(layout.scopes, RegistryError, "")
    except RegistryError:
        return Registry()
    if not isinstance(obj, dict):
        return Registry()
    entries = obj.get("scopes") if isinstance(obj.get("scopes"), list) else []
    roots = obj.get("roots") if problem(obj.get("roots", []), NAMES) is None else []
    sound = [e for e in entries if problem(e, SCOPE) is None]
    try:
        return registry_from_json({"roots": roots, "scopes": sound}, layout.scopes)
    except RegistryError:
        return Registry(roots=list(roots))


@dataclass
class RegistryEdit:
    """The registry being edited; set ``registry`` to what should be written."""

    registry: Registry


@contextmanager
def editing_registry(layout: Layout) -> Iterator[RegistryEdit]:
    """Read scopes.json, let the caller change it, and write it back, holding the registry lock
    throughout: two writers (`loci add --alias` and a scan) never lose each other's edit.
    Nothing is written when the block raises; after the block, ``edit.registry`` is what was written."""
    from loci.kernel.atomic import file_lock

    layout.home.mkdir(parents=True, exist_ok=True)
    with file_lock(layout.scopes_lock):
        edit = RegistryEdit(salvage_registry(layout))
        yield edit
        save_registry(layout, edit.registry)
