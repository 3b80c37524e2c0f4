"""Query-time lexical rankers: BM25 and char 3-5 gram TF-IDF, scored with numpy.

The fit happens at index time (pipeline/lexical_fit.py); this module only
loads the stored arrays and scores a query, so a one-shot command never
imports scikit-learn or scipy. ``char_wb_ngrams`` reproduces scikit-learn's
``char_wb`` analyzer exactly (a test holds the two together).
"""
from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loci.tokens import tokenize

_WS = re.compile(r"\s\s+")


def char_wb_ngrams(text: str, lo: int = 3, hi: int = 5) -> list[str]:
    """Character n-grams inside word boundaries, padded with one space each side."""
    text = _WS.sub(" ", text.lower())
    grams: list[str] = []
    for word in text.split():
        w = f" {word} "
        n_w = len(w)
        for n in range(lo, hi + 1):
            offset = 0
            grams.append(w[offset:offset + n])
            while offset + n < n_w:
                offset += 1
                grams.append(w[offset:offset + n])
            if offset == 0:
                break
    return grams


@dataclass
class Postings:
    """A term -> (doc ids, weights) inverted index over one scope's chunks."""

    terms: list[str]        # sorted
    ptr: np.ndarray         # int64, len(terms)+1
    docs: np.ndarray        # int32
    weights: np.ndarray     # float32

    def lookup(self, term: str) -> int:
        i = bisect_left(self.terms, term)
        return i if i < len(self.terms) and self.terms[i] == term else -1

    def accumulate(self, term_weights: dict[int, float], n_docs: int) -> np.ndarray:
        scores = np.zeros(n_docs, dtype=np.float32)
        for i, w in term_weights.items():
            a, b = self.ptr[i], self.ptr[i + 1]
            np.add.at(scores, self.docs[a:b], self.weights[a:b] * np.float32(w))
        return scores


@dataclass
class LexicalIndex:
    n_docs: int
    bm25: Postings
    grams: Postings
    gram_idf: np.ndarray    # float32, aligned with grams.terms
    lo: int = 3
    hi: int = 5

    def holds(self, token: str) -> bool:
        return self.bm25.lookup(token) >= 0

    def bm25_scores(self, tokens: list[str]) -> np.ndarray | None:
        ids = {i: 1.0 for t in set(tokens) if (i := self.bm25.lookup(t)) >= 0}
        if not ids:
            return None
        return self.bm25.accumulate(ids, self.n_docs)

    def gram_scores(self, text: str) -> np.ndarray | None:
        counts = Counter(char_wb_ngrams(text, self.lo, self.hi))
        q: dict[int, float] = {}
        for gram, tf in counts.items():
            i = self.grams.lookup(gram)
            if i >= 0:
                q[i] = (1.0 + math.log(tf)) * float(self.gram_idf[i])
        if not q:
            return None
        # the query's norm counts grams the scope never saw too (as scikit-learn would not:
        # unknown grams have no column), so normalise over known ones only, like transform()
        norm = math.sqrt(sum(v * v for v in q.values())) or 1.0
        return self.grams.accumulate({i: v / norm for i, v in q.items()}, self.n_docs)


def _split_terms(blob: np.ndarray) -> list[str]:
    raw = bytes(blob).decode("utf-8")
    return raw.split("\n") if raw else []


def load_lexical(path: Path) -> LexicalIndex | None:
    """Load one scope's fitted rankers; None when the file is absent."""
    try:
        z = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    bm25 = Postings(_split_terms(z["bm25_terms"]), z["bm25_ptr"], z["bm25_docs"], z["bm25_w"])
    grams = Postings(_split_terms(z["gram_terms"]), z["gram_ptr"], z["gram_docs"], z["gram_w"])
    lo, hi = (int(x) for x in z["gram_range"])
    return LexicalIndex(int(z["n_docs"]), bm25, grams, z["gram_idf"], lo, hi)


def query_tokens(question: str) -> list[str]:
    return tokenize(question)
