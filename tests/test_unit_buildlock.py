"""loci_pipeline.buildlock: the runner's counted hold on the home's build lock."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loci.kernel.atomic import LockHeld, process_start, read_lock
from loci.kernel.config import layout
from loci_pipeline import buildlock
from test_unit_atomic import dead_pid

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def lay(tmp_path):
    lay = layout(tmp_path / "home")
    yield lay
    while str(lay.lock) in buildlock._held:     # a failed test leaves no hold behind
        buildlock.release(lay)


def test_hold_creates_the_home_and_the_lock_and_release_removes_it(lay):
    buildlock.hold(lay)
    assert read_lock(lay.lock)["pid"] == os.getpid()
    buildlock.release(lay)
    assert not lay.lock.exists()


def test_holds_are_counted_the_lock_goes_with_the_last_release(lay):
    buildlock.hold(lay)
    buildlock.hold(lay)
    buildlock.release(lay)
    assert lay.lock.exists()
    buildlock.release(lay)
    assert not lay.lock.exists()
    buildlock.release(lay)            # one release too many does nothing
    assert not lay.lock.exists()


def test_two_holders_the_second_process_is_refused(lay):
    buildlock.hold(lay)
    code = ("from loci_pipeline import buildlock\nfrom loci.kernel.config import layout\n"
            "from loci.kernel.atomic import LockHeld\n"
            f"try:\n    buildlock.hold(layout({str(lay.home)!r}))\n    print('held')\n"
            "except LockHeld as e:\n    print('refused', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.startswith("refused") and f"pid {os.getpid()}" in out.stdout, out.stderr
    assert read_lock(lay.lock)["pid"] == os.getpid()       # the refusal left the holder's lock alone


def test_a_stale_lock_of_a_dead_pid_is_taken_over(lay):
    lay.home.mkdir(parents=True)
    lay.lock.write_text(json.dumps({"pid": dead_pid(), "what": "build", "start": None}))
    buildlock.hold(lay)
    assert read_lock(lay.lock)["pid"] == os.getpid()
    buildlock.release(lay)
    assert not lay.lock.exists()


def test_a_live_holder_in_another_process_makes_hold_raise_and_keeps_its_lock(lay):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lay.home.mkdir(parents=True)
        lay.lock.write_text(json.dumps({"pid": sleeper.pid, "what": "update", "start": process_start(sleeper.pid)}))
        with pytest.raises(LockHeld, match="another loci update is running"):
            buildlock.hold(lay)
        assert read_lock(lay.lock)["pid"] == sleeper.pid
        assert str(lay.lock) not in buildlock._held
    finally:
        sleeper.kill()
        sleeper.wait()
