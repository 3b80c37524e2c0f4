"""Turn one graphify ``graph.json`` into the structure store's two Parquet tables.

``graph_tables`` never raises: a missing, torn, non-JSON or oversized graph, or
nodes pointing at files that are gone, come back as ``problems`` (each naming
the fix, ``loci graphs SCOPE``) beside whatever could be read.
"""
from __future__ import annotations

import os
import posixpath
import shlex
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from loci.kernel.config import DEFAULT_PARAMS, Layout, Params
from loci.query.structure import bare_name, name_parts
from loci.kernel.tokens import tokenize
from loci.kernel.atomic import write_with
from loci_pipeline.graph_file import read_graph_json
from loci_pipeline.paths import path_kind, symbol_weight

MAX_GRAPH_BYTES = 200_000_000

SYMBOL_SCHEMA = pa.schema([
    ("id", pa.string()), ("label", pa.string()), ("kind", pa.string()), ("path", pa.string()),
    ("line", pa.int32()), ("path_kind", pa.string()), ("parts", pa.string()),
])
CALL_SCHEMA = pa.schema([
    ("src", pa.string()), ("dst", pa.string()), ("relation", pa.string()), ("path", pa.string()),
    ("line", pa.int32()),
])
SYMBOL_KINDS = ("file", "class", "function", "method", "symbol")

# graphify parses config and data files into key nodes: noise for "what calls what"
_DATA_SUFFIXES = {".json", ".yaml", ".yml", ".toml", ".lock", ".xml", ".ini", ".cfg", ".mod", ".sum"}
_SKIP_FILE_TYPES = {"rationale", "concept", "document", "paper", "image"}
_LINE = re.compile(r"\d+")


@dataclass
class StructureTables:
    symbols: pa.Table
    calls: pa.Table
    problems: list[str] = field(default_factory=list)


def empty_tables(problems: list[str] | None = None) -> StructureTables:
    return StructureTables(SYMBOL_SCHEMA.empty_table(), CALL_SCHEMA.empty_table(), list(problems or []))


