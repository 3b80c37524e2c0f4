"""Reading a code graph file: loci's own (gzip-compressed) or a repository's graphify-out/graph.json.

Its own module so that ``loci_pipeline.graphs`` (which extracts graphs) and ``loci_pipeline.structure_tables``
(which turns one into tables) both read graphs without importing each other.
"""
from __future__ import annotations

import json
from pathlib import Path


def read_graph_bytes(path: Path) -> bytes:
    """A graph file's JSON bytes: loci keeps its own graphs gzip-compressed (``.gz``, a tenth of
    the size); a user's graphify-out/graph.json is plain. A damaged gzip raises OSError or EOFError."""
    data = Path(path).read_bytes()
    if Path(path).suffix == ".gz":
        import gzip
        import zlib

        try:
            return gzip.decompress(data)
        except zlib.error as exc:
            raise OSError(f"not a whole gzip file ({exc})") from None
    return data


def read_graph_json(path: Path) -> object:
    """A graph file parsed. A repository's own ``graphify-out/graph.json`` (plain JSON) has the
    secrets in its strings masked, as loci's own graphs had when extracted; raises like
    ``read_graph_bytes`` and ``json.loads``."""
    data = json.loads(read_graph_bytes(path))
    if Path(path).suffix != ".gz":
        from loci_pipeline.redact import redact_strings

        data = redact_strings(data)[0]
    return data
