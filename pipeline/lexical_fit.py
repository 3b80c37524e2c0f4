"""Fit the lexical rankers of one scope at index time and store them as arrays.

BM25 weights are precomputed per posting (rank-bm25's Okapi idf and
parameters); char-gram TF-IDF reproduces scikit-learn's char_wb vectorizer
(a test holds them together) word by word, which is several times faster; both are stored as
sorted-term inverted indexes that ``loci.lexical`` scores with numpy alone.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np


K1, B = 1.5, 0.75
_WS = re.compile(r"\s\s+")


def _csc_postings(matrix, terms_by_col: np.ndarray):
    """A docs x terms sparse matrix as (sorted terms, ptr, docs, weights) postings."""
    order = np.argsort(terms_by_col.astype(str), kind="stable")
    x = matrix.tocsc()[:, order]
    x.sort_indices()
    return (terms_by_col[order].tolist(), x.indptr.astype(np.int64), x.indices.astype(np.int32),
            x.data.astype(np.float32))


def _ids(items: dict[str, int]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    for key, i in items.items():
        out[i] = key
    return out


def fit_bm25(docs_tokens: list[list[str]]):
    """Per-posting BM25 weights; rank-bm25 supplies the idf (with its epsilon floor)."""
    import scipy.sparse as sp
    from rank_bm25 import BM25Okapi

    nonempty = [t if t else ["\x00"] for t in docs_tokens]
    model = BM25Okapi(nonempty, k1=K1, b=B)
    term_ids: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for d, toks in enumerate(docs_tokens):
        ids = [term_ids.setdefault(t, len(term_ids)) for t in toks]
        cols.extend(ids)
        rows.extend([d] * len(ids))
    if not term_ids:
        return [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32)
    tf = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(docs_tokens), len(term_ids)))
    tf.sum_duplicates()
    terms = _ids(term_ids)
    idf = np.asarray([model.idf[t] for t in terms], dtype=np.float64)
    dl = np.asarray(model.doc_len, dtype=np.float64)
    norm = K1 * (1 - B + B * dl / (model.avgdl or 1.0))
    row_of = np.repeat(np.arange(tf.shape[0]), np.diff(tf.indptr))
    tf.data = idf[tf.indices] * tf.data * (K1 + 1) / (tf.data + norm[row_of])
    return _csc_postings(tf, terms)


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
    rows: list[int] = []
    cols: list[int] = []
    for d, text in enumerate(texts):
        # str.split() already folds runs of whitespace, as char_wb's normalisation does
        ids = [word_ids.setdefault(w, len(word_ids)) for w in text.lower().split()]
        cols.extend(ids)
        rows.extend([d] * len(ids))
    if not word_ids:
        return empty
    vals = np.ones(len(cols), np.float64)
    gram_ids: dict[str, int] = {}
    g_rows: list[int] = []
    g_cols: list[int] = []
    for word, w in word_ids.items():
        grams = char_wb_ngrams(word, lo, hi)
        g_cols.extend([gram_ids.setdefault(g, len(gram_ids)) for g in grams])
        g_rows.extend([w] * len(grams))
    g_vals = np.ones(len(g_cols), np.float64)
    # duplicate (row, col) pairs are summed: these are the counts
    docs_words = sp.csr_matrix((vals, (rows, cols)), shape=(len(texts), len(word_ids)))
    words_grams = sp.csr_matrix((g_vals, (g_rows, g_cols)), shape=(len(word_ids), len(gram_ids)))
    counts = (docs_words @ words_grams).tocsr()
    counts.sum_duplicates()
    n_docs = len(texts)
    df = np.bincount(counts.indices, minlength=len(gram_ids))
    idf = (np.log((1 + n_docs) / (1 + df)) + 1.0).astype(np.float32)
    counts.data = (1.0 + np.log(counts.data)) * idf[counts.indices]
    norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    counts = sp.diags(1.0 / norms) @ counts
    grams = _ids(gram_ids)
    terms, ptr, docs, weights = _csc_postings(counts, grams)
    return terms, ptr, docs, weights, idf[np.argsort(grams.astype(str), kind="stable")]


def fit_and_write(path: Path, docs_tokens: list[list[str]], texts: list[str], lo: int, hi: int,
                  chunks=(), symbols=None, calls=None) -> None:
    """Fit both rankers over one scope's chunks and write the scope's query file to ``path``."""
    from pipeline.query_store import write_scope_db

    write_scope_db(path, n_docs=len(texts), gram_range=(lo, hi), bm25=fit_bm25(docs_tokens),
                   grams=fit_chargrams(texts, lo, hi), chunks=chunks, symbols=symbols, calls=calls)
