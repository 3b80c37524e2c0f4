"""The small recency term of episode ranking: newer commits first among equals."""
import sqlite3

from loci.query.lexical import load_lexical
from loci.query.search import RECENCY_WEIGHT, rank
from loci.kernel.tokens import tokenize
from loci_pipeline.index import recency_ranks
from loci_pipeline.lexical_fit import fit_and_write


def test_recency_runs_from_the_oldest_commit_to_the_newest_and_leaves_undated_chunks_at_zero():
    dates = ["2020-01-01T00:00:00+00:00", "", "2024-06-01T00:00:00+00:00", "2022-03-01T00:00:00+00:00",
             "2024-06-01T00:00:00+00:00"]
    assert recency_ranks(dates) == [0.0, 0.0, 1.0, 0.5, 1.0]
    assert recency_ranks(["2021-01-01T00:00:00+00:00"]) == [1.0]
    assert recency_ranks(["", ""]) == [0.0, 0.0]


def test_of_two_equally_matching_commits_the_newer_ranks_first():
    kinds = {0: ("commit", "source", 0.0), 1: ("commit", "source", 1.0)}
    out = rank({0: 3.0, 1: 3.0}, {0: 0.5, 1: 0.5}, kinds)
    assert [d for d, _ in out] == [1, 0]
    assert abs((out[0][1] - out[1][1]) - RECENCY_WEIGHT) < 1e-9


def test_recency_never_outweighs_a_clearly_better_match():
    kinds = {0: ("commit", "source", 0.0), 1: ("commit", "source", 1.0)}
    out = rank({0: 3.0, 1: 2.4}, {0: 0.5, 1: 0.4}, kinds)
    assert [d for d, _ in out] == [0, 1]


def test_a_query_file_from_before_recency_still_answers(tmp_path):
    docs = ["retry the connection on failure", "cookie session handling"]
    path = tmp_path / "old.sqlite"
    rows = [(i, "doc", "docs", "README.md", i + 1, "", d, f"h{i}", 0.0) for i, d in enumerate(docs)]
    fit_and_write(path, [tokenize(d) for d in docs], docs, 3, 5, chunks=rows)
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE chunks DROP COLUMN recency")
    con.commit()
    con.close()
    assert load_lexical(path).chunk_kinds([0, 1]) == {0: ("doc", "docs", 0.0), 1: ("doc", "docs", 0.0)}
