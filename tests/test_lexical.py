"""The query-side rankers must agree with the libraries they were fitted with."""
import numpy as np
import pytest

from loci.query.lexical import char_wb_ngrams, load_lexical
from loci.kernel.tokens import tokenize
from loci_pipeline.lexical_fit import fit_and_write

DOCS = [
    "Sessions keep cookies across requests with a Session object.",
    "Use HTTPAdapter(max_retries=Retry(total=3)) to retry failed connections.",
    "The SameSite cookie attribute controls cross-site sending.",
    "Stream a large download with iter_content and stream=True.",
]


def test_char_ngrams_match_scikit_learn_char_wb():
    from sklearn.feature_extraction.text import CountVectorizer

    analyzer = CountVectorizer(analyzer="char_wb", ngram_range=(3, 5)).build_analyzer()
    for text in DOCS + ["a  b", "x", "Déjà Vu!", "ab abc abcd abcde\tabcdef\n"]:
        assert char_wb_ngrams(text) == analyzer(text)


@pytest.fixture
def fitted(tmp_path):
    path = tmp_path / "r.sqlite"
    fit_and_write(path, [tokenize(d) for d in DOCS], DOCS, 3, 5)
    return load_lexical(path)


def dense(scores, n=len(DOCS)):
    return np.asarray([scores.get(i, 0.0) for i in range(n)])


def test_bm25_scores_equal_rank_bm25(fitted):
    from rank_bm25 import BM25Okapi

    model = BM25Okapi([tokenize(d) for d in DOCS], k1=1.5, b=0.75)
    q = tokenize("retry failed connections with a session")
    np.testing.assert_allclose(dense(fitted.bm25_scores(q)), model.get_scores(q), rtol=1e-5)


def test_chargram_scores_equal_scikit_learn_cosine(fitted):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    x = vec.fit_transform(DOCS)
    q = "samesite cookies"
    expected = (x @ vec.transform([q]).T).toarray().ravel()
    np.testing.assert_allclose(dense(fitted.gram_scores(q)), expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("docs", [
    ["ab abc abcd abcde abcdef", "Déjà Vu! naïve straße", "x  y\tz abc", "日本語のテキスト 中文"],
    # so many distinct characters that the n-grams cannot be packed into integers
    [" ".join(chr(0x4E00 + i + j) * 3 for j in range(6000)) for i in range(3)] + ["abc 一一一"],
], ids=["short-and-accented-words", "thousands-of-distinct-characters"])
def test_chargram_fit_matches_scikit_learn_on_any_alphabet(tmp_path, docs):
    from sklearn.feature_extraction.text import TfidfVectorizer

    path = tmp_path / "a.sqlite"
    fit_and_write(path, [tokenize(d) for d in docs], docs, 3, 5)
    fitted = load_lexical(path)
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    x = vec.fit_transform(docs)
    for q in ("abcd", docs[1][:12], "一一一"):
        expected = (x @ vec.transform([q]).T).toarray().ravel()
        np.testing.assert_allclose(dense(fitted.gram_scores(q) or {}, len(docs)), expected, rtol=1e-4, atol=1e-6)


def test_unknown_words_score_nothing(fitted):
    assert fitted.bm25_scores(["zzzqqq"]) is None
    assert fitted.gram_scores("qqq") is None


def test_query_side_imports_neither_scikit_learn_nor_numpy(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "r.sqlite"
    fit_and_write(path, [tokenize(d) for d in DOCS], DOCS, 3, 5)
    code = ("import sys; from loci.query.lexical import load_lexical; l = load_lexical(sys.argv[1]); "
            "l.gram_scores('cookie'); l.bm25_scores(['cookie']); "
            "bad = [m for m in sys.modules if m.startswith(('sklearn', 'scipy', 'rank_bm25', 'numpy', 'pyarrow'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_counts_past_a_byte_and_many_documents_score_as_scikit_learn_does(tmp_path):
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = DOCS + ["retry " * 300 + "session", "cookie jar"] + [f"filler text number {i}" for i in range(300)]
    path = tmp_path / "big.sqlite"
    fit_and_write(path, [tokenize(d) for d in docs], docs, 3, 5)
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    x = vec.fit_transform(docs)
    q = "retry the session"
    expected = (x @ vec.transform([q]).T).toarray().ravel()
    np.testing.assert_allclose(dense(load_lexical(path).gram_scores(q), len(docs)), expected, rtol=1e-4, atol=1e-6)


def test_a_query_file_from_an_older_schema_is_not_read(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('schema', '2'), "
                      "('n_docs', '1'), ('gram_lo', '3'), ('gram_hi', '5');")
    con.commit()
    con.close()
    assert load_lexical(path) is None


def test_the_char_gram_arrays_are_stored_packed_and_score_as_scikit_learn_does(tmp_path):
    import sqlite3
    import zlib

    docs = DOCS * 40  # enough repetition for packing to pay
    path = tmp_path / "packed.sqlite"
    fit_and_write(path, [tokenize(d) for d in docs], docs, 3, 5)
    con = sqlite3.connect(path)
    stored = dict(con.execute("SELECT name, data FROM arrays WHERE name = 'gram_docs'"))["gram_docs"]
    con.close()
    assert len(zlib.decompress(stored)) > 2 * len(stored)
    scores = load_lexical(path).gram_scores("cookie sessions")
    assert max(scores, key=scores.get) in (0, 2)


def test_a_damaged_packed_array_names_the_file_and_the_fix(tmp_path):
    import sqlite3

    from loci.kernel.errors import StoreError

    path = tmp_path / "damaged.sqlite"
    fit_and_write(path, [tokenize(d) for d in DOCS], DOCS, 3, 5)
    con = sqlite3.connect(path)
    con.execute("UPDATE arrays SET data = x'00112233' WHERE name = 'gram_docs'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=r"damaged\.sqlite: its gram_docs array is damaged; run `loci index --force`"):
        load_lexical(path).gram_scores("cookie sessions")
