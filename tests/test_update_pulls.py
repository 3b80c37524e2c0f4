"""What `loci update`, plain `doit` and `loci setup` do with the stores a home pulled from: the
update (doit's default run) pulls them again before its build steps (and shows a store it could
not read), setup and a commit hook's `doit index` never go to them."""
from __future__ import annotations

import shutil

import pytest
import test_pull
from conftest import setup_home
from test_bundle import FakeEncoder
from test_pull import CHANGED_Q, ask_json, cli, swap
from test_tasks import edit, routed_tokens

from loci.kernel.config import layout

corpus, published, pulled = test_pull.corpus, test_pull.published, test_pull.pulled   # gizmo, webby in a folder store

SOLO = {"README.md": "# solo\n\nA lonely lighthouse keeper's logbook of tides and lanterns.\n",
        "solo/tides.py": "def lantern_tide(x):\n    return x\n"}


def _count_pulls(monkeypatch) -> list[str]:
    import loci_pipeline.share.pull

    sources, real = [], loci_pipeline.share.pull.pull
    monkeypatch.setattr(loci_pipeline.share.pull, "pull", lambda lay, source, **kw: sources.append(source)
                        or real(lay, source, **kw))
    return sources


def plain_doit(monkeypatch, *args: str) -> int:
    """`doit [args]` in a checkout, in-process: the tasks loci/dodo.py loads for plain doit (its
    namespace, with sys.argv as doit's), run by doit's own main."""
    import sys

    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    import loci.dodo
    import loci_pipeline.graphs

    monkeypatch.setattr(loci_pipeline.graphs, "graphify_available", lambda: False)   # no code graphs here
    monkeypatch.setattr(sys, "argv", ["doit", *args])
    return DoitMain(ModuleTaskLoader(loci.dodo._namespace()), config_filenames=()).run(list(args))


def layout_scopes() -> list[str]:
    from loci.kernel.registry import load_registry

    return load_registry(layout()).names()


def test_setup_does_not_pull_again_and_succeeds_when_a_pulled_store_is_gone(published, tmp_path, monkeypatch):
    cli("pull", str(published), "--all", "--quiet")
    shutil.rmtree(published)
    sources = _count_pulls(monkeypatch)
    setup_home(tmp_path / "mine", {"solo": SOLO})              # exit 0 asserted there
    assert sources == []
    assert {"gizmo", "webby", "solo"} <= set(layout_scopes())


def _gone_store_and_an_edit(published, tmp_path, monkeypatch) -> None:
    """A home with a local scope and the two scopes pulled from ``published``; then the store is
    gone and the local scope is edited."""
    import loci_pipeline.embed

    code = setup_home(tmp_path / "mine", {"solo": SOLO})
    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())  # of the pulled vectors
    cli("pull", str(published), "--all", "--quiet")
    shutil.rmtree(published)
    edit(code / "solo", "flywheels")


def test_update_names_a_pulled_store_that_is_gone_on_stderr_and_exits_non_zero(published, tmp_path, monkeypatch):
    _gone_store_and_an_edit(published, tmp_path, monkeypatch)
    res = cli("update", "--quiet", "--no-graphs", code=1)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and published.name in lines[0] and "not a folder" in lines[0], res.stderr
    assert {"gizmo", "webby", "solo"} <= set(layout_scopes())   # its scopes are kept, the rest was built
    assert "flywheel" in routed_tokens(layout())


def test_plain_doit_fails_only_the_pull_of_a_gone_store_and_builds_the_local_scopes(published, tmp_path,
                                                                                      monkeypatch):
    from loci_pipeline import build
    from loci_pipeline.tasks import home_context

    _gone_store_and_an_edit(published, tmp_path, monkeypatch)
    assert plain_doit(monkeypatch) == 1                        # doit names the failed pull:SOURCE task
    assert {"gizmo", "webby", "solo"} <= set(layout_scopes())
    assert "flywheel" in routed_tokens(layout())               # the local scope was built all the same
    report = build.update(home_context(layout(), graphs=False))
    assert list(report.pull_failed) == [f"file://{published}"] and report.pulls == []
    assert "not a folder" in report.pull_failed[f"file://{published}"] and report.code == 1
    assert not report.index.failed


def test_plain_doit_pulls_a_changed_bundle_into_the_home_before_it_builds(pulled, monkeypatch):
    import loci_pipeline.embed

    from loci_pipeline.share.pull import read_pulled

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    first = {name: rec["manifest_sha256"] for name, rec in read_pulled(layout()).items()}
    assert plain_doit(monkeypatch) == 0
    now = {name: rec["manifest_sha256"] for name, rec in read_pulled(layout()).items()}
    assert now["webby"] != first["webby"] and now["gizmo"] == first["gizmo"]   # webby's new bundle came
    assert ask_json("--fast", CHANGED_Q)["scopes"] == ["webby"]


