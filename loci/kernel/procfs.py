"""Linux's /proc, read with nothing but ``open``: the warm engine's client reads it on a question's
path, which imports nothing heavy (not even ``json``)."""
from __future__ import annotations


def proc_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the process's name, its state first (field 3 of proc(5)):
    [] when there is no such process, None where they cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return []
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].decode("ascii", "replace").split()   # the name may hold anything
