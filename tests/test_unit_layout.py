"""loci.kernel.config.Layout names every path under the home; nothing else builds one by hand,
and the front ends leave writing the home to the build API and the kernel."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from loci.kernel.config import Layout, layout

ROOT = Path(__file__).resolve().parents[1]
SCOPE = "team/api"


def every_path(lay: Layout) -> dict[str, Path]:
    """Each Layout property and each method of one name argument (given SCOPE), by name."""
    out = {}
    for name, member in inspect.getmembers(Layout):
        if name.startswith("_") or name == "home":
            continue
        if isinstance(member, property):
            out[name] = getattr(lay, name)
        elif inspect.isfunction(member):
            params = list(inspect.signature(member).parameters)[1:]
            out[name] = getattr(lay, name)(*([SCOPE] * len(params)))
    return out


def test_every_layout_path_lies_inside_the_home_and_no_two_coincide(tmp_path):
    lay = layout(tmp_path / "home")
    paths = every_path(lay)
    assert len(paths) > 30
    for name, path in paths.items():
        assert isinstance(path, Path) and path.is_relative_to(lay.home) and path != lay.home, name
    files = [p for n, p in paths.items() if p.suffix]
    assert len(set(files)) == len(files)


def test_a_scope_name_with_a_slash_stays_one_file_name(tmp_path):
    lay = layout(tmp_path)
    for name, path in every_path(lay).items():
        assert "team/api" not in str(path.relative_to(lay.home)), name


def test_the_thin_client_finds_the_engines_files_where_layout_names_them(tmp_path):
    from loci.front import engine_client

    lay = layout(tmp_path / "home")
    home = str(lay.home)
    assert Path(engine_client.socket_path(home)).parent == lay.run_dir
    assert Path(engine_client.lock_path(home)).parent == lay.run_dir
    assert Path(engine_client.log_path(home)) == lay.engine_log and lay.engine_log.parent == lay.logs
    assert Path(engine_client.manifest_path(home)) == lay.manifest


def test_the_hooks_log_and_the_engines_log_share_the_logs_folder(tmp_path):
    from loci.front.hook import log_path

    lay = layout(tmp_path)
    assert log_path(lay) == lay.hooks_log and lay.hooks_log.parent == lay.engine_log.parent


# ---------------------------------------------------------------- no path built by hand

def _module_files():
    for base in ("loci", "pipeline"):
        for path in sorted((ROOT / base).rglob("*.py")):
            if "examples" not in path.parts:
                yield path


def hand_built_paths(path: Path) -> list[str]:
    """``<x>.home / ...`` and ``os.path.join(home, ...)`` in a module: a path under the home
    named outside Layout (loci/kernel/config.py) and the thin client's names (loci/kernel/home.py)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) \
                and isinstance(node.left, ast.Attribute) and node.left.attr == "home":
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "os.path.join" and node.args \
                and ast.unparse(node.args[0]) in ("home", "self.home", "home_dir()"):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_module_builds_a_path_under_the_home_by_hand():
    allowed = {ROOT / "loci" / "kernel" / "config.py", ROOT / "loci" / "kernel" / "home.py"}
    found = [line for path in _module_files() if path not in allowed for line in hand_built_paths(path)]
    assert found == []


def test_the_hand_built_path_check_finds_one(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import os\ndef f(layout, home):\n    return layout.home / 'x.json', os.path.join(home, 'run')\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert len(hand_built_paths(f)) == 2
    finally:
        ROOT = saved


# ---------------------------------------------------------------- front ends never write the home

# what writes a file of the home; a front end calls the build API or a kernel function instead
HOME_WRITERS = {"editing_registry", "save_registry", "save_policy", "write_json", "write_bytes", "write_with",
                "atomic_path", "mkstemp", "add_scope", "relabel"}
# front-end modules that write, and what (none of it an artifact of the home)
WRITES_ELSEWHERE = {
    "hook.py": "the repository's .git/hooks",
    "skill.py": "the agent's skill folder",
    "engine_server.py": "the warm engine's own socket, lock and log ($LOCI_HOME/run, logs)",
}


def test_front_ends_call_no_function_that_writes_the_home():
    offenders = []
    for path in sorted((ROOT / "loci" / "front").glob("*.py")):
        if path.name in WRITES_ELSEWHERE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                offenders += [f"{path.name}: imports {a.name}" for a in node.names if a.name in HOME_WRITERS]
            elif isinstance(node, ast.Attribute) and node.attr in HOME_WRITERS:
                offenders.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []


def test_installing_a_hook_leaves_the_home_as_it_was(tmp_path, loci_home):
    from conftest import GIZMO, setup_home
    from loci.front import hook

    code = setup_home(tmp_path / "code", {"gizmo": GIZMO})
    before = sorted(p.relative_to(loci_home) for p in loci_home.rglob("*"))
    hook.install(layout(), [code / "gizmo"])
    assert sorted(p.relative_to(loci_home) for p in loci_home.rglob("*")) == before
    assert f"mkdir -p {layout().logs}" in (code / "gizmo" / ".git" / "hooks" / "post-commit").read_text()


# ---------------------------------------------------------------- the kernel's write check

def test_ensure_writable_makes_the_home_and_leaves_no_probe(tmp_path):
    from loci.kernel.atomic import ensure_writable

    ensure_writable(tmp_path / "a" / "home")
    assert list((tmp_path / "a" / "home").iterdir()) == []


def test_an_unwritable_home_is_a_store_error_naming_it_and_the_fix(tmp_path):
    from loci.kernel.atomic import ensure_writable
    from loci.kernel.errors import StoreError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="set LOCI_HOME to a writable directory") as err:
        ensure_writable(blocker / "home")
    assert str(blocker / "home") in str(err.value)
