"""Query-time lexical rankers over one scope's SQLite query file, in pure Python.

BM25 and char 3-5 gram TF-IDF were fitted at index time (pipeline/lexical_fit.py)
and stored as per-term postings; a query fetches only its own terms' postings
and accumulates sparse scores, so a one-shot command imports neither
scikit-learn nor numpy. ``char_wb_ngrams`` reproduces scikit-learn's ``char_wb``
analyzer exactly (a test holds the two together).
"""
from __future__ import annotations

import math
import re
import sqlite3
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from pathlib import Path
from typing import Iterable

from loci.kernel.config import QUERY_SCHEMA  # loci_pipeline.query_store writes the same

_WS = re.compile(r"\s\s+")


def word_ngrams(word: str, lo: int = 3, hi: int = 5) -> list[str]:
    """The ``char_wb`` n-grams of one lower-cased word: the word padded with a space each side,
    every ``lo``..``hi`` long slice of it; a padded word no longer than ``n`` is one gram, once."""
    w = f" {word} "
    n_w = len(w)
    grams: list[str] = []
    for n in range(lo, hi + 1):
        if n_w <= n:
            grams.append(w)
            break
        grams += [w[i:i + n] for i in range(n_w - n + 1)]
    return grams


def char_wb_ngrams(text: str, lo: int = 3, hi: int = 5) -> list[str]:
    """Character n-grams inside word boundaries, as scikit-learn's ``char_wb`` analyzer gives them."""
    grams: list[str] = []
    for word in _WS.sub(" ", text.lower()).split():
        grams += word_ngrams(word, lo, hi)
    return grams


def open_readonly(path: Path) -> sqlite3.Connection | None:
    """A read-only connection, or None when the file does not exist."""
    if not Path(path).exists():
        return None
    from loci.kernel.integrity import connect

    return connect(path, check_same_thread=False)


def _unpack(blob: bytes, code: str) -> array:
    a = array(code)
    a.frombytes(blob)
    return a




class PackedTerms:
    """The sorted gram terms as one UTF-8 blob and its line offsets, read as a sequence of str
    (``bisect`` and ``[i]`` give what the split list gives): a long-lived session keeps ~6 bytes
    a term instead of a str object's ~60 (on the 22 development repositories, 70 MB less).

    ``index_of`` finds a term without a ``[i]`` per bisection step (~17 decodes a gram, most of
    an engine's search): every ``BLOCK``-th term is kept as a str, bisected in C, and only the
    block of ``BLOCK`` terms the gram falls in is decoded (~1 byte a term more)."""

    BLOCK = 64

    def __init__(self, blob: bytes):
        import numpy as np

        self.blob = blob
        ends = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 10)
        self.starts = np.concatenate(([0], ends + 1)).astype(np.int64)
        self.ends = np.concatenate((ends, [len(blob)])).astype(np.int64)
        self.marks = [self[i] for i in range(0, len(self.starts), self.BLOCK)]
        self.nbytes = (len(blob) + self.starts.nbytes + self.ends.nbytes
                       + sum(49 + len(m) for m in self.marks) + 8 * len(self.marks))

    def index_of(self, term: str) -> int | None:
        """Where ``term`` is, None when it is not a term: what bisecting the split list gives."""
        block = bisect_right(self.marks, term) - 1
        if block < 0:
            return None
        lo = block * self.BLOCK
        hi = min(lo + self.BLOCK, len(self.starts))
        terms = self.blob[self.starts[lo]:self.ends[hi - 1]].decode("utf-8").split("\n")
        i = bisect_left(terms, term)
        return lo + i if i < len(terms) and terms[i] == term else None

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: int) -> str:
        return self.blob[self.starts[i]:self.ends[i]].decode("utf-8")


