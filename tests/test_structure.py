"""The structure store: graph.json -> Parquet tables -> the scope's query file -> answers with file:line."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import sqlite3
import time
from pathlib import Path

import pyarrow as pa

import pytest

from loci.kernel.config import Layout, layout
from loci.query.grammar import question_shape
from loci.query.structure import StructureStore, bare_name, load_structure, name_parts, query, structure_problem
from loci_pipeline.query_store import write_scope_db
from loci_pipeline.structure_tables import StructureTables, graph_tables, symbol_vocabulary, write_structure

# --- a hand-written graph in graphify's format -------------------------------------------

SOURCES = {
    "pkg/session.py": "class Session:\n    def send(self):\n        return 1\n" + "\n" * 20,
    "pkg/adapter.py": "def should_strip_auth(a, b):\n    return a != b\n" + "\n" * 30,
    "pkg/other.py": "class Other:\n    def send(self):\n        pass\n" + "\n" * 10,
    "tests/test_session.py": "def test_send():\n    pass\n" + "\n" * 10,
    "README.md": "# readme\n",
}


def node(nid, label, path, line, **extra):
    return {"id": nid, "label": label, "file_type": "code", "source_file": path,
            "source_location": f"L{line}", "_origin": "ast", **extra}


def edge(src, dst, relation, path, line):
    return {"source": src, "target": dst, "relation": relation, "confidence": "EXTRACTED",
            "source_file": path, "source_location": f"L{line}", "weight": 1.0}


def sample_graph() -> dict:
    nodes = [
        node("session", "session.py", "pkg/session.py", 1),
        node("session_cls", "Session", "pkg/session.py", 1, _callable=True, _callable_class=True),
        node("session_send", ".send()", "pkg/session.py", 2, _callable=True),
        node("session_prepare", ".prepare()", "pkg/session.py", 10, _callable=True),
        node("adapter_strip", "should_strip_auth()", "pkg/adapter.py", 1, _callable=True),
        node("adapter_rebuild", "rebuild_auth()", "pkg/adapter.py", 20, _callable=True),
        node("adapter_resolve", "resolve_redirects()", "pkg/adapter.py", 28, _callable=True),
        node("other_cls", "Other", "pkg/other.py", 1, _callable=True, _callable_class=True),
        node("other_send", ".send()", "pkg/other.py", 2, _callable=True),
        node("test_send", "test_send()", "tests/test_session.py", 1, _callable=True),
        node("why", "Decide whether auth is dropped", "pkg/adapter.py", 2, file_type="rationale"),
        {"id": "hashlib", "label": "hashlib", "file_type": "concept", "type": "external",
         "external": True, "source_file": ""},
        node("ci_jobs", "jobs", ".github/workflows/ci.yml", 1),
    ]
    edges = [
        edge("session_cls", "session_send", "method", "pkg/session.py", 2),
        edge("session_cls", "session_prepare", "method", "pkg/session.py", 10),
        edge("other_cls", "other_send", "method", "pkg/other.py", 2),
        edge("session_send", "session_prepare", "calls", "pkg/session.py", 3),
        edge("session_send", "adapter_rebuild", "calls", "pkg/session.py", 4),
        edge("adapter_rebuild", "adapter_strip", "calls", "pkg/adapter.py", 24),
        edge("adapter_resolve", "adapter_rebuild", "calls", "pkg/adapter.py", 30),
        edge("test_send", "adapter_strip", "calls", "tests/test_session.py", 2),
        edge("adapter_strip", "hashlib", "calls", "pkg/adapter.py", 2),
        edge("why", "adapter_strip", "rationale_for", "pkg/adapter.py", 2),
    ]
    return {"nodes": nodes, "edges": edges, "hyperedges": []}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def write_graph(path: Path, graph: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(graph))
    return path


def write_query_file(lay: Layout, name: str, tables: StructureTables | None) -> Path:
    """The scope's query file as the index writes it: no chunks, and the structure tables when given."""
    path = lay.query_db(name)
    write_scope_db(path, n_docs=0, gram_range=(3, 5), bm25=([], [0], [], [], [], []), grams=([], [0], [], [], []),
                   chunks=[], symbols=tables.symbols if tables else None,
                   calls=tables.calls if tables else None)
    return path


