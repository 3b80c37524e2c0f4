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


def test_the_graph_holds_every_layer_and_the_imports_inside_functions(graph):
    assert {"loci.kernel.config", "loci.query.router", "loci.front.cli_app", "pipeline.build"} <= set(graph)
    assert "pipeline.build" in graph["loci.front.cli_build"]          # imported inside a command function
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
        "pipeline/a.py": "def f():\n    from pipeline.b import g\n",
        "pipeline/b.py": "def g():\n    from pipeline import a\n",
        "pipeline/c.py": "from . import a\n",
    })
    assert cycles(import_graph(root)) == [["pipeline.a", "pipeline.b"]]


def test_an_arrow_up_the_layers_is_named_and_type_checking_imports_do_not_count(tmp_path):
    root = write_tree(tmp_path, {
        "pipeline/__init__.py": "", "pipeline/build.py": "",
        "loci/__init__.py": "", "loci/kernel/__init__.py": "", "loci/query/__init__.py": "",
        "loci/front/__init__.py": "", "loci/front/cli.py": "",
        "loci/query/x.py": "import importlib\ndef f():\n    return importlib.import_module('pipeline.build')\n",
        "loci/kernel/y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from loci.query import x\n"
                            "from ..front import cli\n",
    })
    assert upward(import_graph(root)) == ["loci.kernel.y imports loci.front.cli", "loci.query.x imports pipeline.build"]
