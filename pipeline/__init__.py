"""The build side of loci: doit tasks that are the only writers of $LOCI_HOME."""
