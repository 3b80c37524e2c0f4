"""The home's engine log: the engine and its client append lines to it the one same way."""
from __future__ import annotations

import os
import re
from pathlib import Path

from loci.front import engine_client as client
from loci.front.engine_server import Log

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"


def test_the_engine_and_its_client_append_lines_stamped_alike(tmp_path):
    home = str(tmp_path / "home")
    log = Log(home, own_stderr=False)
    log("reloaded (routing moved)")
    client._note(home, "client: the engine took no CPU for 3 s; ended")
    lines = Path(client.log_path(home)).read_text(encoding="utf-8").splitlines()
    assert re.fullmatch(rf"{STAMP} engine\[{os.getpid()}\] reloaded \(routing moved\)", lines[0]), lines
    assert re.fullmatch(rf"{STAMP} client: the engine took no CPU for 3 s; ended", lines[1]), lines
    assert oct(os.stat(client.log_path(home)).st_mode & 0o777) == "0o600"
    os.close(log.fd)


def test_both_go_through_one_line_writer(tmp_path, monkeypatch):
    home = str(tmp_path / "home")
    log = Log(home, own_stderr=False)
    written = []
    monkeypatch.setattr(client, "log_line", lambda fd, line: written.append(line))
    log("stopping")
    client._note(home, "client: hello")
    assert written == [f"engine[{os.getpid()}] stopping", "client: hello"]
    os.close(log.fd)
