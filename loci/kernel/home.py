"""Where $LOCI_HOME is, without pathlib or dataclasses: the thin client (``loci.front.engine_client``)
needs it before any heavy import, and ``loci.kernel.config.loci_home`` is this as a Path."""
from __future__ import annotations

import os


def home_dir() -> str:
    """The artifact directory: $LOCI_HOME (a relative one made absolute against the working
    directory now, so a step run elsewhere writes to the same home), else ~/.loci."""
    env = os.environ.get("LOCI_HOME")
    return os.path.abspath(os.path.expanduser(env)) if env else os.path.join(os.path.expanduser("~"), ".loci")
