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


def _counted(keys: np.ndarray, repeats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys in order, how many times each occurs) of ``keys`` each taken ``repeats`` times.

    A plain sort of the repeated keys: ``np.unique`` with an inverse sorts indirectly, which
    on a scope's million (n-gram, document) pairs took 8x as long."""
    flat = np.sort(np.repeat(keys, repeats) if repeats.max(initial=1) > 1 else keys)
    if not flat.size:
        return flat, np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    return flat[starts], np.diff(np.r_[starts, flat.size])


def _word_grams(words, lo: int, hi: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Every distinct word's ``char_wb`` n-grams, each word's in a row: (the distinct n-grams in
    alphabetical order, each word's n-gram count, the n-grams' ranks, word by word).

    The n-grams are computed on integer codes of the padded words' characters (a character's
    rank among the scope's, plus one): an n-gram is its characters' codes as the digits of a
    number, shorter n-grams padded with zeros, so numeric order is alphabetical order and no
    n-gram becomes a Python string until the distinct ones are written out. Where a scope has so
    many distinct characters that five digits overflow 64 bits (only CJK-heavy text), the same
    grams come from ``word_ngrams`` one string at a time.
    """
    from loci.query.lexical import word_ngrams

    padded = " " + "  ".join(words) + " "        # each word with a space either side
    points = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    alphabet, digit = np.unique(points, return_inverse=True)
    base = len(alphabet) + 1
    if base ** hi >= 2 ** 62:
        per_word = [word_ngrams(w, lo, hi) for w in words]
        names, rank = np.unique(np.array(list(chain.from_iterable(per_word))), return_inverse=True)
        return names.tolist(), np.fromiter(map(len, per_word), np.int64, len(per_word)), rank.reshape(-1)
    digit = digit.reshape(-1).astype(np.int64) + 1
    length = np.fromiter((len(w) + 2 for w in words), np.int64, len(words))   # padded lengths
    start = np.zeros(len(words), np.int64)
    np.cumsum(length[:-1], out=start[1:])
    owner_parts, code_parts = [], []
    for n in range(lo, hi + 1):
        # slices of length n inside each padded word; a word shorter than lo is one gram, whole
        size = np.where(length >= n, length - n + 1, (length < lo) & (n == lo))
        owner = np.repeat(np.arange(len(words)), size)
        at = np.repeat(start, size) + np.arange(len(owner)) - np.repeat(np.cumsum(size) - size, size)
        width = np.minimum(length[owner], n)
        code = np.zeros(len(owner), np.int64)
        for j in range(hi):
            code = code * base + np.where(j < width, digit[np.minimum(at + j, len(digit) - 1)], 0)
        owner_parts.append(owner)
        code_parts.append(code)
    owner, code = np.concatenate(owner_parts), np.concatenate(code_parts)
    order = np.argsort(owner, kind="stable")        # each word's grams together, words in id order
    distinct, rank = np.unique(code[order], return_inverse=True)
    digits = np.zeros((len(distinct), hi), np.int64)
    rest = distinct
    for j in range(hi - 1, -1, -1):
        rest, digits[:, j] = np.divmod(rest, base)
    chars = np.where(digits > 0, alphabet[np.maximum(digits - 1, 0)], 0).astype(np.uint32)
    names = chars.view(f"<U{hi}").reshape(-1).tolist()   # trailing zero code points drop off
    return names, np.bincount(owner, minlength=len(words)), rank.reshape(-1)


def fit_chargrams(texts: list[str], lo: int, hi: int):
    """Char ``char_wb`` TF-IDF (sublinear tf, smooth idf, l2 rows) as postings: (grams, ptr, docs,
    counts, norms). A posting's weight is ``(1 + log count) * idf[g] / norms[d]`` with
    ``idf[g] = log((1 + n) / (1 + df)) + 1`` and ``df = ptr[g+1] - ptr[g]``: the query side
    derives the rest, so only the counts are stored.

    Identical to scikit-learn's TfidfVectorizer(analyzer="char_wb") (a test holds them
    together) but computed word by word: a document's n-grams are the sum of its words'
    n-grams, so each distinct word is analysed once (``_word_grams``) and the (n-gram,
    document) counts come from expanding each (document, word, count) by the word's n-grams
    and counting the sorted keys. scikit-learn's own CountVectorizer + TfidfTransformer, even
    run the same word-by-word way, took 1.5 to 1.7x as long per scope as the slower version
    before this one (docs/decisions/footprint.md).
    """
    n_docs = len(texts)
    word_ids: dict[str, int] = {}
    # str.split() already folds runs of whitespace, as char_wb's normalisation does
    groups = [[word_ids.setdefault(w, len(word_ids)) for w in text.lower().split()] for text in texts]
    if not word_ids:
        return [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), \
            np.ones(n_docs, np.float32)
    names, g_len, rank = _word_grams(list(word_ids), lo, hi)   # dicts keep insertion (id) order
    g_start = np.zeros(len(g_len) + 1, np.int64)
    np.cumsum(g_len, out=g_start[1:])
    d_doc, d_word, d_count = _pairs(groups)          # word counts per document
    # expand every (document, word) by that word's n-grams (repeated ones included)
    span = g_len[d_word]
    rep = np.repeat(np.arange(len(d_word)), span)
    at = g_start[d_word][rep] + np.arange(len(rep)) - np.repeat(np.cumsum(span) - span, span)
    # key each (n-gram, document) by the n-gram's rank first: the sort that counts them
    # also leaves the postings in their stored order
    keys, counts = _counted(rank[at] * n_docs + d_doc[rep], d_count[rep].astype(np.int64))
    ranks, docs = keys // n_docs, keys % n_docs
    df = np.bincount(ranks, minlength=len(names))
    idf = (np.log((1 + n_docs) / (1 + df)) + 1.0).astype(np.float32)
    values = (1.0 + np.log(counts)) * idf[ranks]
    norms = np.sqrt(np.bincount(docs, weights=values * values, minlength=n_docs))
    norms[norms == 0] = 1.0
    ptr = np.zeros(len(names) + 1, np.int64)
    np.cumsum(df, out=ptr[1:])
    return names, ptr, docs.astype(np.int32), counts.astype(np.int32), norms.astype(np.float32)


def fit_and_write(path: Path, docs_tokens: list[list[str]], texts: list[str], lo: int, hi: int,
                  chunks=(), symbols=None, calls=None, vocab=()) -> None:
    """Fit both rankers over one scope's chunks and write the scope's query file to ``path``."""
    from loci_pipeline.query_store import write_scope_db

    write_scope_db(path, n_docs=len(texts), gram_range=(lo, hi), bm25=fit_bm25(docs_tokens),
                   grams=fit_chargrams(texts, lo, hi), chunks=chunks, symbols=symbols, calls=calls,
                   vocab=vocab)
