"""Fit the lexical rankers of one scope at index time and store them as arrays.

BM25 uses rank-bm25's Okapi idf and parameters; char-gram TF-IDF reproduces
scikit-learn's char_wb vectorizer word by word (a test holds the query side to both).
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


def _pairs(groups: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, count) of each distinct (row index, id) pair, rows in order."""
    lengths = np.fromiter((len(g) for g in groups), np.int64, len(groups))
    rows = np.repeat(np.arange(len(groups), dtype=np.int64), lengths)
    cols = np.fromiter(chain.from_iterable(groups), np.int64, int(lengths.sum()))
    width = int(cols.max()) + 1 if cols.size else 1
    keys, counts = np.unique(rows * width + cols, return_counts=True)
    return keys // width, keys % width, counts.astype(np.float64)


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

    Identical to scikit-learn's TfidfVectorizer(analyzer="char_wb") (a test holds them
    together) but computed word by word: a document's n-grams are the sum of its words'
    n-grams, so each distinct word is analysed once and the document x n-gram counts come
    from joining the two tables. scikit-learn's own CountVectorizer + TfidfTransformer, even
    run the same word-by-word way, took 1.5 to 1.7x as long per scope here
    (docs/decisions/footprint.md).
    """
    from loci.query.lexical import char_wb_ngrams

    empty = ([], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32),
             np.ones(len(texts), np.float32))
    word_ids: dict[str, int] = {}
    # str.split() already folds runs of whitespace, as char_wb's normalisation does
    groups = [[word_ids.setdefault(w, len(word_ids)) for w in text.lower().split()] for text in texts]
    if not word_ids:
        return empty
    gram_ids: dict[str, int] = {}
    word_grams = [[gram_ids.setdefault(g, len(gram_ids)) for g in char_wb_ngrams(w, lo, hi)]
                  for w in _ids(word_ids)]
    d_doc, d_word, d_count = _pairs(groups)          # word counts per document
    g_word, g_gram, g_count = _pairs(word_grams)     # n-gram counts per word, words in order
    g_start = np.zeros(len(word_ids) + 1, np.int64)
    np.cumsum(np.bincount(g_word, minlength=len(word_ids)), out=g_start[1:])
    # expand every (document, word) by that word's n-grams
    span = g_start[d_word + 1] - g_start[d_word]
    rep = np.repeat(np.arange(len(d_word)), span)
    offset = np.arange(len(rep)) - np.repeat(np.cumsum(span) - span, span)
    at = g_start[d_word][rep] + offset
    # key each (n-gram, document) by the n-gram's alphabetical rank first: the one sort
    # that aggregates the counts also leaves the postings in their stored order
    names = _ids(gram_ids)
    alpha, rank = _alphabetical(names)
    n_docs = len(texts)
    keys, inverse = np.unique(rank[g_gram[at]] * n_docs + d_doc[rep], return_inverse=True)
    counts = np.bincount(inverse, weights=d_count[rep] * g_count[at])
    ranks, docs = keys // n_docs, keys % n_docs
    df = np.bincount(ranks, minlength=len(alpha))
    idf = (np.log((1 + n_docs) / (1 + df)) + 1.0).astype(np.float32)
    values = (1.0 + np.log(counts)) * idf[ranks]
    norms = np.sqrt(np.bincount(docs, weights=values * values, minlength=n_docs))
    norms[norms == 0] = 1.0
    ptr = np.zeros(len(alpha) + 1, np.int64)
    np.cumsum(df, out=ptr[1:])
    return (names[alpha].tolist(), ptr, docs.astype(np.int32), np.rint(counts).astype(np.int32),
            norms.astype(np.float32))


def fit_and_write(path: Path, docs_tokens: list[list[str]], texts: list[str], lo: int, hi: int,
                  chunks=(), symbols=None, calls=None, vocab=()) -> None:
    """Fit both rankers over one scope's chunks and write the scope's query file to ``path``."""
    from pipeline.query_store import write_scope_db

    write_scope_db(path, n_docs=len(texts), gram_range=(lo, hi), bm25=fit_bm25(docs_tokens),
                   grams=fit_chargrams(texts, lo, hi), chunks=chunks, symbols=symbols, calls=calls,
                   vocab=vocab)