def graph_tables(graph_path: Path, root: Path, *, scope: str = "SCOPE",
                 max_bytes: int = MAX_GRAPH_BYTES) -> StructureTables:
    """Symbols and edges of ``graph_path``, paths relative to ``root``; problems instead of errors."""
    graph_path, fix = Path(graph_path), f"run `loci graphs --scope {shlex.quote(scope)}` to rebuild it"
    try:
        size = graph_path.stat().st_size
    except OSError:
        return empty_tables([f"no structure graph at {graph_path}: {fix}"])
    if size > max_bytes:
        return empty_tables([f"{graph_path} is {size // 1_000_000} MB, over the "
                             f"{max_bytes // 1_000_000} MB cap, so it was skipped: exclude generated "
                             f"or vendored code from the scope, then {fix}"])
    try:
        data = read_graph_json(graph_path)
    except (OSError, EOFError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return empty_tables([f"{graph_path} is not readable JSON ({type(exc).__name__}; truncated?): {fix}"])
    raw_nodes = data.get("nodes") if isinstance(data, dict) else None
    raw_edges = (data.get("edges") or data.get("links") or []) if isinstance(data, dict) else []
    if not isinstance(raw_nodes, list) or not isinstance(raw_edges, list):
        return empty_tables([f"{graph_path} is not a graphify graph (no node list): {fix}"])
    return _tables(raw_nodes, raw_edges, Path(root), scope, fix)


def _tables(raw_nodes: list, raw_edges: list, root: Path, scope: str, fix: str) -> StructureTables:
    root_str = os.path.abspath(root)
    exists: dict[str, bool] = {}
    nodes: dict[str, dict] = {}
    gone: set[str] = set()
    dropped = 0
    for raw in raw_nodes:
        node = _node(raw, root_str)
        if node is None:
            continue
        path = node["path"]
        if path not in exists:
            exists[path] = os.path.isfile(os.path.join(root_str, path))
        if not exists[path]:
            gone.add(path)
            dropped += 1
            continue
        nodes[node["id"]] = node
    edges = []
    methods_of: dict[str, str] = {}
    class_ids: set[str] = set()
    for raw in raw_edges:
        if not isinstance(raw, dict):
            continue
        src, dst = str(raw.get("source", "")), str(raw.get("target", ""))
        if src not in nodes or dst not in nodes:
            continue
        rel = str(raw.get("relation") or "related")
        if rel == "method":
            methods_of.setdefault(dst, src)
            class_ids.add(src)
        elif rel in ("inherits", "implements"):
            class_ids.add(dst)
        path = _relpath(raw.get("source_file"), root_str) or nodes[src]["path"]
        edges.append((src, dst, rel, path, _line(raw.get("source_location"), nodes[src]["line"])))
    for nid, node in nodes.items():
        node["kind"] = _kind(node, nid in class_ids, nid in methods_of)
        if nid in methods_of:
            node["label"] = f"{_name(nodes[methods_of[nid]]['raw'])}.{_name(node['raw'])}"
        elif node["kind"] == "file":
            node["label"] = node["path"]
        else:
            node["label"] = _name(node["raw"])
    problems = []
    if dropped:
        problems.append(f"{dropped} symbols in {len(gone)} files that no longer exist were dropped "
                        f"(e.g. {sorted(gone)[0]}); the graph is stale: {fix}")
    return StructureTables(_symbol_table(nodes.values()), _call_table(edges), problems)


def _node(raw, root: str) -> dict | None:
    """The fields loci keeps from one graphify node, or None for prose, externals and data keys."""
    if not isinstance(raw, dict) or raw.get("id") in (None, ""):
        return None
    if raw.get("file_type") in _SKIP_FILE_TYPES or raw.get("external") or raw.get("type") in ("external", "package"):
        return None
    path = _relpath(raw.get("source_file"), root)
    if not path or posixpath.splitext(path)[1].lower() in _DATA_SUFFIXES:
        return None
    label = str(raw.get("label") or "").strip()
    if not label:
        return None
    return {"id": str(raw["id"]), "raw": label, "path": path, "line": _line(raw.get("source_location"), 1),
            "callable": bool(raw.get("_callable")), "class": bool(raw.get("_callable_class"))}


def _relpath(value, root: str) -> str | None:
    if not value or not isinstance(value, str):
        return None
    if os.path.isabs(value):
        rel = os.path.relpath(value, root)
        if rel.startswith(".."):
            return None
        value = rel
    value = value.replace("\\", "/")
    while value.startswith("./"):
        value = value[2:]
    return value or None


def _line(value, default: int) -> int:
    if isinstance(value, int):
        return max(value, 1)
    match = _LINE.search(str(value or ""))
    return max(int(match.group(0)), 1) if match else default


def _name(label: str) -> str:
    """graphify's ``._calc_idf()`` -> ``_calc_idf``."""
    name = label.strip()
    if name.endswith("()"):
        name = name[:-2]
    return name.lstrip(".") or label


def _kind(node: dict, is_class: bool, is_method: bool) -> str:
    raw = node["raw"]
    path = node["path"]
    if raw == posixpath.basename(path) or raw == path or "/" in raw and path.endswith("/" + raw):
        return "file"
    if node["class"] or is_class:
        return "class"
    if is_method or raw.startswith(".") and raw.endswith("()"):
        return "method"
    if raw.endswith("()") or node["callable"]:
        return "function"
    return "symbol"


def _symbol_table(nodes) -> pa.Table:
    rows = sorted(nodes, key=lambda n: (n["path"], n["line"], n["id"]))
    kinds = {path: path_kind(path) for path in {n["path"] for n in rows}}
    return pa.table({
        "id": [n["id"] for n in rows], "label": [n["label"] for n in rows],
        "kind": [n["kind"] for n in rows], "path": [n["path"] for n in rows],
        "line": [n["line"] for n in rows], "path_kind": [kinds[n["path"]] for n in rows],
        "parts": [" ".join(name_parts(bare_name(n["label"], n["kind"]))) for n in rows],
    }, schema=SYMBOL_SCHEMA)


def _call_table(edges: list[tuple]) -> pa.Table:
    edges = sorted(set(edges), key=lambda e: (e[3], e[4], e[0], e[1], e[2]))
    cols = list(zip(*edges)) if edges else [[], [], [], [], []]
    return pa.table({name: list(col) for name, col in zip(CALL_SCHEMA.names, cols)}, schema=CALL_SCHEMA)


def write_structure(name: str, tables: StructureTables, layout: Layout) -> None:
    """Atomically replace the scope's symbols and calls Parquet files."""
    for target, table in ((layout.symbols(name), tables.symbols), (layout.calls(name), tables.calls)):
        write_with(target, lambda tmp, table=table: pq.write_table(table, tmp, compression="zstd"))


def symbol_vocabulary(symbols: pa.Table, params: Params = DEFAULT_PARAMS) -> Counter:
    """Routing tokens of every symbol label (split and whole), weighted by the kind of file it is in."""
    vocab: Counter = Counter()
    cols = symbols.to_pydict()
    kinds = cols.get("path_kind") or [path_kind(p) for p in cols["path"]]
    for label, kind, path, where in zip(cols["label"], cols["kind"], cols["path"], kinds):
        weight = symbol_weight(path, where, params)
        if not weight:
            continue
        text = posixpath.splitext(posixpath.basename(path))[0] if kind == "file" else label
        for tok in tokenize(text):
            vocab[tok] += weight
    return vocab
