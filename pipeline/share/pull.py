"""``pull``: bring a store's bundles into this home; ``push``: publish this home's scopes.

A pull lists the store's manifests and reads only those whose listing (size,
time) moved since the last pull, fetches only bundles whose manifest bytes
changed, verifies every file against the manifest, and builds each scope's
derived files (query file, memory-mapped vectors) in a staging folder inside the
home. Only when every changed bundle is staged does anything in the home move:
each scope's files by ``os.replace`` (meta last), then the registry, routing
(only the changed scopes' rows) and the manifest, and ``pulled.json`` last. A
refusal, or a kill at any point, leaves the previous state answering; the next
pull redoes what was not recorded.

Without ``full`` (``loci pull`` without ``--all``) a bundle that carries its query file is
pulled as a map: its vocabulary, references and summaries only, the rest left in the store
with a record of each file's checksum (``loci.kernel.territory``, which the query side uses
to fetch them when a question first needs the scope).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from loci.kernel.atomic import build_lock, write_json
from loci.kernel.config import DEFAULT_PARAMS, Layout, Params, read_embed_config
from loci.kernel.registry import load_registry
from loci.kernel.stamps import existing
from loci_pipeline.share.bundle import (
    MANIFEST,
    SUMMARY_OF,
    BundleError,
    derived_signature,
    parse_manifest,
)
from loci_pipeline.share.refusals import kept_bundles, other_models, reason, set_aside
from loci_pipeline.share.stage import Incoming, fetch_all, readable, stage_all
from loci_pipeline.share.store import Entry, Store, open_store

MANIFEST_LIMIT = 4 << 20
STAGING_PREFIX = ".pull-"
PULLED_KIND = "pulled"


def pulled_path(layout: Layout) -> Path:
    """What was pulled from where: ``{"scopes": {local name: record}}``."""
    return layout.pulled


def read_pulled(layout: Layout) -> dict[str, dict]:
    try:
        data = json.loads(pulled_path(layout).read_text())
    except (OSError, ValueError):
        return {}
    scopes = data.get("scopes") if isinstance(data, dict) else None
    return scopes if isinstance(scopes, dict) else {}


@dataclass(frozen=True)
class PulledSource:
    """A source a scope of this home was pulled from, and how it was pulled last (every record
    of it agrees, or it counts as not so: a bundle pulled the other way is not unchanged).
    ``whole``: asking for every store (``--all``), what was asked, not what came ("mapped"): a map
    pull of a bundle that cannot stay remote (pushed by another loci) comes whole, and is a map
    again once it can; a record of a loci that noted only what came is read by that.
    ``no_vectors``: with ``--no-vectors``. ``scopes``: the store's names it was pulled by
    (``--scope``), which `loci update` pulls again and no other; None when it was pulled whole
    (a record without the field was)."""
    source: str
    whole: bool
    no_vectors: bool
    scopes: list[str] | None = None


def pulled_sources(layout: Layout) -> list[PulledSource]:
    """Every source a scope of this home was pulled from, by address, each with how it was pulled
    last (what `loci update` pulls again, the same way); pulled.json is read once."""
    by_source: dict[str, list[dict]] = {}
    for rec in read_pulled(layout).values():
        if isinstance(rec.get("source"), str):
            by_source.setdefault(rec["source"], []).append(rec)
    return [PulledSource(source, whole=all(r.get("whole", not r.get("mapped")) for r in recs),
                         no_vectors=all(bool(r.get("no_vectors")) for r in recs),
                         scopes=(sorted({r["scope"] for r in recs if isinstance(r.get("scope"), str)})
                                 if all(r.get("named") for r in recs) else None))
            for source, recs in sorted(by_source.items())]


@dataclass
class PullReport:
    source: str
    imported: list[str] = field(default_factory=list)     # local names, written this time
    unchanged: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # the bundle's scope -> its local name
    gone: list[str] = field(default_factory=list)          # pulled before, no longer in the store
    model: str | None = None                               # the vectors' model, when any came
    refused: dict[str, str] = field(default_factory=dict)  # a bundle folder -> why (its old copy stays)
    missing: list[str] = field(default_factory=list)       # scopes asked for by name that the store lacks


def _settle(records: dict[str, dict], names: list[str], entries: list[Entry], now: float, full: bool,
            named: bool = False) -> bool:
    """Remember the listing of unchanged manifests once it can be trusted, and how they were asked
    for this time (``full``: every store; ``named``: by scope name); True if any moved."""
    by_folder = {e.folder: e for e in entries}
    moved = False
    for name in names:
        rec = records[name]
        listing = _listing(by_folder[rec["folder"]], now)
        if rec.get("listing") != listing or rec.get("whole") != full or bool(rec.get("named")) != named:
            rec["listing"], rec["whole"], rec["named"], moved = listing, full, named, True
    return moved


def _named(names: list[str], records: dict[str, dict], url: str, listed: set[str]) -> tuple[set[str], list[str]]:
    """The bundle folders of the scopes ``names``: each as `loci push` names it, or the one this
    home pulled it from (by the store's name or the local one); and the names whose folder is
    neither ``listed`` nor one this home pulled from ``url`` (that one is ``gone``)."""
    from loci.kernel.config import safe_name

    mine = [(name, r) for name, r in records.items() if r.get("source") == url]
    folders = {name: r.get("folder") for name, r in mine}
    folders.update({r.get("scope"): r.get("folder") for _, r in mine})
    wanted = {name: folders.get(name) or safe_name(name) for name in names}
    known = listed | {r.get("folder") for _, r in mine}
    return set(wanted.values()), [name for name, folder in wanted.items() if folder not in known]


def _keep_settled(layout: Layout, records: dict[str, dict], names: list[str], entries: list[Entry],
                  full: bool, named: bool) -> None:
    """``_settle`` the unchanged bundles, and write pulled.json when that moved a record."""
    if _settle(records, names, entries, time.time(), full, named):
        write_json(pulled_path(layout), {"scopes": records}, compact=True)


def _checkpoint(stage: str) -> None:
    """A test kills the pull here (``LOCI_TEST_KILL_AT=<stage>``) as ``kill -9`` would."""
    if os.environ.get("LOCI_TEST_KILL_AT") == stage:
        os.kill(os.getpid(), signal.SIGKILL)


SETTLE_SECONDS = 300  # a listing older than this is trusted: stores keep times to the second, clocks drift


def _listing(entry: Entry, now: float) -> list[int] | None:
    """What identifies this version of a manifest in the listing alone (size, time), or None
    while it is too recent to tell apart from a rewrite within the same second."""
    return [entry.size, entry.mtime_ns] if now - entry.mtime_ns / 1e9 > SETTLE_SECONDS else None


def _changed(layout: Layout, store: Store, entries: list[Entry], records: dict[str, dict],
             no_vectors: bool, derived: str, refused: dict[str, str],
             full: bool = True) -> tuple[list[Incoming], list[str]]:
    """The bundles whose manifest moved since the last pull (or whose derived files this loci
    would build otherwise, or that were pulled as a map when ``full`` asks for every store),
    and the local names of the rest; a bad manifest goes to ``refused``."""
    by_folder = {(r.get("source"), r.get("folder")): (name, r) for name, r in records.items()}
    indexed = existing({name: layout.meta(name) for name in records})   # the scopes whose meta is here
    incoming, unchanged, to_read = [], [], []
    for entry in entries:
        name, rec = by_folder.get((store.url, entry.folder), (None, None))
        same_mode = (rec is not None and bool(rec.get("no_vectors")) == no_vectors
                     and rec.get("derived") == derived and name in indexed
                     and not (full and rec.get("mapped")))
        if same_mode and rec.get("listing") is not None and rec.get("listing") == [entry.size, entry.mtime_ns]:
            unchanged.append(name)
        else:
            to_read.append((entry, name, rec, same_mode))
    datas = fetch_all(lambda item: set_aside(refused, item[0].folder, store.read, item[0].folder, MANIFEST,
                                             MANIFEST_LIMIT), to_read)
    for (entry, name, rec, same_mode), data in zip(to_read, datas):
        if data is None:   # refused
            continue
        digest = hashlib.sha256(data).hexdigest()
        if same_mode and rec.get("manifest_sha256") == digest:
            unchanged.append(name)
            continue
        manifest = set_aside(refused, entry.folder, _manifest, data, store, entry)
        if manifest is not None:
            incoming.append(Incoming(entry, manifest, digest, name or "",
                                     mapped=not full and mappable(manifest, derived, no_vectors)))
    return incoming, unchanged


def mappable(manifest, derived: str, no_vectors: bool) -> bool:
    """A bundle whose stores can stay remote: it carries its query file, built as this loci
    builds one, and (for its vectors and its multilingual store) their summaries, which the second
    opinion's first pass and a question in another language read first."""
    roles = {f.role for f in manifest.files}
    return ("query" in roles and manifest.raw.get("derived") == derived
            and (no_vectors or all(store not in roles or summary in roles for summary, store in SUMMARY_OF.items())))


def _manifest(data: bytes, store: Store, entry: Entry):
    """The checked manifest of the bundle listed as ``entry``."""
    if len(data) > MANIFEST_LIMIT:
        raise BundleError(f"{store.url}/{entry.folder}/{MANIFEST} is over {MANIFEST_LIMIT} bytes; refused")
    return parse_manifest(data, f"{store.url}/{entry.folder}")


def _home_model(layout: Layout, incoming: list[Incoming], no_vectors: bool) -> str | None:
    """The model every pulled vector must come from: the home's, else the first bundle's
    (``refusals.other_models`` refuses a bundle of another)."""
    cfg = read_embed_config(layout)
    model = cfg["model_id"] if cfg else None
    if no_vectors:
        return model
    return model or next((inc.manifest.embedding["model"] for inc in incoming if inc.manifest.embedding), None)


def _resolve_names(incoming: list[Incoming], store: Store, registry, records: dict[str, dict]) -> None:
    """Each bundle's local name: its own, unless a local scope or another source holds it
    (then ``name@origin``); never an existing scope's name (those of ``registry``)."""
    taken = {s.name for s in registry.scopes}
    # a scope registered from this store but not recorded (a pull killed before pulled.json) is its own
    owners = {s.name: tuple(s.path.rsplit("/", 1)) for s in registry.scopes if s.kind == PULLED_KIND}
    owners.update({name: (r.get("source"), r.get("folder")) for name, r in records.items()})
    label = store.label or "remote"
    claimed: set[str] = set()
    for inc in incoming:
        if inc.name:  # pulled before from this very folder: keep its name
            claimed.add(inc.name)
            continue
        base = inc.manifest.scope
        mine = (store.url, inc.entry.folder)
        candidates = [base, f"{base}@{label}"] + [f"{base}@{label}-{n}" for n in range(2, 1000)]
        for cand in candidates:
            if cand in claimed:
                continue
            if cand not in taken or owners.get(cand) == mine:
                inc.name = cand
                break
        claimed.add(inc.name)


def name_key(name: str) -> str:
    """A name as a question would mention it: case, dashes, underscores and dots alike."""
    return re.sub(r"[-_.\s]+", "-", name.lower()).strip("-")


def _refuse_shadowing(incoming: list[Incoming], store: Store, registry,
                      refused: dict[str, str]) -> list[Incoming]:
    """An alias that reads as another scope's name (one of ``registry``'s, or another bundle's)
    would route questions about that project to this bundle: that bundle is refused (an alias
    that is only the bundle's own name is left out later); the others are returned."""
    mine = {inc.name for inc in incoming}
    names = {name_key(s.name): s.name for s in registry.scopes if s.name not in mine}
    names.update({name_key(inc.name): inc.name for inc in incoming})
    out = []
    for inc in incoming:
        own = {name_key(inc.name), name_key(inc.manifest.scope)}
        shadowed = next((a for a in inc.manifest.raw.get("aliases") or []
                         if name_key(a) not in own and name_key(a) in names), None)
        if shadowed is None:
            out.append(inc)
        else:
            refused[inc.entry.folder] = (f"{store.url}/{inc.entry.folder}: its alias {shadowed!r} is the name "
                                         f"of the scope {names[name_key(shadowed)]!r}; refused")
    return out


def _destinations(layout: Layout, name: str, model: str | None) -> dict[str, Path]:
    """Where each staged key lives in the home (every role, so a role the bundle lost is removed)."""
    from loci.kernel import territory
    from loci.kernel.vectorstore import MULTILINGUAL_ID, multilingual_vectors, scope_summary_path
    from loci.query.semantic import label_vectors_path

    out = {"chunks": layout.chunks(name), "vocab": layout.vocab(name), "symbols": layout.symbols(name),
           "calls": layout.calls(name), "refs": layout.refs(name), "query": layout.query_db(name),
           "map_vocab": territory.vocab_db(layout, name),
           "multilingual_summary": scope_summary_path(layout, MULTILINGUAL_ID, name)}
    stores = {"multilingual": multilingual_vectors(layout, name)}   # of its own encoder, whatever the home's model
    if model is not None:
        out["summary"] = scope_summary_path(layout, model, name)
        stores.update(vectors=layout.vectors(model, name), label_vectors=label_vectors_path(layout, model, name))
    for role, path in stores.items():
        out.update(_store_destinations(role, path))
    return out


def _store_destinations(role: str, path: Path) -> dict[str, Path]:
    """A vector store's staged keys: the matrix before its manifest; ``role`` itself (a schema-1
    Parquet store) is removed."""
    from loci.kernel.vectorstore import matrix_path, meta_path

    return {role: path, f"{role}.matrix": matrix_path(path), f"{role}.meta": meta_path(path)}


def _install(layout: Layout, name: str, staged: dict[str, Path], inc: Incoming, store: Store,
             model: str | None, no_vectors: bool) -> bool:
    """Move one staged scope into place; its meta goes last, so a reader trusts only a whole scope.
    Returns whether its summaries moved (a map's, staged; a full copy's are written at the merge).
    A scope pulled as a map: its record of the stores left remote first, and no stale copy
    of them stays (the next question fetches this version)."""
    from loci.kernel import territory

    dests = _destinations(layout, name, model)
    if inc.mapped:
        territory.write_record(layout, name, store.url, inc.entry.folder, _remote_files(inc, dests, no_vectors),
                               inc.manifest.embedding, model, inc.manifest.raw.get("multilingual"))
    else:
        territory.forget(layout, name)
    # the English summary staged and unchanged, and the multilingual one too (or absent before and now)
    same_summary = ("summary" in staged and dests.get("summary") is not None
                    and all(_same_file(staged[k], dests[k]) if k in staged else not dests[k].exists()
                            for k in SUMMARY_OF if k in dests))
    for key, dest in dests.items():
        if key in staged:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged[key], dest)
        else:  # a role this version of the bundle lacks (or vectors left out): no stale copy stays
            dest.unlink(missing_ok=True)
    raw = inc.manifest.raw
    meta = dict(raw.get("meta") or {})
    meta.update(name=name, fingerprint=raw.get("fingerprint", ""), origin=origin_of(store, inc))
    write_json(layout.meta(name), meta)
    layout.error(name).unlink(missing_ok=True)
    return not (inc.mapped and same_summary)