@pytest.fixture
def tables(repo: Path, tmp_path: Path) -> StructureTables:
    return graph_tables(write_graph(tmp_path / "g" / "graph.json", sample_graph()), repo, scope="demo")


@pytest.fixture
def store(tables: StructureTables, tmp_path: Path) -> StructureStore:
    lay = layout(tmp_path / "home")
    write_query_file(lay, "demo", tables)
    loaded = load_structure(lay, "demo")
    assert loaded is not None
    return loaded


def where(hits) -> list[str]:
    return [f"{h.relation} {h.label} {h.source_file}:{h.line}" for h in hits]


# --- graph_tables ------------------------------------------------------------------------

def test_methods_get_their_class_in_the_label(tables):
    rows = {r["id"]: r for r in tables.symbols.to_pylist()}
    assert rows["session_send"]["label"] == "Session.send"
    assert rows["session_send"]["kind"] == "method"
    assert (rows["session_send"]["path"], rows["session_send"]["line"]) == ("pkg/session.py", 2)
    assert rows["session_cls"]["kind"] == "class"
    assert rows["adapter_strip"]["label"] == "should_strip_auth"
    assert rows["session"]["kind"] == "file"


def test_call_edges_keep_the_call_site_line(tables):
    calls = tables.calls.to_pylist()
    assert {"src": "adapter_rebuild", "dst": "adapter_strip", "relation": "calls",
            "path": "pkg/adapter.py", "line": 24} in calls


def test_prose_externals_and_config_keys_are_not_symbols(tables):
    ids = set(tables.symbols.column("id").to_pylist())
    assert {"why", "hashlib", "ci_jobs"}.isdisjoint(ids)
    assert all(c["dst"] != "hashlib" for c in tables.calls.to_pylist())


def test_absolute_source_paths_become_relative_to_the_root(repo, tmp_path):
    graph = sample_graph()
    for n in graph["nodes"]:
        if n.get("source_file"):
            n["source_file"] = str(repo / n["source_file"])
    tables = graph_tables(write_graph(tmp_path / "graph.json", graph), repo)
    assert "pkg/session.py" in tables.symbols.column("path").to_pylist()
    assert not tables.problems


def test_links_key_of_networkx_graphs_is_read(repo, tmp_path):
    graph = sample_graph()
    graph["links"] = graph.pop("edges")
    tables = graph_tables(write_graph(tmp_path / "graph.json", graph), repo)
    assert tables.calls.num_rows > 0


def test_missing_graph_is_a_problem_naming_the_fix(repo, tmp_path):
    tables = graph_tables(tmp_path / "nope.json", repo, scope="demo")
    assert tables.symbols.num_rows == 0 and tables.calls.num_rows == 0
    assert len(tables.problems) == 1 and "loci graphs --scope demo" in tables.problems[0]


@pytest.mark.parametrize("content", [
    json.dumps(sample_graph())[:500],       # truncated mid-write
    "this is not json",
    b"\xff\xfe\x00garbage",
    json.dumps(["a", "list"]),
    json.dumps({"nodes": "not a list"}),
])
def test_unreadable_graph_is_a_problem_not_an_exception(repo, tmp_path, content):
    path = tmp_path / "graph.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    tables = graph_tables(path, repo, scope="demo")
    assert tables.symbols.num_rows == 0
    assert "loci graphs --scope demo" in tables.problems[0]


def test_graph_over_the_size_cap_is_skipped(repo, tmp_path):
    path = write_graph(tmp_path / "graph.json", sample_graph())
    tables = graph_tables(path, repo, scope="demo", max_bytes=100)
    assert tables.symbols.num_rows == 0
    assert "cap" in tables.problems[0] and "loci graphs --scope demo" in tables.problems[0]


