"""One scope's bundle: its Parquet artifacts copied as they are, plus ``manifest.json``.

The manifest names the scope, where it came from (repository URL, commit and its
date), what built it (fingerprint, parameter and tokenizer signatures, the
embedding model and dimension), its calibration piece (``calibrate.bundle_piece``: how close
fixed off-topic questions come to its vectors) and each file's sha256 and size. It is written
last, with sorted keys and no clock time, so exporting the same home twice gives
the same bytes. Nothing from outside the scope goes in: no machine path (a file
that holds the repository's or the home's path is refused), no secret (chunks
were redacted at index time).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from loci.kernel import territory, tokens
from loci.kernel.atomic import write_bytes
from loci.kernel.errors import LociError
from loci.kernel.config import DEFAULT_PARAMS, SCHEMA_VERSION, Layout, read_embed_config, safe_name

BUNDLE_SCHEMA = 1
MANIFEST = "manifest.json"
REQUIRED_ROLES = ("chunks", "vocab")
ROLES = ("chunks", "vocab", "symbols", "calls", "refs", "vectors", "label_vectors", "query", "summary",
         "multilingual", "multilingual_summary")
# each vector store's role: the column its table is keyed by (the multilingual store: chunk hashes, as
# the chunk vectors), and the manifest field naming the model its vectors are of
VECTOR_KEYS = territory.VECTOR_KEYS
VECTOR_ROLES = tuple(VECTOR_KEYS)
MODEL_FIELDS = {"vectors": "embedding", "label_vectors": "embedding", "multilingual": "multilingual"}
# each summary's role: the vector store it summarises (a map carries the summary, the store stays remote)
SUMMARY_OF = {"summary": "vectors", "multilingual_summary": "multilingual"}
NO_VECTORS_OUT = (*VECTOR_ROLES, *SUMMARY_OF)   # what --no-vectors leaves out
# what a pull without --all takes (the map: routing, cross-scope references, and the summaries the
# second opinion and a question in another language rank every scope by first); "query" (the
# publisher's query file, usable where the manifest's ``derived`` is this loci's), the vectors and
# the multilingual store stay remote until a question needs them (loci.kernel.territory)
MAP_ROLES = ("vocab", "refs", "summary", "multilingual_summary")
RAW_ROLES = ("query", *SUMMARY_OF)    # carried as the home's own files, not Parquet tables
META_FIELDS = ("chunks", "vocab_tokens", "vocab_weight", "updated", "has_graph", "redactions", "stats", "facts")
# what a manifest from another machine may hold at most
MANIFEST_DEPTH = 32          # nesting of JSON objects and lists
NAME_MAX = 128               # characters of a scope name or an alias
ALIASES_MAX = 64
FILE_LIMIT = 512 << 20       # bytes of one bundle file (the biggest real chunks table is far below)
DIM_MAX = 8192               # an embedding's dimension


class BundleError(LociError, RuntimeError):
    """A bundle cannot be written or trusted; the message is one line naming it and the fix."""


@dataclass(frozen=True)
class BundleFile:
    role: str
    path: str        # a plain file name inside the bundle
    sha256: str
    size: int


@dataclass(frozen=True)
class Manifest:
    """A checked manifest; ``raw`` is the decoded JSON as written."""

    scope: str
    files: tuple[BundleFile, ...]
    embedding: dict | None
    raw: dict

    def file(self, role: str) -> BundleFile | None:
        return next((f for f in self.files if f.role == role), None)

    def model_of(self, role: str) -> dict:
        """The model and dimension the vectors of ``role`` are of, as the manifest names them ({} if not)."""
        field = MODEL_FIELDS[role]
        return (self.embedding if field == "embedding" else self.raw.get(field)) or {}


def role_sources(layout: Layout, name: str) -> dict[str, Path]:
    """The home's file for each bundle role that exists for ``name`` (vectors: the home's model; the
    multilingual store when it is whole)."""
    from loci.query.semantic import label_vectors_path

    out = {"chunks": layout.chunks(name), "vocab": layout.vocab(name), "symbols": layout.symbols(name),
           "calls": layout.calls(name), "refs": layout.refs(name)}
    from loci.query.semantic import has_vectors

    from loci.kernel.vectorstore import MULTILINGUAL_ID, multilingual_vectors, scope_summary_path, vectors_intact

    out["query"] = layout.query_db(name)
    found = {role: path for role, path in out.items() if path.is_file()}
    if vectors_intact(multilingual_vectors(layout, name)):
        found["multilingual"] = multilingual_vectors(layout, name)
        summary = scope_summary_path(layout, MULTILINGUAL_ID, name)
        if summary.is_file():
            found["multilingual_summary"] = summary
    cfg = read_embed_config(layout)
    if cfg is not None:  # a vector store is a matrix and its manifest (loci.query.semantic)
        for role, path in (("vectors", layout.vectors(cfg["model_id"], name)),
                           ("label_vectors", label_vectors_path(layout, cfg["model_id"], name))):
            if has_vectors(path):
                found[role] = path
        summary = scope_summary_path(layout, cfg["model_id"], name)
        if "vectors" in found and summary.is_file():
            found["summary"] = summary
    return found


def _role_bytes(role: str, path: Path) -> bytes:
    """What a bundle carries for a role: the Parquet table as it is, or the vector store as one."""
    if role in VECTOR_ROLES:
        from loci_pipeline.embed import store_as_parquet

        return store_as_parquet(path, VECTOR_KEYS[role])
    return path.read_bytes()


def file_name(role: str) -> str:
    """A role's file in a bundle: a Parquet table, or the home's own file for a raw role."""
    return "query.sqlite" if role == "query" else f"{role}.npy" if role in SUMMARY_OF else f"{role}.parquet"


def derived_signature(params) -> str:
    """What a scope's derived files (its query file) are built with: a pull uses a bundle's
    query file only where its manifest names this loci's, and builds its own otherwise (another
    value in a pulled scope's record, a newer loci or other parameters, makes the next pull
    build them again)."""
    from loci.kernel.config import QUERY_SCHEMA

    return f"query{QUERY_SCHEMA}:{params.index_signature()}:{tokens.signature()}"


def bundle_state(layout: Layout, name: str) -> str:
    """What the scope's bundle is made from, as file stats (cheap: no hashing)."""
    from loci.kernel.stamps import files_state
    from loci.kernel.vectorstore import meta_path

    sources = sorted({**role_sources(layout, name), "meta": layout.meta(name)}.items())
    # a vector store's manifest is written last: its stat stands for the store
    return files_state((role, meta_path(path) if role in VECTOR_ROLES else path) for role, path in sources)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _git(repo: Path, *args: str) -> str:
    from loci_pipeline.gitread import run_git

    if not repo.is_dir():
        return ""
    out = run_git(repo, *args, timeout=30, text=True)
    return out.stdout.strip() if out is not None and out.returncode == 0 else ""


