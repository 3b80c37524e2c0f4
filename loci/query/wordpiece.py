"""BERT's uncased WordPiece tokenizer in pure Python, for a one-shot question.

It gives the ids the ``tokenizers`` library gives for a ``tokenizer.json`` made of
a BertNormalizer (clean text, Chinese characters spaced, accents stripped, lower
case), the BertPreTokenizer, a WordPiece model and the ``[CLS] A [SEP]`` template,
for texts written in the blocks ``SAFE`` lists (Latin, Greek, Cyrillic, punctuation,
symbols, CJK and its full-width forms, Hangul, emoji): elsewhere the library's older Unicode tables and Python's disagree
on a few hundred characters, so ``encode`` returns None and the caller uses the library,
as it does when ``load`` returns None for any other configuration.
Importing that library and building its tokenizer cost a one-shot `route` about
15 MB of its 60 MB budget (docs/decisions/footprint.md); ``tests/test_wordpiece.py``
holds the two to the same ids.
"""
from __future__ import annotations

import json
import unicodedata
from pathlib import Path

_CHINESE = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
            (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
SAFE = ((0, 0x600), (0x2000, 0x2E00), (0x2E80, 0xA800), (0xAA00, 0xD800), (0xE000, 0xF900),
        (0xFB00, 0x10000), (0x1F000, 0x20000))
"""Code point ranges [start, end) where every character tokenizes as the library does."""
_OTHER = {"Cc", "Cf", "Cs", "Co"}   # not Cn: the library keeps an unassigned character
_PUNCT = {"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"}
# Rust's char::is_whitespace: the Unicode White_Space property
_WHITE = {*"\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000", *map(chr, range(0x2000, 0x200B))}


def _is_chinese(cp: int) -> bool:
    return any(a <= cp <= b for a, b in _CHINESE)


def _is_punct(c: str) -> bool:
    return (c.isascii() and not c.isalnum() and 33 <= ord(c) <= 126) or unicodedata.category(c) in _PUNCT


class WordPiece:
    """``encode(text)`` -> token ids with ``[CLS]``/``[SEP]``, truncated to ``max_length``."""

    def __init__(self, vocab: dict[str, int], specials: dict[str, int], unk: str, prefix: str,
                 max_chars: int, cls: str, sep: str, max_length: int):
        self.vocab, self.specials = vocab, specials
        self.unk, self.prefix, self.max_chars = vocab[unk], prefix, max_chars
        self.cls, self.sep, self.max_length = vocab[cls], vocab[sep], max_length
        self._norm: dict[str, str] = {}

    def _normal(self, c: str) -> str:
        """One character through the BertNormalizer (cached: texts reuse few characters)."""
        out = self._norm.get(c)
        if out is None:
            cp = ord(c)
            if cp == 0 or cp == 0xFFFD or (c not in "\t\n\r" and unicodedata.category(c) in _OTHER):
                out = ""
            elif c in _WHITE:
                out = " "
            elif _is_chinese(cp):
                out = f" {c} "
            else:
                out = "".join(ch for ch in unicodedata.normalize("NFD", c)
                              if unicodedata.category(ch) != "Mn")
                out = "".join(ch.lower() for ch in out)
            self._norm[c] = out
        return out

    def _words(self, text: str) -> list[str]:
        words, word = [], []
        for c in "".join(self._normal(c) for c in text):
            if c in _WHITE:
                if word:
                    words.append("".join(word))
                    word = []
            elif _is_punct(c):
                if word:
                    words.append("".join(word))
                    word = []
                words.append(c)
            else:
                word.append(c)
        if word:
            words.append("".join(word))
        return words

    def _pieces(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk]
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                got = self.vocab.get(piece)
                if got is not None:
                    out.append(got)
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return out

    def ids(self, text: str) -> list[int]:
        """The text's ids without the template (special tokens written in it kept whole)."""
        out: list[int] = []
        rest = text
        while rest:
            hits = [(rest.find(s), s) for s in self.specials if s in rest]
            at, special = min(hits) if hits else (len(rest), "")
            for word in self._words(rest[:at]):
                out.extend(self._pieces(word))
            if special:
                out.append(self.specials[special])
            rest = rest[at + len(special):]
        return out

    def encode(self, text: str) -> list[int] | None:
        """The ids the library gives, or None when ``text`` has a character outside ``SAFE``."""
        if not text.isascii() and not all(any(a <= ord(c) < b for a, b in SAFE) for c in set(text)):
            return None
        return [self.cls, *self.ids(text)[:max(self.max_length - 2, 0)], self.sep]


def load(path: Path, max_length: int) -> WordPiece | None:
    """The tokenizer of ``path`` (a tokenizer.json) when it is the uncased BERT one, else None."""
    try:
        cfg = json.loads(Path(path).read_text(encoding="utf-8"))
        norm, pre, model, post = cfg["normalizer"], cfg["pre_tokenizer"], cfg["model"], cfg["post_processor"]
        if not (norm.get("type") == "BertNormalizer" and norm.get("clean_text") is True
                and norm.get("handle_chinese_chars") is True and norm.get("lowercase") is True
                and norm.get("strip_accents") in (None, True) and pre.get("type") == "BertPreTokenizer"
                and model.get("type") == "WordPiece" and post.get("type") == "TemplateProcessing"):
            return None
        single = post["single"]
        if [list(x) for x in single] != [["SpecialToken"], ["Sequence"], ["SpecialToken"]]:
            return None
        cls, sep = single[0]["SpecialToken"]["id"], single[2]["SpecialToken"]["id"]
        specials = {t["content"]: t["id"] for t in cfg.get("added_tokens") or ()}
        if any(t.get("normalized") or t.get("single_word") or t.get("lstrip") or t.get("rstrip")
               for t in cfg.get("added_tokens") or ()):
            return None
        return WordPiece(model["vocab"], specials, model["unk_token"], model["continuing_subword_prefix"],
                         int(model["max_input_chars_per_word"]), cls, sep, max_length)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def load_from_vocab(folder: Path, max_length: int) -> WordPiece | None:
    """The same tokenizer from a model folder's ``vocab.txt`` and ``tokenizer_config.json`` (a
    BertTokenizer: uncased, Chinese characters spaced, accents stripped), without parsing the
    700 KB ``tokenizer.json``: about a third of the time. Only for a folder whose two descriptions are known
    to agree (the packaged model: ``tests/test_wordpiece.py`` holds them equal); else None."""
    folder = Path(folder)
    try:
        cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        if not (cfg.get("tokenizer_class") == "BertTokenizer" and cfg.get("do_lower_case") is True
                and cfg.get("tokenize_chinese_chars", True) is True and cfg.get("strip_accents") in (None, True)
                and cfg.get("do_basic_tokenize", True) is True and not cfg.get("never_split")):
            return None
        tokens = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        vocab = dict(zip(tokens, range(len(tokens))))
        names = ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
        specials = {cfg[k]: vocab[cfg[k]] for k in names if cfg.get(k)}
        return WordPiece(vocab, specials, cfg["unk_token"], "##", 100, cfg["cls_token"], cfg["sep_token"],
                         max_length)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None

