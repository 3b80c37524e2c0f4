"""Bundles carry each scope's multilingual store (role ``multilingual``) and its summary (role
``multilingual_summary``): a push publishes both; a map pull lands the summary and leaves the
store remote (fetched when a question in another language ranks the scope close), ``--all``
lands the store (the summary made from it), so such a question is routed to pulled scopes as
to local ones."""
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
from loci.kernel.vectorstore import (
    MULTILINGUAL_ID, matrix_path, merged_summary_files, meta_path, multilingual_vectors, scope_summary_path,
)

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


def test_a_push_carries_each_scopes_multilingual_store_and_its_summary_and_names_their_model(corpus):
    for scope in SCOPES:
        manifest = json.loads((corpus.v1 / scope / "manifest.json").read_text())
        entry = next(f for f in manifest["files"] if f["role"] == "multilingual")
        assert (corpus.v1 / scope / entry["path"]).stat().st_size == entry["size"]
        summary = next(f for f in manifest["files"] if f["role"] == "multilingual_summary")
        assert summary["path"] == "multilingual_summary.npy"
        assert (corpus.v1 / scope / summary["path"]).read_bytes() == \
            scope_summary_path(corpus.home_a, MULTILINGUAL_ID, scope).read_bytes()
        assert manifest["multilingual"] == {"model": MULTILINGUAL_ID, "dim": BilingualEncoder.dim}
        old = json.loads((corpus.v0 / scope / "manifest.json").read_text())
        assert not {"multilingual", "multilingual_summary"} & {f["role"] for f in old["files"]}
        assert "multilingual" not in old


def _merged_scopes(lay) -> list[str]:
    return sorted(s for s, _, _ in json.loads(merged_summary_files(lay, MULTILINGUAL_ID)[1].read_text())["scopes"])


def test_a_map_pull_brings_each_scopes_multilingual_summary_and_leaves_its_store_remote(published, corpus):
    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    for scope in SCOPES:
        assert scope_summary_path(lay, MULTILINGUAL_ID, scope).read_bytes() == \
            scope_summary_path(corpus.home_a, MULTILINGUAL_ID, scope).read_bytes()
        assert not meta_path(multilingual_vectors(lay, scope)).exists()
        assert "multilingual" in {f["role"] for f in territory.read_record(lay, scope)["files"]}
        assert territory.state(lay, scope) == "mapped"
    assert _merged_scopes(lay) == list(SCOPES)


def test_a_full_pull_brings_each_scopes_multilingual_store_and_its_summary(published, corpus):
    cli("pull", str(published), "--all", "--quiet", "--no-calibrate")
    lay = layout()
    for scope in SCOPES:
        keys, matrix = _store(lay, scope)
        want_keys, want = _store(corpus.home_a, scope)
        assert keys == want_keys and matrix.dtype == want.dtype and np.array_equal(matrix, want)
        assert territory.state(lay, scope) is None
        assert np.array_equal(np.load(scope_summary_path(lay, MULTILINGUAL_ID, scope)),
                              np.load(scope_summary_path(corpus.home_a, MULTILINGUAL_ID, scope)))
    assert _merged_scopes(lay) == list(SCOPES)


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


def _mapped_session(params=None):
    from dataclasses import replace

    from loci.query.ask import open_session
    from loci.query.multilingual import MultilingualSide

    session = open_session()
    if params:
        session.params = replace(session.params, **params)
    session._multilingual = MultilingualSide.open(session.layout, lexical=session.lexical, encoder=BilingualEncoder())
    return session


def _local_stores(lay) -> list[str]:
    return [s for s in SCOPES if meta_path(multilingual_vectors(lay, s)).is_file()]


def test_a_question_in_another_language_fetches_the_store_the_summary_ranks_first_and_leaves_the_others(published):
    """On a home of maps the merged multilingual summary ranks the scopes; only the closest
    ``semantic_read`` have their multilingual store fetched (not their query file or vectors), and
    the route follows the one that holds the answer."""
    from loci.query.ask import route_question

    cli("pull", str(published), "--quiet", "--no-calibrate")
    session = _mapped_session({"semantic_read": 1})
    r = route_question(session, "¿Cómo muestro los archivos ocultos cuando busco algo?")
    assert r.outcome == "routed" and r.scopes[0] == "finder" and r.semantic["action"] == "foreign"
    assert _local_stores(session.layout) == ["finder"]
    assert [territory.state(session.layout, s) for s in SCOPES] == ["mapped", "mapped"]


