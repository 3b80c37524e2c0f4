"""Query side: the pure router, rankers, structure and semantic search, ask. Reads $LOCI_HOME, never writes it, never imports pipeline/."""