_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", re.I)


def repository_url(repo: Path) -> str | None:
    """The ``origin`` remote (else the first remote) without any user or token in it; None if none."""
    remote = _git(repo, "remote", "get-url", "origin")
    if not remote:
        first = _git(repo, "remote").splitlines()
        remote = _git(repo, "remote", "get-url", first[0]) if first else ""
    if not remote:
        return None
    return _USERINFO.sub(r"\1", remote)


def build_manifest(layout: Layout, name: str, files: list[BundleFile]) -> dict:
    """The manifest of scope ``name`` as it stands in ``layout`` (pure but for git and the meta file)."""
    from loci.kernel.registry import load_registry
    from loci.kernel.state import read_meta

    meta = read_meta(layout, name)
    if meta is None:
        raise BundleError(f"scope {name!r} is not indexed: run `loci index` before exporting it") from None
    scope = load_registry(layout).get(name)
    if scope is None:
        raise BundleError(f"unknown scope {name!r}: `loci scopes` lists what can be exported")
    if scope.kind == "pulled":
        raise BundleError(f"scope {name!r} was pulled from {scope.path}; export it where it is built")
    repo = Path(scope.path)
    carried = {f.role for f in files}
    sources = role_sources(layout, name)
    embedding = _model_of(sources["vectors"]) if "vectors" in carried else None
    multilingual = _model_of(sources["multilingual"]) if "multilingual" in carried else None
    from loci_pipeline.calibrate import bundle_piece

    piece = bundle_piece(layout, name, embedding["model"] if embedding else None)
    commit = _built_commit(layout, scope, meta, repo)
    return {
        "bundle_schema": BUNDLE_SCHEMA,
        "loci_schema": SCHEMA_VERSION,
        "scope": name,
        "aliases": sorted(set(scope.aliases) - {name}),
        "owner": scope.owner,
        "repository": repository_url(repo),
        "commit": commit,
        "commit_date": (_git(repo, "log", "-1", "--format=%cI", commit) or None) if commit else None,
        "fingerprint": meta.get("fingerprint", ""),
        "params": DEFAULT_PARAMS.signature(),
        **({"derived": derived_signature(DEFAULT_PARAMS)} if any(f.role == "query" for f in files) else {}),
        "tokenizer": tokens.signature(),
        "embedding": embedding,
        "meta": {k: meta[k] for k in META_FIELDS if k in meta},
        **({"calibration": piece} if piece else {}),     # what calibrating it reads (calibration_pieces)
        **({"multilingual": multilingual} if multilingual else {}),
        "files": [{"role": f.role, "path": f.path, "sha256": f.sha256, "size": f.size}
                  for f in sorted(files, key=lambda f: f.role)],
    }


