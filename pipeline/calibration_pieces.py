"""Calibration in pieces: what the semantic fits read of one scope, kept per scope in the home.

Every semantic value ``loci calibrate`` fits is a function of per-scope values against fixed
question lists (``evalgen.UNANSWERABLE_QUESTIONS``, ``UNANSWERABLE_FOREIGN``): per scope and
model, its floor and each off-topic question's affinity as routing reads it; per scope, each
foreign off-topic question's best passage. A scope's piece is computed once for what it was
computed from (its vector store and query file as file stats, the fitting code, the questions)
and kept in ``calibration-pieces/<scope>.json`` (``Layout.calibration_pieces``); the corpus-level values are merged from all
pieces by ``loci_pipeline.calibrate`` as before. A bundle carries its scope's semantic piece
(``calibrate.bundle_piece``), so a pulled scope, its stores remote or not, is calibrated from it.

The encoded questions are kept too (``encoded``): they never change for one encoder.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from loci.kernel.atomic import write_bytes, write_json
from loci.kernel.config import Layout, safe_name
from loci.kernel.stamps import files_state
from loci.query import evalgen

PIECE_SCHEMA = 1
MULTILINGUAL = "multilingual"


def pieces_dir(layout: Layout) -> Path:
    return layout.calibration_pieces


def questions_digest() -> str:
    """Which fixed questions the pieces answer (a changed list computes every piece again)."""
    text = repr((evalgen.UNANSWERABLE_QUESTIONS, evalgen.UNANSWERABLE_FOREIGN))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _code_digest(*modules) -> str:
    digest = hashlib.sha256()
    for module in modules:
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


# --- the encoded questions ---------------------------------------------------------------------

def encoded(layout: Layout, tag: str, questions: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``encode(questions)`` as float32 rows, kept in the home under ``tag`` (what encodes them:
    the model and the encoder's code) and the questions themselves."""
    key = hashlib.sha256(repr((tag, tuple(questions))).encode()).hexdigest()[:20]
    path = pieces_dir(layout) / f"questions-{key}.npy"
    try:
        got = np.load(path, allow_pickle=False)
        if got.ndim == 2 and len(got) == len(questions) and got.dtype == np.float32:
            return got
    except (OSError, ValueError, EOFError):
        pass
    vectors = np.asarray(encode(list(questions)), dtype=np.float32)
    buf = io.BytesIO()
    np.save(buf, vectors, allow_pickle=False)
    write_bytes(path, buf.getvalue())
    return vectors


def semantic_tag(model: str) -> str:
    """What encodes the off-topic questions for ``model``'s vectors: the model's files and the
    query side's encoder code."""
    from loci.query import bert_numpy, semantic

    folder = semantic.model_path(model) if semantic.model_id_for(model) != semantic.STATIC_ID else None
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder is not None and folder.is_dir() else []
    return f"{model}|{_code_digest(semantic, bert_numpy)}|{files_state((p.name, p) for p in files)}"


def multilingual_tag(encoder=None) -> str:
    """What encodes the foreign off-topic questions: the package's files (``cache_tag``) and the
    side's code, or an injected encoder's class."""
    from loci.query import multilingual

    who = (f"{type(encoder).__module__}.{type(encoder).__qualname__}" if encoder is not None
           else json.dumps(multilingual.cache_tag(), sort_keys=True, default=str))
    return f"{MULTILINGUAL}|{_code_digest(multilingual)}|{who}"


def null_vectors(layout: Layout, model: str, questions: Sequence[str],
                 load_encoder: Callable) -> tuple[Callable[[], np.ndarray], str]:
    """(a call giving the off-topic questions encoded for ``model``, kept or encoded on first
    use; the encoder's tag)."""
    tag = semantic_tag(model)
    got: list = []

    def vectors() -> np.ndarray:
        if not got:
            got.append(encoded(layout, tag, questions, lambda texts: load_encoder(model, layout).encode(texts)))
        return got[0]

    return vectors, tag


# --- one scope's pieces ------------------------------------------------------------------------

