"""Fit the lexical rankers of one scope at index time and store them as arrays.

BM25 uses rank-bm25's Okapi idf and parameters; char-gram TF-IDF is scikit-learn's
char_wb vectorizer and TF-IDF transformer (a test holds the query side to both).
Both are stored as sorted-term inverted indexes of small integer counts plus
per-term and per-document factors, which ``loci.query.lexical`` scores in pure Python.
"""
from __future__ import annotations

from itertools import chain
from pathlib import Path

import numpy as np


K1, B = 1.5, 0.75


def _ids(items: dict[str, int]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    for key, i in items.items():
        out[i] = key
    return out


def _alphabetical(names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order that sorts ``names``, each name's rank in that order)."""
    alpha = np.argsort(names.astype(str), kind="stable")
    rank = np.empty_like(alpha)
    rank[alpha] = np.arange(len(alpha))
    return alpha, rank


def fit_bm25(docs_tokens: list[list[str]]):
    """BM25 postings as (terms, ptr, docs, tf, scale, norm): a posting's weight is
    ``scale[t] * tf / (tf + norm[d])`` with ``scale = idf * (K1 + 1)``; rank-bm25 supplies the idf
    (with its epsilon floor) and the document lengths behind ``norm``."""
    from rank_bm25 import BM25Okapi

    term_ids: dict[str, int] = {}
    groups = [[term_ids.setdefault(t, len(term_ids)) for t in toks] for toks in docs_tokens]
    n_docs = len(docs_tokens)
    if not term_ids:
        return [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), \
            np.zeros(0, np.float32), np.ones(n_docs, np.float32)
    model = BM25Okapi([t if t else ["\x00"] for t in docs_tokens], k1=K1, b=B)
    terms = _ids(term_ids)
    alpha, rank = _alphabetical(terms)
    idf = np.asarray([model.idf[t] for t in terms[alpha]], dtype=np.float64)
    lengths = np.fromiter((len(g) for g in groups), np.int64, n_docs)
    rows = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    cols = np.fromiter(chain.from_iterable(groups), np.int64, int(lengths.sum()))
    # one sort, by term rank then document: aggregates tf and orders the postings
    keys, tf = np.unique(rank[cols] * n_docs + rows, return_counts=True)
    ranks, docs = keys // n_docs, keys % n_docs
    dl = np.asarray(model.doc_len, dtype=np.float64)
    norm = K1 * (1 - B + B * dl / (model.avgdl or 1.0))
    ptr = np.zeros(len(alpha) + 1, np.int64)
    np.cumsum(np.bincount(ranks, minlength=len(alpha)), out=ptr[1:])
    return terms[alpha].tolist(), ptr, docs.astype(np.int32), tf.astype(np.int32), \
        (idf * (K1 + 1)).astype(np.float32), norm.astype(np.float32)


def fit_chargrams(texts: list[str], lo: int, hi: int):
    """Char ``char_wb`` TF-IDF (sublinear tf, smooth idf, l2 rows) as postings: (grams, ptr, docs,
    counts, norms). A posting's weight is ``(1 + log count) * idf[g] / norms[d]`` with
    ``idf[g] = log((1 + n) / (1 + df)) + 1`` and ``df = ptr[g+1] - ptr[g]``: the query side
    derives the rest, so only the counts are stored.

    scikit-learn does the fit: ``CountVectorizer(analyzer="char_wb")`` over the distinct words
    (a document's n-grams are the sum of its words', so each word is analysed once), a
    document x word count matrix times that word x n-gram one, and ``TfidfTransformer`` for
    the weights behind the norms. Columns come out in alphabetical order: the stored order.
    """
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    n_docs = len(texts)
    lowered = [t.lower() for t in texts]
    if not any(t.split() for t in lowered):
        return [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), np.ones(n_docs, np.float32)
    # str.split() already folds runs of whitespace, as char_wb's normalisation does
    by_word = CountVectorizer(analyzer=str.split, lowercase=False, dtype=np.int32)
    doc_words = by_word.fit_transform(lowered)
    by_gram = CountVectorizer(analyzer="char_wb", ngram_range=(lo, hi), lowercase=False, dtype=np.int32)
    word_grams = by_gram.fit_transform(by_word.get_feature_names_out())
    counts = (doc_words @ word_grams).tocsc()
    counts.sort_indices()
    weighted = TfidfTransformer(norm=None, sublinear_tf=True, smooth_idf=True).fit_transform(counts)
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return (by_gram.get_feature_names_out().tolist(), counts.indptr.astype(np.int64),
            counts.indices.astype(np.int32), counts.data.astype(np.int32), norms.astype(np.float32))


def fit_and_write(path: Path, docs_tokens: list[list[str]], texts: list[str], lo: int, hi: int,
                  chunks=(), symbols=None, calls=None, vocab=()) -> None:
    """Fit both rankers over one scope's chunks and write the scope's query file to ``path``."""
    from pipeline.query_store import write_scope_db

    write_scope_db(path, n_docs=len(texts), gram_range=(lo, hi), bm25=fit_bm25(docs_tokens),
                   grams=fit_chargrams(texts, lo, hi), chunks=chunks, symbols=symbols, calls=calls,
                   vocab=vocab)
