"""Where $LOCI_HOME is, without pathlib or dataclasses: the thin client (``loci.front.engine_client``)
needs it before any heavy import, and ``loci.kernel.config.loci_home`` is this as a Path."""
from __future__ import annotations

import os


def home_dir() -> str:
    """The artifact directory: $LOCI_HOME (a relative one made absolute against the working
    directory now, so a step run elsewhere writes to the same home), else ~/.loci."""
    env = os.environ.get("LOCI_HOME")
    return os.path.abspath(os.path.expanduser(env)) if env else os.path.join(os.path.expanduser("~"), ".loci")


# The warm engine's files, named here (not in Layout) because the thin client reaches them before
# it imports pathlib or dataclasses; ``Layout`` names the same files as Paths.
MANIFEST_NAME = "manifest.json"
RUN_DIR = "run"
LOGS_DIR = "logs"


def run_dir(home: str) -> str:
    """The warm engine's folder (0700): its socket and lock."""
    return os.path.join(home, RUN_DIR)


def engine_socket(home: str) -> str:
    return os.path.join(home, RUN_DIR, "engine.sock")


def engine_lock(home: str) -> str:
    return os.path.join(home, RUN_DIR, "engine.lock")


def engine_log(home: str) -> str:
    return os.path.join(home, LOGS_DIR, "engine.log")


def manifest_path(home: str) -> str:
    return os.path.join(home, MANIFEST_NAME)
