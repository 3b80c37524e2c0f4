"""A damaged home is repaired by `loci update` without manual steps, and `loci doctor` says what
is actually affected: a lost embed.json, calibration.json or manifest.json, and an update stopped
while it encoded."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import GIZMO, WEBBY, git, setup_home
from loci.front.cli import app
from loci.front.doctor import diagnose
from loci.kernel.config import layout
from test_bundle import FakeEncoder

runner = CliRunner()


class CountingEncoder(FakeEncoder):
    """The fake model, counting the texts it was asked to encode."""

    def __init__(self):
        super().__init__()
        self.encoded = 0

    def encode(self, texts):
        self.encoded += len(texts)
        return super().encode(texts)


@pytest.fixture
def encoder(monkeypatch) -> CountingEncoder:
    import loci.query.semantic
    import loci_pipeline.embed

    enc = CountingEncoder()
    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay, *a, **kw: enc)
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: enc)
    return enc


@pytest.fixture
def embedded(tmp_path, loci_home, encoder):
    """Two repositories, indexed, embedded (the fake model) and calibrated."""
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    for step in (["embed", "--quiet"], ["calibrate"]):
        res = runner.invoke(app, step)
        assert res.exit_code == 0, res.output
    assert layout().embed_config.is_file() and layout().calibration.is_file()
    return code


def update():
    res = runner.invoke(app, ["update", "--quiet", "--no-graphs"])
    assert res.exit_code == 0, res.output
    return res


def problems(scope=None):
    return {f.problem: f for f in diagnose(layout()) if f.scope == scope}


def every_problem():
    """What doctor says of the whole home, as (scope, problem) pairs: the same after a repair as
    before the damage (whatever this install lacks, a graph extra or a multilingual encoder)."""
    return sorted((f.scope or "", f.problem) for f in diagnose(layout()))


# ---------------------------------------------------------------- 1. embed.json lost, vectors intact

def test_update_restores_a_lost_embed_record_from_the_intact_vectors_without_encoding(embedded, encoder):
    record, before = json.loads(layout().embed_config.read_text()), every_problem()
    calibrated = layout().calibration.read_bytes()
    layout().embed_config.unlink()
    encoder.encoded = 0
    update()
    assert json.loads(layout().embed_config.read_text()) == record
    assert encoder.encoded == 0
    assert every_problem() == before
    assert layout().calibration.read_bytes() == calibrated   # it fits as it did: nothing refitted either


def test_the_homes_context_keeps_embedding_on_while_its_vectors_are_here(embedded):
    from loci_pipeline.tasks import home_context

    layout().embed_config.unlink()
    ctx = home_context(layout())
    assert ctx.embed and ctx.model_id() == "fake-model"


def test_the_tasks_of_a_run_look_for_a_lost_embed_records_model_once(embedded, monkeypatch):
    import loci_pipeline.tasks as tasks

    layout().embed_config.unlink()
    ctx, looked = tasks.home_context(layout()), []
    monkeypatch.setattr(tasks, "lost_embed_model", lambda lay: looked.append(lay) or "fake-model")
    ctx.fresh()
    made = list(tasks.make_tasks(ctx, delayed=False)["task_scopes"]())
    assert sum(t.get("basename") == "vectors" and t["name"] is not None for t in made) == 2
    assert len(looked) == 1


def test_a_new_run_reads_the_embedding_model_again(embedded):
    from loci_pipeline.tasks import home_context

    ctx = home_context(layout())
    assert ctx.model_name() == "fake-model"
    record = json.loads(layout().embed_config.read_text())
    layout().embed_config.write_text(json.dumps({**record, "model": "other-model"}))
    ctx.fresh()
    assert ctx.model_name() == "other-model"


def test_the_model_the_stores_name_is_read_from_each_stores_manifest_once(embedded, monkeypatch):
    from collections import Counter

    import loci.kernel.vectorstore as vectorstore

    reads, read = Counter(), vectorstore.read_manifest
    monkeypatch.setattr(vectorstore, "read_manifest", lambda path: reads.update([path]) or read(path))
    assert vectorstore.stored_model(layout()) == "fake-model"
    assert reads and max(reads.values()) == 1, reads


def test_doctor_names_update_for_a_lost_embed_record_and_not_a_reencoding(embedded):
    layout().embed_config.unlink()
    found = problems()
    assert "no_embeddings" not in found
    lost = found["embed_record_missing"]
    assert lost.fix == "loci update" and "fake-model" in lost.message and "lexically" in lost.message
    assert found.get("calibration_stale") is None or found["calibration_stale"].fix == "loci update"


# ---------------------------------------------------------------- 2. calibration.json lost

def test_update_refits_a_lost_calibration_the_home_had(embedded):
    layout().calibration.unlink()
    lost = problems()["calibration_lost"]
    assert lost.severity == "gap" and lost.fix == "loci calibrate" and "shipped thresholds" in lost.message
    update()
    assert layout().calibration.is_file()
    assert "calibration_missing" not in problems()


def test_update_does_not_calibrate_a_home_set_up_without_calibration(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    update()
    assert not layout().calibration.exists()
    assert problems()["calibration_missing"].severity == "note"   # its choice, noted


# ---------------------------------------------------------------- 3. manifest.json lost

def test_doctor_says_questions_still_answer_when_only_the_manifest_is_lost(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    before = every_problem()
    layout().manifest.unlink()
    res = runner.invoke(app, ["ask", "--scope", "gizmo", "cogwheel ratchet"])
    assert res.exit_code == 0 and "sprocket" in res.output, res.output
    lost = problems()["manifest_missing"]
    assert "find no index" not in lost.message and "still" in lost.message
    assert "loci embed" in lost.message and "loci calibrate" in lost.message   # what refuses to run
    assert lost.fix == "loci update"
    update()
    assert layout().manifest.is_file() and every_problem() == before


def test_one_update_restores_a_lost_manifest_and_the_calibration_that_reads_it(embedded):
    before = every_problem()
    layout().manifest.unlink()
    update()
    assert layout().manifest.is_file() and every_problem() == before


def test_doctor_still_says_questions_find_no_index_when_the_routing_file_is_lost_too(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    layout().manifest.unlink()
    layout().routing_db.unlink()
    lost = problems()["index_unreadable"]
    assert "find no index" in lost.message and lost.fix == "loci index"


# ---------------------------------------------------------------- 4. routing before the encoding

def _edit_both(code):
    for name, word in (("gizmo", "zorblatt"), ("webby", "quuxbar")):
        (code / name / "NOTES.md").write_text(f"# Notes\n\nThe {word} flange is tightened by hand.\n")
        git(code / name, "add", "-A")
        git(code / name, "commit", "-q", "-m", "notes")


def _routed_while_encoding(encoder, names) -> list[bool]:
    """Filled while the encoder runs: whether the routing merged each of ``names`` as indexed
    now (what a question would route with while the vectors are encoded)."""
    from loci.kernel.state import read_meta
    from loci.query.store import indexed_metas

    seen = []
    real = encoder.encode

    def encode(texts):
        merged = indexed_metas(layout())
        seen.append(all(merged[n]["fingerprint"] == read_meta(layout(), n)["fingerprint"] for n in names))
        return real(texts)

    encoder.encode = encode
    return seen


def test_update_merges_routing_before_it_encodes(embedded, encoder):
    seen = _routed_while_encoding(encoder, ("gizmo", "webby"))
    _edit_both(embedded)
    update()
    assert seen and all(seen), seen


def test_a_hook_run_merges_routing_before_it_encodes(embedded, encoder):
    from loci_pipeline.runner import run_scopes
    from loci_pipeline.tasks import home_context

    seen = _routed_while_encoding(encoder, ("gizmo",))
    _edit_both(embedded)
    report = run_scopes(home_context(layout(), graphs=False), ["gizmo"])
    assert report.code == 0 and "vectors:gizmo" in report.executed
    assert seen and all(seen), seen


def test_every_encoding_step_waits_for_the_routing_merge_in_the_dag(embedded):
    from loci_pipeline.tasks import home_context, make_tasks

    made = make_tasks(home_context(layout()), delayed=False)
    steps = [t for t in made["task_scopes"]() if t.get("name") and t["basename"] in ("vectors", "multilingual")]
    assert steps and all("routing" in t["task_dep"] for t in steps)


def test_a_hook_run_with_vectors_leaves_another_repositorys_uncommitted_edit_unindexed(embedded, encoder):
    from loci_pipeline.runner import run_scopes
    from loci_pipeline.tasks import home_context
    from test_tasks import routed_tokens

    _edit_both(embedded)
    (embedded / "webby" / "NOTES.md").write_text("# Notes\n\nThe frobnitz gasket is still a draft.\n")
    report = run_scopes(home_context(layout(), graphs=False), ["gizmo"])
    assert report.code == 0 and "index:gizmo" in report.executed and "vectors:gizmo" in report.executed
    assert not [t for t in report.executed + report.uptodate if t.endswith(":webby")]
    assert "zorblatt" in routed_tokens(layout()) and "frobnitz" not in routed_tokens(layout())


# a hook's build in a child whose encoder dies as it starts (a reboot, a kill while it encodes)
KILLED_WHILE_ENCODING = """
import os, sys
sys.path.insert(0, {tests!r})
import loci_pipeline.embed
from test_bundle import FakeEncoder

