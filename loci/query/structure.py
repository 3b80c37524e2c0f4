"""The structure store, read side: which symbol a question names, and what calls what, with file:line.

``load_structure`` reads a scope's ``symbols`` and ``calls`` tables from its
SQLite query file (copied there at index time from the Parquet tables built
from its graphify graph); ``query`` maps a question to symbols of that scope
only and answers "where is X defined", "what calls X", "what does X call", or,
for an open question, a small ranked neighbourhood. It returns [] when the
scope holds nothing the question names. Standard library only: a one-shot
``loci ask`` imports neither graphify, numpy nor pyarrow.
"""
from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from loci.kernel.config import DEFAULT_PARAMS, Layout, Params
from loci.kernel.lazyre import LazyPattern
from loci.query.lexical import open_readonly
from loci.kernel.tokens import STOPWORDS, tokenize
from loci.query.grammar import Shape
from loci.query.question import Question

SYMBOL_COLUMNS = frozenset({"id", "label", "kind", "path", "line"})
CALL_COLUMNS = frozenset({"src", "dst", "relation", "path", "line"})

CALL_RELATIONS = {"calls": 1.0, "indirect_call": 0.8}
NEIGHBOUR_RELATIONS = ("method", "contains", "inherits", "implements", "uses")
_KIND_FACTOR = {"function": 1.0, "method": 1.0, "class": 1.0, "symbol": 0.7, "file": 0.5}

# match strengths (a question word against a symbol) and hit weights per question shape
EXACT_IDENTIFIER, EXACT_QUALIFIED, EXACT_WORD = 3.0, 3.5, 1.2
BARE_OF_QUALIFIED = 2.0            # `send` of `Session.send`: below ANCHOR_RATIO of a qualified match
FOCUS, ASIDE = 1.0, 0.55           # a hit of the shape asked for, and one of another shape
CHAIN_FACTOR = 0.6                 # a caller's caller, for "call chain" questions
NEIGHBOUR_FACTOR = 0.4
SINGLE_PART, EXPANDED, PREFIX = 0.6, 0.8, 4
# an anchor must score MIN_SCORE (a plain word naming a test-only symbol does not) and be
# within ANCHOR_RATIO of the best anchor; at most MAX_ANCHORS are answered for
MIN_SCORE, ANCHOR_RATIO, MAX_ANCHORS = 0.8, 0.6, 4

_WORD = LazyPattern(r"[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\(\))?")
# words that give a question its shape, never the symbol it is about
_SHAPE_WORDS = frozenset(
    """where defined define defines definition declared declare call calls called calling caller
    callers callee callees invoke invokes invoked use uses used reach reaches reached chain site
    sites live lives located implemented method methods function functions class classes what
    which who""".split())


@dataclass(frozen=True)
class StructureHit:
    label: str
    kind: str
    source_file: str
    line: int
    relation: str   # defines | calls | called_by | caller_of_caller | neighbour
    score: float
    via: str = ""   # caller_of_caller: the direct caller it reaches the symbol through


STORE_BYTES_PER_ROW = 450


