"""Index one scope: chunks, routing vocabulary, fitted lexical rankers, query file.

pipeline/routing.py then merges every scope's vocabulary and writes the manifest
last, so a reader never trusts a scope whose data is not on disk.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from loci.kernel.config import Layout, Params
from loci.kernel import tokens
from loci.kernel.atomic import write_with
from loci_pipeline.chunks import Chunk
from loci_pipeline.lexical_fit import fit_and_write
from loci_pipeline.paths import DEFINITION_WEIGHT, PATH_WEIGHT, PROSE_WEIGHT, path_kind, symbol_weight
from loci.kernel.language import is_foreign, translation_language
from loci_pipeline.table_schemas import CHUNK_SCHEMA, VOCAB_SCHEMA

ROUTING_PROSE_KINDS = ("readme", "doc")
GRAM_TEXT_CHARS = 800  # char n-grams of a chunk's first characters: morphology, not coverage

# release notes are full of generic verbs ("fixed", "replaced", "deprecated"): retrieval only
CHANGELOG = re.compile(r"(?i)^(changes|changelog|history|news|release[-_ ]?notes)")


@dataclass
class ScopeMeta:
    name: str
    fingerprint: str
    chunks: int
    vocab_tokens: int
    vocab_weight: float
    updated: str                 # ISO date of the newest commit, "" if none
    has_graph: bool
    redactions: dict
    stats: dict
    built_at: float = field(default_factory=time.time)
    facts: list = field(default_factory=list)   # loci_pipeline.facts.Fact.to_json(), each with its citation
    build: str = ""              # the build rules' signature it was built by (fingerprint.build_signature)


def meta_path(layout: Layout, name: str) -> Path:
    return layout.meta(name)


def chunk_table(chunks: Sequence[Chunk]) -> pa.Table:
    cols = {name: [] for name in CHUNK_SCHEMA.names}
    for i, c in enumerate(chunks):
        cols["id"].append(i)
        for name in CHUNK_SCHEMA.names[1:]:
            cols[name].append(getattr(c, name))
    return pa.table(cols, schema=CHUNK_SCHEMA)


def routing_vocabulary(definitions: Iterable[tuple[str, str, str, int]],
                       paths: Iterable[tuple[str, str]], chunks: Sequence[Chunk],
                       params: Params, symbol_vocab: Counter | None = None,
                       docs_tokens: Sequence[list[str]] | None = None) -> Counter:
    """Token -> weight from what the code defines, file paths and README/docs prose.

    Docstrings, comments and commits never feed routing, nor do release notes and
    translated copies (``routing_prose``); each token is weighted by the kind of
    path it came from (a fixture counts far less than source). ``docs_tokens``: the
    chunks' ``chunk_tokens`` when the caller has them.
    """
    vocab: Counter = Counter()
    if symbol_vocab is not None:
        vocab.update(symbol_vocab)
    else:
        for name, _kind, relpath, _line in definitions:
            w = DEFINITION_WEIGHT * symbol_weight(relpath, path_kind(relpath), params)
            if w:
                for tok in tokens.tokenize(name):
                    vocab[tok] += w
    for relpath, kind in paths:
        w = PATH_WEIGHT * params.path_weight(kind)
        if w:
            for tok in tokens.tokenize(relpath.replace("/", " ")):
                vocab[tok] += w
    at = {id(c): i for i, c in enumerate(chunks)} if docs_tokens is not None else {}
    for c in routing_prose(chunks):
        w = PROSE_WEIGHT * params.path_weight(c.path_kind)
        if w:
            for tok in (docs_tokens[at[id(c)]] if at else tokens.tokenize(c.heading + "\n" + c.text)):
                vocab[tok] += w
    return vocab


def routing_prose(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The README and docs pieces whose words are evidence of what the project is about.

    Not release notes, and not translated copies: a translation repeats the
    original's topic in another language's words, and those words would pull every
    question asked in that language toward the project whatever it asks. A piece is
    a copy when its path carries a language tag (``README.es.md``, ``docs/zh-CN/``);
    an untagged piece not written in English is one too, unless most of the
    project's untagged prose is in another language: there it is the original.
    """
    prose = [c for c in chunks if c.kind in ROUTING_PROSE_KINDS and not CHANGELOG.match(c.path.rsplit("/", 1)[-1])]
    untagged = [c for c in prose if translation_language(c.path) is None]
    foreign = {id(c) for c in untagged if is_foreign(c.heading + "\n" + c.text)}
    foreign_chars = sum(len(c.text) for c in untagged if id(c) in foreign)
    if foreign_chars * 2 > sum(len(c.text) for c in untagged):
        return untagged
    return [c for c in untagged if id(c) not in foreign]


def write_table(path: Path, table: pa.Table) -> None:
    write_with(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def recency_ranks(dates: Sequence[str]) -> list[float]:
    """Each chunk's place in the scope's history: 1.0 for the newest dated chunk (a commit),
    0.0 for the oldest and for undated ones; ties share the rank of their first member."""
    dated = sorted({d for d in dates if d})
    if not dated:
        return [0.0] * len(dates)
    span = max(1, len(dated) - 1)
    rank = {d: (i / span if len(dated) > 1 else 1.0) for i, d in enumerate(dated)}
    return [rank.get(d, 0.0) if d else 0.0 for d in dates]


def chunk_tokens(chunks: Sequence[Chunk]) -> list[list[str]]:
    """Each chunk's search tokens (heading and text), computed once for routing and the rankers."""
    return [tokens.tokenize(c.heading + "\n" + c.text) for c in chunks]


def write_scope(layout: Layout, name: str, chunks: Sequence[Chunk], vocab: Counter,
                params: Params, structure=None, docs_tokens: Sequence[list[str]] | None = None) -> None:
    """Write the scope's chunks, vocabulary and query file (data files; the manifest comes later).

    ``structure`` is the scope's StructureTables (symbols, calls) when it has a graph;
    ``docs_tokens`` the chunks' ``chunk_tokens`` when the caller has them."""
    write_table(layout.chunks(name), chunk_table(chunks))
    items = sorted(vocab.items())
    write_table(layout.vocab(name), pa.table(
        {"token": [t for t, _ in items], "weight": [float(w) for _, w in items]}, schema=VOCAB_SCHEMA))
    write_query_file(layout.query_db(name), chunks, items, params, structure, docs_tokens)


def write_query_file(path: Path, chunks: Sequence[Chunk], vocab_items: Sequence[tuple[str, float]],
                     params: Params, structure=None, docs_tokens: Sequence[list[str]] | None = None) -> None:
    """The scope's query file (fitted rankers, chunk rows, structure, vocabulary) at ``path``;
    a pulled bundle's is rebuilt from its Parquet tables through here too."""
    docs_tokens = chunk_tokens(chunks) if docs_tokens is None else docs_tokens
    texts = [(c.heading + "\n" + c.text)[:GRAM_TEXT_CHARS] for c in chunks]
    recency = recency_ranks([c.date for c in chunks])
    rows = ((i, c.kind, c.path_kind, c.path, c.line, c.heading, c.text, c.hash, recency[i])
            for i, c in enumerate(chunks))
    fit_and_write(path, docs_tokens, texts, params.chargram_min, params.chargram_max,
                  chunks=rows, symbols=structure.symbols if structure else None,
                  calls=structure.calls if structure else None, vocab=vocab_items)


def newest_commit_date(chunks: Sequence[Chunk]) -> str:
    return max((c.date for c in chunks if c.kind == "commit" and c.date), default="")