def _built_commit(layout: Layout, scope, meta: dict, repo: Path) -> str | None:
    """HEAD when the scope's index was built from the repository as it is now; None when it was
    not (a commit landed since, or during, its build): the bundle never names a commit whose
    content its tables do not hold. HEAD is read first, the index checked after."""
    from loci_pipeline.staleness import index_fresh

    head = _git(repo, "rev-parse", "HEAD") or None
    return head if head and index_fresh(layout, scope, meta, DEFAULT_PARAMS) else None


def _model_of(path: Path) -> dict:
    """A vector store's model and dimension, as a manifest names them."""
    from loci.kernel.vectorstore import read_meta

    vmeta = read_meta(path) or {}
    return {"model": vmeta.get("model"), "dim": vmeta.get("dim")}


def manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _leaked(data: bytes, needles: list[str]) -> str | None:
    """The first of ``needles`` found in any string column of the Parquet file ``data``."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(pa.BufferReader(data))
    for column in table.columns:
        if not pa.types.is_string(column.type):
            continue
        for needle in needles:
            if pc.any(pc.match_substring(column, needle)).as_py():
                return needle
    return None


def plan_bundle(layout: Layout, name: str, *, no_vectors: bool = False) -> tuple[bytes, list[tuple[BundleFile, bytes]]]:
    """The manifest bytes of scope ``name``'s bundle and each file with its bytes.

    Refuses a scope that is not indexed, was pulled, or whose files hold a machine path."""
    from loci.kernel.registry import load_registry

    scope = load_registry(layout).get(name)
    sources = role_sources(layout, name)
    if no_vectors:
        sources = {r: p for r, p in sources.items() if r not in NO_VECTORS_OUT}
    if not all(r in sources for r in REQUIRED_ROLES) or not layout.meta(name).is_file():
        raise BundleError(f"scope {name!r} is not indexed: run `loci index` before exporting it")
    needles = [str(layout.home.resolve())]
    if scope is not None and scope.kind != "pulled":
        needles.append(str(Path(scope.path)))
    datas = {role: _role_bytes(role, path) for role, path in sources.items()}
    for role, path in sources.items():
        found = (next((n for n in needles if n.encode() in datas[role]), None) if role in RAW_ROLES
                 else _leaked(datas[role], needles))
        if found is not None:
            raise BundleError(f"{path} holds the machine path {found}; nothing was exported "
                              f"(an absolute --glob? re-index {name} without it)")
    files = [(BundleFile(role, file_name(role), hashlib.sha256(data).hexdigest(), len(data)), data)
             for role, data in sorted(datas.items())]
    manifest = manifest_bytes(build_manifest(layout, name, [f for f, _ in files]))
    found = next((n for n in needles if n.encode() in manifest), None)
    if found is not None:
        raise BundleError(f"the manifest of {name} would hold the machine path {found} (in its meta); "
                          f"nothing was exported, re-index {name}")
    return manifest, files


def export_scope(layout: Layout, name: str, dest: Path, *, no_vectors: bool = False) -> Path:
    """Write scope ``name``'s bundle into ``dest/<name>/`` (data first, manifest last); returns
    the bundle folder. An unchanged scope rewrites nothing."""
    manifest, files = plan_bundle(layout, name, no_vectors=no_vectors)
    folder = Path(dest) / safe_name(name)
    if (folder / MANIFEST).is_file() and (folder / MANIFEST).read_bytes() == manifest:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for f, data in files:
        write_bytes(folder / f.path, data)
    listed = {f.path for f, _ in files} | {MANIFEST}
    write_bytes(folder / MANIFEST, manifest)
    for old in folder.iterdir():  # a role the scope no longer has (its graph went away)
        if old.is_file() and old.name not in listed and not old.name.startswith("."):
            old.unlink()
    return folder


# --- reading a manifest back -------------------------------------------------------------------

def _plain_name(path: object) -> bool:
    """A file name that stays inside the bundle: relative, no ``..``, no separators."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        return False
    pure = PurePosixPath(path)
    return not pure.is_absolute() and len(pure.parts) == 1 and pure.name not in (".", "..")


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(data: bytes) -> int:
    """How deep the objects and lists of JSON text ``data`` nest (strings skipped), without parsing it."""
    import numpy as np

    brackets = np.frombuffer(_JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS), np.uint8)
    if not brackets.size:
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def valid_name(name: object) -> bool:
    """A scope name or alias another machine may give: printable, at most NAME_MAX characters,
    not ``.`` or ``..``, no backslash, not blank."""
    return (isinstance(name, str) and 0 < len(name) <= NAME_MAX and name.isprintable() and name.strip() == name
            and name not in (".", "..") and "\\" not in name)


