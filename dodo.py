"""doit entry point for a checkout: `doit` rebuilds what changed (commit hooks, CI jobs).

`doit graphs`, `doit index` and `doit embed` run one step; plain `doit` runs index + routing.

The tasks are the ones the `loci` CLI runs; state lives in $LOCI_HOME/.doit.db.
"""
from loci.kernel.config import loci_home
from pipeline.tasks import task_embed, task_graphs, task_index, task_routing, task_scan  # noqa: F401

DOIT_CONFIG = {
    "dep_file": str(loci_home() / ".doit.db"),
    "backend": "sqlite3",
    "default_tasks": ["index", "routing"],
    "verbosity": 1,
}
