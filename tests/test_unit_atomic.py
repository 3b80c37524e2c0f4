"""loci.kernel.atomic: a write is all or nothing, and the build lock admits one live holder."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loci.kernel.atomic import LockHeld, build_lock, holder_alive, process_start, read_lock, write_json, write_with

ROOT = Path(__file__).resolve().parents[1]


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def in_child(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)


def test_write_json_replaces_the_file_whole_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "deep" / "state.json"
    write_json(target, {"b": 1, "a": [1, 2]})
    write_json(target, {"c": 3})
    assert json.loads(target.read_text()) == {"c": 3} and target.read_text().endswith("\n")
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_a_writer_that_fails_midway_leaves_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "state.json"
    target.write_text("old")

    def half(tmp: Path) -> None:
        tmp.write_text("half of the ne")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_with(target, half)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_process_killed_mid_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "state.json"
    target.write_text('{"old": true}')
    out = in_child("import os\nfrom pathlib import Path\nfrom loci.kernel.atomic import write_with\n"
                   "def half(tmp):\n    Path(tmp).write_text('{\"new\": tr')\n    os._exit(9)\n"
                   f"write_with(Path({str(target)!r}), half)\n")
    assert out.returncode == 9, out.stderr
    assert json.loads(target.read_text()) == {"old": True}


def test_a_written_file_gets_the_usual_mode_not_mkstemps_0600(tmp_path):
    target = tmp_path / "x.json"
    write_json(target, {})
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_the_build_lock_records_its_holder_and_goes_when_released(tmp_path):
    lock = tmp_path / ".build.lock"
    with build_lock(lock, "index"):
        holder = read_lock(lock)
        assert holder["pid"] == os.getpid() and holder["what"] == "index"
        with build_lock(lock):            # re-entering in the holding process is allowed
            assert lock.exists()
        assert lock.exists()
    assert not lock.exists()


def test_a_second_process_is_refused_while_a_live_one_holds_the_lock(tmp_path):
    lock = tmp_path / ".build.lock"
    with build_lock(lock, "build"):
        out = in_child("from loci.kernel.atomic import build_lock, LockHeld\n"
                       f"try:\n    build_lock({str(lock)!r}).__enter__()\nexcept LockHeld as e:\n    print(e)\n")
        assert read_lock(lock)["pid"] == os.getpid()      # the refusal left the holder's lock alone
    assert f"pid {os.getpid()}" in out.stdout and "another loci build is running" in out.stdout


def test_a_lock_left_by_a_dead_process_is_broken(tmp_path):
    lock = tmp_path / ".build.lock"
    lock.write_text(json.dumps({"pid": dead_pid(), "what": "build", "start": None}))
    with build_lock(lock):
        assert read_lock(lock)["pid"] == os.getpid()


def test_a_lock_whose_pid_now_belongs_to_another_process_is_broken(tmp_path):
    lock = tmp_path / ".build.lock"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        start = process_start(sleeper.pid)
        assert start is not None and holder_alive({"pid": sleeper.pid, "start": start})
        lock.write_text(json.dumps({"pid": sleeper.pid, "what": "build", "start": start + 12345}))
        with build_lock(lock):
            assert read_lock(lock)["pid"] == os.getpid()
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize("content", ["", "[1, 2]", '{"what": "build"}', "not json"])
def test_a_damaged_lock_names_no_holder_and_is_broken(tmp_path, content):
    lock = tmp_path / ".build.lock"
    lock.write_text(content)
    assert read_lock(lock) is None
    with build_lock(lock):
        assert read_lock(lock)["pid"] == os.getpid()


def test_no_holder_is_not_alive():
    assert not holder_alive(None) and not holder_alive({"pid": 0}) and not holder_alive({"pid": dead_pid()})


def test_lock_held_is_an_expected_failure_with_exit_code_1():
    from loci.kernel.errors import LociError

    assert issubclass(LockHeld, LociError) and LockHeld.exit_code == 1
