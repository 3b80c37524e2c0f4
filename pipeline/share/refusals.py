"""A pull refuses bad bundles one by one: each is named with its reason, the good ones land,
and a refused bundle's previous copy (if any) keeps answering."""
from __future__ import annotations

from loci_pipeline.share.bundle import BundleError
from loci_pipeline.share.stage import Incoming, kept
from loci_pipeline.share.store import Store


def reason(exc: BaseException | str) -> str:
    """The refusal of one bundle: its message without "nothing was pulled" (the others were)."""
    return str(exc).replace("nothing was pulled, ", "").replace(", nothing was pulled", "")


def set_aside(refused: dict[str, str], folder: str, fn, *args):
    """``fn(*args)``, or None with the bundle ``folder`` refused for the BundleError it raised."""
    got = kept(fn, *args)
    if isinstance(got, BundleError):
        refused[folder] = reason(got)
        return None
    return got


def other_models(incoming: list[Incoming], model: str | None, no_vectors: bool, store: Store,
                 refused: dict[str, str]) -> list[Incoming]:
    """The bundles whose vectors (if any) are of ``model``; the others are refused."""
    out = []
    for inc in incoming:
        emb = inc.manifest.embedding
        if no_vectors or emb is None or emb["model"] == model:
            out.append(inc)
            continue
        refused[inc.entry.folder] = (
            f"{store.url}/{inc.entry.folder} holds vectors of model {emb['model']} (dim {emb['dim']}), "
            f"this home's are {model}: pull with --no-vectors (then `loci embed` re-embeds them here)")
    return out


def kept_bundles(incoming: list[Incoming], staged: dict, refused: dict[str, str]) -> list[Incoming]:
    """The bundles staged whole; one whose fetch or build raised is refused by its folder."""
    out = []
    for inc in incoming:
        got = staged[inc.name]
        if isinstance(got, BundleError):
            refused[inc.entry.folder] = reason(got)
        else:
            out.append(inc)
    return out