def semantic_inputs(layout: Layout, model: str, scope: str) -> str:
    """What a scope's semantic piece is computed from, as file stats (no hashing): its vector
    store's manifest (written after its matrix) and its query file (the translated copies)."""
    from loci.kernel.vectorstore import meta_path

    return files_state((("vectors", meta_path(layout.vectors(model, scope))), ("query", layout.query_db(scope))))


def multilingual_inputs(layout: Layout, scope: str) -> str:
    from loci.kernel.vectorstore import meta_path, multilingual_vectors

    return files_state((("vectors", meta_path(multilingual_vectors(layout, scope))), ("query", layout.query_db(scope))))


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("schema") == PIECE_SCHEMA else {}


def piece_path(layout: Layout, scope: str) -> Path:
    return pieces_dir(layout) / f"{safe_name(scope)}.json"


def read_piece(layout: Layout, scope: str, method: str) -> dict:
    """The scope's kept pieces (``{"semantic": {model: entry}, "multilingual": entry}``) when
    fitted by this ``method`` on these questions, else empty."""
    data = _read(piece_path(layout, scope))
    return data if data.get("method") == method and data.get("questions") == questions_digest() else {}


def write_piece(layout: Layout, scope: str, method: str, data: Mapping) -> None:
    write_json(piece_path(layout, scope), {"schema": PIECE_SCHEMA, "method": method,
                                           "questions": questions_digest(), **data}, compact=True)


def valid_semantic(entry: object, n: int) -> bool:
    """A semantic entry (from this home or from a bundle) that can be trusted: a floor in [-1, 1]
    and ``n`` finite affinities, or none."""
    if not isinstance(entry, dict):
        return False
    floor, null = entry.get("floor"), entry.get("null")
    if not _number(floor) or not -1.0 <= floor <= 1.0:
        return False
    return null is None or (isinstance(null, list) and len(null) == n and all(_number(v) for v in null))


def valid_lifts(lifts: object) -> bool:
    """A scope's window lifts (``calibrate.window_lifts``): [sum, count] pairs, counts whole and >= 0."""
    return isinstance(lifts, list) and bool(lifts) and all(
        isinstance(p, list) and len(p) == 2 and _number(p[0]) and isinstance(p[1], int)
        and not isinstance(p[1], bool) and p[1] >= 0 for p in lifts)


def _standings_fit(z: object, n: int) -> bool:
    return isinstance(z, list) and len(z) == n and all(v is None or _number(v) for v in z)


def _number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


# --- the corpus-level pieces -------------------------------------------------------------------

class Pieces:
    """Every scope's pieces as calibrate gathers them: kept ones reused, missing ones computed
    (and kept) when the scope's stores are here, the rest left out."""

    def __init__(self, layout: Layout, scopes: Sequence[str], method: str):
        self.layout, self.scopes, self.method = layout, list(scopes), method
        self.kept = {scope: read_piece(layout, scope, method) for scope in self.scopes}
        self.dirty: set[str] = set()

    def semantic(self, model: str, compute: Callable[[str], dict | None], n: int, tag: str,
                 standings: Callable[[list[float]], list]) -> dict[str, dict]:
        """{scope: {"floor", "null", "z"}} for ``model``: a kept entry still current for the
        scope's files and the questions' encoder ``tag`` (or for the bundle it was pulled with),
        else ``compute(scope)`` from its vectors here; ``standings(null)`` the leave-one-out
        standings each entry keeps beside its affinities."""
        out = {}
        for scope in self.scopes:
            entries = self.kept[scope].setdefault("semantic", {})
            entry = entries.get(model)
            inputs = semantic_inputs(self.layout, model, scope) + "|" + tag
            current = isinstance(entry, dict) and (entry.get("inputs") == inputs or (
                "landed" in entry and entry["landed"] == landed_state(self.layout, scope)))
            if not current or not (entry.get("floor") is None or valid_semantic(entry, n)):
                if inputs.startswith("vectors=none"):
                    continue
                entry = {**(compute(scope) or {"floor": None}), "inputs": inputs}
                entries[model] = entry
                self.dirty.add(scope)
            if entry.get("floor") is None:    # no vectors of the model's width here
                continue
            if entry.get("null") is not None and not _standings_fit(entry.get("z"), n):
                entry["z"] = standings(entry["null"])     # kept beside the affinities they come from
                self.dirty.add(scope)
            out[scope] = {"floor": entry["floor"], "null": entry.get("null"),
                          **({"z": entry["z"]} if entry.get("null") is not None else {}),
                          **({"lifts": entry["lifts"]} if valid_lifts(entry.get("lifts")) else {})}
        return out

    def multilingual(self, best: Callable[[str], list[float] | None], tag: str = "") -> dict[str, list[float]]:
        """{scope: each foreign question's best passage cosine} for the scopes with a store here, or
        pulled with a bundle that carried these values (a map's store stays remote)."""
        out = {}
        for scope in self.scopes:
            entry = self.kept[scope].get(MULTILINGUAL)
            inputs = multilingual_inputs(self.layout, scope) + "|" + tag
            current = isinstance(entry, dict) and (entry.get("inputs") == inputs or (
                "landed" in entry and entry["landed"] == landed_state(self.layout, scope)))
            if not current:
                entry = {"inputs": inputs, "best": None if inputs.startswith("vectors=none") else best(scope)}
                self.kept[scope][MULTILINGUAL] = entry
                self.dirty.add(scope)
            if entry.get("best") is not None:
                out[scope] = entry["best"]
        return out

    def save(self) -> None:
        """Keep the pieces computed this time (the others are as they were)."""
        for scope in sorted(self.dirty):
            write_piece(self.layout, scope, self.method, {k: v for k, v in self.kept[scope].items()
                                                           if k in ("semantic", MULTILINGUAL)})
        self.dirty.clear()