def _same_file(a: Path, b: Path) -> bool:
    import filecmp

    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def _remote_files(inc: Incoming, dests: dict[str, Path], no_vectors: bool) -> list[dict]:
    """The stores a map leaves remote, each with its checksum (vectors only where the home
    has a model to keep them under; a multilingual store only of the encoder this loci runs)."""
    from loci.kernel.territory import TERRITORY_ROLES

    return [{"role": f.role, "path": f.path, "sha256": f.sha256, "size": f.size} for f in inc.manifest.files
            if f.role in TERRITORY_ROLES and readable(inc.manifest, f.role)
            and (f.role == "query" or (not no_vectors and f.role in dests))]


def origin_of(store: Store, inc: Incoming) -> dict:
    """Where a pulled scope came from, as its meta (and so the manifest) records it."""
    raw = inc.manifest.raw
    return {"source": store.url, "bundle": inc.entry.folder, "scope": inc.manifest.scope,
            "repository": raw.get("repository"), "commit": raw.get("commit"),
            "commit_date": raw.get("commit_date")}


def _register(layout: Layout, store: Store, incoming: list[Incoming]) -> list[str]:
    """The incoming scopes registered; returns every registered name, as written."""
    from loci.kernel.registry import editing_registry

    with editing_registry(layout) as edit:  # a scan or `loci add` running meanwhile keeps its edit
        _add_pulled(edit.registry, store, incoming)
    return edit.registry.names()


