"""One schema per JSON state file under $LOCI_HOME, checked whenever the file is read.

A schema is plain data: a type (or tuple of types), ``Obj`` for an object with
known keys, ``ListOf`` or ``MapOf`` for uniform containers. ``problem`` returns
the first place a decoded value breaks its schema, or None. Every state file is
listed in ``STATE_FILES`` with the command that rebuilds it, so a reader's
message names the file and a fix that works.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from loci.kernel.errors import StoreError

NUMBER = (int, float)
TEXT = str
OPT_TEXT = (str, type(None))


@dataclass(frozen=True)
class Obj:
    """A JSON object: ``fields`` are checked when present, ``required`` must be present."""

    fields: dict = field(default_factory=dict)
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class ListOf:
    item: object


@dataclass(frozen=True)
class MapOf:
    value: object


def _type_name(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false",
            type(None): "null"}.get(type(value), "a number" if isinstance(value, NUMBER) else type(value).__name__)


def _wanted(spec: object) -> str:
    if isinstance(spec, (Obj, MapOf)):
        return "an object"
    if isinstance(spec, ListOf):
        return "a list"
    kinds = spec if isinstance(spec, tuple) else (spec,)
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "null"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def _is(value: object, kinds: tuple) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def problem(value: object, spec: object, where: str = "") -> str | None:
    """The first way ``value`` breaks ``spec`` ("`scopes[0].groups` is a number, not a list"), or None."""
    label = f"`{where}`" if where else "the file"
    if isinstance(spec, Obj):
        if not isinstance(value, dict):
            return f"{label} is {_type_name(value)}, not an object"
        for key in spec.required:
            if key not in value:
                return f"{label} has no `{key}`"
        for key, sub in spec.fields.items():
            if key in value:
                found = problem(value[key], sub, f"{where}.{key}" if where else key)
                if found:
                    return found
        return None
    if isinstance(spec, ListOf):
        if not isinstance(value, list):
            return f"{label} is {_type_name(value)}, not a list"
        for i, item in enumerate(value):
            found = problem(item, spec.item, f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(spec, MapOf):
        if not isinstance(value, dict):
            return f"{label} is {_type_name(value)}, not an object"
        for key, item in value.items():
            found = problem(item, spec.value, f"{where}.{key}" if where else str(key))
            if found:
                return found
        return None
    kinds = spec if isinstance(spec, tuple) else (spec,)
    if not _is(value, kinds):
        return f"{label} is {_type_name(value)}, not {_wanted(spec)}"
    return None


# ---- the state files

NAMES = ListOf(TEXT)

SCOPE = Obj({"name": TEXT, "path": TEXT, "aliases": NAMES, "groups": NAMES, "kind": TEXT,
             "parent": OPT_TEXT, "excludes": NAMES, "globs": NAMES, "owner": TEXT,
             "user_aliases": NAMES, "head": TEXT}, required=("name", "path"))
SCOPES = Obj({"schema_version": int, "roots": NAMES, "scopes": ListOf(SCOPE)})

GROUPS = Obj({"schema_version": int, "default_mode": TEXT, "modes": MapOf(TEXT),
              "members": MapOf(Obj({"add": NAMES, "rm": NAMES}))})

META = Obj({"name": TEXT, "fingerprint": TEXT, "chunks": int, "vocab_tokens": int,
            "vocab_weight": NUMBER, "updated": OPT_TEXT, "has_graph": bool,
            "redactions": MapOf(int), "stats": dict, "built_at": NUMBER, "build": OPT_TEXT},
           required=("fingerprint", "chunks"))
# the routing merge's header; "scopes" (every scope's meta) only in one an older loci wrote whole
MANIFEST = Obj({"schema_version": int, "tokenizer": TEXT, "merged_from": TEXT, "written_at": NUMBER,
                "scopes": MapOf(Obj(META.fields))},
               required=("schema_version",))
ERROR = Obj({"scope": TEXT, "error": TEXT, "trace": TEXT, "at": NUMBER}, required=("error",))

_FLOORS = Obj({"floors": dict, "route": dict})  # a bad value inside is skipped by its reader
CALIBRATION = Obj({"schema_version": int, "params": MapOf((int, float, type(None))), "fits": MapOf(dict),
                   "gate_accuracy": MapOf(NUMBER), "semantic": Obj({"models": MapOf(_FLOORS)}),
                   "index_written_at": (int, float, type(None)), "fitted_at": NUMBER},
                  required=("schema_version", "params"))
EMBED = Obj({"model": TEXT, "model_id": TEXT}, required=("model_id",))
THRESHOLDS = Obj({"thresholds": TEXT, "chosen_at": NUMBER}, required=("thresholds",))
LOCK = Obj({"pid": int, "what": TEXT, "start": (int, type(None))}, required=("pid",))
GRAPH_RECORD = Obj({"fingerprint": TEXT, "status": TEXT, "setup": TEXT, "sha1": OPT_TEXT})


@dataclass(frozen=True)
class StateFile:
    """A kind of state file: its schema and the command that rebuilds it."""

    label: str
    schema: object
    fix: str


SCOPES_FILE = StateFile("scopes.json", SCOPES, "loci scan DIR")
GROUPS_FILE = StateFile("groups.json", GROUPS, "loci groups reset")
MANIFEST_FILE = StateFile("manifest.json", MANIFEST, "loci index")
META_FILE = StateFile("meta/<scope>.json", META, "loci index")
ERROR_FILE = StateFile("errors/<scope>.json", ERROR, "loci index")
CALIBRATION_FILE = StateFile("calibration.json", CALIBRATION, "loci calibrate")
EMBED_FILE = StateFile("embed.json", EMBED, "loci embed")
THRESHOLDS_FILE = StateFile("thresholds.json", THRESHOLDS, "loci calibrate --reset")
LOCK_FILE = StateFile(".build.lock", LOCK, "loci index")
GRAPH_RECORD_FILE = StateFile("graphs/<scope>/fingerprint.json", GRAPH_RECORD, "loci graphs")


class StateError(StoreError):
    """A state file is unreadable or breaks its schema; the message names the file and its fix."""

    def __init__(self, message: str, path: Path | None = None, fix: str | None = None):
        super().__init__(message)
        self.path = path
        self.fix = fix


def damaged(path: Path, what: str, fix: str) -> StateError:
    return StateError(f"{path} is damaged ({what}); run `{fix}` to rebuild it", path, fix)


def check(value: object, kind: StateFile, path: Path) -> object:
    """``value`` when it matches ``kind``'s schema; a StateError naming ``path`` and the fix otherwise."""
    found = problem(value, kind.schema)
    if found:
        raise damaged(path, found, kind.fix)
    return value
