"""doit over loci's build tasks, from the installed package (no checkout needed).

    python -m loci.dodo                  the same as `loci update`: rescan, graphs, index,
                                         routing, and the embed/calibrate steps the home has
    python -m loci.dodo index:NAME       one scope, then the routing it feeds (what the
                                         commit hooks run; add --wait to queue behind a build)
    python -m loci.dodo list | info T | forget T     doit's own commands
    doit -f $(loci dodo-path) [...]      the same tasks under plain doit

The home is $LOCI_HOME, else ~/.loci; doit's state lives in it (.doit.db).
"""
from __future__ import annotations

import sys

from loci.kernel.config import layout as _layout


def _namespace() -> dict:
    from pipeline.runner import namespace
    from pipeline.tasks import home_context

    return namespace(home_context(_layout()))


if __name__ != "__main__":  # loaded by `doit -f`: the task creators and DOIT_CONFIG
    globals().update(_namespace())
else:
    from pipeline.runner import main

    sys.exit(main(sys.argv[1:], _layout()))