def test_the_routes_own_scopes_are_fetched_beside_those_the_summary_ranks_first(published):
    from loci.query.multilingual import remote_to_measure

    cli("pull", str(published), "--quiet", "--no-calibrate")
    side = _mapped_session().multilingual()
    question = "¿Cómo muestro los archivos ocultos?"
    assert remote_to_measure(side, question, list(SCOPES), 1) == ["finder"]
    assert remote_to_measure(side, question, list(SCOPES), 1, include=["fetcher"]) == ["finder", "fetcher"]
    territory.ensure_all(side.layout, ["finder"], territory.FOREIGN_ROLES)
    assert remote_to_measure(side, question, list(SCOPES), 8) == ["fetcher"]   # a store here is not fetched again


def test_a_home_of_maps_alone_opens_the_multilingual_side_and_gets_a_foreign_opinion(published):
    from loci.query.ask import route_question
    from loci.query.multilingual import MultilingualSide

    cli("pull", str(published), "--quiet", "--no-calibrate")
    lay = layout()
    assert _local_stores(lay) == [] and MultilingualSide.open(lay, encoder=BilingualEncoder()) is not None
    r = route_question(_mapped_session(), "¿Cómo muestro los archivos ocultos cuando busco algo?")
    assert r.scopes[0] == "finder" and r.semantic["action"] == "foreign"
    assert _local_stores(lay) == list(SCOPES)     # both ranked within semantic_read (8)


# what each pull takes of the multilingual store: a map its summary, --all the store itself
TAKEN = {"map": "multilingual_summary.npy", "all": "multilingual.parquet"}


def _landed(lay, scope: str, mode: str) -> bool:
    """The scope's multilingual part a pull in ``mode`` lands is here."""
    return (scope_summary_path(lay, MULTILINGUAL_ID, scope) if mode == "map"
            else meta_path(multilingual_vectors(lay, scope))).is_file()


@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_tampered_multilingual_file_is_refused_by_name_and_the_other_scopes_pull(published, mode):
    _flip(published / "finder" / TAKEN[mode])
    res = cli("pull", str(published), *FULL[mode], "--no-calibrate", code=1)
    refusal = res.stderr.strip().splitlines()
    assert len(refusal) == 1 and "'finder'" in refusal[0] and TAKEN[mode] in refusal[0]
    lay = layout()
    assert _landed(lay, "fetcher", mode) and lay.meta("fetcher").is_file()
    assert not lay.meta("finder").exists() and not _landed(lay, "finder", mode)


@pytest.mark.parametrize("mode, refusal", [("all", "multilingual.parquet holds vectors of"),
                                           ("map", "multilingual_summary.npy is not a summary of 8-wide")])
def test_multilingual_vectors_of_another_dimension_than_the_manifest_names_are_refused(published, mode, refusal):
    _edit_manifest(published / "finder", lambda m: m.update(multilingual={"model": MULTILINGUAL_ID, "dim": 8}))
    res = cli("pull", str(published), *FULL[mode], "--no-calibrate", code=1)
    assert "'finder'" in res.stderr and refusal in res.stderr
    assert _landed(layout(), "fetcher", mode)


@pytest.mark.parametrize("mode", sorted(FULL))
def test_multilingual_vectors_of_another_model_are_left_out_and_the_scope_still_pulls(published, mode):
    _edit_manifest(published / "finder", lambda m: m.update(multilingual={"model": "another-encoder", "dim": 4}))
    out = json.loads(cli("pull", str(published), *FULL[mode], "--json", "--no-calibrate").stdout)
    lay = layout()
    assert sorted(out["imported"]) == list(SCOPES) and lay.meta("finder").is_file()
    assert not meta_path(multilingual_vectors(lay, "finder")).exists()
    assert not scope_summary_path(lay, MULTILINGUAL_ID, "finder").exists()
    assert _landed(lay, "fetcher", mode) and _merged_scopes(lay) == ["fetcher"]
    if mode == "map":   # nor is it recorded to be fetched
        assert "multilingual" not in {f["role"] for f in territory.read_record(lay, "finder")["files"]}