class StructureStore:
    """One scope's symbols and edges as columns (name -> list, in table order); lookups are
    built on the first query. ``symbols`` needs id, label, kind, path, line (path_kind and
    parts are optional); ``calls`` needs src, dst, relation, path, line."""

    def __init__(self, name: str, symbols: Mapping[str, Sequence], calls: Mapping[str, Sequence]):
        self.name = name
        self.symbols = symbols
        self.calls = calls
        self._factors: dict[Params, list[float]] = {}

    def __len__(self) -> int:
        return len(self.symbols["id"])

    @property
    def nbytes(self) -> int:
        """Roughly what the store holds with its lookups built, for a long-lived session's byte
        budget: ~450 bytes a symbol or edge (420 measured on the development repositories)."""
        return STORE_BYTES_PER_ROW * (len(self) + len(self.calls.get("src", ())))

    @cached_property
    def _cols(self) -> dict:
        cols = {key: list(values) for key, values in self.symbols.items()}
        n = len(cols["id"])
        cols.setdefault("path_kind", ["source"] * n)
        cols["name"] = [bare_name(lbl, kind) for lbl, kind in zip(cols["label"], cols["kind"])]
        if "parts" in cols:
            cols["parts"] = [tuple(p.split()) for p in cols["parts"]]
        else:
            cols["parts"] = [name_parts(name) for name in cols["name"]]
        return cols

    @cached_property
    def _position(self) -> dict[str, int]:
        return {sid: i for i, sid in enumerate(self._cols["id"])}

    def _edges(self, relations) -> list[tuple[int, int, str, str, int]]:
        """Edges of the given relations as (src row, dst row, relation, path, line)."""
        pos, cols, wanted = self._position, self.calls, set(relations)
        out = []
        for src, dst, rel, path, line in zip(cols["src"], cols["dst"], cols["relation"], cols["path"], cols["line"]):
            if rel not in wanted:
                continue
            i, j = pos.get(src), pos.get(dst)
            if i is not None and j is not None and i != j:
                out.append((i, j, rel, path, line))
        out.sort(key=lambda e: (e[3], e[4]))
        return out

    @cached_property
    def _call_edges(self) -> list[tuple[int, int, str, str, int]]:
        return self._edges(CALL_RELATIONS)

    @cached_property
    def callers(self) -> dict[int, list[tuple[int, int, str, str, int]]]:
        return _group(self._call_edges, 1)

    @cached_property
    def callees(self) -> dict[int, list[tuple[int, int, str, str, int]]]:
        return _group(self._call_edges, 0)

    @cached_property
    def neighbours(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for i, j, _rel, _p, _l in self._edges(NEIGHBOUR_RELATIONS):
            out.setdefault(i, []).append(j)
            out.setdefault(j, []).append(i)
        return out

    @cached_property
    def by_name(self) -> dict[str, list[int]]:
        """Lower-cased bare names, qualified labels and file names/stems -> symbol rows."""
        out: dict[str, list[int]] = {}
        cols = self._cols
        for i, (label, name, kind) in enumerate(zip(cols["label"], cols["name"], cols["kind"])):
            whole, bare = label.lower(), name.lower()
            out.setdefault(whole, []).append(i)
            if bare != whole:
                out.setdefault(bare, []).append(i)
            if kind == "file":
                base = label.rsplit("/", 1)[-1].lower()
                if base != whole and base != bare:
                    out.setdefault(base, []).append(i)
        return out

    @cached_property
    def by_part(self) -> dict[str, list[int]]:
        """Split name words (in the tokenizer's form) -> symbol rows."""
        out: dict[str, list[int]] = {}
        for i, parts in enumerate(self._cols["parts"]):
            for part in parts:
                out.setdefault(part, []).append(i)
        return out

    @cached_property
    def by_prefix(self) -> dict[str, list[str]]:
        """First PREFIX letters -> the scope's name parts that start with them (for near forms)."""
        out: dict[str, list[str]] = {}
        for part in self.by_part:
            if len(part) >= PREFIX and part.isalpha():
                out.setdefault(part[:PREFIX], []).append(part)
        return out

    @cached_property
    def idf(self) -> dict[str, float]:
        n = len(self)
        return {part: math.log(1.0 + n / len(rows)) for part, rows in self.by_part.items()}

    @cached_property
    def part_totals(self) -> list[float]:
        """Per symbol, the idf mass of its name's parts (never 0)."""
        idf = self.idf
        return [sum(idf[p] for p in ps) or 1.0 for ps in self._cols["parts"]]

    def factors(self, params: Params) -> list[float]:
        """Every symbol's kind and path weight under ``params`` (cached per params)."""
        cached = self._factors.get(params)
        if cached is None:
            pairs = list(zip(self._cols["kind"], self._cols["path_kind"]))
            weight = {pair: self.factor_of(*pair, params) for pair in set(pairs)}
            cached = [weight[pair] for pair in pairs]
            self._factors[params] = cached
        return cached

    def hit(self, i: int, relation: str, score: float, path: str | None = None,
            line: int | None = None, via: int | None = None) -> StructureHit:
        c = self._cols
        return StructureHit(c["label"][i], c["kind"][i], path or c["path"][i],
                            int(line if line is not None else c["line"][i]), relation, round(score, 4),
                            c["label"][via] if via is not None else "")

    def factor(self, i: int, params: Params) -> float:
        """Kind and path weight of one symbol: test and fixture code rank below shipped code."""
        return self.factor_of(self._cols["kind"][i], self._cols["path_kind"][i], params)

    @staticmethod
    def factor_of(kind: str, path_kind: str, params: Params) -> float:
        return _KIND_FACTOR.get(kind, 0.7) * (0.4 + 0.6 * params.path_weight(path_kind))


def load_structure(layout: Layout, name: str) -> StructureStore | None:
    """The scope's structure store from its query file (symbols, and the edges of the relations
    it answers with), or None when the file or its structure tables are missing or unreadable."""
    return _read(layout.query_db(name), name)[0]


def structure_problem(layout: Layout, name: str) -> str | None:
    """Why a scope has no usable structure store, with the fix; None when it has one."""
    store, why = _read(layout.query_db(name), name)
    if store is not None:
        return None
    if why == "unreadable":
        return f"{name}'s query file is unreadable: run `loci index`"
    if layout.symbols(name).exists():
        return f"{name}'s query file does not hold its structure store yet: run `loci index`"
    return f"{name} has no structure store: run `loci graphs --scope {name}`, then `loci index`"


def _read(path: Path, name: str) -> tuple[StructureStore | None, str | None]:
    """(store, None), or (None, "missing" | "unreadable") for a query file without a usable store."""
    con = open_readonly(path)
    if con is None:
        return None, "missing"
    try:
        pool: dict[str, str] = {}
        symbols = _columns(con, "symbols", SYMBOL_COLUMNS, pool=pool)
        calls = _columns(con, "calls", CALL_COLUMNS, (*CALL_RELATIONS, *NEIGHBOUR_RELATIONS), pool=pool)
    except sqlite3.DatabaseError:
        return None, "unreadable"
    finally:
        con.close()
    if symbols is None or calls is None:
        return None, "missing"
    return StructureStore(name, symbols, calls), None


def _columns(con: sqlite3.Connection, table: str, required: frozenset[str],
             relations: Sequence[str] = (), pool: dict[str, str] | None = None) -> dict[str, list] | None:
    """One table as columns in row order (only rows of ``relations`` when given); None when it
    is absent. Lacking a required column is a DatabaseError (the file is not what loci wrote).

    Equal strings are one object (``pool``, shared by a store's tables): paths, kinds, relations
    and the ids edges name repeat row after row, and a long-lived session holds a third less."""
    found = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    if found is None:
        return None
    names = [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
    if not required <= set(names):
        raise sqlite3.DatabaseError(f"{table} lacks {sorted(required - set(names))}")
    where = f" WHERE relation IN ({', '.join('?' * len(relations))})" if relations else ""
    rows = con.execute(f"SELECT * FROM {table}{where} ORDER BY rowid", tuple(relations)).fetchall()
    if not rows:
        return {col: [] for col in names}
    pool = {} if pool is None else pool
    same = pool.setdefault
    return {col: [same(v, v) if type(v) is str else v for v in values] for col, values in zip(names, zip(*rows))}


def query(store: StructureStore, question: "Question | str", *, k: int = 5,
          params: Params = DEFAULT_PARAMS) -> list[StructureHit]:
    """Up to ``k`` ranked, de-duplicated hits of the scope's symbols for ``question``; [] if none match."""
    if store is None or not len(store) or k <= 0:
        return []
    q = Question.of(question)
    anchors = find_anchors(store, q, params)
    if not anchors:
        return []
    shape = q.shape
    hits: list[StructureHit] = []
    for i, score in anchors:
        hits.extend(_answer(store, i, score, shape, params))
    return _rank(hits, k)


def find_anchors(store: StructureStore, question: "Question | str", params: Params = DEFAULT_PARAMS,
                 *, ratio: float = ANCHOR_RATIO, limit: int = MAX_ANCHORS,
                 floor: float = MIN_SCORE) -> list[tuple[int, float]]:
    """The symbols the question names, best first: exact identifiers, then split-word matches."""
    n, scope = len(store), store.name.lower()
    if not n:
        return []
    q = Question.of(question)
    exact: dict[int, float] = {}
    for raw in _WORD.findall(q.text):
        for key, strength in _name_keys(raw):
            if key == scope or key in STOPWORDS or key in _SHAPE_WORDS:
                continue
            for i in store.by_name.get(key, ()):
                if strength > exact.get(i, 0.0):
                    exact[i] = strength
    split = _split_matches(store, q)
    factors = store.factors(params)
    combined: dict[int, float] = {}   # symbols matched neither way score 0
    for i in exact.keys() | split.keys():
        e, s = exact.get(i, 0.0), split.get(i, 0.0)
        combined[i] = (max(e, s) + 0.1 * min(e, s)) * factors[i]
    best = max(combined.values(), default=0.0)
    if best < floor:
        return []
    cut = ratio * best
    rows = sorted(i for i, v in combined.items() if v >= cut) if cut > 0 else list(range(n))
    if len(rows) > 4 * limit:
        rows = sorted(rows, key=lambda i: -combined.get(i, 0.0))[: 4 * limit]
    chosen = sorted(rows, key=lambda i: (-combined.get(i, 0.0), -len(store.callers.get(i, ())), i))
    return [(i, combined.get(i, 0.0)) for i in chosen[:limit]]


def _split_matches(store: StructureStore, question: "Question | str") -> dict[int, float]:
    """Per matched symbol, how much of its name the question's words cover (idf-weighted, this
    scope's parts only). A name matched on one word scores SINGLE_PART of its coverage: one
    shared word is weak evidence.
    """
    covered: dict[int, float] = {}
    count: dict[int, int] = {}
    for part, weight in question_parts(store, question).items():
        gain = weight * store.idf[part]
        for i in store.by_part[part]:
            covered[i] = covered.get(i, 0.0) + gain
            count[i] = count.get(i, 0) + 1
    totals = store.part_totals
    return {i: c / totals[i] * (1.0 if count[i] >= 2 else SINGLE_PART) for i, c in covered.items()}


def question_parts(store: StructureStore, question: "Question | str") -> dict[str, float]:
    """The question's words as this scope's name parts, weighted 1 where the scope has the word
    and EXPANDED for its near forms (``stripped`` -> ``strip``, ``config`` -> ``configure``)."""
    out: dict[str, float] = {}
    for tok in Question.of(question).words:
        if tok in _SHAPE_WORDS or tok == store.name.lower() or "." in tok:
            continue
        if tok in store.by_part:
            out[tok] = 1.0
        for part in store.by_prefix.get(tok[:PREFIX], ()):
            short, long_ = sorted((tok, part), key=len)
            if long_.startswith(short) and len(long_) - len(short) <= 3:
                out.setdefault(part, EXPANDED)
    return out


def _answer(store: StructureStore, i: int, score: float, shape: Shape, params: Params) -> list[StructureHit]:
    w_define = 1.05 if shape.define or shape.open else ASIDE
    w_callers = FOCUS if shape.callers else ASIDE
    w_callees = FOCUS if shape.callees else ASIDE * 0.9
    hits = [store.hit(i, "defines", score * w_define)]
    direct = store.callers.get(i, ())
    for src, _dst, rel, path, line in direct:
        s = score * w_callers * CALL_RELATIONS[rel] * store.factor(src, params)
        hits.append(store.hit(src, "called_by", s, path, line))
    if shape.chain:
        # a caller's caller is no caller of the symbol: a second hop, labelled so, each below every
        # direct caller, at the line where it calls the caller it goes through
        floor = min((h.score for h in hits if h.relation == "called_by"), default=score)
        callers = {src for src, *_ in direct}
        for src, *_ in direct:
            for src2, _d, rel2, path2, line2 in store.callers.get(src, ()):
                if src2 == i or src2 in callers:
                    continue
                s2 = floor * CHAIN_FACTOR * CALL_RELATIONS[rel2] * store.factor(src2, params)
                hits.append(store.hit(src2, "caller_of_caller", s2, path2, line2, via=src))
    for _src, dst, rel, path, line in store.callees.get(i, ()):
        s = score * w_callees * CALL_RELATIONS[rel] * store.factor(dst, params)
        hits.append(store.hit(dst, "calls", s, path, line))
    if shape.open:
        for j in store.neighbours.get(i, ()):
            hits.append(store.hit(j, "neighbour", score * NEIGHBOUR_FACTOR * store.factor(j, params)))
    return hits


def _rank(hits: list[StructureHit], k: int) -> list[StructureHit]:
    best: dict[tuple, StructureHit] = {}
    for h in hits:
        key = (h.label, h.source_file, h.line)
        if key not in best or h.score > best[key].score:
            best[key] = h
    ordered = sorted(best.values(), key=lambda h: (-h.score, h.source_file, h.line, h.label))
    return ordered[:k]


def _group(edges, end: int) -> dict[int, list]:
    out: dict[int, list] = {}
    for e in edges:
        out.setdefault(e[end], []).append(e)
    return out


def bare_name(label: str, kind: str) -> str:
    """The name a question would use: ``Session.send`` -> ``send``; ``src/a/b.py`` -> ``b``."""
    if kind == "file":
        return label.rsplit("/", 1)[-1].split(".", 1)[0]
    return label.rsplit(".", 1)[-1]


def name_parts(name: str) -> tuple[str, ...]:
    """A name's split words in the tokenizer's form (``should_strip_auth`` -> strip, auth)."""
    toks = tokenize(name)
    whole = name.lower().strip("_")
    parts = tuple(dict.fromkeys(t for t in toks if t != whole))
    return parts or tuple(dict.fromkeys(toks))


def _name_keys(raw: str) -> list[tuple[str, float]]:
    """Lookup keys for one question word, strongest first: ``pkg.Session.send`` is tried whole,
    as ``session.send`` and, weaker than any qualified match, as the bare ``send``."""
    word = raw[:-2] if raw.endswith("()") else raw
    key = word.lower().replace("::", ".")
    if "." not in key:
        if not _is_identifier(raw) and len(key) < 3:
            return []
        return [(key, EXACT_IDENTIFIER if _is_identifier(raw) else EXACT_WORD)]
    segments = key.split(".")
    keys = [(key, EXACT_QUALIFIED), (".".join(segments[-2:]), EXACT_QUALIFIED)]
    return keys + [(segments[-1], BARE_OF_QUALIFIED)]


def _is_identifier(raw: str) -> bool:
    """Shaped like code rather than English: snake_case, camelCase, qualified, or called with ()."""
    word = raw[:-2] if raw.endswith("()") else raw
    return (raw.endswith("()") or "_" in word or "." in word or "::" in word
            or any(c.isupper() for c in word[1:]) and not word.isupper())