class LexicalIndex:
    """One scope's fitted rankers, read term by term from its query file. ``packed``: keep the
    gram terms as ``PackedTerms`` (a long-lived session sets it; a one-shot splits them)."""

    packed = False

    def __init__(self, con: sqlite3.Connection, path: Path | None = None):
        self.con, self.path = con, path
        meta = dict(con.execute("SELECT key, value FROM meta"))
        if meta.get("schema") != str(QUERY_SCHEMA):
            raise KeyError("schema")
        self.n_docs = int(meta["n_docs"])
        self.lo, self.hi = int(meta["gram_lo"]), int(meta["gram_hi"])
        self._codes = {k[5:]: v for k, v in meta.items() if k.startswith("code_")}
        self._packed = set(filter(None, meta.get("zlib", "").split(",")))
        self._grams: tuple | None = None
        self._prose_paths: dict[int, str] | None = None
        self._bm25_norm: array | None = None

    @property
    def nbytes(self) -> int:
        """Roughly what this index holds in memory so far (its arrays grow as it is read), for
        a long-lived session's byte budget (``loci.kernel.bytecache``)."""
        total = 4096
        if self._grams:
            terms, *arrays = self._grams
            total += getattr(terms, "nbytes", 60 * len(terms)) + sum(a.itemsize * len(a) for a in arrays)
        if self._bm25_norm is not None:
            total += self._bm25_norm.itemsize * len(self._bm25_norm)
        return total + 120 * len(self._prose_paths or ())

    def _blob(self, name: str) -> bytes:
        """One stored array's bytes, inflated when the file says it is zlib-packed."""
        row = self.con.execute("SELECT data FROM arrays WHERE name = ?", (name,)).fetchone()
        data = bytes(row[0]) if row and row[0] else b""
        if data and name in self._packed:
            import zlib

            try:
                data = zlib.decompress(data)
            except zlib.error:
                from loci.kernel.errors import StoreError

                raise StoreError(f"{self.path or 'a query file'}: its {name} array is damaged; "
                                 "run `loci index --force` to rebuild it") from None
        return data

    def _array(self, name: str, code: str) -> array:
        return _unpack(self._blob(name), code)

    def _fetch(self, terms: Iterable[str]) -> list[tuple]:
        terms = list(dict.fromkeys(terms))
        out: list[tuple] = []
        for i in range(0, len(terms), 500):
            batch = terms[i:i + 500]
            out.extend(self.con.execute(
                f"SELECT term, scale, docs, tf FROM bm25 WHERE term IN ({','.join('?' * len(batch))})", batch))
        return out

    def _gram_arrays(self) -> tuple:
        """(sorted grams, ptr, docs, counts, norms): stored as whole arrays, read once."""
        if self._grams is None:
            blob = self._blob("gram_terms")
            terms = (PackedTerms(blob) if self.packed else blob.decode("utf-8").split("\n")) if blob else []
            c = self._codes
            self._grams = (terms, self._array("gram_ptr", c["gram_ptr"]), self._array("gram_docs", c["doc"]),
                           self._array("gram_counts", c["gram_count"]), self._array("gram_norms", "f"))
        return self._grams

    def term_scales(self, terms: Iterable[str]) -> dict[str, float]:
        """Each of ``terms`` the scope holds, with its BM25 scale (its idf times k1 + 1): how rare it is here."""
        terms = list(dict.fromkeys(terms))
        out: dict[str, float] = {}
        for i in range(0, len(terms), 500):
            batch = terms[i:i + 500]
            out.update(self.con.execute(
                f"SELECT term, scale FROM bm25 WHERE term IN ({','.join('?' * len(batch))})", batch))
        return out

    def bm25_scores(self, tokens: Iterable[str]) -> dict[int, float] | None:
        """rank-bm25's Okapi score of each document holding a token: scale * tf / (tf + norm[doc])."""
        if self._bm25_norm is None:
            self._bm25_norm = self._array("bm25_norm", "f")
        norm, doc_code, tf_code = self._bm25_norm, self._codes["doc"], self._codes["bm25_tf"]
        scores: dict[int, float] = {}
        for _term, scale, docs, tfs in self._fetch(set(tokens)):
            for d, tf in zip(_unpack(docs, doc_code), _unpack(tfs, tf_code)):
                scores[d] = scores.get(d, 0.0) + scale * tf / (tf + norm[d])
        return scores or None

    def gram_scores(self, text: str, wanted: Counter | None = None) -> dict[int, float] | None:
        """Char-gram TF-IDF cosine of each chunk sharing a gram with ``text``; ``wanted``: its grams
        of this store's lengths, already counted (``Question.grams``)."""
        terms, ptr, docs, counts, norms = self._gram_arrays()
        if wanted is None:
            wanted = Counter(char_wb_ngrams(text, self.lo, self.hi))
        found = {}
        index_of = getattr(terms, "index_of", None)
        for gram in wanted:
            if index_of is not None:
                i = index_of(gram)
                if i is not None:
                    found[gram] = i
                continue
            i = bisect_left(terms, gram)
            if i < len(terms) and terms[i] == gram:
                found[gram] = i
        if not found:
            return None
        # scikit-learn's smooth idf from each gram's document frequency (its postings' length)
        n = self.n_docs
        idf = {g: math.log((1 + n) / (1 + ptr[i + 1] - ptr[i])) + 1.0 for g, i in found.items()}
        # like scikit-learn's transform: unknown grams have no column, so the query
        # vector is normalised over the grams the scope knows
        q = {g: (1.0 + math.log(wanted[g])) * idf[g] for g in found}
        norm = math.sqrt(sum(v * v for v in q.values())) or 1.0
        if self.packed:   # a long-lived session, where numpy is loaded: the same sums, in C
            return _gram_sums(found, q, norm, idf, ptr, docs, counts, norms)
        sublinear: dict[int, float] = {}
        scores: dict[int, float] = {}
        for g, i in found.items():
            qw = q[g] / norm * idf[g]
            a, b = ptr[i], ptr[i + 1]
            for d, c in zip(docs[a:b], counts[a:b]):
                tf = sublinear.get(c)
                if tf is None:
                    tf = sublinear[c] = 1.0 + math.log(c)
                scores[d] = scores.get(d, 0.0) + tf * qw
        return {d: s / norms[d] for d, s in scores.items()}

    def chunk_kinds(self, ids: Iterable[int]) -> dict[int, tuple[str, str, float]]:
        """(chunk kind, path kind, recency) of each chunk row; recency 0 in a query file from before it."""
        ids = list(ids)
        out: dict[int, tuple[str, str, float]] = {}
        for i in range(0, len(ids), 900):
            batch = ids[i:i + 900]
            marks = ",".join("?" * len(batch))
            try:
                rows = self.con.execute(f"SELECT id, kind, path_kind, recency FROM chunks WHERE id IN ({marks})",
                                        batch).fetchall()
            except sqlite3.OperationalError:  # no recency column: rebuilt by the next `loci index`
                rows = [(*r, 0.0) for r in self.con.execute(
                    f"SELECT id, kind, path_kind FROM chunks WHERE id IN ({marks})", batch)]
            for row in rows:
                out[row[0]] = (row[1], row[2], float(row[3] or 0.0))
        return out

    def first_rows(self, kind: str, n: int) -> list[int]:
        """The first ``n`` rows of chunks of ``kind``, in row order (commits: the newest first)."""
        return [i for (i,) in self.con.execute("SELECT id FROM chunks WHERE kind = ? ORDER BY id LIMIT ?", (kind, n))]

    def module_docs(self) -> dict[int, tuple[str, str]]:
        """Chunk row -> (path, heading) of each docstring or comment at the first lines of a shipped
        source file, in row order (``project_files.layout.main_modules`` keeps the files' own)."""
        return {i: (path, heading or "") for i, path, heading in self.con.execute(
            "SELECT id, path, heading FROM chunks WHERE kind IN ('docstring', 'comment') "
            "AND line <= 3 AND path_kind = 'source' ORDER BY id")}

    def prose_paths(self) -> dict[int, str]:
        """Chunk row -> path of every README, docs and project-note chunk (read once)."""
        if self._prose_paths is None:
            self._prose_paths = dict(self.con.execute(
                "SELECT id, path FROM chunks WHERE kind IN ('readme', 'doc', 'note')"))
        return self._prose_paths

    def translated_hashes(self) -> set[str]:
        """Content hashes of the chunks from translated copies (``README.es.md``, ``docs/zh-CN/``)."""
        from loci.kernel.language import TRANSLATED_KINDS, is_translated_copy

        kinds = ",".join("?" * len(TRANSLATED_KINDS))
        paths = sorted({p for k, p in self.con.execute(f"SELECT DISTINCT kind, path FROM chunks WHERE kind IN ({kinds})",
                                                       TRANSLATED_KINDS) if is_translated_copy(k, p)})
        out: set[str] = set()
        for i in range(0, len(paths), 900):
            batch = paths[i:i + 900]
            out.update(h for (h,) in self.con.execute(
                f"SELECT hash FROM chunks WHERE path IN ({','.join('?' * len(batch))})", batch))
        return out

    def hashes(self) -> list[str]:
        """Every chunk's content hash, in row order (vectors are keyed by it)."""
        return [h for (h,) in self.con.execute("SELECT hash FROM chunks ORDER BY id")]

    def chunks(self, ids: list[int]) -> dict[int, dict]:
        if not ids:
            return {}
        rows = self.con.execute(
            "SELECT id, kind, path, line, heading, text FROM chunks "
            f"WHERE id IN ({','.join('?' * len(ids))})", ids)
        return {r[0]: {"kind": r[1], "path": r[2], "line": r[3], "heading": r[4], "text": r[5]} for r in rows}


