"""The schemas of a scope's chunk and vocabulary tables, apart from the indexer that writes them:
a pull checks a bundle's tables against them without importing the indexer (and its chunker,
redaction and fitting: 0.15 s of a pull of one bundle)."""
from __future__ import annotations

import pyarrow as pa

CHUNK_SCHEMA = pa.schema([
    ("id", pa.int32()), ("scope", pa.string()), ("kind", pa.string()), ("path", pa.string()),
    ("line", pa.int32()), ("heading", pa.string()), ("text", pa.string()),
    ("path_kind", pa.string()), ("hash", pa.string()), ("author", pa.string()), ("date", pa.string()),
])
VOCAB_SCHEMA = pa.schema([("token", pa.string()), ("weight", pa.float32())])