@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_re_pull_of_a_bundle_that_lost_its_multilingual_store_removes_the_local_copy(published, corpus, mode):
    cli("pull", str(published), *FULL[mode], "--quiet", "--no-calibrate")
    assert _landed(layout(), "fetcher", mode)
    if mode == "map":
        territory.ensure_all(layout(), ["fetcher"], territory.FOREIGN_ROLES)
        assert meta_path(multilingual_vectors(layout(), "fetcher")).is_file()
    swap(published, corpus.v0)
    out = json.loads(cli("pull", str(published), *FULL[mode], "--json", "--no-calibrate").stdout)
    assert sorted(out["imported"]) == list(SCOPES)
    lay = layout()
    assert not any(p.exists() for s in SCOPES for p in (matrix_path(multilingual_vectors(lay, s)),
                                                         meta_path(multilingual_vectors(lay, s)),
                                                         scope_summary_path(lay, MULTILINGUAL_ID, s)))
    assert not any(p.exists() for p in merged_summary_files(lay, MULTILINGUAL_ID))


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
    assert scope_summary_path(layout(), MULTILINGUAL_ID, "finder").is_file()



@pytest.mark.parametrize("mode", sorted(FULL))
def test_a_pull_leaves_no_vector_table_beside_the_stores_it_wrote(published, mode):
    cli("pull", str(published), *FULL[mode], "--quiet", "--no-calibrate")
    home = layout().home
    assert not [p for folder in ("vectors", "multilingual") for p in (home / folder).rglob("*.parquet")]


def test_a_pulled_map_fits_the_multilingual_floor_from_the_pieces_its_bundles_carry(corpus, tmp_path, loci_home,
                                                                                     monkeypatch):
    """`loci calibrate` fits the floor a question in another language must reach on each scope's
    closeness to off-topic questions in other languages. A map's stores stay remote, so its
    bundles carry those values: the pulled home fits the floor the publishing home fitted."""
    from loci.query import evalgen
    from loci_pipeline.calibrate import multilingual_floor

    questions = evalgen.UNANSWERABLE_FOREIGN
    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a.home))
    fitted = multilingual_floor(corpus.home_a, list(SCOPES), questions, BilingualEncoder())
    assert "multilingual_route_floor" in fitted
    cli("push", str(tmp_path / "v2"), "--quiet")
    carried = json.loads((tmp_path / "v2" / "finder" / "manifest.json").read_text())["calibration"]["multilingual"]
    assert len(carried) == len(questions)

    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    cli("pull", str(tmp_path / "v2"), "--quiet", "--no-calibrate")
    lay = layout()
    assert [territory.state(lay, s) for s in SCOPES] == ["mapped", "mapped"]
    assert not matrix_path(multilingual_vectors(lay, "finder")).exists()
    assert multilingual_floor(lay, list(SCOPES), questions, BilingualEncoder()) == fitted


@pytest.mark.parametrize("bad", [[0.1] * 3, ["near"] * 30, [2.0] * 30, "0.1"])
def test_a_malformed_multilingual_piece_is_left_out_and_the_bundle_still_pulls(corpus, tmp_path, loci_home,
                                                                              monkeypatch, bad):
    """A carried piece of the wrong length, not numbers, out of [-1, 1] or not a list lands nowhere:
    the scope pulls, and no floor is fitted on values nobody measured (the shipped one stays)."""
    from loci.query import evalgen
    from loci_pipeline.calibrate import multilingual_floor

    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a.home))
    multilingual_floor(corpus.home_a, list(SCOPES), evalgen.UNANSWERABLE_FOREIGN, BilingualEncoder())
    cli("push", str(tmp_path / "v3"), "--quiet")
    for scope in SCOPES:
        _edit_manifest(tmp_path / "v3" / scope, lambda m: m["calibration"].update(multilingual=bad))

    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    cli("pull", str(tmp_path / "v3"), "--quiet", "--no-calibrate")
    lay = layout()
    assert [territory.state(lay, s) for s in SCOPES] == ["mapped", "mapped"]
    got = multilingual_floor(lay, list(SCOPES), evalgen.UNANSWERABLE_FOREIGN, BilingualEncoder())
    assert "multilingual_route_floor" not in got and "skipped" in got
