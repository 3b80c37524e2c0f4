"""`python -m loci`: the same CLI as the `loci` command."""
from loci.cli import main

main()
