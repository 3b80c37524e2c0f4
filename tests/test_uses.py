"""`loci uses`: cross-project references from imports and declared dependencies."""
import json
from pathlib import Path

from typer.testing import CliRunner

from conftest import setup_home
from loci.front.cli import app
from loci_pipeline.dependencies import declared
from loci_pipeline.references import imports, normalise, provided
from loci_pipeline.uses import Ref, find_uses

runner = CliRunner()


def test_imports_are_read_per_language_with_their_first_line():
    py = "import os\nfrom corelib.sub import thing\n\nimport corelib\nfrom . import local\n"
    assert imports(py, "py") == [("os", 1), ("corelib", 2)]
    js = "import x from 'left-pad';\nconst y = require(\"@scope/pkg/deep\");\nimport './local.js';\n"
    assert imports(js, "ts") == [("left-pad", 1), ("@scope/pkg", 2)]
    rs = "use std::fmt;\nuse serde::Deserialize;\npub use crate::x;\nextern crate walkdir;\n"
    assert imports(rs, "rs") == [("serde", 2), ("walkdir", 4)]
    assert imports("import foo", "md") == []


def test_declared_dependencies_cite_the_manifest_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = [\n  "Core_Lib>=1.0",\n]\n')
    assert declared(tmp_path, ["pyproject.toml"]) == [("core_lib", "pyproject.toml", 4)]


def test_a_scope_is_known_by_its_manifest_name_and_packages_but_not_its_tests_folder(tmp_path):
    (tmp_path / "setup.py").write_text("setup(name='core-lib')\n")
    names = {n for n, _p, _l in provided(tmp_path, ["corelib/__init__.py", "tests/__init__.py",
                                                    "src/extra/__init__.py", "a/b/c/__init__.py"])}
    assert names == {"core-lib", "corelib", "extra"}
    assert normalise("Core_Lib") == normalise("core.lib") == normalise("core-lib")


def test_uses_link_a_name_to_the_scope_that_provides_it_never_to_itself():
    refs = {
        "core": [Ref("corelib", "provides", "package", "corelib/__init__.py", 1),
                 Ref("corelib", "uses", "import", "corelib/x.py", 1)],
        "app": [Ref("core_lib", "uses", "dependency", "pyproject.toml", 4),
                Ref("corelib", "uses", "import", "tests/test_a.py", 2),
                Ref("corelib", "uses", "import", "app/main.py", 1),
                Ref("requests", "uses", "import", "app/main.py", 2)],
    }
    refs["core"].append(Ref("core-lib", "provides", "manifest", "manifest", 0))
    edges = find_uses(refs)
    assert [(e[0], e[1], e[3], e[4]) for e in edges] == [
        ("app", "core", "dependency", "pyproject.toml"), ("app", "core", "import", "app/main.py"),
        ("app", "core", "import", "tests/test_a.py")]


def repos(tmp_path: Path) -> Path:
    return setup_home(tmp_path / "code", {
        "core": {"pyproject.toml": '[project]\nname = "corelib"\n',
                 "corelib/__init__.py": '"""Core helpers."""\n', "README.md": "# core\n\nHelpers.\n"},
        "app": {"pyproject.toml": '[project]\nname = "app"\ndependencies = ["corelib>=1"]\n',
                "app/__init__.py": "", "app/main.py": "from corelib import helpers\n\nhelpers()\n",
                "README.md": "# app\n\nUses core.\n"},
        "lonely": {"README.md": "# lonely\n\nNothing in common.\n"},
    })


def test_loci_uses_lists_who_references_whom_with_citations(tmp_path, loci_home):
    repos(tmp_path)
    out = json.loads(runner.invoke(app, ["uses", "--json"]).output)
    assert [(u["from"], u["to"]) for u in out] == [("app", "core")]
    assert [(c["how"], c["path"], c["line"]) for c in out[0]["uses"]] == [
        ("dependency", "pyproject.toml", 3), ("import", "app/main.py", 1)]
    text = runner.invoke(app, ["uses", "core"]).output
    assert "app -> core" in text and "[import] corelib  app/main.py:1" in text
    assert json.loads(runner.invoke(app, ["uses", "lonely", "--json"]).output) == []


