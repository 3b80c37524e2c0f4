"""A number setting read from the environment (``LOCI_FETCH_SECONDS``, ``LOCI_CACHE_MB``, the
engine's ``LOCI_SERVER_*``). Unset or empty: the default. Set to anything else than a finite
positive number (or zero, where zero means something): the default too, and one warning line
naming the variable, its value and the default taken, once per process."""
from __future__ import annotations

import math
import os

_warned: set[tuple[str, str]] = set()


def env_number(name: str, default: float | None, *, zero: bool = False) -> float | None:
    """The finite number ``name`` holds when it is above zero (or zero itself, with ``zero``),
    else ``default`` (None: the caller's own, such as a ``Params`` field)."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and (value > 0 or (zero and value == 0)):
        return value
    if (name, raw) not in _warned:
        _warned.add((name, raw))
        taken = "its default" if default is None else f"the default {default:g}"
        import logging   # here: reading a good setting, as every question does, imports nothing more

        logging.getLogger("loci").warning("loci: %s=%r is not a %s number; %s is taken", name, raw,
                                          "non-negative" if zero else "positive", taken)
    return default
