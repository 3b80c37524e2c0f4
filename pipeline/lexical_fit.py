"""Fit the lexical rankers of one scope at index time and store them as arrays.

BM25 weights are precomputed per posting (rank-bm25's Okapi idf and
parameters), char-gram TF-IDF comes from scikit-learn; both are stored as
sorted-term inverted indexes that ``loci.lexical`` scores with numpy alone.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from pipeline.atomic import write_with

K1, B = 1.5, 0.75


def _terms_blob(terms: Sequence[str]) -> np.ndarray:
    return np.frombuffer("\n".join(terms).encode("utf-8"), dtype=np.uint8)


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
    """scikit-learn char_wb TF-IDF (sublinear tf, l2 rows), as a term -> postings index."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not any(t.strip() for t in texts):
        return [], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros(0, np.float32)
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(lo, hi), sublinear_tf=True,
                          dtype=np.float32, lowercase=True)
    x = vec.fit_transform(texts)
    terms_by_col = np.empty(len(vec.vocabulary_), dtype=object)
    for gram, col in vec.vocabulary_.items():
        terms_by_col[col] = gram
    order = np.argsort(terms_by_col.astype(str), kind="stable")
    x = x.tocsc()[:, order]
    x.sort_indices()
    idf = vec.idf_.astype(np.float32)[order]
    return (terms_by_col[order].tolist(), x.indptr.astype(np.int64), x.indices.astype(np.int32),
            x.data.astype(np.float32), idf)


def fit_and_write(path: Path, docs_tokens: list[list[str]], texts: list[str], lo: int, hi: int) -> None:
    """Fit both rankers over one scope's chunks and write them atomically to ``path``."""
    bt, bp, bd, bw = fit_bm25(docs_tokens)
    gt, gp, gd, gw, gidf = fit_chargrams(texts, lo, hi)
    arrays = dict(
        n_docs=np.asarray(len(texts)), gram_range=np.asarray([lo, hi]),
        bm25_terms=_terms_blob(bt), bm25_ptr=bp, bm25_docs=bd, bm25_w=bw,
        gram_terms=_terms_blob(gt), gram_ptr=gp, gram_docs=gd, gram_w=gw, gram_idf=gidf,
    )

    def writer(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)

    write_with(path, writer)
