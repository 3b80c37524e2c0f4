"""doit entry point for a checkout: `doit index` rebuilds what changed (commit hooks, CI).

The tasks are the ones the `loci` CLI runs; state lives in $LOCI_HOME/.doit.db.
"""
from loci.config import loci_home
from pipeline.tasks import task_graphs, task_index, task_routing, task_scan  # noqa: F401

DOIT_CONFIG = {
    "dep_file": str(loci_home() / ".doit.db"),
    "backend": "sqlite3",
    "default_tasks": ["index", "routing"],
    "verbosity": 1,
}
