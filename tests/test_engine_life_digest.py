"""Which engine answers: the code digest names the interpreter and environment, not the name the
interpreter was called by (`loci` runs bin/python3, `python -m loci` bin/python)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = "from loci.front.engine_client import code_digest; print(code_digest())"


def _digest(python: str) -> str:
    got = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, cwd="/", timeout=60)
    assert got.returncode == 0, got.stderr
    return got.stdout.strip()


def test_two_names_of_one_interpreter_in_one_environment_share_the_engine():
    folder = os.path.dirname(sys.executable)
    names = [os.path.join(folder, n) for n in ("python", "python3") if os.path.exists(os.path.join(folder, n))]
    if len(names) < 2:
        pytest.skip("this environment has one name for its interpreter")
    assert _digest(names[0]) == _digest(names[1])


def test_another_environment_of_the_same_interpreter_gets_an_engine_of_its_own(tmp_path):
    other = tmp_path / "bin" / "python"               # outside the venv: the base environment's prefix
    other.parent.mkdir()
    other.symlink_to(os.path.realpath(sys.executable))
    probe = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.dirname(__import__('loci').__file__))!r}); "
    got = subprocess.run([str(other), "-c", probe + PROBE], capture_output=True, text=True, cwd="/", timeout=60)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() != _digest(sys.executable)
