"""Side-by-side measurement of loci against loci-mem 0.6.0 (see bench/RESULTS.md)."""
import os

# Every script asks questions as `loci` does (loci.front.cli): question-sized products on one BLAS
# thread, which on a busy machine is 7x faster than two (eval: 2 min 50 s -> 23 s at load 3.7).
# Set here, before any script imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
