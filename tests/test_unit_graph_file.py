"""loci_pipeline.graph_file: a code graph read from loci's gzip copy or a repository's own plain JSON."""
from __future__ import annotations

import gzip
import json

import pytest

from loci_pipeline.graph_file import read_graph_bytes, read_graph_json

GRAPH = {"nodes": [{"id": "a", "label": "connect", "note": "password = 'hunter2-Xy9$Qz!long'"}], "edges": []}


def test_locis_own_gzip_graph_is_read_as_it_was_written(tmp_path):
    path = tmp_path / "graph.json.gz"
    path.write_bytes(gzip.compress(json.dumps(GRAPH).encode()))
    assert read_graph_json(path) == GRAPH                       # extracted from masked text already
    assert json.loads(read_graph_bytes(path)) == GRAPH


def test_a_repositorys_own_graph_has_its_secrets_masked(tmp_path):
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(GRAPH))
    data = read_graph_json(path)
    assert data["nodes"][0]["label"] == "connect" and "hunter2" not in json.dumps(data)


def test_a_torn_gzip_graph_is_an_os_error(tmp_path):
    path = tmp_path / "graph.json.gz"
    path.write_bytes(gzip.compress(json.dumps(GRAPH).encode())[:-12])
    with pytest.raises((OSError, EOFError)):
        read_graph_json(path)
