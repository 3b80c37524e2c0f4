"""What `loci index` / `loci update` print of the index step."""
from loci.front.cli_common import index_lines
from loci_pipeline.build import IndexReport


def test_a_home_without_local_scopes_says_there_was_none_to_index_rather_than_zero_of_zero():
    out, err = index_lines(IndexReport())
    assert out == ["no local scope to index (a pulled scope is brought up to date by pulling it again)"]
    assert err == []


def test_an_index_run_counts_the_rebuilt_and_the_unchanged_scopes():
    report = IndexReport(rebuilt=["a"], unchanged=["b", "c"],
                         metas={"a": {"chunks": 4, "vocab_tokens": 9, "redactions": {}, "stats": {}}})
    out, _ = index_lines(report)
    assert out == ["indexed 1 scope(s), 2 unchanged", "  a: 4 chunks, 9 routing tokens"]
