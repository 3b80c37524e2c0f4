"""The import graph of loci/ and pipeline/: arrows only point down the layers, and no cycle.

Layers, top to bottom: front ends (loci/front), the build side (pipeline), the query side
(loci/query), the kernel (loci/kernel). Every import counts, at the top of a module or inside a
function (a cycle hidden in a function is still a cycle); ``if TYPE_CHECKING:`` blocks do not run
and do not count.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("loci", "pipeline")

# (importer prefix, forbidden prefixes): an arrow back up the layers
FORBIDDEN = (
    ("loci.kernel", ("pipeline", "loci.front", "loci.query")),
    ("loci.query", ("pipeline", "loci.front")),
    ("pipeline", ("loci.front",)),
)


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package) for every module of PACKAGES under ``root``."""
    out = {}
    for base in PACKAGES:
        for path in sorted((root / base).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if "examples" in parts:                   # the demo's sample projects, not loci's code
                continue
            package = parts[-1] == "__init__"
            out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def imported_names(path: Path, name: str, package: bool) -> set[str]:
    """Every dotted name the module imports, anywhere in it (relative imports resolved;
    ``from a import b`` gives ``a.b``, which ``import_graph`` reduces to the module it names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    here = name.split(".") if package else name.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                prefix = here[: len(here) - (node.level - 1)]
                base = ".".join(prefix + ([base] if base else []))
            out |= {f"{base}.{a.name}" for a in node.names}     # reduced to ``base`` when not a module
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module") \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.add(node.args[0].value)
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of PACKAGES it imports (a name is reduced to the longest module it names)."""
    mods = modules(root)

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in mods:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph = {}
    for name, (path, package) in mods.items():
        targets = {owner(n) for n in imported_names(path, name, package)}
        graph[name] = {t for t in targets if t and t != name and t not in PACKAGES}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def upward(graph: dict[str, set[str]]) -> list[str]:
    def under(name: str, prefix: str) -> bool:
        return name == prefix or name.startswith(prefix + ".")

    return sorted(f"{m} imports {t}" for m, targets in graph.items() for t in targets
                  for importer, banned in FORBIDDEN if under(m, importer) and any(under(t, b) for b in banned))


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT)


def test_the_import_graph_has_no_cycle(graph):
    assert cycles(graph) == []


def test_no_arrow_points_back_up_the_layers(graph):
    assert upward(graph) == []


# what only the build runs: bulk encoding (torch, loci_pipeline.torch_bert) stays out of the read side
BUILD_ONLY = ("torch",)


def test_the_read_side_never_imports_what_only_the_build_runs():
    found = sorted(f"{name} imports {n}" for name, (path, package) in modules(ROOT).items()
                   if name.startswith(("loci.query", "loci.kernel"))
                   for n in imported_names(path, name, package)
                   if any(n == b or n.startswith(b + ".") for b in BUILD_ONLY))
    assert found == []


def test_no_query_module_is_there_for_the_build_alone(graph):
    """A module of loci/query that only pipeline/ imports is build code on the read side."""
    importers: dict[str, set[str]] = {}
    for name, targets in graph.items():
        for t in targets:
            importers.setdefault(t, set()).add(name)
    build_only = sorted(m for m in graph if m.startswith("loci.query.") and importers.get(m)
                        and all(i.startswith("pipeline") for i in importers[m]))
    assert build_only == []


def build_only_names(root: Path) -> dict[str, list[str]]:
    """``module.name`` -> its users, for each public function or class of loci/query that its own
    module never uses and only pipeline/ modules import (by name or as ``module.name``)."""
    mods = modules(root)
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, (p, _) in mods.items()}
    users: dict[tuple[str, str], set[str]] = {}
    for m, tree in trees.items():
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    users.setdefault((node.module, a.name), set()).add(m)
                    if f"{node.module}.{a.name}" in mods:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                aliases.update({a.asname or a.name: a.name for a in node.names})
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node.value) in aliases:
                users.setdefault((aliases[ast.unparse(node.value)], node.attr), set()).add(m)
    out = {}
    for m, tree in trees.items():
        if not m.startswith("loci.query."):
            continue
        used_here = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_") \
                    and node.name not in used_here:
                by = users.get((m, node.name), set()) - {m}
                if by and all(u.startswith("pipeline") for u in by):
                    out[f"{m}.{node.name}"] = sorted(by)
    return out


