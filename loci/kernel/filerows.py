"""Rows of an array stored in a file, read one by one instead of mapped.

A large lookup table a question reads a few dozen rows of (a word-embedding table) is better read
row by row than mapped: a mapping keeps every page a question touched resident, and the kernel
maps cached neighbouring pages with each, so a long-lived process's share of the table grows with
every question (docs/decisions/engine.md, session 13).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def read_rows(path: str | Path, start: int, row_shape: tuple[int, ...], dtype, ids: np.ndarray) -> np.ndarray:
    """``array[ids]`` of the C-ordered array of rows shaped ``row_shape`` stored from byte ``start``
    of ``path``, reading only those rows (each once)."""
    dtype = np.dtype(dtype)
    ids = np.asarray(ids)
    wanted, where = np.unique(ids, return_inverse=True)
    width = int(np.prod(row_shape, dtype=np.int64)) * dtype.itemsize
    got = np.empty((len(wanted), *row_shape), dtype=dtype)
    with open(path, "rb") as fh:
        for j, row in enumerate(wanted):
            fh.seek(start + int(row) * width)
            fh.readinto(memoryview(got[j]).cast("B"))
    return got[where.reshape(ids.shape)]


class FileRows:
    """A 2-D ``.npy`` file indexed by row (``rows[ids]``) without holding it: each lookup reads its
    rows from the file."""

    def __init__(self, path: str | Path):
        from loci.kernel.vectorstore import load_npy

        mapped = load_npy(path, mmap_mode="r")   # for its header: shape, type, where the data starts
        self.path, self.shape, self.dtype = Path(path), mapped.shape, mapped.dtype
        self.offset = int(mapped.offset)
        if mapped.ndim != 2 or not mapped.flags.c_contiguous:
            raise ValueError(f"{path}: not a C-ordered 2-D array")
        del mapped

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, ids) -> np.ndarray:
        return read_rows(self.path, self.offset, self.shape[1:], self.dtype, ids)
