"""Episode search inside one scope: BM25 + char-gram TF-IDF (+ vectors when present), fused.

Each ranker's scores are scaled to [0, 1] and fused with weights renormalised
over the rankers that scored. A passage is returned only when it is lexically
grounded (or semantically confident above the scope's floor), so a scope can
return nothing. ``gate=False`` (``--scope``) skips that gate.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from loci.config import DEFAULT_PARAMS, Params
from loci.lexical import LexicalIndex

RANKER_WEIGHTS = {"bm25": 0.55, "grams": 0.30, "semantic": 0.45}
# how much a passage from each kind of path counts, relative to shipped code and docs
PATH_KIND_FACTOR = {"source": 1.0, "docs": 1.0, "test": 0.6, "fixture": 0.4, "example": 0.8,
                    "vendored": 0.3, "generated": 0.4}
# project-level passages (README, docs, CONTRIBUTING, changelog, manifests) for questions
# that point at the project itself ("how do I run the tests here?")
META_KIND_FACTOR = {"readme": 1.5, "doc": 1.3, "note": 1.5, "commit": 0.7, "docstring": 0.7, "comment": 0.6}
BM25_GROUNDED = 1.5      # a raw BM25 score at least this high counts as grounded
GRAMS_GROUNDED = 0.22    # or a char-gram cosine at least this high


@dataclass
class EpisodeHit:
    text: str
    source: str
    line: int
    kind: str
    score: float
    heading: str = ""

    def to_json(self) -> dict:
        return {"text": self.text, "source": self.source, "line": self.line,
                "kind": self.kind, "score": round(self.score, 4)}


def _scaled(x: np.ndarray | None) -> np.ndarray | None:
    if x is None:
        return None
    top = float(x.max()) if x.size else 0.0
    return x / top if top > 0 else None


def fuse(parts: dict[str, np.ndarray | None]) -> np.ndarray | None:
    """Weighted sum of the scaled rankers that produced scores, renormalised over them."""
    present = {k: v for k, v in parts.items() if v is not None}
    if not present:
        return None
    total_w = sum(RANKER_WEIGHTS[k] for k in present)
    out = np.zeros_like(next(iter(present.values())), dtype=np.float32)
    for k, v in present.items():
        out += (RANKER_WEIGHTS[k] / total_w) * v
    return out


def search_scope(question: str, q_tokens: Sequence[str], lex: LexicalIndex, meta, *, k: int = 5,
                 gate: bool = True, prefer_project_docs: bool = False,
                 semantic: np.ndarray | None = None, semantic_floor: float | None = None,
                 params: Params = DEFAULT_PARAMS) -> list[tuple[int, float]]:
    """Rank one scope's chunks; return (chunk row, score) pairs, best first.

    ``meta`` is the chunk table's (kind, path_kind) columns as two lists.
    """
    held = [t for t in q_tokens if lex.holds(t)]
    bm25 = lex.bm25_scores(held) if held else None
    grams = lex.gram_scores(question)
    fused = fuse({"bm25": _scaled(bm25), "grams": _scaled(grams), "semantic": _scaled(semantic)})
    if fused is None:
        return []
    kinds, path_kinds = meta
    factor = np.asarray([PATH_KIND_FACTOR.get(pk, 1.0) for pk in path_kinds], dtype=np.float32)
    if prefer_project_docs:
        factor *= np.asarray([META_KIND_FACTOR.get(kd, 1.0) for kd in kinds], dtype=np.float32)
    fused = fused * factor
    if gate:
        grounded = np.zeros(lex.n_docs, dtype=bool)
        if bm25 is not None:
            grounded |= bm25 >= BM25_GROUNDED
        if grams is not None:
            grounded |= grams >= GRAMS_GROUNDED
        if semantic is not None and semantic_floor is not None:
            grounded |= semantic >= semantic_floor
        fused = np.where(grounded, fused, 0.0)
    order = np.argsort(-fused, kind="stable")[: max(k * 3, k)]
    return [(int(i), float(fused[i])) for i in order if fused[i] > 0][: k * 3]