# --- what a bundle carries ---------------------------------------------------------------------

def landed_state(layout: Layout, scope: str) -> str:
    """The pulled scope's meta as a file stat: a pull writes it last for each scope it installs,
    so a piece landed with that pull holds until the scope is pulled again."""
    return files_state((("meta", layout.meta(scope)),))


def land_pieces(layout: Layout, bundles: Sequence[tuple[str, Mapping]], method: str) -> None:
    """Keep the pieces each pulled bundle carries ((local name, manifest) each, the scope
    installed): its semantic one and its multilingual one, each valid for those installed files
    only (``landed_state``); a piece fitted another way than ``method``, or malformed, is left out."""
    for scope, manifest in bundles:
        got = manifest.get("calibration")
        if not (isinstance(got, dict) and got.get("method") == method and got.get("questions") == questions_digest()):
            continue
        landed = landed_state(layout, scope)
        out: dict = {}
        if isinstance(got.get("model"), str) and valid_semantic(got, len(evalgen.UNANSWERABLE_QUESTIONS)):
            out["semantic"] = {got["model"]: {"floor": got["floor"], "null": got["null"], "landed": landed}}
        if valid_best(got.get(MULTILINGUAL), len(evalgen.UNANSWERABLE_FOREIGN)):
            out[MULTILINGUAL] = {"inputs": "landed", "best": got[MULTILINGUAL], "landed": landed}
        if out:
            kept = read_piece(layout, scope, method)
            write_piece(layout, scope, method, {**{k: v for k, v in kept.items() if k in ("semantic", MULTILINGUAL)},
                                                **out})


def valid_best(best: object, n: int) -> bool:
    """Each foreign off-topic question's best passage cosine: ``n`` numbers in [-1, 1] or None."""
    return isinstance(best, list) and len(best) == n and all(v is None or (_number(v) and -1.0 <= v <= 1.0)
                                                             for v in best)


def multilingual_for_bundle(layout: Layout, scope: str, method: str) -> list | None:
    """The scope's kept foreign off-topic values (``Pieces.multilingual``), when computed from its
    multilingual store as it is now: what its bundle carries (None: not kept, or stale)."""
    entry = read_piece(layout, scope, method).get(MULTILINGUAL)
    current = isinstance(entry, dict) and str(entry.get("inputs", "")).startswith(multilingual_inputs(layout, scope) + "|")
    best = entry.get("best") if current else None
    return best if valid_best(best, len(evalgen.UNANSWERABLE_FOREIGN)) and any(v is not None for v in best) else None
