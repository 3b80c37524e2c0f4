"""Semantic recall inside `ask`, with a tiny concept encoder instead of a real model."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import make_repo
from loci.cli import app

runner = CliRunner()
CONCEPTS = {"cat": 0, "cats": 0, "kitten": 0, "feline": 0, "car": 1, "cars": 1, "engine": 1,
            "automobile": 1, "food": 2, "eat": 2, "nutrition": 2, "feed": 2}


class ConceptEncoder:
    """Vectors over a few concepts, so a paraphrase shares a direction but not a word."""

    model_id = "concept"
    dim = 4
    calls = 0

    def encode(self, texts):
        ConceptEncoder.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace(".", " ").replace("?", " ").split():
                if w in CONCEPTS:
                    out[i, CONCEPTS[w]] += 1.0
            out[i, 3] += 0.05
            out[i] /= np.linalg.norm(out[i])
        return out


@pytest.fixture
def pets(tmp_path, loci_home, monkeypatch):
    import loci.semantic
    import pipeline.embed

    monkeypatch.setattr(pipeline.embed, "open_encoder", lambda name, layout: ConceptEncoder())
    monkeypatch.setattr(loci.semantic, "load_encoder", lambda name, layout: ConceptEncoder())
    make_repo(tmp_path / "code" / "pets", {
        "README.md": "# pets\n\n## Feline care\n\nCats need food twice a day.\n\n"
                     "## Garage\n\nCars need engine oil.\n",
    })
    make_repo(tmp_path / "code" / "other", {"README.md": "# other\n\nUnrelated words about spreadsheets.\n"})
    res = runner.invoke(app, ["setup", str(tmp_path / "code"), "-y", "--quiet", "--no-graphs", "--no-embed",
                              "--no-calibrate"])
    assert res.exit_code == 0, res.output
    return tmp_path / "code"


def test_embed_then_ask_recalls_a_passage_that_shares_no_word_with_the_question(pets):
    res = runner.invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output
    out = json.loads(runner.invoke(app, ["ask", "--json", "--no-cwd", "In pets, what should a kitten eat?"]).output)
    texts = [e["text"] for b in out["blocks"] for e in b["episodes"]]
    assert any("Cats need food" in t for t in texts)


def test_fast_skips_the_encoder_and_finds_nothing_ungrounded(pets):
    runner.invoke(app, ["embed", "--quiet"])
    ConceptEncoder.calls = 0
    out = json.loads(runner.invoke(app, ["ask", "--json", "--fast", "--no-cwd",
                                         "In pets, what should a kitten eat?"]).output)
    assert ConceptEncoder.calls == 0
    assert not any("Cats need food" in e["text"] for b in out["blocks"] for e in b["episodes"])


def test_a_second_embed_encodes_nothing(pets):
    runner.invoke(app, ["embed", "--quiet"])
    res = runner.invoke(app, ["embed"])
    assert res.exit_code == 0 and "0 encoded" in res.output


def test_a_missing_embed_extra_is_one_line_and_ask_continues_lexically(pets, monkeypatch):
    import loci.semantic

    runner.invoke(app, ["embed", "--quiet"])

    def unavailable(name, layout):
        raise loci.semantic.EncoderUnavailable("embeddings need the `embed` extra: pip install 'loci-mem[embed]'")

    monkeypatch.setattr(loci.semantic, "load_encoder", unavailable)
    res = runner.invoke(app, ["ask", "--no-cwd", "In pets, how do cars get engine oil?"])
    assert res.exit_code == 0
    assert "loci-mem[embed]" in res.output and "Cars need engine oil" in res.output
