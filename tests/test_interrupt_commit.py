"""A commit that lands while (or after) a scope is built: no artifact claims the new commit."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from conftest import GIZMO, WEBBY, git, setup_home
from loci.front.cli import app
from loci.kernel.config import layout
from loci_pipeline.share.bundle import MANIFEST, export_scope


def _commit(repo, rel: str, text: str, message: str) -> str:
    (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _exported_commit(tmp_path, name: str, where: str):
    folder = export_scope(layout(), name, tmp_path / where)
    return json.loads((folder / MANIFEST).read_text())["commit"]


def test_a_bundle_of_a_scope_committed_to_since_its_index_does_not_name_the_new_commit(tmp_path, loci_home):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    built = git(code / "gizmo", "rev-parse", "HEAD").strip()
    assert _exported_commit(tmp_path, "gizmo", "before") == built
    late = _commit(code / "gizmo", "LATE.md", "# Late\n\nThe zorblatt note came after the build.\n", "late note")
    assert _exported_commit(tmp_path, "gizmo", "stale") != late   # its tables hold no zorblatt note
    res = CliRunner().invoke(app, ["update", "--quiet", "--no-graphs"])
    assert res.exit_code == 0, res.output
    assert _exported_commit(tmp_path, "gizmo", "after") == late