def test_symbols_in_files_that_no_longer_exist_are_dropped_and_counted(repo, tmp_path):
    (repo / "pkg" / "other.py").unlink()
    tables = graph_tables(write_graph(tmp_path / "graph.json", sample_graph()), repo, scope="demo")
    paths = set(tables.symbols.column("path").to_pylist())
    assert "pkg/other.py" not in paths and "pkg/session.py" in paths
    assert len(tables.problems) == 1
    assert tables.problems[0].startswith("2 symbols in 1 files") and "loci graphs --scope demo" in tables.problems[0]


@pytest.mark.slow
def test_thousands_of_files_are_read_in_a_few_seconds(tmp_path):
    root = tmp_path / "big"
    nodes, edges = [], []
    for f in range(2000):
        rel = f"src/m{f // 100}/f{f}.py"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
        nodes.append(node(f"f{f}", f"f{f}.py", rel, 1))
        for s in range(5):
            nodes.append(node(f"f{f}_s{s}", f"func_{f}_{s}()", rel, 10 + s, _callable=True))
            if s:
                edges.append(edge(f"f{f}_s{s}", f"f{f}_s{s - 1}", "calls", rel, 11 + s))
    path = write_graph(tmp_path / "graph.json", {"nodes": nodes, "edges": edges})
    start = time.perf_counter()
    tables = graph_tables(path, root)
    assert time.perf_counter() - start < 10
    assert tables.symbols.num_rows == 12000 and tables.calls.num_rows == 8000
    assert not tables.problems


def test_the_query_file_round_trips_both_tables_in_order(tables, tmp_path):
    lay = layout(tmp_path / "home")
    write_structure("demo", tables, lay)
    write_query_file(lay, "demo", tables)
    loaded = load_structure(lay, "demo")
    assert loaded is not None and len(loaded) == tables.symbols.num_rows
    assert dict(loaded.symbols) == tables.symbols.to_pydict()
    assert dict(loaded.calls) == tables.calls.to_pydict()
    assert structure_problem(lay, "demo") is None
    assert not list((tmp_path / "home").rglob("*.tmp"))


def test_a_loaded_store_holds_each_repeated_string_once(store):
    """Paths, kinds and the ids edges name repeat row after row; a long-lived session holds them once."""
    paths = store.symbols["path"]
    twice = [p for i, p in enumerate(paths) if p in paths[:i]]
    assert twice and all(p is paths[paths.index(p)] for p in twice)
    ids = {sid: sid for sid in store.symbols["id"]}
    assert any(src in ids and src is ids[src] for src in store.calls["src"])


def test_a_store_without_rows_loads_and_answers_nothing(repo, tmp_path):
    lay = layout(tmp_path / "home")
    write_query_file(lay, "demo", graph_tables(tmp_path / "no-graph.json", repo, scope="demo"))
    loaded = load_structure(lay, "demo")
    assert loaded is not None and len(loaded) == 0
    assert query(loaded, "where is should_strip_auth defined") == []


def test_symbol_vocabulary_splits_labels_and_counts_tests_lower(tables):
    vocab = symbol_vocabulary(tables.symbols)
    for token in ("should_strip_auth", "strip", "auth", "session.send", "session", "send"):
        assert vocab[token] > 0, token
    assert vocab["test_send"] < vocab["should_strip_auth"]


# --- load_structure on bad input ---------------------------------------------------------

def test_load_structure_without_a_store_returns_none_and_says_how_to_fix(tmp_path):
    lay = layout(tmp_path)
    assert load_structure(lay, "ghost") is None
    assert "loci graphs --scope ghost" in structure_problem(lay, "ghost")


