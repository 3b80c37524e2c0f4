"""The warm engine over a day of a developer's work: what a reload leaves behind (in-process
``Engine``: no background process is started here)."""
from __future__ import annotations

import gc
import os
import weakref

import numpy as np
from typer.testing import CliRunner

from conftest import GIZMO, WEBBY, setup_home
from loci.front.cli import app
from loci.query.engine import Engine


class WordEncoder:
    """A fake embedder: each word lands on one of eight axes by its letters."""

    model_id = "words"
    dim = 8

    def encode(self, texts):
        out = np.full((len(texts), self.dim), 0.01, dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, sum(map(ord, word)) % self.dim] += 1.0
            out[i] /= np.linalg.norm(out[i])
        return out


def _moved(path) -> None:
    """A write of ``path`` that the engine must notice (its mtime one second on)."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_a_reloaded_engine_frees_its_old_session_at_once(loci_home, tmp_path, monkeypatch):
    import loci.query.semantic
    import loci_pipeline.embed

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, layout: WordEncoder())
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, layout: WordEncoder())
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    res = CliRunner().invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output
    engine = Engine(loci_home)
    args = {"question": "how do I calibrate a sprocket?", "cwd": None, "group": None, "fast": False,
            "scope": None, "k": 5}
    engine.answer("ask", args, False)
    assert engine.session().semantic()          # the semantic side is open: what a real home holds
    old = weakref.ref(engine.session())
    was = gc.isenabled()
    gc.disable()                 # only what the engine does itself may free the old session
    try:
        _moved(engine.layout.scopes)
        engine.answer("ask", args, False)
        assert engine.loads == 2
        assert old() is None, "the replaced Session is still alive (kept by a reference cycle)"
    finally:
        if was:
            gc.enable()


def test_a_group_change_within_one_clock_tick_is_still_picked_up(loci_home, tmp_path):
    """groups.json rewritten (a new file, os.replace) with the same mtime as before: the kernel's
    file clock is coarse (a few ms), so two quick edits can carry one mtime."""
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    runner = CliRunner()
    assert runner.invoke(app, ["group", "add", "gizmo", "mine"]).exit_code == 0
    engine = Engine(loci_home)
    args = {"question": "sessions over http", "cwd": None, "group": "mine", "fast": True}
    before = engine.answer("route", args, True)["json"]
    assert before["outcome"] == "abstained"
    st = os.stat(engine.layout.groups)
    assert runner.invoke(app, ["group", "add", "webby", "mine"]).exit_code == 0
    os.utime(engine.layout.groups, ns=(st.st_atime_ns, st.st_mtime_ns))   # the same tick
    after = engine.answer("route", args, True)["json"]
    assert after["scopes"] == ["webby"], after