def _add_pulled(registry, store: Store, incoming: list[Incoming]) -> None:
    from loci.kernel.registry import Scope

    others = {s.name for s in registry.scopes} - {i.name for i in incoming}
    scopes = [s for s in registry.scopes if s.name not in {i.name for i in incoming}]
    for inc in incoming:
        raw = inc.manifest.raw
        aliases = [a for a in raw.get("aliases") or [] if isinstance(a, str) and a not in others]
        if inc.name != inc.manifest.scope:
            aliases = [a for a in aliases if name_key(a) != name_key(inc.manifest.scope)]
        owner = raw.get("owner") if isinstance(raw.get("owner"), str) else "unknown"
        scopes.append(Scope(name=inc.name, path=f"{store.url}/{inc.entry.folder}", kind=PULLED_KIND,
                            aliases=tuple(sorted(set(aliases))), owner=owner))
    registry.scopes = sorted(scopes, key=lambda s: s.name)


def _clean_staging(layout: Layout) -> None:
    """Staging folders left by a killed pull (we hold the lock, so none is live)."""
    for path in layout.home.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(path, ignore_errors=True)


def no_bundle(store: Store) -> str:
    """Why a store without bundles is refused, and where the bundles may be: the folder of a
    single bundle is pulled through its parent; bundles deeper down, through their store."""
    listed = store.listed()
    if MANIFEST in listed:
        parent = store.address("..")
        return (f"{store.url} is one bundle's folder, not a store of bundles; pull the folder that holds "
                f"it" + (f": `loci pull {parent}`" if parent else " (a store holds one folder per scope)"))
    deeper = sorted((p.count("/"), p) for p in listed if p.endswith("/" + MANIFEST) and p.count("/") >= 2)
    if deeper:
        return (f"no bundle in {store.url}, only deeper down; pull the store that holds them: "
                f"`loci pull {store.address(deeper[0][1].rsplit('/', 2)[0])}`")
    return (f"no bundle in {store.url}; give the folder that holds one folder per scope, each with "
            f"its {MANIFEST} (what `loci push` writes)")


