"""Calibration in pieces: each scope's semantic values kept in the home, computed again only
for the scopes whose files moved, merged into the same corpus-level fit."""
import json
import shutil

import numpy as np
import pytest

from conftest import GIZMO, WEBBY, setup_home
from loci.kernel.config import layout
from test_calibrate import FakeEncoder


class CountingEncoder(FakeEncoder):
    def __init__(self):
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        return super().encode(texts)


@pytest.fixture
def embedded(tmp_path, loci_home):
    """gizmo and webby indexed, with vectors of the fake model."""
    from loci_pipeline.embed import embed_scope

    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    for scope in ("gizmo", "webby"):
        embed_scope(scope, layout(), FakeEncoder())
    return loci_home


def fitted(encoder) -> dict:
    from loci_pipeline.calibrate import calibrate

    data = calibrate(layout(), load_encoder=lambda model, lay: encoder, write=False)
    return {k: data[k] for k in ("semantic", "multilingual", "params")}


def refuse(model, lay):
    raise AssertionError("the encoder was loaded")


def computed(monkeypatch) -> list[str]:
    """The scopes whose semantic piece is computed from here on."""
    import loci_pipeline.calibrate as calibrate

    seen, real = [], calibrate.semantic_piece
    monkeypatch.setattr(calibrate, "semantic_piece", lambda lay, model, scope, null: seen.append(scope)
                        or real(lay, model, scope, null))
    return seen


def test_a_second_calibration_reuses_every_piece_and_fits_the_same(embedded, monkeypatch):
    from loci_pipeline.calibrate import calibrate

    first = fitted(FakeEncoder())
    assert first["semantic"]["models"]["fake-model"]["floors"].keys() == {"gizmo", "webby"}
    seen = computed(monkeypatch)
    data = calibrate(layout(), load_encoder=refuse, write=False)
    assert seen == [] and {k: data[k] for k in first} == first


def test_a_changed_scope_alone_is_computed_again_and_the_fit_equals_a_whole_one(embedded, monkeypatch):
    from loci_pipeline.embed import embed_scope

    fitted(FakeEncoder())
    seen = computed(monkeypatch)
    (embedded.parent / "code" / "webby" / "webby" / "rotation.py").write_text(
        "def rotate_certificates():\n    '''Rotate the handshake certificates.'''\n")
    from typer.testing import CliRunner

    from loci.front.cli import app

    assert CliRunner().invoke(app, ["index", "--quiet"]).exit_code == 0
    embed_scope("webby", layout(), FakeEncoder())
    incremental = fitted(FakeEncoder())
    assert seen == ["webby"]
    shutil.rmtree(embedded / "calibration-pieces")
    assert fitted(FakeEncoder()) == incremental       # what a calibration from nothing fits


def test_the_off_topic_questions_are_encoded_once_for_a_model(embedded):
    encoder = CountingEncoder()
    fitted(encoder)
    assert encoder.calls == 1
    for piece in (embedded / "calibration-pieces").glob("gizmo.json"):
        piece.unlink()                  # gizmo's piece is computed again, its questions are kept
    again = CountingEncoder()
    fitted(again)
    assert again.calls == 0


def test_a_damaged_piece_is_computed_again_not_trusted(embedded, monkeypatch):
    first = fitted(FakeEncoder())
    path = embedded / "calibration-pieces" / "gizmo.json"
    data = json.loads(path.read_text())
    data["semantic"]["fake-model"]["null"] = ["high"] * 3
    path.write_text(json.dumps(data))
    (embedded / "calibration-pieces" / "webby.json").write_text("{not json")
    seen = computed(monkeypatch)
    assert fitted(FakeEncoder()) == first and sorted(seen) == ["gizmo", "webby"]


def test_damaged_encoded_questions_are_encoded_again(embedded):
    first = fitted(FakeEncoder())
    for path in (embedded / "calibration-pieces").glob("questions-*.npy"):
        path.write_bytes(b"\x93NUMPY garbage")
    (embedded / "calibration-pieces" / "gizmo.json").unlink()
    encoder = CountingEncoder()
    assert fitted(encoder) == first and encoder.calls == 1
    assert all(np.load(p).shape[0] > 0 for p in (embedded / "calibration-pieces").glob("questions-*.npy"))


def test_each_scopes_standings_are_kept_and_give_the_z_floor_of_the_whole_computation(embedded):
    from loci_pipeline.calibrate import BACKGROUND_TYPICAL, z_floor_from

    route = fitted(FakeEncoder())["semantic"]["models"]["fake-model"]["route"]
    nulls = {}
    for scope in ("gizmo", "webby"):
        piece = json.loads((embedded / "calibration-pieces" / f"{scope}.json").read_text())["semantic"]["fake-model"]
        assert len(piece["z"]) == len(piece["null"])
        nulls[scope] = piece["null"]
    assert route["semantic_z_floor"] == z_floor_from(nulls)
    assert route["semantic_z_veto"] == z_floor_from(nulls, BACKGROUND_TYPICAL)


def test_a_calibration_whose_words_fit_stands_routes_without_loading_the_whole_index(embedded, monkeypatch):
    import loci.query.ask
    from loci_pipeline.calibrate import calibrate

    calibrate(layout(), load_encoder=lambda model, lay: FakeEncoder())          # the words fitted, recorded
    whole = calibrate(layout(), load_encoder=refuse, write=False, full=True)     # fitted again: the whole index
    loads, real = [], loci.query.ask.load_routing
    monkeypatch.setattr(loci.query.ask, "load_routing", lambda lay, toks, *a, **kw: loads.append(toks)
                        or real(lay, toks, *a, **kw))
    assert calibrate(layout(), load_encoder=refuse, write=False)["semantic"] == whole["semantic"]
    assert loads == []                       # nothing moved: the corpus-level values stand, nothing is routed
    path = layout().calibration
    path.write_text(json.dumps({k: v for k, v in json.loads(path.read_text()).items() if k != "corpus_fit"}))
    kept = calibrate(layout(), load_encoder=refuse, write=False)                 # an older fit: the semantic values again
    assert loads and None not in loads                                           # each question's words only
    assert {k: kept[k] for k in ("semantic", "multilingual", "params", "fits")} == \
        {k: whole[k] for k in ("semantic", "multilingual", "params", "fits")}