@pytest.mark.parametrize("targets", [["index"], ["index:solo"]], ids=["index", "index:solo"])
def test_a_commit_hook_s_doit_index_does_not_pull(published, tmp_path, monkeypatch, targets):
    import loci.dodo
    import loci_pipeline.embed
    from loci.kernel.state import read_meta

    code = setup_home(tmp_path / "mine", {"solo": SOLO})
    cli("pull", str(published), "--all", "--quiet")
    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    before = read_meta(layout(), "solo")["fingerprint"]
    edit(code / "solo", "flywheels")
    sources = _count_pulls(monkeypatch)
    assert plain_doit(monkeypatch, *targets) == 0              # plain doit, as a CI job or a hand runs it
    assert read_meta(layout(), "solo")["fingerprint"] != before   # the edit was indexed
    edit(code / "solo", "cogs")
    assert loci.dodo.main(targets) == 0                        # the hook's `python -m loci.dodo index:S`
    assert sources == []


def test_every_command_that_runs_an_update_shows_a_source_it_could_not_pull_in_one_line(capsys):
    from loci.front.cli_build import show_update
    from loci_pipeline.build import GraphsReport, IndexReport, UpdateReport
    from loci_pipeline.share.pull import PullReport

    report = UpdateReport(scan=None, graphs=GraphsReport(), index=IndexReport(), embed=None, calibrate=None,
                          pulls=[PullReport("file:///elsewhere")],
                          pull_failed={"s3://team/bundles": "cannot list the bucket: access denied"})
    assert show_update(report, quiet=True) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "s3://team/bundles" in err[0] and "access denied" in err[0], err
    assert "loci forget" in err[0]      # how to stop pulling a source that is gone for good



@pytest.mark.parametrize("how", ["loci update", "plain doit"])
def test_an_update_whose_pull_brings_the_first_vectors_embeds_the_home_in_the_same_run(
        how, published, corpus, tmp_path, loci_home, monkeypatch):
    import loci_pipeline.embed
    from loci.kernel.vectorstore import has_vectors
    from loci_pipeline import build
    from loci_pipeline.tasks import home_context

    monkeypatch.setenv("LOCI_HOME", str(corpus.home_a))         # the publisher, once without vectors
    cli("push", str(tmp_path / "bare"), "--no-vectors", "--quiet")
    monkeypatch.setenv("LOCI_HOME", str(loci_home))
    setup_home(tmp_path / "mine", {"solo": SOLO})               # no embeddings here
    swap(published, tmp_path / "bare")
    cli("pull", str(published), "--all", "--quiet")
    assert not layout().embed_config.exists()
    swap(published, corpus.v1)                                  # now published with vectors
    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    if how == "plain doit":
        assert plain_doit(monkeypatch) == 0
    else:
        report = build.update(home_context(layout(), graphs=False))
        assert report.code == 0 and [p.imported for p in report.pulls] == [["gizmo", "webby"]]
        assert report.embed is not None and "solo" in report.embed.embedded and "embed" in report.tasks
    assert layout().embed_config.exists()                      # the pull brought the home's first vectors
    assert has_vectors(layout().vectors("fake-model", "solo"))   # the local scope too, in the same run


def test_the_pull_task_reads_pulled_json_once_and_pulls_each_source_again_the_way_it_was_pulled(
        loci_home, monkeypatch):
    import loci_pipeline.share.pull as share_pull
    from loci.kernel.atomic import write_json
    from loci_pipeline.runner import run
    from loci_pipeline.tasks import BuildContext

    lay = layout()
    lay.home.mkdir(parents=True)
    write_json(share_pull.pulled_path(lay), {"scopes": {
        "a": {"source": "file:///one", "whole": True, "no_vectors": False},
        "b": {"source": "file:///one", "whole": False, "no_vectors": False},   # one map: pulled as maps
        "c": {"source": "file:///two", "mapped": False, "no_vectors": True},   # an older record: what came
        "d": {"folder": "x"},                                                  # no source: not pulled again
        "e": {"source": "file:///three", "scope": "gizmo", "named": True},     # by name (--scope)
        "f": {"source": "file:///three", "scope": "webby", "named": True},
        "g": {"source": "file:///one", "scope": "solo", "named": True}}})      # one of several: whole
    reads, pulls, real = [], [], share_pull.read_pulled
    monkeypatch.setattr(share_pull, "read_pulled", lambda layout: reads.append(1) or real(layout))
    monkeypatch.setattr(share_pull, "pull", lambda layout, source, **kw: pulls.append((source, kw))
                        or share_pull.PullReport(source))
    report = run(BuildContext(lay), ["pull"], jobs=2)
    assert pulls == [("file:///one", {"full": False, "no_vectors": False, "scopes": None}),
                     ("file:///three", {"full": True, "no_vectors": False, "scopes": ["gizmo", "webby"]}),
                     ("file:///two", {"full": True, "no_vectors": True, "scopes": None})]
    assert report.executed == ["pull:file:///one", "pull:file:///three", "pull:file:///two"] and not report.failed
    assert len(reads) == 1
