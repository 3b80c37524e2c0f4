"""loci_pipeline.embed: incremental, per-model, atomic vector files; the static model distilled once."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loci.kernel.config import layout
from loci.query.semantic import (
    STATIC_ID, is_static_model, label_vectors_path, load_label_vectors, load_vectors, matrix_path, meta_path,
    read_meta, static_model_dir, vector_files,
)
from loci_pipeline.embed import EmbedError, EmbedResult, embed_scope, ensure_static_model


class FakeEncoder:
    """Deterministic unit vectors seeded by the text; records every batch it is asked to encode."""

    batch_size = 2

    def __init__(self, model_id: str = "fake", dim: int = 8, fail_on: str | None = None):
        self.model_id, self.dim, self.fail_on = model_id, dim, fail_on
        self.calls: list[list[str]] = []

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if self.fail_on and any(self.fail_on in t for t in texts):
            raise RuntimeError("encoder crashed")
        rows = []
        for t in texts:
            seed = int(hashlib.sha1(t.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).standard_normal(self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)


def write_chunks(lay, scope: str, texts: list[str]) -> None:
    n = len(texts)
    table = pa.table({
        "id": pa.array(range(n), pa.int32()), "scope": [scope] * n, "kind": ["doc"] * n,
        "path": ["README.md"] * n, "line": pa.array(range(1, n + 1), pa.int32()), "heading": [""] * n,
        "text": texts, "path_kind": ["docs"] * n,
        "hash": [hashlib.sha1(t.encode()).hexdigest() for t in texts], "author": [""] * n, "date": [""] * n,
    })
    path = lay.chunks(scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def write_symbols(lay, scope: str, labels: list[str]) -> None:
    path = lay.symbols(scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = len(labels)
    pq.write_table(pa.table({"id": [f"n{i}" for i in range(n)], "label": labels, "kind": ["function"] * n,
                             "path": ["a.py"] * n, "line": pa.array([1] * n, pa.int32())}), path)


def stored_hashes(lay, model_id: str, scope: str) -> set[str]:
    return set(load_vectors(lay, model_id, scope)[0])


def sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@pytest.fixture
def lay(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    return layout()


def test_first_run_encodes_each_distinct_chunk_once(lay):
    write_chunks(lay, "alpha", ["one", "two", "one", "three"])
    enc = FakeEncoder()
    result = embed_scope("alpha", lay, enc)
    assert sorted(enc.texts) == ["one", "three", "two"]
    assert result == EmbedResult(encoded=3, reused=0, dropped=0)
    assert stored_hashes(lay, "fake", "alpha") == {sha("one"), sha("two"), sha("three")}


def test_stored_vectors_are_the_encoder_output_keyed_by_hash(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    enc = FakeEncoder()
    embed_scope("alpha", lay, enc)
    hashes, matrix = load_vectors(lay, "fake", "alpha")
    assert matrix.dtype == np.float32 and matrix.shape == (2, 8)
    expected = FakeEncoder().encode(["one", "two"])
    assert np.allclose(matrix[hashes.index(sha("two"))], expected[1], atol=1e-2)   # stored as int8
    assert float(matrix[hashes.index(sha("two"))] @ expected[1]) > 0.9999
    assert read_meta(lay.vectors("fake", "alpha")) == {"model": "fake", "dim": 8, "schema": 2}


def test_rerun_with_nothing_changed_encodes_nothing_and_leaves_the_file_alone(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder())
    before = [p.stat() for p in vector_files(lay.vectors("fake", "alpha"))]
    again = FakeEncoder()
    result = embed_scope("alpha", lay, again)
    after = [p.stat() for p in vector_files(lay.vectors("fake", "alpha"))]
    assert again.calls == []
    assert result == EmbedResult(encoded=0, reused=2, dropped=0)
    assert [(a.st_ino, a.st_mtime_ns) for a in after] == [(b.st_ino, b.st_mtime_ns) for b in before]


def test_only_new_or_changed_chunks_are_encoded(lay):
    write_chunks(lay, "alpha", ["one", "two", "three"])
    embed_scope("alpha", lay, FakeEncoder())
    write_chunks(lay, "alpha", ["one", "two, edited", "three", "four"])
    enc = FakeEncoder()
    result = embed_scope("alpha", lay, enc)
    assert sorted(enc.texts) == ["four", "two, edited"]
    assert result == EmbedResult(encoded=2, reused=2, dropped=1)


def test_the_query_side_matrix_follows_the_stored_vectors_row_for_row(lay):
    from loci.query.semantic import load_matrix, matrix_path

    write_chunks(lay, "alpha", ["one", "two", "three"])
    embed_scope("alpha", lay, FakeEncoder())
    write_chunks(lay, "alpha", ["one", "two, edited", "four"])
    embed_scope("alpha", lay, FakeEncoder())
    assert matrix_path(lay.vectors("fake", "alpha")).is_file()
    hashes, stored = load_vectors(lay, "fake", "alpha")
    assert hashes == [sha("one"), sha("two, edited"), sha("four")]
    assert np.array_equal(np.asarray(load_matrix(lay, "fake", "alpha")), stored)


def test_each_vector_is_stored_once_as_int8_rows(lay):
    write_chunks(lay, "alpha", ["one", "two", "three"])
    embed_scope("alpha", lay, FakeEncoder())
    folder = lay.vectors("fake", "alpha").parent
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == ["alpha.json", "alpha.npy"]
    raw = np.load(folder / "alpha.npy")
    assert raw.dtype == np.int8 and raw.shape == (3, 8) and np.abs(raw).max(axis=1).tolist() == [127] * 3


def test_a_schema_1_parquet_store_is_replaced_without_reencoding(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    vectors = FakeEncoder().encode(["one", "two"])
    path = lay.vectors("fake", "alpha")
    path.parent.mkdir(parents=True)
    table = pa.table({"hash": [sha("one"), sha("two")],
                      "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), 8)})
    pq.write_table(table.replace_schema_metadata({b"loci.model": b"fake", b"loci.dim": b"8"}), path)
    enc = FakeEncoder()
    embed_scope("alpha", lay, enc)
    assert enc.calls == [] and not path.exists()
    hashes, matrix = load_vectors(lay, "fake", "alpha")
    assert hashes == [sha("one"), sha("two")] and np.allclose(matrix, vectors, atol=1e-2)


def test_vectors_of_removed_chunks_are_dropped(lay):
    write_chunks(lay, "alpha", ["one", "two", "three"])
    embed_scope("alpha", lay, FakeEncoder())
    write_chunks(lay, "alpha", ["one", "three"])
    enc = FakeEncoder()
    result = embed_scope("alpha", lay, enc)
    assert enc.calls == [] and result.dropped == 1
    assert stored_hashes(lay, "fake", "alpha") == {sha("one"), sha("three")}


def test_changing_the_model_reencodes_into_its_own_folder(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder("model-a"))
    first = matrix_path(lay.vectors("model-a", "alpha")).read_bytes()
    other = FakeEncoder("model-b", dim=4)
    result = embed_scope("alpha", lay, other)
    assert sorted(other.texts) == ["one", "two"] and result.encoded == 2
    assert lay.vectors("model-b", "alpha").parent != lay.vectors("model-a", "alpha").parent
    assert matrix_path(lay.vectors("model-a", "alpha")).read_bytes() == first
    assert load_vectors(lay, "model-b", "alpha")[1].shape == (2, 4)


def test_stored_vectors_of_another_width_are_all_reencoded(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder(dim=8))
    wider = FakeEncoder(dim=16)
    result = embed_scope("alpha", lay, wider)
    assert result == EmbedResult(encoded=2, reused=0, dropped=2)
    assert read_meta(lay.vectors("fake", "alpha"))["dim"] == 16


def test_an_unreadable_vector_file_is_rebuilt(lay):
    write_chunks(lay, "alpha", ["one"])
    target = meta_path(lay.vectors("fake", "alpha"))
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not json")
    result = embed_scope("alpha", lay, FakeEncoder())
    assert result.encoded == 1 and stored_hashes(lay, "fake", "alpha") == {sha("one")}


def test_a_failure_while_encoding_leaves_the_old_file_intact(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder())
    before = [p.read_bytes() for p in vector_files(lay.vectors("fake", "alpha"))]
    write_chunks(lay, "alpha", ["one", "two", "three", "four", "boom five"])
    with pytest.raises(RuntimeError, match="encoder crashed"):
        embed_scope("alpha", lay, FakeEncoder(fail_on="boom"))
    assert [p.read_bytes() for p in vector_files(lay.vectors("fake", "alpha"))] == before
    assert sorted(p.name for p in lay.vectors("fake", "alpha").parent.iterdir() if p.is_file()) == \
        ["alpha.json", "alpha.npy"]


def test_encoder_output_of_the_wrong_shape_is_refused_with_a_message(lay):
    write_chunks(lay, "alpha", ["one"])

    class Liar(FakeEncoder):
        def encode(self, texts):
            return np.zeros((len(texts), 3), dtype=np.float32)

    with pytest.raises(EmbedError, match="shape"):
        embed_scope("alpha", lay, Liar())
    assert not lay.vectors("fake", "alpha").parent.exists()


def test_a_scope_without_chunks_names_the_command_to_run(lay):
    with pytest.raises(EmbedError, match="loci index"):
        embed_scope("ghost", lay, FakeEncoder())


def test_an_empty_scope_gets_an_empty_vector_file(lay):
    write_chunks(lay, "empty", [])
    assert embed_scope("empty", lay, FakeEncoder()) == EmbedResult(0, 0, 0)
    hashes, matrix = load_vectors(lay, "fake", "empty")
    assert hashes == [] and matrix.shape == (0, 8)


def test_symbol_labels_are_embedded_beside_the_chunks(lay):
    write_chunks(lay, "alpha", ["one"])
    write_symbols(lay, "alpha", ["get_top_n", "BM25Okapi", "get_top_n", ""])
    enc = FakeEncoder()
    result = embed_scope("alpha", lay, enc)
    assert sorted(enc.texts) == ["BM25Okapi", "get_top_n", "one"]
    assert result.encoded == 3
    labels, matrix = load_label_vectors(lay, "fake", "alpha")
    assert sorted(labels) == ["BM25Okapi", "get_top_n"] and matrix.shape == (2, 8)
    again = FakeEncoder()
    assert embed_scope("alpha", lay, again).encoded == 0 and again.calls == []


def test_label_vectors_go_when_the_structure_store_goes(lay):
    write_chunks(lay, "alpha", ["one"])
    write_symbols(lay, "alpha", ["a", "b"])
    embed_scope("alpha", lay, FakeEncoder())
    lay.symbols("alpha").unlink()
    result = embed_scope("alpha", lay, FakeEncoder())
    assert result.dropped == 2
    assert not label_vectors_path(lay, "fake", "alpha").parent.exists() or \
        list(label_vectors_path(lay, "fake", "alpha").parent.iterdir()) == []


def test_progress_reports_done_out_of_total(lay):
    write_chunks(lay, "alpha", ["a", "b", "c", "d", "e"])
    seen: list[tuple[int, int]] = []
    embed_scope("alpha", lay, FakeEncoder(), progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 5) and seen[-1] == (5, 5)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def fake_distill(calls: list[Path]):
    def distill(source: Path, out: Path) -> None:
        calls.append(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.safetensors").write_bytes(b"table")
        (out / "tokenizer.json").write_text("{}")
        (out / "config.json").write_text(json.dumps({"model_type": "model2vec"}))
    return distill


def test_the_static_model_is_distilled_once(lay, tmp_path):
    calls: list[Path] = []
    first = ensure_static_model(lay, source=tmp_path, distill=fake_distill(calls))
    second = ensure_static_model(lay, source=tmp_path, distill=fake_distill(calls))
    assert first == second == static_model_dir(lay)
    assert len(calls) == 1 and is_static_model(first)
    assert first.parent == lay.home / "models" and first.name == STATIC_ID


def test_a_failed_distillation_installs_nothing(lay, tmp_path):
    def broken(source: Path, out: Path) -> None:
        (out / "model.safetensors").write_bytes(b"half")
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        ensure_static_model(lay, source=tmp_path, distill=broken)
    assert not static_model_dir(lay).exists()
    assert list(static_model_dir(lay).parent.iterdir()) == []


def test_an_incomplete_distillation_is_refused(lay, tmp_path):
    def partial(source: Path, out: Path) -> None:
        (out / "config.json").write_text(json.dumps({"model_type": "model2vec"}))

    with pytest.raises(EmbedError, match="incomplete"):
        ensure_static_model(lay, source=tmp_path, distill=partial)
    assert not static_model_dir(lay).exists()


# --- real models (deselected by default: pytest -m slow) ---------------------------------------

@pytest.fixture(scope="module")
def distilled_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    ensure_static_model(layout(home))
    return home


@pytest.mark.slow
def test_distilled_static_model_encodes_without_importing_torch(distilled_home):
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from loci.kernel.config import layout\n"
        "from loci.query.semantic import load_encoder\n"
        f"enc = load_encoder('static', layout(Path({str(distilled_home)!r})))\n"
        "v = enc.encode(['why is chardet no longer a hard dependency', 'walk a directory tree'])\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
        "print(json.dumps({'id': enc.model_id, 'shape': list(v.shape), 'norm': float(abs(v).sum()),\n"
        "                  'unit': [round(float((r * r).sum()), 4) for r in v], 'heavy': heavy}))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["heavy"] == []
    assert got["id"] == STATIC_ID and got["shape"] == [2, 256]
    assert got["unit"] == [1.0, 1.0]


@pytest.mark.slow
def test_distilled_static_model_ranks_a_paraphrase_above_an_unrelated_text(distilled_home):
    from loci.query.semantic import load_encoder, semantic_scores

    enc = load_encoder("static", layout(distilled_home))
    docs = enc.encode(["disable redirection handling with the allow_redirects parameter",
                       "the colour of the sky at dusk over the sea"])
    q = enc.encode(["stop the HTTP client from following a redirect to another URL"])[0]
    scores = semantic_scores(q, docs)
    assert scores[0] > scores[1]


@pytest.mark.slow
def test_packaged_transformer_loads_offline(tmp_path, monkeypatch):
    from loci.query.semantic import TRANSFORMER_ID, load_encoder

    monkeypatch.setenv("LOCI_HOME", str(tmp_path))
    enc = load_encoder("transformer", layout())
    v = enc.encode(["a directory walker", "walk a file tree"])
    assert enc.model_id == TRANSFORMER_ID and v.shape == (2, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)


def test_the_query_side_reads_hashes_and_vectors_without_pyarrow(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder())
    code = ("import sys; from pathlib import Path; from loci.kernel.config import layout; "
            "from loci.query.semantic import load_vectors; "
            f"h, m = load_vectors(layout(Path({str(lay.home)!r})), 'fake', 'alpha'); "
            "print(len(h), m.shape[0], 'pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "2", "False"]


def test_a_torn_matrix_reads_as_no_vectors_and_is_rebuilt_by_the_next_run(lay):
    from loci.query.semantic import load_matrix

    write_chunks(lay, "alpha", ["one", "two", "three"])
    embed_scope("alpha", lay, FakeEncoder())
    matrix_path(lay.vectors("fake", "alpha")).write_bytes(b"half a file")
    assert load_vectors(lay, "fake", "alpha")[0] == [] and load_matrix(lay, "fake", "alpha").shape == (0, 8)
    enc = FakeEncoder()
    embed_scope("alpha", lay, enc)
    assert sorted(enc.texts) == ["one", "three", "two"]
    assert len(load_vectors(lay, "fake", "alpha")[0]) == 3


def test_a_matrix_newer_than_its_manifest_is_not_read(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder())
    mpath = matrix_path(lay.vectors("fake", "alpha"))
    np.save(mpath, np.load(mpath)[::-1].copy())     # same shape, other rows: a write in flight
    assert load_vectors(lay, "fake", "alpha")[0] == []


def test_label_vectors_keep_non_ascii_labels(lay):
    write_chunks(lay, "alpha", ["one"])
    write_symbols(lay, "alpha", ["größe_berechnen", "BM25Okapi"])
    embed_scope("alpha", lay, FakeEncoder())
    labels, matrix = load_label_vectors(lay, "fake", "alpha")
    assert labels == ["größe_berechnen", "BM25Okapi"] and matrix.shape == (2, 8)


def test_the_encoder_is_told_how_many_texts_a_scope_needs_before_encoding(lay):
    class Expecting(FakeEncoder):
        def expect(self, n):
            self.expected = n

    write_chunks(lay, "alpha", ["one", "two"])
    write_symbols(lay, "alpha", ["get_top_n"])
    enc = Expecting()
    embed_scope("alpha", lay, enc)
    assert enc.expected == 3


# --- the summaries a one-shot second opinion reads first ----------------------------------------

def test_each_embedded_scope_gets_a_summary_of_at_most_k_unit_rows(lay):
    from loci.query.semantic import scope_summary_path

    write_chunks(lay, "alpha", [f"text number {i}" for i in range(40)])
    write_chunks(lay, "beta", ["one", "two"])
    for scope in ("alpha", "beta"):
        embed_scope(scope, lay, FakeEncoder())
    big, small = (np.load(scope_summary_path(lay, "fake", s)) for s in ("alpha", "beta"))
    assert big.shape == (16, 8) and small.shape == (2, 8)
    assert np.allclose(np.linalg.norm(big.astype(np.float32), axis=1), 1.0, atol=1e-3)


def test_the_merged_summary_names_each_scope_s_rows(lay):
    from loci.query.semantic import load_summary, scope_summary_path
    from loci_pipeline.embed import merge_summaries

    write_chunks(lay, "alpha", ["one", "two"])
    write_chunks(lay, "beta", ["three"])
    for scope in ("alpha", "beta"):
        embed_scope(scope, lay, FakeEncoder())
    merge_summaries(lay, "fake", ["beta", "alpha", "never-embedded"])
    spans, rows = load_summary(lay, "fake")
    assert spans == {"alpha": (0, 2), "beta": (2, 3)} and rows.shape == (3, 8)
    assert np.allclose(rows[2], np.load(scope_summary_path(lay, "fake", "beta")).astype(np.float32), atol=1e-3)


def test_a_summary_torn_after_its_manifest_is_not_read(lay):
    from loci.query.semantic import load_summary, merged_summary_files
    from loci_pipeline.embed import merge_summaries

    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder())
    merge_summaries(lay, "fake", ["alpha"])
    merged_summary_files(lay, "fake")[0].write_bytes(b"torn")
    assert load_summary(lay, "fake") is None


def test_the_merged_summary_is_stored_as_the_unit_rows_a_reader_would_compute(lay):
    """Stored ready to multiply (float32 unit rows); a float16 file from before reads the same."""
    import json

    from loci.query.semantic import as_unit, load_summary, matrix_stamp, merged_summary_files, scope_summary_path
    from loci_pipeline.embed import merge_summaries

    write_chunks(lay, "alpha", [f"text number {i}" for i in range(40)])
    embed_scope("alpha", lay, FakeEncoder())
    merge_summaries(lay, "fake", ["alpha"])
    npy, manifest = merged_summary_files(lay, "fake")
    half = np.load(scope_summary_path(lay, "fake", "alpha"))
    assert np.load(npy).dtype == np.float32
    assert np.array_equal(load_summary(lay, "fake")[1], as_unit(half))
    np.save(npy, half)   # the float16 layout of an older merge, without the "unit" mark
    data = json.loads(manifest.read_text())
    del data["unit"]
    manifest.write_text(json.dumps({**data, "matrix": matrix_stamp(npy)}))
    assert np.array_equal(load_summary(lay, "fake")[1], as_unit(half))


def _clusters(seed: int = 3, per: int = 40, dim: int = 24):
    rng = np.random.default_rng(seed)
    centres = np.eye(dim, dtype=np.float32)[:3] * 5
    rows = np.concatenate([c + rng.normal(0, 0.3, (per, dim)) for c in centres]).astype(np.float32)
    return centres, rows[rng.permutation(len(rows))]


def test_a_summary_finds_each_cluster_of_chunk_vectors():
    from loci_pipeline.embed import summarise

    centres, rows = _clusters()
    got = summarise(rows, 3)
    unit = centres / np.linalg.norm(centres, axis=1, keepdims=True)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert sorted(int(np.argmax(unit @ g)) for g in got) == [0, 1, 2]
    assert (unit @ got.T).max(axis=1).min() > 0.95


def test_a_summary_is_the_same_for_the_same_vectors_and_needs_no_scikit_learn(monkeypatch):
    from loci_pipeline.embed import summarise

    _, rows = _clusters(seed=5)
    for name in ("sklearn", "sklearn.cluster"):   # importing it would fail: it costs 2.6 s a build
        monkeypatch.setitem(sys.modules, name, None)
    assert np.array_equal(summarise(rows, 16), summarise(rows.copy(), 16))
    assert summarise(rows[:5], 16).shape == (5, rows.shape[1])


# --- a chunk longer than the encoder reads is also stored as windows (answer-ranking.md, 7) ----

class ReachingEncoder(FakeEncoder):
    """A fake encoder that reads the first ``width`` words of a text and says so (``reach``)."""

    def __init__(self, width: int = 6, **kw):
        super().__init__(**kw)
        from test_windows import Words

        self.reach = Words(width)


LONG = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi"


def test_a_chunk_longer_than_the_encoder_reads_is_also_stored_as_windows_keyed_to_it(lay):
    from loci.kernel.vectorstore import chunk_of, window_owner

    write_chunks(lay, "alpha", ["short", LONG])
    enc = ReachingEncoder()
    result = embed_scope("alpha", lay, enc, overlap=2)
    keys = load_vectors(lay, "fake", "alpha")[0]
    windows = [k for k in keys if window_owner(k)]
    assert windows and {chunk_of(k) for k in windows} == {sha(LONG)}
    assert {sha("short"), sha(LONG)} <= set(keys) and result.encoded == len(keys)
    assert any(t.endswith("omicron pi") for t in enc.texts)   # the tail is read by a window


def test_no_overlap_stores_no_windows(lay):
    write_chunks(lay, "alpha", ["short", LONG])
    embed_scope("alpha", lay, ReachingEncoder(), overlap=0)
    assert stored_hashes(lay, "fake", "alpha") == {sha("short"), sha(LONG)}


def test_a_store_without_windows_gains_them_without_encoding_its_chunks_again(lay):
    write_chunks(lay, "alpha", ["short", LONG])
    embed_scope("alpha", lay, FakeEncoder())        # built before windows: no reach
    enc = ReachingEncoder()
    result = embed_scope("alpha", lay, enc, overlap=2)
    assert "short" not in enc.texts and LONG not in enc.texts and enc.texts
    assert result.reused == 2 and result.dropped == 0
    again = ReachingEncoder()
    assert embed_scope("alpha", lay, again, overlap=2).encoded == 0 and again.calls == []


def test_a_translated_copy_gets_no_windows(lay):
    from loci.kernel.vectorstore import window_owner

    texts = [LONG, LONG + " rho"]
    n = len(texts)
    table = pa.table({
        "id": pa.array(range(n), pa.int32()), "scope": ["alpha"] * n, "kind": ["readme"] * n,
        "path": ["README.md", "README.es.md"], "line": pa.array([1] * n, pa.int32()), "heading": [""] * n,
        "text": texts, "path_kind": ["docs"] * n, "hash": [sha(t) for t in texts], "author": [""] * n, "date": [""] * n,
    })
    lay.chunks("alpha").parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, lay.chunks("alpha"))
    embed_scope("alpha", lay, ReachingEncoder(), overlap=2)
    owners = {window_owner(k) for k in load_vectors(lay, "fake", "alpha")[0]} - {None}
    assert owners == {sha(LONG)}


# --- the store names its translated copies (a route reads their vectors without the query file) ---

def write_readmes(lay, scope: str, texts: dict[str, str]) -> None:
    """One readme chunk a file: ``{path: text}``."""
    n = len(texts)
    table = pa.table({
        "id": pa.array(range(n), pa.int32()), "scope": [scope] * n, "kind": ["readme"] * n,
        "path": list(texts), "line": pa.array([1] * n, pa.int32()), "heading": [""] * n,
        "text": list(texts.values()), "path_kind": ["docs"] * n, "hash": [sha(t) for t in texts.values()],
        "author": [""] * n, "date": [""] * n,
    })
    lay.chunks(scope).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, lay.chunks(scope))


TRANSLATED = {"README.md": "a fast file finder", "README.es.md": "un buscador de archivos rapido",
              "docs/guide.md": "how to search hidden files"}


def test_the_store_names_the_chunks_of_translated_copies(lay):
    write_readmes(lay, "alpha", TRANSLATED)
    embed_scope("alpha", lay, FakeEncoder())
    manifest = json.loads(meta_path(lay.vectors("fake", "alpha")).read_text())
    assert manifest["copies"] == [sha("un buscador de archivos rapido")]


def test_a_store_without_translated_copies_names_none(lay):
    write_chunks(lay, "alpha", ["one", "two"])
    embed_scope("alpha", lay, FakeEncoder())
    assert json.loads(meta_path(lay.vectors("fake", "alpha")).read_text())["copies"] == []


def test_a_store_written_before_copies_were_named_gains_them_without_encoding(lay):
    from loci.kernel.atomic import write_json

    write_readmes(lay, "alpha", TRANSLATED)
    embed_scope("alpha", lay, FakeEncoder())
    path = meta_path(lay.vectors("fake", "alpha"))
    old = json.loads(path.read_text())
    del old["copies"]
    write_json(path, old)
    again = FakeEncoder()
    assert embed_scope("alpha", lay, again).encoded == 0 and again.calls == []
    assert json.loads(path.read_text())["copies"] == [sha("un buscador de archivos rapido")]
    still = FakeEncoder()
    before = path.stat().st_mtime_ns
    embed_scope("alpha", lay, still)
    assert path.stat().st_mtime_ns == before    # named now: left alone


def test_the_summary_leaves_translated_copies_out(lay):
    from loci.query.semantic import scope_summary_path

    write_readmes(lay, "alpha", TRANSLATED)
    embed_scope("alpha", lay, FakeEncoder())
    rows = np.load(scope_summary_path(lay, "fake", "alpha")).astype(np.float32)
    enc = FakeEncoder()
    copy = enc.encode(["un buscador de archivos rapido"])[0]
    assert len(rows) == 2 and np.max(rows @ copy) < 0.99


def test_a_bundle_carries_the_names_of_translated_copies(lay, tmp_path):
    from loci_pipeline.embed import store_as_parquet, store_from_parquet

    write_readmes(lay, "alpha", TRANSLATED)
    embed_scope("alpha", lay, FakeEncoder())
    parquet = tmp_path / "v.parquet"
    parquet.write_bytes(store_as_parquet(lay.vectors("fake", "alpha"), "hash"))
    store_from_parquet(parquet, tmp_path / "copy.json", "hash")
    assert json.loads(meta_path(tmp_path / "copy.json").read_text())["copies"] == [sha("un buscador de archivos rapido")]