def test_a_query_file_without_structure_tables_means_no_graph_was_built(tmp_path):
    lay = layout(tmp_path)
    write_query_file(lay, "demo", None)
    assert load_structure(lay, "demo") is None
    assert "loci graphs --scope demo" in structure_problem(lay, "demo")


def test_parquet_tables_missing_from_the_query_file_say_loci_index_fixes_it(tables, tmp_path):
    lay = layout(tmp_path)
    write_structure("demo", tables, lay)
    write_query_file(lay, "demo", None)          # written before the query file held structure
    assert load_structure(lay, "demo") is None
    problem = structure_problem(lay, "demo")
    assert "`loci index`" in problem and "loci graphs" not in problem
    lay.query_db("demo").unlink()
    assert "`loci index`" in structure_problem(lay, "demo")


def test_load_structure_on_a_corrupt_file_returns_none(tmp_path):
    lay = layout(tmp_path)
    path = lay.query_db("demo")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"SQLite format 3\x00 torn")
    assert load_structure(lay, "demo") is None
    assert "unreadable" in structure_problem(lay, "demo")


def test_a_symbols_table_of_the_wrong_shape_is_unreadable_not_an_exception(tmp_path):
    lay = layout(tmp_path)
    path = lay.query_db("demo")
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE symbols (id, name); CREATE TABLE calls (src, dst, relation, path, line);")
    con.close()
    assert load_structure(lay, "demo") is None
    assert "unreadable" in structure_problem(lay, "demo")


# --- query -------------------------------------------------------------------------------

@pytest.mark.parametrize("question, shape", [
    ("Where is _first_keyword defined, and which methods call it?", (True, True, False)),
    ("In rank_bm25, what calls _calc_idf?", (False, True, False)),
    ("Where is removeMootSeparators called from?", (False, True, False)),
    ("What calls _make_default_short_help, and where does it live?", (True, True, False)),
    ("Where is get_file_md5 defined and who uses it?", (True, True, False)),
    ("what does resolve_redirects call?", (False, False, True)),
    ("which functions does parse_lines call", (False, False, True)),
    ("what is the call chain that reaches should_strip_auth", (False, True, False)),
    ("how are auth headers stripped on redirect", (False, False, False)),
])
def test_question_shape_is_read_from_the_wording(question, shape):
    got = question_shape(question)
    assert (got.define, got.callers, got.callees) == shape


def test_where_is_defined_puts_the_definition_first(store):
    hits = query(store, "Where is should_strip_auth defined?")
    assert where(hits)[0] == "defines should_strip_auth pkg/adapter.py:1"


def test_what_calls_lists_callers_at_their_call_sites(store):
    hits = where(query(store, "what calls should_strip_auth?"))
    assert hits[0] == "called_by rebuild_auth pkg/adapter.py:24"
    assert "called_by test_send tests/test_session.py:2" in hits


def test_call_chain_reaches_the_callers_caller_as_a_labelled_second_hop(store):
    hits = query(store, "what is the call chain that reaches should_strip_auth?")
    rows = where(hits)
    assert rows.index("called_by rebuild_auth pkg/adapter.py:24") < rows.index(
        "caller_of_caller resolve_redirects pkg/adapter.py:30")
    assert next(h for h in hits if h.label == "resolve_redirects").via == "rebuild_auth"


def test_what_calls_lists_direct_callers_only_never_a_callers_caller(store):
    hits = query(store, "what calls should_strip_auth?")
    callers = {h.label for h in hits if h.relation == "called_by"}
    assert callers == {"rebuild_auth", "test_send"}
    assert all(h.label not in ("resolve_redirects", "Session.send") for h in hits)


def test_a_second_hop_never_outranks_a_direct_caller(store):
    hits = query(store, "which callers reach should_strip_auth, directly or indirectly?", k=10)
    direct = [h.score for h in hits if h.relation == "called_by"]
    hops = [h.score for h in hits if h.relation == "caller_of_caller"]
    assert direct and hops and max(hops) < min(direct)


