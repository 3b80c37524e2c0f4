"""Fit the lexical rankers of one scope at index time and store them as arrays.

BM25 weights are precomputed per posting (rank-bm25's Okapi idf and
parameters); char-gram TF-IDF reproduces scikit-learn's char_wb vectorizer
(a test holds them together) word by word, which is several times faster; both are stored as
sorted-term inverted indexes that ``loci.lexical`` scores with numpy alone.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np

from pipeline.atomic import write_with

K1, B = 1.5, 0.75
_WS = re.compile(r"\s\s+")


def _postings_from_columns(terms: list[str], cols: dict[str, tuple[list[int], list[float]]]):
    order = sorted(range(len(terms)), key=terms.__getitem__)
    ptr = [0]
    docs: list[int] = []
    weights: list[float] = []
    for i in order:
        d, w = cols[terms[i]]
        docs.extend(d)
        weights.extend(w)
        ptr.append(len(docs))
    return ([terms[i] for i in order], np.asarray(ptr, np.int64),
            np.asarray(docs, np.int32), np.asarray(weights, np.float32))


def fit_bm25(docs_tokens: list[list[str]]):
    """Per-posting BM25 weights; rank-bm25 supplies the idf (with its epsilon floor)."""
    from rank_bm25 import BM25Okapi

    nonempty = [t if t else ["\x00"] for t in docs_tokens]
    model = BM25Okapi(nonempty, k1=K1, b=B)
    avgdl = model.avgdl or 1.0
    cols: dict[str, tuple[list[int], list[float]]] = {}
    for d, (freqs, dl) in enumerate(zip(model.doc_freqs, model.doc_len)):
        denom_len = K1 * (1 - B + B * dl / avgdl)
        for term, tf in freqs.items():
            if term == "\x00":
                continue
            w = model.idf[term] * tf * (K1 + 1) / (tf + denom_len)
            col = cols.setdefault(term, ([], []))
            col[0].append(d)
            col[1].append(w)
    return _postings_from_columns(list(cols), cols)


def fit_chargrams(texts: list[str], lo: int, hi: int):
    """Char ``char_wb`` TF-IDF (sublinear tf, smooth idf, l2 rows), as a term -> postings index.

    Identical to scikit-learn's TfidfVectorizer(analyzer="char_wb") but computed word by
    word: a document's n-grams are the sum of its words' n-grams, so each distinct word
    is analysed once and a sparse product gives the document x n-gram counts.
    """
    import scipy.sparse as sp

    from loci.lexical import char_wb_ngrams

    empty = ([], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32),
             np.zeros(0, np.float32))
    word_ids: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for d, text in enumerate(texts):
        for word, n in Counter(_WS.sub(" ", text.lower()).split()).items():
            rows.append(d)
            cols.append(word_ids.setdefault(word, len(word_ids)))
            vals.append(n)
    if not word_ids:
        return empty
    gram_ids: dict[str, int] = {}
    g_rows, g_cols, g_vals = [], [], []
    for word, w in word_ids.items():
        for gram, n in Counter(char_wb_ngrams(word, lo, hi)).items():
            g_rows.append(w)
            g_cols.append(gram_ids.setdefault(gram, len(gram_ids)))
            g_vals.append(n)
    docs_words = sp.csr_matrix((np.asarray(vals, np.float64), (rows, cols)),
                               shape=(len(texts), len(word_ids)))
    words_grams = sp.csr_matrix((np.asarray(g_vals, np.float64), (g_rows, g_cols)),
                                shape=(len(word_ids), len(gram_ids)))
    counts = (docs_words @ words_grams).tocsr()
    counts.sum_duplicates()
    n_docs = len(texts)
    df = np.bincount(counts.indices, minlength=len(gram_ids))
    idf = (np.log((1 + n_docs) / (1 + df)) + 1.0).astype(np.float32)
    counts.data = (1.0 + np.log(counts.data)) * idf[counts.indices]
    norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    counts = sp.diags(1.0 / norms) @ counts
    grams = np.empty(len(gram_ids), dtype=object)
    for gram, i in gram_ids.items():
        grams[i] = gram
    order = np.argsort(grams.astype(str), kind="stable")
    x = counts.tocsc()[:, order]
    x.sort_indices()
    return (grams[order].tolist(), x.indptr.astype(np.int64), x.indices.astype(np.int32),
            x.data.astype(np.float32), idf[order])


def fit_and_write(path: Path, docs_tokens: list[list[str]], texts: list[str], lo: int, hi: int,
                  chunks=(), symbols=None, calls=None) -> None:
    """Fit both rankers over one scope's chunks and write the scope's query file to ``path``."""
    from pipeline.query_store import write_scope_db

    write_scope_db(path, n_docs=len(texts), gram_range=(lo, hi), bm25=fit_bm25(docs_tokens),
                   grams=fit_chargrams(texts, lo, hi), chunks=chunks, symbols=symbols, calls=calls)