def pull(layout: Layout, source: str, *, no_vectors: bool = False, params: Params = DEFAULT_PARAMS,
         full: bool = True, scopes: list[str] | None = None) -> PullReport:
    """Pull every changed bundle from ``source`` into ``layout``'s home; refuse (BundleError,
    home untouched) on anything that cannot be trusted. Without ``full``, a bundle that can
    be (``mappable``) is pulled as a map: its stores stay remote until a question needs them.
    With ``scopes``, only those scopes' bundles are looked at (the others neither taken nor
    removed; a name the store lacks is ``missing``), and their records say so (``pulled_by_name``).
    A store without a bundle is refused (``no_bundle``: a mistyped folder, or one bundle's)
    unless this home pulled from it before: then it was emptied, and its scopes are ``gone``."""
    store = open_store(source)
    report = PullReport(store.url)
    layout.home.mkdir(parents=True, exist_ok=True)
    with build_lock(layout.lock, "pull"):
        _clean_staging(layout)
        records = read_pulled(layout)
        entries = store.list()
        if not entries and not store.refused and not any(r.get("source") == store.url for r in records.values()):
            raise BundleError(no_bundle(store))   # a store pulled before may have been emptied: that is news
        listed = {e.folder for e in entries} | set(store.refused)
        named = scopes is not None
        if named:   # only the named scopes' bundles are looked at, refused, or gone
            asked, report.missing = _named(scopes, records, store.url, listed)
            entries = [e for e in entries if e.folder in asked]
        report.refused.update({folder: reason(why) for folder, why in store.refused.items()
                               if not named or folder in asked})
        derived = derived_signature(params)
        incoming, report.unchanged = _changed(layout, store, entries, records, no_vectors, derived, report.refused,
                                              full)
        report.gone = sorted(n for n, r in records.items() if r.get("source") == store.url
                             and r.get("folder") not in listed and (not named or r.get("folder") in asked))
        if not incoming:
            _keep_settled(layout, records, report.unchanged, entries, full, named)
            return report
        model = _home_model(layout, incoming, no_vectors)
        incoming = other_models(incoming, model, no_vectors, store, report.refused)
        registry = load_registry(layout)   # read once here (and once more under its lock to register)
        _resolve_names(incoming, store, registry, records)
        incoming = _refuse_shadowing(incoming, store, registry, report.refused)
        stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=layout.home))
        try:
            staged = stage_all(stage, store, incoming, no_vectors, params)
            incoming = kept_bundles(incoming, staged, report.refused)
            if not incoming:   # every changed one refused: the unchanged ones are still recorded as asked
                _keep_settled(layout, records, report.unchanged, entries, full, named)
                return report
            _checkpoint("staged")
            moved = set()
            for inc in incoming:
                if _install(layout, inc.name, staged[inc.name], inc, store, model, no_vectors):
                    moved.add(inc.name)
                _checkpoint("installed-one")
        finally:
            shutil.rmtree(stage, ignore_errors=True)
        if not no_vectors:   # each bundle's calibration piece, which calibrating reads
            from loci_pipeline.calibrate import piece_signature
            from loci_pipeline.calibration_pieces import land_pieces

            land_pieces(layout, [(inc.name, inc.manifest.raw) for inc in incoming], piece_signature())
        names = _register(layout, store, incoming)
        _checkpoint("registered")
        _merge(layout, names, [inc.name for inc in incoming], model, {inc.name for inc in incoming if inc.mapped},
               moved)
        _checkpoint("merged")
        if model is not None and read_embed_config(layout) is None and any(
                inc.manifest.embedding for inc in incoming) and not no_vectors:
            write_json(layout.embed_config, {"model": model, "model_id": model})
        now = time.time()
        for inc in incoming:
            records[inc.name] = {
                "source": store.url, "folder": inc.entry.folder, "scope": inc.manifest.scope,
                "manifest_sha256": inc.digest, "listing": _listing(inc.entry, now), "no_vectors": no_vectors,
                "derived": derived, "mapped": inc.mapped, "whole": full, "named": named}
        _settle(records, report.unchanged, entries, now, full, named)
        write_json(pulled_path(layout), {"scopes": records}, compact=True)
        _encoder_cache(layout, any(key in staged[inc.name] for inc in incoming
                                   for key in ("multilingual.meta", "multilingual_summary")))
    report.imported = [inc.name for inc in incoming]
    report.renamed = {inc.manifest.scope: inc.name for inc in incoming if inc.name != inc.manifest.scope}
    report.model = model if any(inc.manifest.embedding for inc in incoming) and not no_vectors else None
    return report


