"""The encoder `loci embed` runs: a mean-pooled BERT goes to sentence-transformers (four times
faster than numpy on many texts), loaded on the first ``encode``; other models load as the query
side loads them (``loci.query.semantic.load_encoder``). Build-only: the query side encodes one
question at a time, in numpy, and never imports this.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from loci.kernel.config import Layout
from loci.query.semantic import (
    DEFAULT_MODEL, STATIC_ID, BertEncoder, Encoder, TransformerEncoder, is_static_model, load_encoder, model_id_for,
    model_path,
)


def load_build_encoder(name: str | None, layout: Layout) -> Encoder:
    """``load_encoder`` for the build: a supported BERT becomes a ``DeferredEncoder`` over
    sentence-transformers when it is installed (numpy for small jobs); anything else, and a BERT
    without sentence-transformers, is the query side's encoder."""
    from loci.query.bert_numpy import is_supported

    name = DEFAULT_MODEL if name is None else name
    model_id = model_id_for(name)
    if model_id != STATIC_ID:
        path = model_path(name)
        if path.exists() and not is_static_model(path) and is_supported(path) and has_sentence_transformers():
            return DeferredEncoder(lambda: TransformerEncoder(str(path), model_id), model_id, bert_width(path),
                                   small=lambda: BertEncoder(path, model_id))
    return load_encoder(name, layout)


class DeferredEncoder:
    """The build side's encoder, loaded on its first ``encode``: a `loci embed` with nothing new
    to encode never pays the 5 to 8 s of importing torch, and a job announced (``expect``) as a
    few texts goes to ``small`` (the same network in numpy: the same vectors, no torch) unless
    the big model is loaded already."""

    batch_size = 32
    SMALL_JOB = 20
    """Texts up to which numpy is quicker than loading torch: `python bench/build_micro.py --home H`
    (idle, 14:20 UTC) encodes flask's chunks at 5.7 texts/s in numpy; torch, loaded without
    transformers, takes 4.6 s for 64 texts and 5.5 s for 128, load included: they cross near 20."""

    def __init__(self, load, model_id: str, dim: int, small=None):
        self._load, self._small = load, small
        self._big = self._little = None
        self._use_small = False
        self.model_id, self.dim = model_id, dim

    def expect(self, n_texts: int) -> None:
        """How many texts the next job holds."""
        self._use_small = self._small is not None and self._big is None and n_texts <= self.SMALL_JOB

    def encode(self, texts: list[str]) -> np.ndarray:
        if self._use_small:
            if self._little is None:
                self._little = self._small()
            return self._little.encode(texts)
        if self._big is None:
            self._big = self._load()
        return self._big.encode(texts)


def bert_width(path: Path) -> int:
    return int(json.loads((Path(path) / "config.json").read_text())["hidden_size"])


def has_sentence_transformers() -> bool:
    import importlib.util

    return importlib.util.find_spec("sentence_transformers") is not None
