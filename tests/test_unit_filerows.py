"""Rows of a stored table read one by one (``loci.kernel.filerows``)."""
from pathlib import Path

import numpy as np
import pytest

from loci.kernel.filerows import FileRows, read_rows


def test_rows_read_from_the_file_equal_the_arrays_own_rows_in_any_order_and_repeated(tmp_path):
    table = np.arange(40 * 6, dtype=np.uint8).reshape(40, 6)
    path = tmp_path / "table.npy"
    np.save(path, table)
    rows = FileRows(path)
    ids = np.array([7, 3, 7, 39, 0], dtype=np.int64)
    assert rows.shape == (40, 6) and len(rows) == 40
    assert np.array_equal(rows[ids], table[ids]) and rows[ids].dtype == np.uint8


def test_a_table_read_by_rows_is_not_left_mapped(tmp_path):
    """A mapping would keep every page a lookup touched resident (and its neighbours)."""
    path = tmp_path / "big.npy"
    np.save(path, np.ones((5000, 512), dtype=np.uint8))
    rows = FileRows(path)
    rows[np.array([1, 4000])]
    maps = Path("/proc/self/maps")
    assert not maps.exists() or str(path) not in maps.read_text()


def test_read_rows_reads_a_block_stored_after_a_header(tmp_path):
    block = np.linspace(0, 1, 5 * 3, dtype=np.float32).reshape(5, 3)
    path = tmp_path / "raw.bin"
    path.write_bytes(b"HEAD" * 4 + block.tobytes())
    assert np.array_equal(read_rows(path, 16, (3,), np.float32, np.array([[4, 1], [1, 0]])),
                          block[np.array([[4, 1], [1, 0]])])


def test_a_table_that_is_not_two_dimensional_is_refused(tmp_path):
    path = tmp_path / "flat.npy"
    np.save(path, np.zeros(10, dtype=np.uint8))
    with pytest.raises(ValueError):
        FileRows(path)
