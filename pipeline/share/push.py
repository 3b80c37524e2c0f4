"""``push``: publish this home's local scopes to a store, uploading only bundles whose manifest
changed or whose remote copy no longer matches it (a damaged object is replaced)."""
from __future__ import annotations

from dataclasses import dataclass, field

from loci.kernel.config import Layout
from loci_pipeline.share.bundle import MANIFEST, BundleError, BundleFile
from loci_pipeline.share.pull import MANIFEST_LIMIT, PULLED_KIND
from loci_pipeline.share.stage import fetch_all
from loci_pipeline.share.store import Store, open_store


@dataclass
class PushReport:
    dest: str
    uploaded: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)   # uploaded because the remote copy was damaged


@dataclass
class ExportReport:
    dest: str
    exported: dict[str, str] = field(default_factory=dict)   # scope -> the folder its bundle is in


def export(layout: Layout, dest, names: list[str] | None = None, *, no_vectors: bool = False) -> ExportReport:
    """Write each named scope's bundle (every local scope's by default) into the folder ``dest``;
    every name is checked before anything is written."""
    from loci_pipeline.share.bundle import export_scope

    report = ExportReport(str(dest))
    for name in scopes_to_publish(layout, names):
        report.exported[name] = str(export_scope(layout, name, dest, no_vectors=no_vectors))
    return report


def local_scopes(layout: Layout) -> list[str]:
    """The indexed scopes built on this machine (not pulled), the ones a push publishes."""
    from loci.kernel.registry import load_registry

    return [s.name for s in load_registry(layout).scopes
            if s.kind != PULLED_KIND and layout.meta(s.name).is_file() and layout.chunks(s.name).is_file()]


def scopes_to_publish(layout: Layout, names: list[str] | None) -> list[str]:
    """``names`` (each checked, before anything is written), or every local scope (what export
    and push publish); an error when there is none."""
    if names:
        return [check_publishable(layout, name) for name in dict.fromkeys(names)]
    found = local_scopes(layout)
    if not found:
        raise BundleError("nothing to publish: no indexed scope was built here; run `loci setup DIR` first "
                          "(a pulled scope is published where it is built)")
    return found


def check_publishable(layout: Layout, name: str) -> str:
    """``name`` if it is a scope built here and indexed; else a UsageError (unknown, or pulled)
    or a BundleError (not indexed yet) of one line."""
    from loci.kernel.errors import UsageError, unknown_name
    from loci.kernel.registry import load_registry

    scope = load_registry(layout).get(name)
    if scope is None:
        raise UsageError(unknown_name("scope", name, local_scopes(layout), listing="loci scopes",
                                      none="none built here (`loci setup DIR` builds them)"))
    if scope.kind == PULLED_KIND:
        raise UsageError(f"scope {name!r} was pulled from {scope.path.rsplit('/', 1)[0]}; a pulled scope "
                         f"is published from the home that builds it")
    if not (layout.meta(name).is_file() and layout.chunks(name).is_file()):
        raise BundleError(f"scope {name!r} is not indexed: run `loci index` before exporting it")
    return name


def remote_intact(store: Store, folder: str, files: list[BundleFile], sizes: dict[str, int]) -> bool:
    """Whether every file of the published bundle still has the size (from the listing) and the
    sha256 its manifest promises (read back: one changed byte keeps the size)."""
    if any(sizes.get(f"{folder}/{f.path}") != f.size for f in files):
        return False
    return all(store.sha256(folder, f.path) == f.sha256 for f in files)


def _push_one(layout: Layout, store: Store, name: str, sizes: dict[str, int], no_vectors: bool,
              force: bool) -> str:
    """Publish one scope: "unchanged", "uploaded", or "repaired" (same manifest, damaged copy)."""
    from loci.kernel.config import safe_name
    from loci_pipeline.share.bundle import plan_bundle

    manifest, files = plan_bundle(layout, name, no_vectors=no_vectors)
    folder = safe_name(name)
    outcome = "uploaded"
    if not force and f"{folder}/{MANIFEST}" in sizes:   # a bundle the listing lacks is new: nothing to read
        try:
            current = store.read(folder, MANIFEST, MANIFEST_LIMIT)
        except BundleError:
            current = None
        if current == manifest:
            if remote_intact(store, folder, [f for f, _ in files], sizes):
                return "unchanged"
            outcome = "repaired"
    for f, data in files:
        store.write(folder, f.path, data)
    store.write(folder, MANIFEST, manifest)   # last: a reader trusts only a whole bundle
    return outcome


def push(layout: Layout, dest: str, names: list[str] | None = None, *, no_vectors: bool = False,
         force: bool = False) -> PushReport:
    """Publish each local scope's bundle to ``dest`` (several at a time, data files first, the
    manifest last); ``force`` uploads every one without comparing."""
    from loci.kernel.remote import local_path

    local_path(dest)                          # a malformed address first, then the scopes:
    names = scopes_to_publish(layout, names)  # nothing is created until both are sound
    store = open_store(dest, create=True)
    report = PushReport(store.url)
    sizes = {} if force else store.sizes()
    outcomes = fetch_all(lambda name: _push_one(layout, store, name, sizes, no_vectors, force), names)
    for name, outcome in zip(names, outcomes):
        (report.unchanged if outcome == "unchanged" else report.uploaded).append(name)
        if outcome == "repaired":
            report.repaired.append(name)
    return report
