"""loci.kernel.vectorstore: reading stored vector files."""
from __future__ import annotations

import threading
import time

import numpy as np

from loci.kernel import vectorstore


def test_vector_files_are_read_one_thread_at_a_time(tmp_path, monkeypatch):
    # numpy parses a .npy header by compiling it; CPython 3.11 compiles from two threads at
    # the peril of "AST constructor recursion depth mismatch", so the loads never overlap
    path = tmp_path / "m.npy"
    np.save(path, np.arange(12, dtype=np.int8).reshape(3, 4))
    inside, overlaps = [0], []
    real_load = np.load

    def slow_load(*args, **kwargs):
        inside[0] += 1
        overlaps.append(inside[0])
        time.sleep(0.002)
        try:
            return real_load(*args, **kwargs)
        finally:
            inside[0] -= 1

    monkeypatch.setattr(np, "load", slow_load)
    got = []
    threads = [threading.Thread(target=lambda: got.append(vectorstore.load_npy(path, mmap_mode="r")))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(overlaps) == 1
    assert len(got) == 8 and all(np.array_equal(g, np.arange(12).reshape(3, 4)) for g in got)
