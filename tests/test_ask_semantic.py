"""Semantic recall inside `ask`, with a tiny concept encoder instead of a real model."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import make_repo
from loci.front.cli import app

runner = CliRunner()
CONCEPTS = {"cat": 0, "cats": 0, "kitten": 0, "feline": 0, "car": 1, "cars": 1, "engine": 1,
            "automobile": 1, "food": 2, "eat": 2, "nutrition": 2, "feed": 2}


class ConceptEncoder:
    """Vectors over a few concepts, so a paraphrase shares a direction but not a word."""

    model_id = "concept"
    dim = 4
    calls = 0

    def other_word(self, row, word):
        """What a word outside the concepts adds: nothing here."""

    def encode(self, texts):
        ConceptEncoder.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace(".", " ").replace("?", " ").split():
                if w in CONCEPTS:
                    out[i, CONCEPTS[w]] += 1.0
                else:
                    self.other_word(out[i], w)
            out[i, 3] += 0.05
            out[i] /= np.linalg.norm(out[i])
        return out


@pytest.fixture
def pets(tmp_path, loci_home, monkeypatch):
    import loci.query.semantic
    import loci_pipeline.embed

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, layout: ConceptEncoder())
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, layout: ConceptEncoder())
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
    assert res.exit_code == 0 and "already up to date" in res.output and "encoded" not in res.output


def test_a_missing_embed_extra_is_one_line_and_ask_continues_lexically(pets, monkeypatch):
    import loci.query.semantic

    runner.invoke(app, ["embed", "--quiet"])

    def unavailable(name, layout):
        raise loci.query.semantic.EncoderUnavailable("embeddings need the `embed` extra: pip install 'loci-scopes[embed]'")

    monkeypatch.setattr(loci.query.semantic, "load_encoder", unavailable)
    res = runner.invoke(app, ["ask", "--no-cwd", "In pets, how do cars get engine oil?"])
    assert res.exit_code == 0
    assert "loci-scopes[embed]" in res.output and "Cars need engine oil" in res.output


class WordyConceptEncoder(ConceptEncoder):
    """Concepts lead; every other word adds a little to one of 13 hashed directions, so
    unrelated texts are not all the same vector (as they are for ConceptEncoder)."""

    model_id = "wordy-concept"
    dim = 16

    def other_word(self, row, word):
        import zlib

        row[3 + zlib.crc32(word.encode()) % 13] += 0.2


@pytest.fixture
def garage(tmp_path, loci_home, monkeypatch):
    """Three projects; the question's words point one way, its meaning another."""
    import loci.query.semantic
    import loci_pipeline.embed

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, layout: WordyConceptEncoder())
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, layout, **kw: WordyConceptEncoder())
    make_repo(tmp_path / "code" / "motors", {
        "README.md": "# motors\n\n## Oil\n\nThe engine needs fresh oil every spring.\n\n"
                     "## Belts\n\nThe engine belt is checked twice a year.\n\n"
                     "## Plugs\n\nEngine plugs are swapped every winter.\n"}, message="engine maintenance notes")
    make_repo(tmp_path / "code" / "kennel", {
        "README.md": "# kennel\n\nThe schedule widget plans the week: twice a day, every day, "
                     "the schedule widget rings.\n"})
    make_repo(tmp_path / "code" / "sheets", {
        "README.md": "# sheets\n\nSpreadsheets with formulas, pivot tables and charts.\n"})
    res = runner.invoke(app, ["setup", str(tmp_path / "code"), "-y", "--quiet", "--no-graphs", "--no-calibrate"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["calibrate"])
    assert res.exit_code == 0, res.output
    return tmp_path / "code"


def test_the_vectors_add_the_scope_a_question_means_when_its_words_point_elsewhere(garage):
    question = "How often does the schedule widget say a car or an automobile needs looking at?"
    fast = json.loads(runner.invoke(app, ["route", "--json", "--fast", "--no-cwd", question]).output)
    assert fast["outcome"] == "routed" and "motors" not in fast["scopes"] and "semantic" not in fast
    out = json.loads(runner.invoke(app, ["route", "--json", "--no-cwd", question]).output)
    # motors joins the words' choice; it leads here, being clearly the closest above its background
    assert out["scopes"] == ["motors", *fast["scopes"]][: len(out["scopes"])] and "motors" not in fast["scopes"]
    assert out["semantic"]["action"] == "added"


def test_ask_answers_from_the_scope_the_vectors_added(garage):
    question = "How often does the schedule widget say a car or an automobile needs looking at?"
    out = json.loads(runner.invoke(app, ["ask", "--json", "--no-cwd", question]).output)
    motors = [b for b in out["blocks"] if b["scope"] == "motors"]
    assert motors and any("fresh oil" in e["text"] for e in motors[0]["episodes"])


def test_a_forced_route_never_loads_the_encoder(garage):
    ConceptEncoder.calls = 0
    out = json.loads(runner.invoke(app, ["route", "--json", "--cwd", str(garage / "sheets"),
                                         "How do I run the tests here?"]).output)
    assert out["scopes"] == ["sheets"] and ConceptEncoder.calls == 0 and "semantic" not in out


def test_the_text_output_says_which_scope_came_from_meaning(garage):
    question = "How often does the schedule widget say a car or an automobile needs looking at?"
    out = runner.invoke(app, ["route", "--explain", "--no-cwd", question]).output
    assert "motors added: closest in meaning" in out.splitlines()[0]
    assert "vectors: motors closest in meaning" in out and ": added" in out


def _spy_on_measured_scopes(monkeypatch) -> list[str]:
    """The scopes whose vectors the second opinion reads, in order (a list the test can clear)."""
    from loci.query.semantic_search import SemanticSide

    measured: list[str] = []
    real = SemanticSide._affinity

    def spy(self, question, scope, k, keep):
        measured.append(scope)
        return real(self, question, scope, k, keep)

    monkeypatch.setattr(SemanticSide, "_affinity", spy)
    return measured


def test_a_long_lived_session_measures_the_same_scopes_as_a_one_shot(garage, monkeypatch):
    """The MCP server and `loci eval` keep every index open; their second opinion must still judge
    the shortlist a one-shot judges, or the same question is answered two ways."""
    from dataclasses import replace

    from loci.query.ask import open_session, route_question

    measured = _spy_on_measured_scopes(monkeypatch)
    question = "How often does the schedule widget say a car or an automobile needs looking at?"
    answers, seen = [], []
    for long_lived in (False, True):
        measured.clear()
        session = open_session(keep_full_index=long_lived)
        session.params = replace(session.params, semantic_shortlist=1, semantic_read=1)
        answers.append(route_question(session, question).to_json())
        seen.append(sorted(measured))
    assert seen[0] == seen[1] and len(seen[0]) < 3      # the shortlist and the route's own, not all three
    assert answers[0] == answers[1]


class StrictEncoder(WordyConceptEncoder):
    """Refuses text that is not valid Unicode, as the real tokenizer does."""

    def encode(self, texts):
        for text in texts:
            text.encode("utf-8")
        return super().encode(texts)


@pytest.mark.parametrize("command", ["ask", "route"])
def test_a_question_with_bytes_that_are_not_utf8_is_answered_without_a_traceback(garage, monkeypatch, command):
    import loci.query.semantic

    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, layout, **kw: StrictEncoder())
    question = "how often is the engine \udcff\udcfe oil changed"     # what argv makes of bytes 0xff 0xfe
    res = runner.invoke(app, [command, "--json", "--no-cwd", question])
    assert res.exit_code == 0 and res.exception is None, res.output
    assert json.loads(res.output)