def test_what_does_x_call_lists_callees_at_the_call_site(store):
    hits = where(query(store, "what does Session.send call?"))
    assert hits[:2] == ["calls Session.prepare pkg/session.py:3", "calls rebuild_auth pkg/session.py:4"]


def test_a_qualified_name_selects_that_class_only(store):
    hits = query(store, "where is Other.send defined")
    assert where(hits)[0] == "defines Other.send pkg/other.py:2"
    assert all(h.label != "Session.send" for h in hits)


def test_a_bare_name_shared_by_two_classes_finds_both(store):
    labels = {h.label for h in query(store, "where is send() defined") if h.relation == "defines"}
    assert labels == {"Session.send", "Other.send"}


def test_split_identifier_words_find_a_symbol(store):
    hits = query(store, "how does it decide to strip the auth header")
    assert hits and hits[0].label == "should_strip_auth" and hits[0].relation == "defines"


def test_test_callers_rank_below_source_callers(store):
    hits = where(query(store, "who uses should_strip_auth"))
    assert hits.index("called_by rebuild_auth pkg/adapter.py:24") < hits.index(
        "called_by test_send tests/test_session.py:2")


def test_hits_are_ranked_and_deduplicated(store):
    hits = query(store, "where is should_strip_auth defined and what calls should_strip_auth()", k=20)
    keys = [(h.label, h.source_file, h.line) for h in hits]
    assert len(keys) == len(set(keys))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_k_limits_the_answer(store):
    assert len(query(store, "who uses should_strip_auth", k=1)) == 1


@pytest.mark.parametrize("question", [
    "how do I configure logging for the database layer?",
    "xyzzy plugh frotz",
    "",
])
def test_returns_nothing_when_the_question_names_nothing_here(store, question):
    assert query(store, question) == []


def test_an_empty_store_answers_nothing():
    empty = StructureStore("x", {"id": [], "label": [], "kind": [], "path": [], "line": []},
                           {"src": [], "dst": [], "relation": [], "path": [], "line": []})
    assert query(empty, "where is foo defined") == []


def big_tables(n: int) -> StructureTables:
    labels = [f"Mod{i % 50}.handle_item_{i}" for i in range(n)]
    symbols = pa.table({
        "id": [f"s{i}" for i in range(n)], "label": labels,
        "kind": ["method"] * n, "path": [f"src/m{i % 50}.py" for i in range(n)],
        "line": [i + 1 for i in range(n)], "path_kind": ["source"] * n,
        "parts": [" ".join(name_parts(bare_name(label, "method"))) for label in labels],
    })
    calls = pa.table({"src": [f"s{i}" for i in range(1, n)], "dst": [f"s{i - 1}" for i in range(1, n)],
                      "relation": ["calls"] * (n - 1), "path": [f"src/m{i % 50}.py" for i in range(1, n)],
                      "line": list(range(1, n))})
    return StructureTables(symbols, calls)


@pytest.mark.slow   # timed: on a shared, busy machine it measures the neighbours (speed belongs in bench/)
def test_load_and_query_are_fast_on_a_big_scope(tmp_path):
    lay = layout(tmp_path)
    write_query_file(lay, "big", big_tables(6000))
    start = time.perf_counter()
    big = load_structure(lay, "big")
    assert query(big, "what calls handle_item_42?")[0].label == "Mod43.handle_item_43"
    assert time.perf_counter() - start < 0.5    # loose: catches a quadratic build, not jitter
    times = []
    for i in range(30):
        start = time.perf_counter()
        query(big, f"where is handle_item_{i * 7} defined and what calls it")
        times.append(time.perf_counter() - start)
    assert statistics.median(times) < 0.020


