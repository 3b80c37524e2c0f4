"""loci.query.engine: one answer payload, whichever process answers."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from loci.query.engine import plain


@dataclass
class Part:
    name: str
    weights: tuple
    tags: frozenset

    @property
    def total(self) -> float:
        return sum(self.weights)


def test_plain_turns_a_result_into_json_ready_data_with_its_properties():
    out = plain({"parts": [Part("a", (1.0, 2.0), frozenset({"z", "b"}))]})
    assert out == {"parts": [{"name": "a", "weights": [1.0, 2.0], "tags": ["b", "z"], "total": 3.0}]}


def test_an_unknown_operation_is_refused(tmp_path):
    from loci.query.engine import answer

    class Session:
        notes: list = []

    with pytest.raises(ValueError, match="unknown operation 'drop'"):
        answer(Session(), "drop", {"question": "q"}, as_json=True)
