"""loci_pipeline.share.bundle: one scope's Parquet artifacts plus a deterministic manifest."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import GIZMO, WEBBY, git, setup_home
from loci.kernel.config import layout
from loci_pipeline.share.bundle import BUNDLE_SCHEMA, BundleError, export_scope, parse_manifest


class FakeEncoder:
    """Unit vectors seeded by the text (the same text, the same vector, on any machine)."""

    batch_size = 16

    def __init__(self, model_id: str = "fake-model", dim: int = 8):
        self.model_id, self.dim = model_id, dim

    def encode(self, texts):
        rows = []
        for t in texts:
            v = np.random.default_rng(int(hashlib.sha1(t.encode()).hexdigest()[:8], 16)).standard_normal(self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)


def embed_home(monkeypatch, encoder=None) -> None:
    """`loci embed` in the current LOCI_HOME with ``encoder`` standing in for the model."""
    from typer.testing import CliRunner

    import loci.query.semantic
    import loci_pipeline.embed
    from loci.front.cli import app

    encoder = encoder or FakeEncoder()
    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: encoder)
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: encoder)
    res = CliRunner().invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output


@pytest.fixture
def built(tmp_path, loci_home, monkeypatch) -> Path:
    """Two indexed and embedded repositories; gizmo has a remote with a token in its URL."""
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    git(code / "gizmo", "remote", "add", "origin", "https://bot:s3cr3t-token@example.invalid/team/gizmo.git")
    embed_home(monkeypatch)
    return code


def test_a_bundle_holds_the_scopes_tables_and_a_manifest_of_their_checksums(built, tmp_path):
    folder = export_scope(layout(), "gizmo", tmp_path / "out")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["bundle_schema"] == BUNDLE_SCHEMA and manifest["scope"] == "gizmo"
    roles = {f["role"] for f in manifest["files"]}
    assert {"chunks", "vocab", "refs", "vectors"} <= roles
    for f in manifest["files"]:
        data = (folder / f["path"]).read_bytes()
        assert len(data) == f["size"] and hashlib.sha256(data).hexdigest() == f["sha256"]
    assert manifest["embedding"] == {"model": "fake-model", "dim": 8}
    assert manifest["commit"] == git(built / "gizmo", "rev-parse", "HEAD").strip()
    assert manifest["meta"]["chunks"] > 0 and manifest["fingerprint"]


def test_the_repository_url_is_recorded_without_its_credentials(built, tmp_path):
    folder = export_scope(layout(), "gizmo", tmp_path / "out")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["repository"] == "https://example.invalid/team/gizmo.git"
    assert b"s3cr3t" not in (folder / "manifest.json").read_bytes()


def test_exporting_twice_gives_the_same_bytes(built, tmp_path):
    a = export_scope(layout(), "webby", tmp_path / "a")
    b = export_scope(layout(), "webby", tmp_path / "b")
    files = sorted(p.name for p in a.iterdir())
    assert files == sorted(p.name for p in b.iterdir())
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in files)
    assert b"built_at" not in (a / "manifest.json").read_bytes()


def _strings(path: Path) -> list[str]:
    """Every string a bundle file holds: the raw bytes, and each Parquet string value decoded."""
    data = path.read_bytes()
    out = [data.decode("utf-8", "replace")]
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        for column in table.columns:
            if pa.types.is_string(column.type):
                out.extend(v for v in column.to_pylist() if v)
    return out


def test_no_bundle_byte_names_the_machine_path_of_the_repository_or_the_home(built, tmp_path, loci_home):
    for name in ("gizmo", "webby"):
        folder = export_scope(layout(), name, tmp_path / "out")
        for path in folder.iterdir():
            for text in _strings(path):
                assert str(built) not in text, path
                assert str(loci_home) not in text, path


def test_a_table_holding_a_machine_path_is_refused(built, tmp_path):
    lay = layout()
    chunks = pq.read_table(lay.chunks("gizmo")).to_pydict()
    chunks["text"][0] = f"see {built / 'gizmo' / 'notes.txt'}"
    pq.write_table(pa.table(chunks, schema=pq.read_schema(lay.chunks("gizmo"))), lay.chunks("gizmo"))
    with pytest.raises(BundleError, match="machine path"):
        export_scope(lay, "gizmo", tmp_path / "out")
    assert not (tmp_path / "out" / "gizmo" / "manifest.json").exists()


def test_an_unindexed_scope_cannot_be_exported(built, tmp_path):
    with pytest.raises(BundleError, match="not indexed"):
        export_scope(layout(), "nosuch", tmp_path / "out")


def test_no_vectors_leaves_the_vectors_out(built, tmp_path):
    folder = export_scope(layout(), "gizmo", tmp_path / "out", no_vectors=True)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert not {"vectors", "label_vectors"} & {f["role"] for f in manifest["files"]}
    assert manifest["embedding"] is None
    assert not (folder / "vectors.parquet").exists()


@pytest.mark.parametrize("path", ["../escape.parquet", "/etc/passwd", "sub/dir.parquet", "..", "a\\b"])
def test_a_manifest_naming_a_path_outside_the_bundle_is_refused(path):
    raw = {"bundle_schema": 1, "scope": "x", "files": [
        {"role": "chunks", "path": path, "sha256": "0" * 64, "size": 1},
        {"role": "vocab", "path": "vocab.parquet", "sha256": "0" * 64, "size": 1}]}
    with pytest.raises(BundleError, match="outside the bundle"):
        parse_manifest(json.dumps(raw).encode(), "src/x")


def test_a_manifest_from_a_newer_loci_is_refused():
    raw = {"bundle_schema": BUNDLE_SCHEMA + 1, "scope": "x", "files": []}
    with pytest.raises(BundleError, match="newer loci"):
        parse_manifest(json.dumps(raw).encode(), "src/x")


def test_the_ci_templates_parse_and_run_commands_loci_has():
    import re

    yaml = pytest.importorskip("yaml")
    from loci.front.cli import app
    import typer.main

    commands = set(typer.main.get_command(app).commands)
    docs = Path(__file__).resolve().parents[1] / "docs" / "ci"
    for name in ("bundle.yml", "corpus.yml"):
        text = (docs / name).read_text()
        assert yaml.safe_load(text)["jobs"]
        used = set(re.findall(r"(?:run:|&&)\s*loci ([a-z]+)", text))
        assert used and used <= commands, used - commands


def test_the_bundle_templates_install_example_is_a_requirement_naming_this_distribution(tmp_path):
    import importlib.util
    import tomllib

    from packaging.requirements import Requirement

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("ci_templates", root / ".ci" / "templates.py")
    templates = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(templates)
    req = Requirement(templates.install_spec(tmp_path / "clone"))
    assert req.name == tomllib.loads((root / "pyproject.toml").read_text())["project"]["name"]
    assert "all" in req.extras and req.url == f"git+{(tmp_path / 'clone').as_uri()}"


def test_the_doit_bundle_task_writes_what_export_writes_and_then_rests(built, tmp_path, monkeypatch):
    import loci_pipeline.embed
    from loci_pipeline.runner import run
    from loci_pipeline.tasks import home_context

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    lay = layout()
    report = run(home_context(lay, scan=False), ["bundle:gizmo"])
    assert "bundle:gizmo" in report.executed, report.failed
    task_made = lay.home / "bundles" / "gizmo"
    exported = export_scope(lay, "gizmo", tmp_path / "out")
    assert sorted(p.name for p in task_made.iterdir()) == sorted(p.name for p in exported.iterdir())
    assert all((task_made / p.name).read_bytes() == p.read_bytes() for p in exported.iterdir())
    again = run(home_context(lay, scan=False), ["bundle:gizmo"])
    assert "bundle:gizmo" in again.uptodate


def test_a_meta_holding_a_machine_path_is_refused(built, tmp_path):
    lay = layout()
    meta = json.loads(lay.meta("webby").read_text())
    meta["stats"]["graph_problems"] = [f"cannot parse {built / 'webby' / 'x.py'}"]
    lay.meta("webby").write_text(json.dumps(meta))
    with pytest.raises(BundleError, match="machine path"):
        export_scope(lay, "webby", tmp_path / "out")


# --- the multilingual store (role ``multilingual``) --------------------------------------------

def write_multilingual(lay, scope: str, seed: int = 0, dim: int = 4) -> None:
    """A multilingual store for ``scope`` as the build writes one (its prose chunks' hashes, int8 rows)."""
    from loci.kernel.vectorfiles import write_vectors
    from loci.kernel.vectorstore import MULTILINGUAL_ID, multilingual_vectors
    from loci_pipeline.multilingual import wanted_chunks

    keys = sorted(wanted_chunks(lay, scope))
    rows = np.random.default_rng(seed).standard_normal((len(keys), dim)).astype(np.float32)
    multilingual_vectors(lay, scope).parent.mkdir(parents=True, exist_ok=True)
    write_vectors(multilingual_vectors(lay, scope), keys, rows, MULTILINGUAL_ID, dim)


def _roles(folder: Path) -> set[str]:
    return {f["role"] for f in json.loads((folder / "manifest.json").read_text())["files"]}


def test_a_scope_without_a_multilingual_store_is_bundled_without_the_role(built, tmp_path):
    folder = export_scope(layout(), "gizmo", tmp_path / "out")
    assert "multilingual" not in _roles(folder)
    assert "multilingual" not in json.loads((folder / "manifest.json").read_text())


def test_no_vectors_leaves_the_multilingual_store_out(built, tmp_path):
    write_multilingual(layout(), "gizmo")
    assert "multilingual" in _roles(export_scope(layout(), "gizmo", tmp_path / "with"))
    folder = export_scope(layout(), "gizmo", tmp_path / "out", no_vectors=True)
    assert "multilingual" not in _roles(folder) and not (folder / "multilingual.parquet").exists()
    assert "multilingual" not in json.loads((folder / "manifest.json").read_text())


def test_a_torn_multilingual_store_is_not_bundled(built, tmp_path):
    from loci.kernel.vectorstore import matrix_path, multilingual_vectors

    lay = layout()
    write_multilingual(lay, "gizmo")
    with open(matrix_path(multilingual_vectors(lay, "gizmo")), "ab") as fh:
        fh.write(b"\0" * 16)   # a matrix its manifest does not name: a build between its two writes
    assert "multilingual" not in _roles(export_scope(lay, "gizmo", tmp_path / "out"))


def test_a_changed_multilingual_store_changes_the_bundle_state_and_push_uploads_that_scope(built, tmp_path):
    from loci_pipeline.share.bundle import bundle_state
    from loci_pipeline.share.push import push

    lay = layout()
    write_multilingual(lay, "gizmo", seed=1)
    write_multilingual(lay, "webby", seed=1)
    assert push(lay, str(tmp_path / "store")).uploaded == ["gizmo", "webby"]
    state = bundle_state(lay, "gizmo")
    write_multilingual(lay, "gizmo", seed=2)
    assert bundle_state(lay, "gizmo") != state
    report = push(lay, str(tmp_path / "store"))
    assert report.uploaded == ["gizmo"] and report.unchanged == ["webby"]


def _raw_manifest(*extra: dict) -> dict:
    return {"bundle_schema": 1, "scope": "x", "files": [
        {"role": "chunks", "path": "chunks.parquet", "sha256": "0" * 64, "size": 1},
        {"role": "vocab", "path": "vocab.parquet", "sha256": "1" * 64, "size": 1}, *extra]}


def test_a_manifest_naming_an_unknown_role_parses_and_the_role_is_ignored():
    raw = _raw_manifest({"role": "holograms", "path": "holograms.bin", "sha256": "2" * 64, "size": 5})
    manifest = parse_manifest(json.dumps(raw).encode(), "src/x")
    assert [f.role for f in manifest.files] == ["chunks", "vocab"] and manifest.file("holograms") is None


@pytest.mark.parametrize("entry, words", [
    ({"role": "holograms", "path": "holograms.bin", "sha256": "not-a-checksum", "size": 5}, "malformed"),
    ({"role": "holograms", "path": "holograms.bin", "sha256": "2" * 64, "size": -1}, "malformed"),
    ({"role": 7, "path": "holograms.bin", "sha256": "2" * 64, "size": 5}, "malformed"),
    ({"role": "holograms", "path": "../holograms.bin", "sha256": "2" * 64, "size": 5}, "outside the bundle"),
    ({"role": "vocab", "path": "vocab2.parquet", "sha256": "2" * 64, "size": 5}, "unique roles"),
])
def test_a_malformed_entry_is_refused_whatever_its_role(entry, words):
    with pytest.raises(BundleError, match=words):
        parse_manifest(json.dumps(_raw_manifest(entry)).encode(), "src/x")


def test_duplicate_unknown_roles_are_refused():
    twice = [{"role": "holograms", "path": f"h{i}.bin", "sha256": "2" * 64, "size": 5} for i in range(2)]
    with pytest.raises(BundleError, match="unique roles"):
        parse_manifest(json.dumps(_raw_manifest(*twice)).encode(), "src/x")


def test_a_manifest_without_a_required_role_is_still_refused():
    raw = _raw_manifest()
    raw["files"] = raw["files"][:1]
    with pytest.raises(BundleError, match="lacks vocab"):
        parse_manifest(json.dumps(raw).encode(), "src/x")


@pytest.mark.parametrize("model", [None, {"model": "use-multilingual-v3"}, {"model": 5, "dim": 4}, "x"])
def test_multilingual_vectors_without_their_model_and_dimension_are_refused(model):
    raw = _raw_manifest({"role": "multilingual", "path": "multilingual.parquet", "sha256": "2" * 64, "size": 5})
    if model is not None:
        raw["multilingual"] = model
    with pytest.raises(BundleError, match="multilingual") as refused:
        parse_manifest(json.dumps(raw).encode(), "src/x")
    assert "malformed" not in str(refused.value)   # refused for its model, not as a role unknown