def test_the_read_side_never_imports_graphify():
    code = "import sys, loci.query.structure; sys.exit('graphify' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_loading_and_querying_imports_neither_numpy_nor_pyarrow(tables, tmp_path):
    write_query_file(layout(tmp_path), "demo", tables)
    code = (
        "import sys\n"
        "from loci.kernel.config import layout\n"
        "from loci.query.structure import load_structure, query\n"
        f"store = load_structure(layout({str(tmp_path)!r}), 'demo')\n"
        "assert query(store, 'what calls should_strip_auth?'), 'no answer'\n"
        "heavy = sorted(m for m in ('numpy', 'pyarrow') if m in sys.modules)\n"
        "sys.exit(', '.join(heavy) or None)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# --- a bed of small repositories in five languages, through graphify ---------------------

BED = {
    "py": {
        "pkg/__init__.py": "",
        "pkg/core.py": (
            "def clamp_value(x, lo, hi):\n"           # 1
            "    return max(lo, min(x, hi))\n"         # 2
            "\n\n"                                      # 3-4
            "class Engine:\n"                           # 5
            "    def run_step(self, x):\n"              # 6
            "        return clamp_value(x, 0, 10)\n"    # 7
            "\n"                                        # 8
            "    def start(self):\n"                    # 9
            "        return self.run_step(1)\n"         # 10
        ),
        "tests/test_core.py": (
            "from pkg.core import clamp_value\n\n\n"
            "def test_clamp_value_caps():\n"            # 4
            "    assert clamp_value(20, 0, 10) == 10\n"  # 5
        ),
    },
    "js": {
        "src/util.js": "export function formatName(first, last) {\n  return `${first} ${last}`;\n}\n",
        "src/main.js": (
            "import { formatName } from './util.js';\n"
            "\n"
            "export function greetUser(user) {\n"                 # 3
            "  const name = formatName(user.first, user.last);\n"  # 4
            "  return 'Hello ' + name;\n"
            "}\n"
        ),
    },
    "ts": {
        "src/store.ts": (
            "export class TokenStore {\n"                    # 1
            "  private items: string[] = [];\n"
            "\n"
            "  addToken(t: string): void {\n"                # 4
            "    this.items.push(normalizeToken(t));\n"      # 5
            "  }\n"
            "}\n"
            "\n"
            "export function normalizeToken(t: string): string {\n"  # 9
            "  return t.trim().toLowerCase();\n"
            "}\n"
        ),
    },
    "go": {
        "go.mod": "module example.com/calc\n\ngo 1.21\n",
        "calc.go": (
            "package calc\n\n"
            "func AddNumbers(a, b int) int {\n"        # 3
            "\treturn a + b\n"
            "}\n\n"
            "func SumSlice(xs []int) int {\n"          # 7
            "\ttotal := 0\n"
            "\tfor _, x := range xs {\n"
            "\t\ttotal = AddNumbers(total, x)\n"        # 10
            "\t}\n"
            "\treturn total\n"
            "}\n"
        ),
    },
    "rs": {
        "Cargo.toml": "[package]\nname = \"lines\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        "src/lib.rs": (
            "pub struct LineReader {\n"                           # 1
            "    text: String,\n"
            "}\n\n"
            "impl LineReader {\n"                                 # 5
            "    pub fn read_all(&self) -> Vec<String> {\n"       # 6
            "        parse_lines(&self.text)\n"                   # 7
            "    }\n"
            "}\n\n"
            "pub fn parse_lines(text: &str) -> Vec<String> {\n"   # 11
            "    text.lines().map(|l| trim_line(l)).collect()\n"  # 12
            "}\n\n"
            "fn trim_line(l: &str) -> String {\n"                 # 15
            "    l.trim().to_string()\n"
            "}\n"
        ),
    },
}


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "init"], check=True)
    return root


@pytest.fixture(scope="module")
def bed(tmp_path_factory) -> dict[str, StructureStore]:
    pytest.importorskip("graphify")
    from loci_pipeline.graphs import build_graph

    base = tmp_path_factory.mktemp("bed")
    lay = layout(base / "home")
    stores = {}
    for lang, files in BED.items():
        root = make_repo(base / lang, files)
        result = build_graph(lang, root, lay)
        assert result.status == "built", result.message
        tables = graph_tables(result.graph, root, scope=lang)
        assert not tables.problems
        write_query_file(lay, lang, tables)
        stores[lang] = load_structure(lay, lang)
    return stores