class PunctuationMeansCars(WordyConceptEncoder):
    """Reads a bare dash as "car": what a real model's vector of "-" may happen to be near."""

    def other_word(self, row, word):
        if not any(c.isalnum() for c in word):
            row[1] += 1.0
        else:
            super().other_word(row, word)


@pytest.mark.parametrize("question", ["-", "--", "?!", "..."])
def test_a_question_of_punctuation_alone_abstains(garage, monkeypatch, question):
    import loci.query.semantic

    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, layout, **kw: PunctuationMeansCars())
    res = runner.invoke(app, ["route", "--json", "--no-cwd", "--", question])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["outcome"] == "abstained"


def test_an_ask_over_several_scopes_reads_the_question_into_tokens_once(garage, monkeypatch):
    import loci.kernel.tokens as tokens
    from loci.query.ask import ask, open_session

    question = "How often does the schedule widget say a car or an automobile needs looking at?"
    seen = []
    real = tokens.tokenize

    def counting(text):
        if text == question:
            seen.append(text)
        return real(text)

    import loci.query.ask
    import loci.query.router
    import loci.query.search
    import loci.query.structure

    for module in (tokens, loci.query.ask, loci.query.router, loci.query.search, loci.query.structure):
        if hasattr(module, "tokenize"):
            monkeypatch.setattr(module, "tokenize", counting)
    tokens.question_words.cache_clear()
    result = ask(open_session(), question)
    assert len(result.blocks) >= 2          # the router, the routing read and each scope's search ask
    assert len(seen) == 1