def test_loci_uses_refresh_picks_up_a_new_import(tmp_path, loci_home):
    code = repos(tmp_path)
    (code / "lonely" / "tool.py").write_text("import app\n")
    assert json.loads(runner.invoke(app, ["uses", "lonely", "--json"]).output) == []
    out = json.loads(runner.invoke(app, ["uses", "lonely", "--json", "--refresh"]).output)
    assert [(u["from"], u["to"]) for u in out] == [("lonely", "app")]


def test_loci_uses_names_the_fix_when_nothing_is_recorded_or_the_scope_is_unknown(tmp_path, loci_home):
    repos(tmp_path)
    res = runner.invoke(app, ["uses", "nope"])
    assert res.exit_code != 0 and "unknown scope 'nope'" in res.output
    (loci_home / "uses.parquet").unlink()
    res = runner.invoke(app, ["uses"])
    assert res.exit_code != 0 and "loci uses --refresh" in res.output


def _forks(n: int, uses_each: int) -> dict[str, list[Ref]]:
    """``n`` forks that each provide ``corelib`` and import it ``uses_each`` times, plus an app."""
    refs = {f"fork{i:02d}": [Ref("corelib", "provides", "package", "corelib/__init__.py", 1)]
            + [Ref("corelib", "uses", "import", f"corelib/m{j}.py", 1) for j in range(uses_each)]
            for i in range(n)}
    refs["app"] = [Ref("corelib", "uses", "import", "app/main.py", 2), Ref("left-pad", "uses", "import", "a.py", 1)]
    return refs


def test_a_name_many_scopes_provide_is_stored_as_rows_not_as_edges():
    from loci_pipeline.uses import linked_refs

    rows = linked_refs(_forks(40, 5))
    assert len(rows) == 40 + 1          # the provides and the app's one use: a fork's imports are its own
    assert len(find_uses(_forks(40, 5))) == 40


def test_a_project_importing_a_name_it_provides_uses_its_own_code_not_a_copys():
    # two clones of one library, each importing itself in its examples: neither uses the other
    from loci.query.uses import edges

    refs = _forks(2, 3)
    assert [(e[0], e[1]) for e in find_uses(refs)] == [("app", "fork00"), ("app", "fork01")]
    older = [("fork00", "provides", "corelib", "corelib", "package", "corelib/__init__.py", 1, 0),
             ("fork01", "provides", "corelib", "corelib", "package", "corelib/__init__.py", 1, 0),
             ("fork01", "uses", "corelib", "corelib", "import", "corelib/m0.py", 1, 1)]   # a file that kept it
    assert edges(older) == []


def test_the_uses_of_one_scope_are_the_full_listing_filtered():
    from loci.query.uses import edges
    from loci_pipeline.uses import linked_refs

    rows = linked_refs(_forks(6, 2))
    everything = edges(rows)
    for scope in ["app", "fork00", "fork05", "nobody"]:
        assert edges(rows, scope) == [e for e in everything if scope in e[:2]]
    assert {e[1] for e in edges(rows, "app")} == {f"fork{i:02d}" for i in range(6)}


def test_a_uses_file_written_by_an_older_loci_is_still_read(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from loci.kernel.config import layout
    from loci.query.uses import load_uses

    lay = layout(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    pq.write_table(pa.table({"from": ["app"], "to": ["core"], "target": ["corelib"], "how": ["import"],
                             "path": ["app/main.py"], "line": pa.array([1], pa.int32())}), lay.uses)
    assert [(u.source, u.target, len(u.citations)) for u in load_uses(lay, "core")] == [("app", "core", 1)]
