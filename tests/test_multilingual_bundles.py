"""Bundles carry each scope's multilingual store (role ``multilingual``): a push publishes it, a
pull (a map or ``--all``) lands it where the build would have written it, so a question in
another language is routed to pulled scopes as to local ones."""
from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import numpy as np
import pytest
from test_bundle import embed_home
from test_fetch import _flip
from test_multilingual import FETCHER, FINDER, BilingualEncoder, build
from test_pull import _edit_manifest, cli, swap

from conftest import GIT_ENV, setup_home
from loci.kernel import territory
from loci.kernel.config import layout
from loci.kernel.vectorstore import MULTILINGUAL_ID, matrix_path, meta_path, multilingual_vectors

SCOPES = ("fetcher", "finder")
FULL = {"map": (), "all": ("--all",)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Home A with fetcher and finder (vectors of a fake model), pushed to ``v0`` before it had
    multilingual stores (a bundle as an older loci wrote it) and to ``v1`` after."""
    tmp = tmp_path_factory.mktemp("ml-corpus")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCI_HOME", str(tmp / "home-a"))
        for k, v in GIT_ENV.items():
            mp.setenv(k, v)
        setup_home(tmp / "code", {"fetcher": FETCHER, "finder": FINDER})
        embed_home(mp)
        cli("push", str(tmp / "v0"), "--quiet")
        build(layout(), BilingualEncoder())
        cli("push", str(tmp / "v1"), "--quiet")
        home_a = layout()
    return SimpleNamespace(home_a=home_a, v0=tmp / "v0", v1=tmp / "v1")


@pytest.fixture
def published(corpus, tmp_path, loci_home):
    """A store holding v1 and an empty home at LOCI_HOME."""
    swap(tmp_path / "store", corpus.v1)
    return tmp_path / "store"


def _store(lay, scope: str) -> tuple[list[str], np.ndarray]:
    """A multilingual store's keys and int8 matrix as they are on disk."""
    path = multilingual_vectors(lay, scope)
    return json.loads(meta_path(path).read_text())["keys"], np.load(matrix_path(path))


def test_a_push_carries_each_scopes_multilingual_store_and_names_its_model(corpus):
    for scope in SCOPES:
        manifest = json.loads((corpus.v1 / scope / "manifest.json").read_text())
        entry = next(f for f in manifest["files"] if f["role"] == "multilingual")
        assert (corpus.v1 / scope / entry["path"]).stat().st_size == entry["size"]
        assert manifest["multilingual"] == {"model": MULTILINGUAL_ID, "dim": BilingualEncoder.dim}
        old = json.loads((corpus.v0 / scope / "manifest.json").read_text())
        assert "multilingual" not in {f["role"] for f in old["files"]} and "multilingual" not in old


@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_pull_brings_each_scopes_multilingual_vectors(published, corpus, mode):
    cli("pull", str(published), *FULL[mode], "--quiet", "--no-calibrate")
    lay = layout()
    for scope in SCOPES:
        keys, matrix = _store(lay, scope)
        want_keys, want = _store(corpus.home_a, scope)
        assert keys == want_keys and matrix.dtype == want.dtype and np.array_equal(matrix, want)
        assert territory.state(lay, scope) == ("mapped" if mode == "map" else None)


@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_pull_with_no_vectors_brings_no_multilingual_store(published, mode):
    cli("pull", str(published), *FULL[mode], "--no-vectors", "--quiet", "--no-calibrate")
    lay = layout()
    assert lay.meta("fetcher").is_file()
    assert not multilingual_vectors(lay, "fetcher").parent.exists()


def test_a_question_in_another_language_is_measured_against_the_pulled_scopes(published):
    from loci.query.multilingual import MultilingualSide, scope_affinity

    cli("pull", str(published), "--all", "--quiet", "--no-calibrate")
    side = MultilingualSide.open(layout(), encoder=BilingualEncoder())
    affinity = scope_affinity(side, "¿Cómo muestro los archivos ocultos?", list(SCOPES))
    assert set(affinity) == set(SCOPES) and max(affinity, key=affinity.get) == "finder"


def test_a_question_in_another_language_measures_mapped_scopes_without_fetching_their_stores(published):
    """Routing reads the multilingual store alone: a session's side (which opens a scope's chunk
    index for passages, and so would fetch a mapped scope's query file and vectors) measures
    every pulled scope and leaves them all mapped; only the scope answered from is fetched."""
    from loci.query.ask import open_session
    from loci.query.multilingual import MultilingualSide, foreign_scores, scope_affinity

    cli("pull", str(published), "--quiet", "--no-calibrate")
    session = open_session()
    side = MultilingualSide.open(session.layout, lexical=session.lexical, encoder=BilingualEncoder())
    affinity = scope_affinity(side, "¿Cómo muestro los archivos ocultos?", list(SCOPES))
    assert max(affinity, key=affinity.get) == "finder"
    assert [territory.state(session.layout, s) for s in SCOPES] == ["mapped", "mapped"]
    assert foreign_scores(side, "¿Cómo muestro los archivos ocultos?", ["finder"])["finder"]
    assert [territory.state(session.layout, s) for s in SCOPES] == ["mapped", "cached"]


@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_tampered_multilingual_file_is_refused_by_name_and_the_other_scopes_pull(published, mode):
    _flip(published / "finder" / "multilingual.parquet")
    res = cli("pull", str(published), *FULL[mode], "--no-calibrate", code=1)
    refusal = res.stderr.strip().splitlines()
    assert len(refusal) == 1 and "'finder'" in refusal[0] and "multilingual.parquet" in refusal[0]
    lay = layout()
    assert meta_path(multilingual_vectors(lay, "fetcher")).is_file() and lay.meta("fetcher").is_file()
    assert not lay.meta("finder").exists() and not meta_path(multilingual_vectors(lay, "finder")).exists()


def test_a_multilingual_table_of_another_model_than_its_manifest_names_is_refused(published):
    _edit_manifest(published / "finder", lambda m: m.update(multilingual={"model": MULTILINGUAL_ID, "dim": 8}))
    res = cli("pull", str(published), "--all", "--no-calibrate", code=1)
    assert "'finder'" in res.stderr and "multilingual.parquet holds vectors of" in res.stderr
    assert meta_path(multilingual_vectors(layout(), "fetcher")).is_file()


def test_multilingual_vectors_of_another_model_are_left_out_and_the_scope_still_pulls(published):
    _edit_manifest(published / "finder", lambda m: m.update(multilingual={"model": "another-encoder", "dim": 4}))
    out = json.loads(cli("pull", str(published), "--all", "--json", "--no-calibrate").stdout)
    lay = layout()
    assert sorted(out["imported"]) == list(SCOPES) and lay.query_db("finder").is_file()
    assert not meta_path(multilingual_vectors(lay, "finder")).exists()
    assert meta_path(multilingual_vectors(lay, "fetcher")).is_file()


@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_re_pull_of_a_bundle_that_lost_its_multilingual_store_removes_the_local_copy(published, corpus, mode):
    cli("pull", str(published), *FULL[mode], "--quiet", "--no-calibrate")
    assert meta_path(multilingual_vectors(layout(), "fetcher")).is_file()
    swap(published, corpus.v0)
    out = json.loads(cli("pull", str(published), *FULL[mode], "--json", "--no-calibrate").stdout)
    assert sorted(out["imported"]) == list(SCOPES)
    assert not any(p.exists() for s in SCOPES for p in (matrix_path(multilingual_vectors(layout(), s)),
                                                         meta_path(multilingual_vectors(layout(), s))))


def _files(home) -> set[str]:
    return {str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and p.name != ".doit.db"}


@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_bundle_without_the_multilingual_role_pulls_as_before(corpus, tmp_path, monkeypatch, mode):
    homes = {}
    for version in ("v0", "v1"):
        homes[version] = tmp_path / f"home-{version}"
        monkeypatch.setenv("LOCI_HOME", str(homes[version]))
        swap(tmp_path / "store", getattr(corpus, version))
        cli("pull", str(tmp_path / "store"), *FULL[mode], "--quiet", "--no-calibrate")
    with_role = {f for f in _files(homes["v1"]) if not f.startswith("multilingual/")}
    assert _files(homes["v0"]) == with_role and not (homes["v0"] / "multilingual").exists()


def test_a_manifest_naming_a_role_this_loci_does_not_know_is_pulled_without_it(published):
    future = {"role": "holograms", "path": "holograms.bin", "sha256": "0" * 64, "size": 10}
    _edit_manifest(published / "fetcher", lambda m: m["files"].append(future))   # its file is not even there
    out = json.loads(cli("pull", str(published), "--all", "--json", "--no-calibrate").stdout)
    assert sorted(out["imported"]) == list(SCOPES) and out["refused"] == {}
    assert not [p for p in layout().home.rglob("*holograms*")]


@pytest.mark.parametrize("package", [True, False])
def test_a_pull_that_brought_multilingual_stores_writes_the_encoder_cache_when_the_package_is_here(
        published, corpus, monkeypatch, package):
    import loci_pipeline.multilingual

    written = []
    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: package)
    monkeypatch.setattr(loci_pipeline.multilingual, "write_model_cache", lambda lay: written.append(lay) or True)
    swap(published, corpus.v0)
    cli("pull", str(published), "--quiet", "--no-calibrate")
    assert written == []            # nothing multilingual came
    swap(published, corpus.v1)
    cli("pull", str(published), "--quiet", "--no-calibrate")
    assert [lay.home for lay in written] == ([layout().home] if package else [])


def test_the_encoder_cache_is_not_written_again_when_it_is_current(published, monkeypatch):
    import loci.query.multilingual
    import loci_pipeline.multilingual

    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: True)
    monkeypatch.setattr(loci.query.multilingual, "cache_current", lambda folder: True)
    monkeypatch.setattr(loci_pipeline.multilingual, "write_model_cache",
                        lambda lay: pytest.fail("the cache was current"))
    cli("pull", str(published), "--quiet", "--no-calibrate")
    assert meta_path(multilingual_vectors(layout(), "finder")).is_file()



@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_pull_leaves_no_vector_table_beside_the_stores_it_wrote(published, mode):
    cli("pull", str(published), *FULL[mode], "--quiet", "--no-calibrate")
    home = layout().home
    assert not [p for folder in ("vectors", "multilingual") for p in (home / folder).rglob("*.parquet")]