class Killed(FakeEncoder):
    def encode(self, texts):
        os._exit(9)

loci_pipeline.embed.open_encoder = lambda name, lay, *a, **kw: Killed()
from loci.kernel.config import layout
from loci_pipeline.runner import run_scopes
from loci_pipeline.tasks import home_context
run_scopes(home_context(layout(), graphs=False), ["gizmo"])
"""


def test_a_hook_killed_while_it_encodes_leaves_its_scopes_new_words_routed(embedded):
    import subprocess
    import sys
    from pathlib import Path

    from test_tasks import routed_tokens

    _edit_both(embedded)
    tests = str(Path(__file__).resolve().parent)
    child = subprocess.run([sys.executable, "-c", KILLED_WHILE_ENCODING.format(tests=tests)],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 9, child.stderr   # it died encoding, not before
    assert "zorblatt" in routed_tokens(layout()) and "quuxbar" not in routed_tokens(layout())
    assert "routing_unmerged" not in problems("gizmo")


def test_doctor_says_routing_is_unmerged_after_an_update_stopped_before_the_merge(embedded):
    from loci_pipeline.runner import run
    from loci_pipeline.tasks import home_context

    before = every_problem()
    _edit_both(embedded)
    ctx = home_context(layout(), graphs=False, scan=False)
    assert run(ctx, ["index:gizmo", "index:webby"], single=False).code == 0   # indexed, not merged
    for name in ("gizmo", "webby"):
        found = problems(name)
        assert "index_stale" not in found, found
        unmerged = found["routing_unmerged"]
        assert "indexed" in unmerged.message and "routing" in unmerged.message and unmerged.fix == "loci index"
    update()
    assert every_problem() == before
