"""`python -m loci`: the same CLI as the `loci` command."""
from loci.front.cli import main

main()