def test_an_abstentions_candidates_are_measured_even_when_the_first_pass_misses_them(garage, monkeypatch):
    """The summary shortlist is a first pass; the scopes the words pointed at must be judged too."""
    from dataclasses import replace

    from loci.query.ask import open_session, route_question
    from loci.query.router import RouteResult
    import loci.query.ask as ask_module

    abstention = RouteResult("abstained", [], "no_evidence", [{"scope": "sheets", "terms": ["charts"]}],
                             {"sheets": 0.2}, gate="evidence")
    monkeypatch.setattr(ask_module, "route", lambda *a, **kw: abstention)
    from loci.query.semantic_search import SemanticSide

    monkeypatch.setattr(SemanticSide, "_shortlist", lambda self, q, scopes, n, include: ["motors", *include])
    measured = _spy_on_measured_scopes(monkeypatch)
    session = open_session()
    session.params = replace(session.params, semantic_shortlist=1, semantic_read=1)
    route_question(session, "Which pivot charts fit a kennel?")
    assert sorted(measured) == ["motors", "sheets"]


def test_every_scope_a_fused_route_chose_is_ranked_by_meaning():
    from loci.query.ask import _led_by_meaning
    from loci.query.router import RouteResult

    fused = RouteResult("routed", ["a", "b"], None, [], {}, gate="semantic",
                        semantic={"scope": "c", "affinity": 0.5, "margin": 0.01, "action": "fused"})
    added = RouteResult("routed", ["a", "c"], None, [], {}, gate="semantic",
                        semantic={"scope": "c", "affinity": 0.5, "margin": 0.01, "action": "added"})
    assert _led_by_meaning(fused) == {"a", "b"} and _led_by_meaning(added) == {"c"}


def test_the_same_passage_at_two_places_is_one_answer():
    from loci.query.ask import _materialise

    class Rows:
        def chunks(self, ids):
            text = {1: "Yields only entries\nthat satisfy the predicate.", 2: "Yields only entries that satisfy the predicate.",
                    3: "Skips the current directory."}
            return {i: {"path": "src/lib.rs", "line": i * 100, "text": text[i], "kind": "comment", "heading": ""}
                    for i in ids}

    got = _materialise(Rows(), [(1, 0.9), (2, 0.8), (3, 0.7)], 5)
    assert [e.line for e in got] == [100, 300]


def test_an_ask_over_several_scopes_reads_each_thing_about_the_question_once(garage, monkeypatch):
    """Its shape, language, deixis, enumeration and character n-grams: one reading each, held by
    the question's ``Question`` value, whatever the number of scopes searched."""
    from loci.kernel import language
    from loci.query import grammar, lexical
    from loci.query.ask import ask, open_session

    question = "How often does the schedule widget say a car or an automobile needs looking at?"
    calls: dict[str, int] = {}

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(text, *a, **kw):
            if text == question:
                calls[name] = calls.get(name, 0) + 1
            return real(text, *a, **kw)

        monkeypatch.setattr(module, name, wrapper)

    for module, name in ((grammar, "is_enumerative"), (grammar, "deixis"), (grammar, "question_shape"),
                         (grammar, "asks_why"), (language, "question_is_foreign"), (language, "is_foreign"),
                         (lexical, "char_wb_ngrams")):
        counted(module, name)
    result = ask(open_session(), question)
    assert len(result.blocks) >= 2
    assert calls and all(n == 1 for n in calls.values()), calls
    assert {"is_enumerative", "deixis", "char_wb_ngrams"} <= set(calls)


# --- a passage's tail, past what the encoder reads, speaks through its windows ---------------

class ShortSightedEncoder(WordyConceptEncoder):
    """Reads only the first ``WIDTH`` words of a text, and says so (``reach``), as MiniLM cut to
    128 word pieces does."""

    model_id = "short-sighted"
    WIDTH = 12

    def __init__(self, reach: bool = True):
        if reach:
            from test_windows import Words

            self.reach = Words(self.WIDTH)

    def encode(self, texts):
        return super().encode([" ".join(t.split()[: self.WIDTH]) for t in texts])


FILLER = " ".join(f"topic{i}" for i in range(40))