def _int(value: object) -> bool:
    return type(value) is int          # true/false are ints to Python, not to a manifest


def _manifest_problem(raw: dict) -> str | None:
    """The first field of a decoded manifest that is not what this loci wrote, or None."""
    from loci.kernel.config import SCHEMA_VERSION
    from loci.kernel.schemas import META, NAMES, OPT_TEXT, Obj, problem

    if not valid_name(raw.get("scope")):
        return f"its scope name is not a name of at most {NAME_MAX} printable characters"
    schema = _int(raw.get("loci_schema")) and 1 <= raw["loci_schema"] <= SCHEMA_VERSION
    if "loci_schema" in raw and not schema:
        return f"loci_schema {str(raw['loci_schema'])[:20]!r} is not one this loci reads (1 to {SCHEMA_VERSION})"
    found = problem(raw, Obj({"aliases": NAMES, "owner": OPT_TEXT, "repository": OPT_TEXT, "commit": OPT_TEXT,
                              "commit_date": OPT_TEXT, "fingerprint": str, "params": OPT_TEXT,
                              "tokenizer": OPT_TEXT, "meta": Obj({**META.fields, "facts": list},
                                                                  required=("chunks",))}))
    if found:
        return found
    aliases = raw.get("aliases") or []
    if len(aliases) > ALIASES_MAX or not all(valid_name(a) for a in aliases):
        return f"its aliases are not at most {ALIASES_MAX} names of at most {NAME_MAX} printable characters"
    counts = [raw["meta"].get(k, 0) for k in ("chunks", "vocab_tokens", "vocab_weight")] if "meta" in raw else []
    if any(c < 0 for c in counts):
        return "its meta counts a negative number"
    for field in sorted(set(MODEL_FIELDS.values())):
        if raw.get(field) is not None and not _a_model(raw[field]):
            return f"its {field} is not a model name and a dimension of 1 to {DIM_MAX}"
    return None


def _a_model(value: object) -> bool:
    """A manifest's ``{"model", "dim"}`` of some vectors: a name and a dimension in range."""
    return (isinstance(value, dict) and isinstance(value.get("model"), str) and len(value["model"]) <= NAME_MAX * 2
            and _int(value.get("dim")) and 0 < value["dim"] <= DIM_MAX)


