"""Ctrl-C during `loci update`: one line saying what is kept, exit 130, the lock released, and the
next update finishes the rest."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from conftest import GIZMO, WEBBY, setup_home
from loci.front.cli import app
from loci.kernel.config import layout
from test_bundle import embed_home

ROOT = Path(__file__).resolve().parents[1]

# `loci update` in a child whose encoder tells when it started and then takes its time
CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
import loci.query.semantic, loci_pipeline.embed
from test_bundle import FakeEncoder

class Slow(FakeEncoder):
    def encode(self, texts):
        Path({marker!r}).write_text("encoding")
        time.sleep(60)
        return super().encode(texts)

enc = Slow()
loci_pipeline.embed.open_encoder = lambda name, lay: enc
loci.query.semantic.load_encoder = lambda name, lay, **kw: enc
from loci.front.cli import main
main(["update", "--no-graphs"])
"""


def test_ctrl_c_while_encoding_says_what_is_kept_and_the_next_update_finishes(tmp_path, loci_home, monkeypatch):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    embed_home(monkeypatch)
    (code / "gizmo" / "NOTES.md").write_text("# Notes\n\nThe zorblatt flange is tightened by hand.\n")
    marker = tmp_path / "encoding"
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=str(ROOT / "tests"), marker=str(marker))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), child.communicate(timeout=30)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert "interrupted" in err and "loci update" in err, err
    assert "Traceback" not in err and "terminate called" not in err, err
    assert not layout().lock.exists()
    res = CliRunner().invoke(app, ["update", "--quiet", "--no-graphs"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["doctor", "--json"])
    scoped = [f for f in json.loads(res.output) if f["scope"] in ("gizmo", "webby")]
    assert not [f for f in scoped if f["problem"] != "no_graph"], res.output   # indexed and embedded
    res = CliRunner().invoke(app, ["ask", "--scope", "gizmo", "zorblatt flange tightened"])
    assert "NOTES.md" in res.output, res.output
