"""How many workers a build runs at once: doit's threads, a pull's processes."""
from __future__ import annotations

import os


def default_jobs() -> int:
    """One a core, at most four (the steps contend for the disk and the interpreter beyond that)."""
    return max(1, min(4, os.cpu_count() or 1))