def _encoder_cache(layout: Layout, brought: bool) -> None:
    """After a pull that ``brought`` multilingual stores (or a map their summaries): the encoder's unpacked tables written as
    the build writes them, when its package is installed and the home has no current copy, so a
    one-shot question in another language maps them instead of unpacking the package (~8 s)."""
    from loci_pipeline import multilingual

    if not brought or not multilingual.available():
        return
    from loci.kernel.vectorstore import multilingual_model_dir
    from loci.query.multilingual import cache_current

    if not cache_current(multilingual_model_dir(layout)):
        multilingual.write_model_cache(layout)


def _merge(layout: Layout, names: list[str], changed: list[str], model: str | None,
           mapped: set[str] = frozenset(), summaries_moved: set[str] | None = None) -> None:
    """Over the registered ``names``: the changed scopes' vector summaries and the merged summary file of the home's model and of
    the multilingual encoder (what a one-shot second opinion, or a question in another language, reads first; merged again only when a summary moved), cross-scope uses (rewritten
    only when references moved), routing (only ``changed`` rewritten), the manifest last."""
    from loci.kernel.vectorstore import merged_summary_files
    from loci_pipeline.routing import merge_routing
    from loci_pipeline.uses import merge_uses

    from loci.kernel.vectorstore import MULTILINGUAL_ID, multilingual_vectors
    from loci_pipeline.embed import merge_summaries, write_scope_summary

    moved = summaries_moved is None or bool(set(changed) & summaries_moved)
    # the multilingual summaries only in a home that holds some multilingual store or summary
    multilingual = [MULTILINGUAL_ID] if multilingual_vectors(layout, "x").parent.is_dir() else []
    for model_id in ([model] if model is not None else []) + multilingual:
        for name in changed:
            if name not in mapped:   # a map's summaries came with it (its stores did not)
                write_scope_summary(layout, model_id, name)
        if moved or not all(p.is_file() for p in merged_summary_files(layout, model_id)):
            merge_summaries(layout, model_id, names)
    held = existing({n: layout.refs(n) for n in names})
    merge_uses(layout, [n for n in names if n in held], changed=changed)
    merge_routing(layout, names, changed=changed)
