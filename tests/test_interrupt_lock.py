"""Interrupted builds and the build lock: a dead holder's lock is broken by one process only."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import loci.kernel.atomic as atomic
from loci.kernel.atomic import LockHeld, build_lock, process_start, read_lock
from test_unit_atomic import dead_pid


def test_a_rival_that_broke_the_dead_holders_lock_first_keeps_it(tmp_path, monkeypatch):
    """Two builds start after a killed one (kill -9 leaves its lock): both find the dead holder;
    the first breaks the lock and takes it. The second must then see the live rival and refuse,
    not remove the rival's fresh lock and run beside it."""
    lock = tmp_path / ".build.lock"
    lock.write_text(json.dumps({"pid": dead_pid(), "what": "build", "start": None}))
    rival = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        real_read, calls = atomic.read_lock, []

        def rival_breaks_in(path):
            holder = real_read(path)       # this process reads the dead holder...
            if not calls:                  # ...and meanwhile the rival breaks the lock and takes it
                lock.write_text(json.dumps({"pid": rival.pid, "what": "update",
                                            "start": process_start(rival.pid)}))
            calls.append(holder)
            return holder

        monkeypatch.setattr(atomic, "read_lock", rival_breaks_in)
        with pytest.raises(LockHeld, match="another loci update is running"):
            with build_lock(lock):
                pass
        assert real_read(lock)["pid"] == rival.pid
    finally:
        rival.kill()
        rival.wait()


def test_a_dead_holders_lock_is_still_broken_and_taken(tmp_path):
    lock = tmp_path / ".build.lock"
    lock.write_text(json.dumps({"pid": dead_pid(), "what": "build", "start": None}))
    with build_lock(lock):
        assert read_lock(lock)["pid"] == atomic.os.getpid()
    assert not lock.exists()
