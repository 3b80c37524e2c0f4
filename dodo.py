"""doit entry point for a checkout: `doit` here is `loci update` (commit hooks, CI jobs).

`doit list` names every task; `doit index:NAME`, `doit graphs`, `doit embed`, `doit calibrate`
run one step and what it depends on. The tasks, their dependencies and DOIT_CONFIG are the
installed package's (loci/dodo.py); state lives in $LOCI_HOME/.doit.db. Prefer
`python -m loci.dodo`, which also merges routing after `index:NAME` (after a failed scope,
plain `doit` merges the others too).
"""
from loci.dodo import *  # noqa: F401,F403