@pytest.mark.parametrize("lang, question, expected", [
    ("py", "where is clamp_value defined?", "defines clamp_value pkg/core.py:1"),
    ("py", "what calls clamp_value?", "called_by Engine.run_step pkg/core.py:7"),
    ("py", "what does Engine.start call?", "calls Engine.run_step pkg/core.py:10"),
    ("js", "where is formatName defined?", "defines formatName src/util.js:1"),
    ("js", "who uses formatName?", "called_by greetUser src/main.js:4"),
    ("js", "what does greetUser call?", "calls formatName src/main.js:4"),
    ("ts", "where is normalizeToken defined?", "defines normalizeToken src/store.ts:9"),
    ("ts", "what calls normalizeToken?", "called_by TokenStore.addToken src/store.ts:5"),
    ("ts", "what does addToken call?", "calls normalizeToken src/store.ts:5"),
    ("go", "where is AddNumbers defined?", "defines AddNumbers calc.go:3"),
    ("go", "what calls AddNumbers?", "called_by SumSlice calc.go:10"),
    ("go", "what does SumSlice call?", "calls AddNumbers calc.go:10"),
    ("rs", "where is parse_lines defined?", "defines parse_lines src/lib.rs:11"),
    ("rs", "what calls parse_lines?", "called_by LineReader.read_all src/lib.rs:7"),
    ("rs", "what does parse_lines call?", "calls trim_line src/lib.rs:12"),
])
def test_answers_cite_the_exact_file_and_line_in_every_language(bed, lang, question, expected):
    assert where(query(bed[lang], question))[0] == expected


def test_test_code_callers_come_after_source_callers_in_a_real_graph(bed):
    hits = where(query(bed["py"], "what calls clamp_value?"))
    assert hits.index("called_by Engine.run_step pkg/core.py:7") < hits.index(
        "called_by test_clamp_value_caps tests/test_core.py:5")


def test_a_symbol_from_another_repository_is_not_found(bed):
    assert query(bed["go"], "what calls parse_lines?") == []


def test_a_module_qualified_name_falls_back_to_class_and_method(store):
    assert where(query(store, "where is pkg.session.Session.send defined"))[0] == \
        "defines Session.send pkg/session.py:2"


def test_a_qualified_name_unknown_here_falls_back_to_the_bare_name(store):
    hits = query(store, "where is Mixin.should_strip_auth defined")
    assert where(hits)[0] == "defines should_strip_auth pkg/adapter.py:1"


def test_a_name_a_stub_only_declares_weighs_less_than_where_it_is_defined():
    """A type stub (``.pyi``, ``.d.ts``) declares what another file defines: "where is X defined?"
    is answered by the project that defines it, not by a stub package that repeats its names."""
    import pyarrow as pa

    from loci_pipeline.structure_tables import SYMBOL_SCHEMA

    rows = [("should_strip_auth", "requests/sessions.py"), ("merge_setting", "requests-stubs/sessions.pyi"),
            ("ChalkInstance", "types/index.d.ts"), ("makeChalk", "source/index.ts")]
    table = pa.table({"id": [str(i) for i in range(len(rows))], "label": [r[0] for r in rows],
                      "kind": ["function"] * len(rows), "path": [r[1] for r in rows], "line": [1] * len(rows),
                      "path_kind": ["source"] * len(rows), "parts": [""] * len(rows)}, schema=SYMBOL_SCHEMA)
    vocab = symbol_vocabulary(table)
    assert vocab["should_strip_auth"] == 1.0 and vocab["makechalk"] == 1.0
    assert 0 < vocab["merge_setting"] < 0.5 and 0 < vocab["chalkinstance"] < 0.5