def parse_manifest(data: bytes, where: str) -> Manifest:
    """Check a manifest's bytes; raise BundleError naming ``where`` on anything untrustworthy."""
    if json_depth(data) > MANIFEST_DEPTH:
        raise BundleError(f"{where}: the manifest nests deeper than {MANIFEST_DEPTH} levels; refused")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleError(f"{where}: the manifest is not valid JSON ({str(exc)[:120]}); re-export the bundle") from None
    if not isinstance(raw, dict):
        raise BundleError(f"{where}: the manifest is not a JSON object; re-export the bundle")
    version = raw.get("bundle_schema")
    if not _int(version) or version < 1:
        raise BundleError(f"{where}: the manifest has no bundle_schema; re-export the bundle")
    if version > BUNDLE_SCHEMA:
        raise BundleError(f"{where} was written by a newer loci (bundle schema {version}, this one reads "
                          f"{BUNDLE_SCHEMA}): upgrade loci to pull it")
    scope = raw.get("scope")
    if not isinstance(scope, str) or not scope.strip():
        raise BundleError(f"{where}: the manifest names no scope; re-export the bundle")
    found = _manifest_problem(raw)
    if found:
        raise BundleError(f"{where}: the manifest is refused: {found}; re-export the bundle")
    files = raw.get("files")
    if not isinstance(files, list):
        raise BundleError(f"{where}: the manifest lists no files; re-export the bundle")
    entries = [_entry(entry, where) for entry in files]
    roles = [f.role for f in entries]
    missing = [r for r in REQUIRED_ROLES if r not in roles]
    if missing or len(set(roles)) != len(roles):
        raise BundleError(f"{where}: the manifest lacks {missing[0] if missing else 'unique roles'}; "
                          f"re-export the bundle")
    for role, field in (("vectors", "embedding"), ("multilingual", "multilingual")):
        if role in roles and not _a_model(raw.get(field)):
            raise BundleError(f"{where}: {role} vectors without a model and dimension (its {field}); "
                              f"re-export the bundle")
    # a role this loci does not know (a newer one's) is neither fetched nor written: its pulls still work
    out = tuple(f for f in entries if f.role in ROLES)
    return Manifest(scope=scope, files=out, embedding=raw.get("embedding") if "vectors" in roles else None, raw=raw)


def _entry(entry: object, where: str) -> BundleFile:
    """One checked file entry of a manifest, of any role (a size over the limit refused only for
    a role this loci fetches)."""
    if not isinstance(entry, dict):
        raise BundleError(f"{where}: a file entry is not an object; re-export the bundle")
    path = entry.get("path")
    if not _plain_name(path):
        raise BundleError(f"{where}: the manifest names {path!r}, a path outside the bundle; refused")
    role, digest, size = entry.get("role"), entry.get("sha256"), entry.get("size")
    if not valid_name(role) or not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest) \
            or not _int(size) or size < 0:
        raise BundleError(f"{where}: the entry for {path!r} is malformed; re-export the bundle")
    if role in ROLES and size > FILE_LIMIT:
        raise BundleError(f"{where}/{path} claims {size} bytes, over the {FILE_LIMIT >> 20} MB a bundle "
                          f"file may hold; refused before reading it")
    return BundleFile(role, path, digest, size)


def check_size(f: BundleFile, size: int, where: str) -> None:
    """Refuse a file whose size (as listed, before reading) is not what the manifest promised."""
    if size != f.size:
        raise BundleError(f"{where}/{f.path} is {size} bytes, the manifest says {f.size} "
                          f"(truncated or replaced); nothing was pulled, re-export the bundle")


def check_copied(f: BundleFile, size: int, digest: str, where: str) -> None:
    """Refuse bytes that are not what the manifest promised (truncated, damaged or swapped)."""
    check_size(f, size, where)
    if digest != f.sha256:
        raise BundleError(f"{where}/{f.path} does not match its sha256 in the manifest; "
                          f"nothing was pulled, re-export the bundle")