# build-only names that stay on the read side for a stated reason; any other is build code to move
# to pipeline/ (as `loci embed`'s deferred encoder went to pipeline/build_encoder.py)
READ_SIDE_FOR_A_REASON = {
    "loci.query.multilingual.pack": "the writing half of the cache format, beside its reader PackedStrings",
    "loci.query.multilingual.freeze": "the writing half of the cache format, beside its reader _thaw",
    "loci.query.multilingual.cache_current": "whether the cache the query side maps is whole and current",
    "loci.query.multilingual.package_version": "the encoder's version, which the cache records",
    "loci.query.evalgen.calibration_questions": "a split of the questions `loci eval` generates",
}


def test_the_read_side_holds_no_code_only_the_build_uses():
    assert set(build_only_names(ROOT)) <= set(READ_SIDE_FOR_A_REASON)


def test_no_read_side_function_has_a_build_mode():
    """A ``build=True`` switch is build code living on the read side (``load_encoder`` had one)."""
    found = sorted(f"{name}.{node.name}({arg.arg}=...)" for name, (path, _) in modules(ROOT).items()
                   if name.startswith(("loci.query", "loci.kernel"))
                   for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for arg in node.args.args + node.args.kwonlyargs if arg.arg in ("build", "for_build"))
    assert found == []


def test_the_build_only_check_finds_a_name_only_the_build_imports(tmp_path):
    root = write_tree(tmp_path, {
        "loci/__init__.py": "", "loci/query/__init__.py": "", "pipeline/__init__.py": "",
        "loci/query/enc.py": "def for_the_build():\n    pass\n\ndef shared():\n    pass\n\n"
                             "def used_here():\n    pass\n\nX = used_here\n",
        "loci/query/ask.py": "from loci.query.enc import shared\n",
        "pipeline/embed.py": "from loci.query.enc import for_the_build, shared\nimport loci.query.enc as e\n"
                             "e.used_here()\n",
    })
    assert build_only_names(root) == {"loci.query.enc.for_the_build": ["loci_pipeline.embed"]}


def test_the_graph_holds_every_layer_and_the_imports_inside_functions(graph):
    assert {"loci.kernel.config", "loci.query.router", "loci.front.cli_app", "loci_pipeline.build"} <= set(graph)
    assert "loci_pipeline.build" in graph["loci.front.cli_build"]          # imported inside a command function
    assert "loci.kernel.config" in graph["loci.query.ask"]


# ---------------------------------------------------------------- the checker itself, on a made-up tree

def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_a_cycle_hidden_inside_functions_is_found(tmp_path):
    root = write_tree(tmp_path, {
        "pipeline/__init__.py": "", "loci/__init__.py": "",
        "pipeline/a.py": "def f():\n    from loci_pipeline.b import g\n",
        "pipeline/b.py": "def g():\n    from loci_pipeline import a\n",
        "pipeline/c.py": "from . import a\n",
    })
    assert cycles(import_graph(root)) == [["loci_pipeline.a", "loci_pipeline.b"]]


def test_an_arrow_up_the_layers_is_named_and_type_checking_imports_do_not_count(tmp_path):
    root = write_tree(tmp_path, {
        "pipeline/__init__.py": "", "pipeline/build.py": "",
        "loci/__init__.py": "", "loci/kernel/__init__.py": "", "loci/query/__init__.py": "",
        "loci/front/__init__.py": "", "loci/front/cli.py": "",
        "loci/query/x.py": "import importlib\ndef f():\n    return importlib.import_module('loci_pipeline.build')\n",
        "loci/kernel/y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from loci.query import x\n"
                            "from ..front import cli\n",
    })
    assert upward(import_graph(root)) == ["loci.kernel.y imports loci.front.cli", "loci.query.x imports pipeline.build"]
