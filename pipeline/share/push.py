"""``push``: publish this home's local scopes to a store, uploading only bundles whose manifest changed."""
from __future__ import annotations

from dataclasses import dataclass, field

from loci.kernel.config import Layout
from pipeline.share.bundle import MANIFEST, BundleError
from pipeline.share.pull import MANIFEST_LIMIT, PULLED_KIND
from pipeline.share.store import open_store


@dataclass
class PushReport:
    dest: str
    uploaded: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def local_scopes(layout: Layout) -> list[str]:
    """The indexed scopes built on this machine (not pulled), the ones a push publishes."""
    from loci.kernel.registry import load_registry

    return [s.name for s in load_registry(layout).scopes
            if s.kind != PULLED_KIND and layout.meta(s.name).is_file() and layout.chunks(s.name).is_file()]


def scopes_to_publish(layout: Layout, names: list[str] | None) -> list[str]:
    """``names``, or every local scope (what export and push publish); an error when there is none."""
    found = list(names or []) or local_scopes(layout)
    if not found:
        raise BundleError("nothing to publish: no indexed scope was built here; run `loci setup DIR` first "
                          "(a pulled scope is published where it is built)")
    return found


def push(layout: Layout, dest: str, names: list[str] | None = None, *, no_vectors: bool = False) -> PushReport:
    """Publish each local scope's bundle to ``dest``, uploading only those whose manifest changed
    (data files first, the manifest last)."""
    from loci.kernel.config import safe_name
    from pipeline.share.bundle import plan_bundle

    names = scopes_to_publish(layout, names)
    store = open_store(dest, create=True)
    report = PushReport(store.url)
    for name in names:
        manifest, files = plan_bundle(layout, name, no_vectors=no_vectors)
        folder = safe_name(name)
        try:
            current = store.read(folder, MANIFEST, MANIFEST_LIMIT)
        except BundleError:
            current = None
        if current == manifest:
            report.unchanged.append(name)
            continue
        for f, data in files:
            store.write(folder, f.path, data)
        store.write(folder, MANIFEST, manifest)
        report.uploaded.append(name)
    return report
