"""The small JSON records a build leaves per scope, read through their schemas.

A damaged record reads as absent here (the build step that writes it runs
again, since ``loci.kernel.integrity`` reports it); doctor names it.
"""
from __future__ import annotations

from loci.kernel.config import Layout
from loci.kernel.jsonfile import read_state, read_state_or_none
from loci.kernel.schemas import ERROR_FILE, META_FILE, StateError


def read_meta(layout: Layout, name: str) -> dict | None:
    """What the scope's last successful index recorded; None when absent or damaged."""
    return read_state_or_none(layout.meta(name), META_FILE)


def read_error(layout: Layout, name: str) -> str | None:
    """Why the scope's last index run failed; None when it did not."""
    try:
        record = read_state(layout.error(name), ERROR_FILE)
    except StateError:
        return f"the last index run failed (its record {layout.error(name)} is damaged)"
    return None if record is None else record["error"]