def load_lexical(path: Path) -> LexicalIndex | None:
    """Open one scope's query file; None when it is absent or unreadable."""
    con = open_readonly(path)
    if con is None:
        return None
    try:
        return LexicalIndex(con, path)
    except (sqlite3.DatabaseError, KeyError):
        return None


def _gram_sums(found: dict[str, int], q: dict[str, float], norm: float, idf: dict[str, float],
               ptr, docs, counts, norms) -> dict[int, float]:
    """``gram_scores``' loop over the postings done by numpy, to the bit: each posting's term
    is the same float64 product (``1 + log(count)`` by ``math.log``, times the gram's weight), a
    document's terms are added in the same order from 0.0 (``bincount`` adds its weights in input
    order), and the dict lists documents in the order the loop first met them. ~10x faster on a
    big scope (the engine's ask: ~16 -> ~2 ms a scope searched); tests/test_engine.py and
    ``bench/engine_same.py`` check it against the loop."""
    import numpy as np

    spans = [(ptr[i], ptr[i + 1], q[g] / norm * idf[g]) for g, i in found.items()]
    doc_rows, count_rows = np.asarray(docs), np.asarray(counts)
    where = np.concatenate([doc_rows[a:b] for a, b, _ in spans])
    if not len(where):
        return {}
    seen = np.concatenate([count_rows[a:b] for a, b, _ in spans])
    weight = np.repeat(np.array([w for _, _, w in spans], dtype=np.float64), [b - a for a, b, _ in spans])
    values, index = np.unique(seen, return_inverse=True)
    tf = np.array([1.0 + math.log(int(c)) for c in values.tolist()], dtype=np.float64)[index.reshape(-1)]
    sums = np.bincount(where, weights=tf * weight)
    docs_seen, first = np.unique(where, return_index=True)
    order = docs_seen[np.argsort(first, kind="stable")]
    scaled = sums[order] / np.asarray(norms, dtype=np.float32)[order].astype(np.float64)
    return dict(zip(order.tolist(), scaled.tolist()))