def _zoo(tmp_path, monkeypatch, reach: bool):
    import loci.query.semantic
    import loci_pipeline.embed

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, layout: ShortSightedEncoder(reach))
    monkeypatch.setattr(loci.query.semantic, "load_encoder", lambda name, layout, **kw: ShortSightedEncoder(reach))
    garage = "".join(f"## Bay {i}\n\nCars in bay {i} need engine oil.\n\n" for i in range(6))
    make_repo(tmp_path / "code" / "zoo", {
        "README.md": f"# zoo\n\n{garage}## Keeping\n\n{FILLER}.\n\nKittens eat food twice a day.\n"})
    make_repo(tmp_path / "code" / "other", {"README.md": "# other\n\nSpreadsheets with formulas and charts.\n"})
    res = runner.invoke(app, ["setup", str(tmp_path / "code"), "-y", "--quiet", "--no-graphs"])
    assert res.exit_code == 0, res.output
    out = json.loads(runner.invoke(app, ["ask", "--json", "--scope", "zoo", "How is a feline given nutrition?"]).output)
    return [e["text"] for b in out["blocks"] for e in b["episodes"]]


def test_a_sentence_past_what_the_encoder_reads_is_found_by_meaning_through_its_window(tmp_path, loci_home,
                                                                                        monkeypatch):
    assert "Kittens eat food" in _zoo(tmp_path, monkeypatch, reach=True)[0]


def test_without_windows_the_same_sentence_is_not_found_first(tmp_path, loci_home, monkeypatch):
    import loci.query.search

    # the vectors alone: the words the first passages lend would find the sentence again
    monkeypatch.setattr(loci.query.search, "BORROW_PASSAGES", 0)
    texts = _zoo(tmp_path, monkeypatch, reach=False)
    assert not texts or "Kittens eat food" not in texts[0]


def test_a_scope_s_vectors_are_read_once_as_stored_for_its_route_and_its_search(garage, monkeypatch):
    """A long-lived session holds each scope's stored rows (int8 here) once, not a float32 unit copy
    for the route and an aligned one for the search, and one question's cosines serve both."""
    from loci.query import semantic
    from loci.query.ask import ask, open_session

    reads = []
    real = semantic.load_vectors
    monkeypatch.setattr(semantic, "load_vectors", lambda *a, **kw: reads.append(a[2]) or real(*a, **kw))
    session = open_session(keep_full_index=True)
    result = ask(session, "When is the engine belt checked?")
    side = session.semantic()
    held = {scope: side._vectors[scope] for scope in side._vectors}
    assert "motors" in held and sorted(reads) == sorted(set(reads))     # each scope's store read once
    assert held["motors"].stored.matrix.dtype == np.int8
    assert any(b.scope == "motors" and b.episodes for b in result.blocks)
    before = len(reads)
    ask(session, "When is the engine belt checked?")
    assert len(reads) == before


def test_an_enumeration_of_words_has_its_members_judged_in_meaning_and_only_theirs(garage, monkeypatch):
    import loci.query.ask as ask_module

    seen = []

    def spy(result, affinity, background, params):
        seen.append((list(result.scopes), sorted(affinity), bool(background)))
        return result

    monkeypatch.setattr(ask_module, "enumeration_opinion", spy)
    question = "Which of my projects mention the schedule widget or the engine belt?"
    out = json.loads(runner.invoke(app, ["route", "--json", "--no-cwd", question]).output)
    assert out["outcome"] == "enumerated" and seen == [(out["scopes"], sorted(out["scopes"]), True)]
    runner.invoke(app, ["route", "--json", "--fast", "--no-cwd", question])
    assert len(seen) == 1          # --fast never reads vectors


def test_the_second_opinion_reads_further_than_the_scopes_it_judges_the_question_on(garage, monkeypatch):
    """The first pass's first `semantic_read` are read to find the closest scope; only its first
    `semantic_shortlist` and the route's own say whether the question stands out at all."""
    from dataclasses import replace

    from loci.query.ask import open_session, route_question
    from loci.query.router import RouteResult
    from loci.query.semantic_search import SemanticSide
    import loci.query.ask as ask_module

    abstention = RouteResult("abstained", [], "no_evidence", [{"scope": "sheets", "terms": ["charts"]}],
                             {"sheets": 0.2}, gate="evidence")
    monkeypatch.setattr(ask_module, "route", lambda *a, **kw: abstention)
    monkeypatch.setattr(SemanticSide, "_shortlist", lambda self, q, scopes, n, include: [*scopes[:n], *include])
    seen = {}

    def spy(result, affinity, ctx, params, q, background=None, judged=None):
        seen.update(read=sorted(affinity), judged=sorted(judged))
        return result

    monkeypatch.setattr(ask_module, "second_opinion", spy)
    session = open_session()
    scopes = session.indexed()
    assert len(scopes) == 3
    session.params = replace(session.params, semantic_shortlist=1, semantic_read=2)
    route_question(session, "Which pivot charts fit a kennel?")
    assert seen["read"] == sorted({*scopes[:2], "sheets"})
    assert seen["judged"] == sorted({scopes[0], "sheets"})
