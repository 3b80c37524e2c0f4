"""The routing decision on small in-memory indexes (no disk)."""

import pytest

from conftest import routing_index

from loci.kernel.config import Params
from loci.query.router import Context, route


build_index = routing_index


FILLER = "module function class value return config default option error test file data " * 3
CORPUS = {
    "alpha": FILLER + "gizmo sprocket calibration parser " * 4 + "alpha",
    "beta": FILLER + "widget toolbar render canvas " * 4 + "calibration",
    "gamma": FILLER + "cookie session redirect header " * 5 + "request " * 6,
    "delta": FILLER + "tree walk directory symlink descend " * 4,
    "click": FILLER + "option argument command group prompt envvar " * 5 + "click " * 3,
}
ALIASES = {s: [s] for s in CORPUS}
P = Params(evidence_floor=1.5)


@pytest.fixture
def index():
    return build_index(CORPUS)


def test_routes_on_distinctive_vocabulary(index):
    r = route("how does the sprocket calibration parser work", index, Context(), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "alpha"


def test_abstains_on_nonsense_with_no_shortlist(index):
    r = route("frimble the zanzibar flux until it snorps", index, Context(), ALIASES, P)
    assert r.outcome == "abstained" and r.reason in ("no_evidence", "deictic")
    assert r.candidates == []


def test_abstains_on_a_deictic_question_without_cwd(index):
    r = route("how do I run the tests for this project?", index, Context(), ALIASES, P)
    assert r.outcome == "abstained" and r.reason == "deictic"


def test_deictic_question_with_cwd_routes_to_the_cwd_scope(index):
    r = route("how do I run the tests for this project?", index, Context(cwd_scope="delta"), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "delta"


def test_a_name_used_as_a_name_forces_the_scope(index):
    r = route("In click, how do I render a canvas?", index, Context(), ALIASES, P)
    assert r.scopes[0] == "click"


def test_an_ordinary_word_that_is_a_scope_name_is_not_a_name(index):
    # "click" also occurs as vocabulary elsewhere: a bare lowercase use is just a word
    idx = build_index({**CORPUS, "beta": CORPUS["beta"] + " click click"})
    r = route("double click event on the widget toolbar canvas", idx, Context(), ALIASES, P)
    assert r.scopes[0] == "beta"


def test_enumeration_returns_every_holder_and_drops_an_excluded_name(index):
    idx = build_index({**CORPUS, "beta": CORPUS["beta"] + " sprocket gizmo calibration parser" * 3})
    r = route("which of my projects use sprocket gizmo?", idx, Context(), ALIASES, P)
    assert r.outcome == "enumerated" and set(r.scopes) == {"alpha", "beta"}
    r2 = route("which of my projects use sprocket gizmo besides alpha?", idx, Context(), ALIASES, P)
    assert "alpha" not in r2.scopes and "beta" in r2.scopes


def test_abstention_shortlist_names_scopes_holding_a_distinctive_term(index):
    r = route("what is calibration", index, Context(), ALIASES, Params(evidence_floor=50, min_matched_tokens=9,
                                                                    concentrated_min_evidence=99))
    assert r.outcome == "abstained" and r.reason == "no_evidence"
    assert {c["scope"] for c in r.candidates} == {"alpha", "beta"}
    assert all(c["terms"] == ["calibration"] for c in r.candidates)


def test_group_flag_confines_to_members(index):
    ctx = Context(eligible=frozenset({"alpha", "beta"}))
    r = route("cookie session redirect header request", index, ctx, ALIASES, P)
    assert r.outcome == "routed" and set(r.scopes) <= {"alpha", "beta"} or r.outcome == "abstained"
    assert "gamma" not in r.scopes


def test_hard_group_abstains_when_the_best_answer_is_outside(index):
    ctx = Context(eligible=frozenset({"alpha", "beta"}), strict=True)
    r = route("cookie session redirect header request", index, ctx, ALIASES, P)
    assert r.outcome == "abstained" and r.reason == "out_of_group"
    assert r.candidates[0]["scope"] == "gamma"   # where the answer lies: something to ask with --scope


def test_a_group_that_holds_nothing_of_the_question_says_the_answer_lies_outside_it_in_any_mode(index):
    # `--group` confines in every mode; when no member holds the question and a project outside would
    # route it, "not enough of the question exists" would be false: the answer lies outside the group
    ctx = Context(eligible=frozenset({"alpha", "beta"}))
    r = route("cookie session redirect header request", index, ctx, ALIASES, P)
    assert r.outcome == "abstained" and r.reason == "out_of_group"
    assert route("frimble zanzibar snorps", index, ctx, ALIASES, P).reason == "no_evidence"


def test_hard_group_does_not_claim_out_of_group_for_nonsense(index):
    ctx = Context(eligible=frozenset({"alpha", "beta"}), strict=True)
    r = route("frimble zanzibar snorps", index, ctx, ALIASES, P)
    assert r.reason == "no_evidence"


def test_soft_group_demotes_but_does_not_exclude(index):
    ctx = Context(cwd_scope="alpha", demoted=frozenset({"gamma", "delta", "click", "beta"}))
    r = route("cookie session redirect header request", index, ctx, ALIASES, P)
    gamma = next(d for d in r.details if d.scope == "gamma")
    assert gamma.demoted and "gamma" in r.scopes


def _long_random_question() -> str:
    import random

    rng = random.Random(0)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(100_000)) + " click"


def test_a_long_random_question_does_not_name_a_scope():
    index = build_index({**CORPUS, "beta": CORPUS["beta"] + " click"})
    r = route(_long_random_question(), index, Context(), ALIASES, P)
    assert not any(d.alias for d in r.details)


@pytest.mark.slow
def test_a_long_random_question_answers_within_a_second():
    import time

    index = build_index({**CORPUS, "beta": CORPUS["beta"] + " click"})
    q = _long_random_question()
    t = time.perf_counter()
    route(q, index, Context(), ALIASES, P)
    assert time.perf_counter() - t < 1.0  # a wall time: slow-marked, run on a quiet machine


def test_dotted_symbol_routes_to_its_only_holder():
    idx = build_index({**CORPUS, "gamma": CORPUS["gamma"] + " Session.send Session.send",
                       "beta": CORPUS["beta"] + " session send send"})
    r = route("what does Session.send do", idx, Context(), ALIASES, P)
    assert r.scopes[0] == "gamma"


def test_json_contract_has_exactly_the_documented_fields(index):
    r = route("sprocket calibration parser", index, Context(), ALIASES, P)
    assert set(r.to_json()) == {"outcome", "scopes", "reason", "candidates", "scores"}


def test_a_scope_with_very_broad_vocabulary_does_not_win_other_scopes_questions():
    import random

    rng = random.Random(7)
    words = [f"w{i:03d}x" for i in range(600)]
    corpus = {}
    for s in range(14):
        own = words[s * 40:(s + 1) * 40]
        corpus[f"s{s:02d}"] = " ".join(own * 3) + " " + FILLER
    # one scope holds nearly the whole corpus vocabulary, a few times each, plus lots of its own
    corpus["broad"] = " ".join(w for w in words[:560] for _ in range(4)) + " " + FILLER * 40
    idx = build_index(corpus)
    wrong = 0
    for s in range(14):
        q = " ".join(rng.sample(words[s * 40:(s + 1) * 40], 3))
        r = route(q, idx, Context(), {}, P)
        wrong += r.scopes[:1] != [f"s{s:02d}"]
    assert wrong == 0


def test_with_project_comma_reads_as_naming_the_project(index):
    r = route("With click, how do I render a canvas?", index, Context(), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "click"


def test_negated_enumeration_returns_the_scopes_lacking_the_fact():
    idx = build_index(CORPUS)
    for tok, scopes in {"fact:python": ["alpha", "beta", "gamma"], "fact:rust": ["delta"]}.items():
        idx.postings[tok] = {idx.position[s]: 1.0 for s in scopes}
    r = route("Which of my projects aren't written in Python?", idx, Context(), ALIASES, P)
    assert r.outcome == "enumerated" and set(r.scopes) == {"click", "delta"}


def test_a_spelled_out_word_also_finds_the_abbreviation_code_uses():
    corpus = {**CORPUS, "delta": FILLER + "dir walk descend dir_entry dir dir dir " * 4,
              "gamma": CORPUS["gamma"] + " directory"}
    idx = build_index(corpus)
    r = route("walk every directory and descend", idx, Context(), ALIASES, P)
    assert r.scopes[:1] == ["delta"]
    assert "directori" in next(d for d in r.details if d.scope == "delta").matched


def test_a_definite_noun_before_an_infinitive_is_not_pointing():
    from loci.query.grammar import deixis

    assert deixis("how do I get the library to halt on the first answer") != "strong"
    assert deixis("how do I install the library?") == "strong"


def test_an_acronym_in_capitals_is_not_a_lowercase_projects_name():
    idx = build_index({**CORPUS, "cli": FILLER + "flag command app subcommand " * 4,
                       "delta": CORPUS["delta"] + " command line cli"})
    aliases = {s: [s] for s in idx.scopes}
    r = route("How can I add my own subcommand to this CLI without forking it?", idx,
              Context(cwd_scope="delta"), aliases, P)
    assert r.scopes[0] == "delta"
    r = route("How do I add a subcommand in Click?", idx, Context(cwd_scope="delta"), aliases, P)
    assert r.scopes[0] == "click"


def test_my_app_is_the_askers_own_code_not_a_pointer_at_a_project(index):
    r = route("how do I parse sprocket calibration in my app?", index, Context(), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "alpha"
    r = route("how do I frimble my app?", index, Context(), ALIASES, P)
    assert r.outcome == "abstained" and r.reason == "no_evidence"
    r = route("how do I run the tests for this project?", index, Context(), ALIASES, P)
    assert r.reason == "deictic"


def test_this_after_a_verb_of_doing_is_the_task_described_not_a_project():
    from loci.query.grammar import deixis

    assert deixis("I'd rather write the usage text first. Is there a library that does this?") is None
    assert deixis("What license is this under?") == "strong"
    assert deixis("How do I do this in this project?") == "strong"


BUILT_ON = {
    **CORPUS,
    "msgpack": FILLER + "pack unpack binary serializer bytes " * 5 + "msgpack " * 2,
    "cattrs": FILLER + "converter structure unstructure attrs dataclass " * 4 + "msgpack datetime preconf " * 4,
    "other": FILLER + "binary bytes pack " * 3 + "msgpack",
}


def test_a_named_project_another_is_built_on_yields_to_the_project_that_uses_it_more():
    # "... with msgpack": cattrs' msgpack converter says "msgpack" more than msgpack itself does,
    # and holds more of the question: it answers first, msgpack second
    names = {s: [s] for s in BUILT_ON}
    index = build_index(BUILT_ON)
    r = route("Is there a ready-made converter for packing my dataclass objects with msgpack, and how are "
              "datetimes represented?", index, Context(), names, Params())
    assert r.scopes[:2] == ["cattrs", "msgpack"]


def test_a_named_project_keeps_the_lead_when_it_is_the_subject_not_the_instrument():
    # sse-starlette-like: a project built on the named one says its name more, but the question is
    # about the named project itself
    names = {s: [s] for s in BUILT_ON}
    index = build_index(BUILT_ON)
    r = route("Why does msgpack represent datetimes with its own converter for dataclass objects?",
              index, Context(), names, Params())
    assert r.scopes[0] == "msgpack"


def test_the_name_read_as_an_instrument():
    from loci.query.grammar import instrument_only

    assert instrument_only("packing my objects with msgpack, and datetimes?", "msgpack")
    assert instrument_only("a lock shared across servers, backed by Redis?", "redis")
    assert not instrument_only("Why does Starlette parse the Cookie header?", "starlette")
    assert not instrument_only("In flask, how do I stream with flask?", "flask")
    assert not instrument_only("Does the requests library retry?", "requests")


def test_a_named_project_keeps_the_lead_when_no_other_uses_its_name_more():
    names = {s: [s] for s in BUILT_ON}
    index = build_index(BUILT_ON)
    r = route("How do I unpack binary bytes with msgpack?", index, Context(), names, Params())
    assert r.scopes[0] == "msgpack"
    r = route("In gamma, how is the session cookie kept across a redirect?", build_index(CORPUS), Context(),
              ALIASES, Params())
    assert r.scopes == ["gamma"]


def test_this_error_or_this_warning_points_at_what_the_asker_sees_not_a_project():
    from loci.query.grammar import deixis

    assert deixis("I get this error when the download stalls, how do I retry?") is None
    assert deixis("Why do these warnings appear on every run?") is None
    assert deixis("Where does this exception come from in this library?") == "strong"
    assert deixis("Does this project raise this error?") == "strong"


def test_a_pasted_traceback_asked_about_with_this_error_routes_on_its_words(index):
    question = ("I get this error, how do I fix it?\n  File \"app.py\", line 3, in <module>\n"
                "    jar = session.cookie(header)\nRedirectError: cookie session redirect header lost")
    r = route(question, index, Context(), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "gamma"


def test_an_ordinary_word_name_followed_by_one_of_its_api_names_is_a_name():
    # "click" is everyday vocabulary elsewhere, but "click option" writes click's own `click.option`
    corpus = {**CORPUS, "beta": CORPUS["beta"] + " click click", "click": CORPUS["click"] + " click.option " * 3,
              "gamma": CORPUS["gamma"] + " environment variable " * 6}
    idx = build_index(corpus)
    q = "How do I make a click option fall back to an environment variable?"
    r = route(q, idx, Context(cwd_scope="gamma"), ALIASES, P)
    assert r.scopes[0] == "click" and r.gate == "forced"
    plain = route("double click event on the widget toolbar canvas", idx, Context(), ALIASES, P)
    assert plain.scopes[0] == "beta"


def test_an_ordinary_word_name_as_the_subject_of_an_auxiliary_verb_is_a_name():
    # "click" is everyday vocabulary elsewhere; "does click ..." asks about the project itself
    idx = build_index({**CORPUS, "beta": CORPUS["beta"] + " click click toolbar canvas"})
    r = route("does click draw on the toolbar canvas?", idx, Context(), ALIASES, P)
    assert r.scopes[0] == "click" and r.gate == "forced"
    plain = route("a double click draws on the toolbar canvas", idx, Context(), ALIASES, P)
    assert plain.scopes[0] == "beta"


@pytest.mark.parametrize("question", ["what changed in the latest click release?",
                                      "which click version added the toolbar canvas?"])
def test_an_ordinary_word_name_before_release_or_version_is_a_name(question):
    idx = build_index({**CORPUS, "beta": CORPUS["beta"] + " click click toolbar canvas release version"})
    r = route(question, idx, Context(), ALIASES, P)
    assert r.scopes[:1] == ["click"] and r.gate == "forced"


@pytest.mark.parametrize("question", [
    "Comment afficher le canevas de la barre d'outils avec click ?",
    "Wie zeichne ich mit click auf der Leinwand der Werkzeugleiste?",
    "¿Cómo dibujo en el lienzo de la barra de herramientas con click?",
    "Como desenho na tela da barra de ferramentas com click?",
])
def test_a_name_after_a_preposition_of_another_language_is_a_name(question):
    """A question in French, German, Spanish or Portuguese names a project as an English one does
    ("with click"): the multilingual encoder is an extra, and without it such a question abstained."""
    idx = build_index({**CORPUS, "beta": CORPUS["beta"] + " click click toolbar canvas"})
    r = route(question, idx, Context(), ALIASES, P)
    assert r.scopes[:1] == ["click"] and r.gate == "forced"


def test_neighbouring_words_are_looked_up_as_the_qualified_name_they_may_write():
    from loci.query.grammar import adjacent_pairs

    assert "click.option" in adjacent_pairs("a click option falls back")


@pytest.mark.parametrize("question", [
    "What does this project do with cookie sessions and redirect headers?",
    "Does my app handle the cookie session redirect request header?",
])
def test_a_question_about_this_project_asked_inside_it_is_answered_there_whatever_other_projects_hold(index, question):
    # gamma holds every word of the question many times over; the asker stands in delta and
    # points at the project they are in, so delta answers (first), and it never abstains
    r = route(question, index, Context(cwd_scope="delta"), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "delta"


def test_a_question_naming_another_project_asked_inside_one_goes_to_the_named_project(index):
    r = route("In click, what does this prompt option do?", index, Context(cwd_scope="delta"), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "click"


# --- identical copies (twins): one scope's content registered under several names ---

TWINS = {**CORPUS, "gamma-copy": CORPUS["gamma"], "gamma-fork": CORPUS["gamma"],
         "kappa": FILLER + "cookie session redirect header " * 5 + "request " * 4 + "jar"}
TWIN_NAMES = {s: [s] for s in TWINS}
SESSION_Q = "how are the session cookie and redirect header handled for a request?"


def test_identical_copies_take_one_place_in_a_route_and_leave_the_others_to_other_scopes():
    index = build_index(TWINS)
    assert route(SESSION_Q, index, Context(), TWIN_NAMES, P).scopes == ["gamma", "gamma-copy", "gamma-fork"]
    res = route(SESSION_Q, index, Context(shadowed=frozenset({"gamma-copy", "gamma-fork"})), TWIN_NAMES, P)
    assert res.scopes == ["gamma", "kappa"]          # the copies' places go to the next scope


def test_a_copy_named_in_the_question_or_holding_the_cwd_still_answers():
    index = build_index(TWINS)
    ctx = Context(shadowed=frozenset({"gamma-copy", "gamma-fork"}))
    named = route("in gamma-fork, how are the session cookie and redirect header handled?", index, ctx,
                  TWIN_NAMES, P)
    assert named.scopes[0] == "gamma-fork"
    here = route("how does this project handle the session cookie?", index,
                 Context(cwd_scope="gamma-copy", shadowed=frozenset({"gamma-copy", "gamma-fork"})), TWIN_NAMES, P)
    assert here.scopes[0] == "gamma-copy"


def test_an_enumeration_lists_one_of_identical_copies():
    index = build_index(TWINS)
    index.postings["fact:rust"] = {index.position[s]: 1.0 for s in ("gamma", "gamma-copy", "gamma-fork", "delta")}
    want = {"gamma", "gamma-copy", "gamma-fork", "delta"}
    assert set(route("Which of my projects are written in Rust?", index, Context(), TWIN_NAMES, P).scopes) == want
    ctx = Context(shadowed=frozenset({"gamma-copy", "gamma-fork"}))
    res = route("Which of my projects are written in Rust?", index, ctx, TWIN_NAMES, P)
    assert res.outcome == "enumerated" and set(res.scopes) == {"gamma", "delta"}


def test_a_british_spelling_in_the_question_finds_the_american_one_in_a_project_and_back():
    index = build_index({**CORPUS, "paint": FILLER + "color palette ansi " * 4,
                         "bars": FILLER + "colour meter loop " * 4})
    names = {s: [s] for s in [*CORPUS, "paint", "bars"]}
    british = route("Which of my projects colour their output?", index, Context(), names, P)
    assert british.outcome == "enumerated" and set(british.scopes) == {"paint", "bars"}
    american = route("Which of my projects color their output?", index, Context(), names, P)
    assert set(american.scopes) == {"paint", "bars"}


def test_a_word_weighs_the_same_whichever_spelling_the_question_uses():
    # "colour" and "color" are one word: the project that uses it most leads either way, and the
    # one project that writes the rarer spelling once is not lifted by that spelling's rarity
    index = build_index({**CORPUS, "paint": FILLER + "color palette ansi terminal " * 6,
                         "bars": FILLER * 2 + "meter loop terminal " * 4 + "colour",
                         "cli": FILLER + "color flag option " * 2 + "terminal",
                         "web": FILLER + "color theme css " * 2})
    names = {s: [s] for s in [*CORPUS, "paint", "bars", "cli", "web"]}
    british = route("Which of my projects can colour terminal output?", index, Context(), names, P)
    american = route("Which of my projects can color terminal output?", index, Context(), names, P)
    assert british.scopes == american.scopes
    assert british.scopes[0] == "paint"
    assert british.scores == american.scores


def test_the_spelling_pairs_are_the_tokens_the_tokenizer_makes_of_both_forms():
    from loci.kernel.tokens import tokenize
    from loci.query.spelling import _BRITISH_AMERICAN, OTHER_SPELLING

    for british, american in _BRITISH_AMERICAN.items():
        (b,), (a,) = tokenize(british), tokenize(american)
        assert OTHER_SPELLING[b] == a and OTHER_SPELLING[a] == b


def test_the_copy_that_answers_is_the_cwds_else_an_eligible_one_built_here_else_the_first_by_name():
    from loci.query.router import shadowed_copies

    group = [("web", "web-fork", "web@team")]
    assert shadowed_copies(group) == {"web-fork", "web@team"}                         # by name
    assert shadowed_copies(group, pulled={"web"}) == {"web", "web@team"}             # built here first
    assert shadowed_copies(group, cwd_scope="web@team") == {"web", "web-fork"}       # the cwd's
    assert shadowed_copies(group, eligible={"web@team", "other"}) == {"web", "web-fork"}   # in the group asked


def _languages(idx, held):
    for lang, scopes in held.items():
        idx.postings["fact:" + lang] = {idx.position[s]: 1.0 for s in scopes}
    return idx


def test_a_question_naming_its_language_routes_only_to_projects_in_it():
    # gamma's words match best, but the asker works in Go: only delta is written in Go
    idx = _languages(build_index({**CORPUS, "delta": CORPUS["delta"] + " cookie session redirect" * 3}),
                     {"python": ["alpha", "beta", "gamma", "click"], "go": ["delta"]})
    plain = route("how do I keep the cookie session across a redirect header?", idx, Context(), ALIASES, P)
    assert plain.scopes[0] == "gamma"
    r = route("In my Go service, how do I keep the cookie session across a redirect header?", idx, Context(),
              ALIASES, P)
    assert r.scopes == ["delta"] and r.languages == ["go"]
    assert set(r.other_language) == {"alpha", "beta", "gamma", "click"}


def test_the_words_naming_the_language_are_spent_on_ruling_projects_out():
    # "Node.js" picked the JavaScript projects; among them it tells nothing: the project whose own
    # prose says "node.js" most (a logger) does not outrank the one that answers about flags
    idx = _languages(build_index({
        **CORPUS,
        "logger": FILLER + "node.js logger fast json node.js transport " * 5 + "error",
        "jscli": FILLER + "option flag conflict command argument parse " * 4 + "node.js",
        "pycli": FILLER + "option flag conflict command argument parse " * 4}),
        {"javascript": ["logger", "jscli"], "python": ["alpha", "beta", "gamma", "click", "pycli"],
         "go": ["delta"]})
    names = {**ALIASES, "logger": ["logger"], "jscli": ["jscli"], "pycli": ["pycli"]}
    r = route("In a Node.js command-line tool, how do I declare that two flags conflict with an error?",
              idx, Context(), names, Params(evidence_floor=1.0))
    assert r.languages == ["javascript", "typescript"] and "pycli" in r.other_language
    assert r.scopes[0] == "jscli"


def test_a_language_no_project_is_written_in_rules_nothing_out():
    idx = _languages(build_index(CORPUS), {"python": ["alpha", "beta", "gamma", "click"]})
    r = route("In my Rust crate, how do I keep the cookie session across a redirect header?", idx, Context(),
              ALIASES, P)
    assert r.scopes[0] == "gamma" and r.other_language == []


def test_a_named_project_or_the_cwd_is_not_ruled_out_by_the_language():
    idx = _languages(build_index(CORPUS), {"python": ["alpha", "beta", "gamma", "click"], "go": ["delta"]})
    named = route("In click, how do I prompt for an option from my Go app?", idx, Context(), ALIASES, P)
    assert named.scopes[0] == "click"
    here = route("How do I keep the cookie session across a redirect header in my Go service?", idx,
                 Context(cwd_scope="gamma"), ALIASES, P)
    assert "gamma" in here.scopes and "gamma" not in here.other_language


def test_the_language_a_question_ports_to_is_not_the_projects():
    from loci.query.grammar import named_languages

    assert named_languages("In my Node CLI, can I hand `-5` to `--offset`?") == {"javascript", "typescript"}
    assert named_languages("How do I make my Go command-line app print a hint?") == {"go"}
    assert named_languages("I'm porting a help-text-driven argument parser to Rust.") == frozenset()
    assert named_languages("render templates without reaching into Python internals") == frozenset()
    # plain words: lower case, first in the question, or inside a code span
    assert named_languages("Go to the node's children and rust-proof the `Python` call") == frozenset()


def test_a_one_shot_route_reads_the_language_facts_the_question_names(tmp_path, loci_home):
    import json

    from typer.testing import CliRunner

    from conftest import GIZMO, setup_home
    from loci.front.cli import app

    prose = "Keep the cookie session across a redirect header. " * 4
    setup_home(tmp_path / "code", {
        "pysess": {"README.md": "# pysess\n\n" + prose * 2, "pysess/jar.py": "def cookie_session():\n    pass\n"},
        "jssess": {"README.md": "# jssess\n\n" + prose, "jar.js": "export function cookieSession() {}\n",
                   "package.json": '{"name": "jssess"}\n'},
        "gizmo": GIZMO, "tree": {"README.md": "# tree\n\nWalk a directory tree, descend into symlinks.\n"}})
    ask = ["route", "--json", "--no-cwd"]
    plain = json.loads(CliRunner().invoke(app, ask + ["How do I keep the cookie session across a redirect?"]).output)
    assert plain["scopes"][0] == "pysess"
    # "Node" is no fact's own word: the question's reading says which facts to load
    res = CliRunner().invoke(app, ask + ["In my Node app, how do I keep the cookie session across a redirect?"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["scopes"] == ["jssess"]


def test_a_language_named_after_written_in_counts_in_lower_case():
    from loci.query.grammar import named_languages

    assert named_languages("Which of my projects are written in go?") == {"go"}
    assert named_languages("Which of my projects are written in shell?") == {"shell"}
    assert named_languages("Which of my projects offer shell tab-completion?") == frozenset()


def test_a_project_named_as_such_leads_an_ordinary_word_that_only_follows_a_preposition():
    """ "the requests library" names requests; "with backoff" may name the backoff package or mean
    backoff: when the question names one project unmistakably, a word that is vocabulary elsewhere
    and reads as a name only after a preposition is not a second name."""
    corpus = {
        "requests": FILLER + "session adapter connection pool http cookie " * 5 + "requests " * 3,
        "backoff": FILLER + "retry retries backoff decorator exponential jitter giveup " * 6,
        "net": FILLER + "retry backoff connection timeout " * 2 + "requests " * 2,
    }
    idx = build_index(corpus)
    aliases = {s: [s] for s in corpus}
    q = "Does the requests library retry failed connections on its own, and how do I add retries with backoff?"
    r = route(q, idx, Context(), aliases, P)
    assert r.scopes[0] == "requests"
    alone = route("How do I add retries with backoff to my http calls?", idx, Context(), aliases, P)
    assert alone.scopes[0] == "backoff"        # no other name: the preposition still names it


# two technical names no project mentions anywhere: the question is about something else
UNHELD_CORPUS = {**CORPUS, "gamma": CORPUS["gamma"] + " auth flow page single implement " * 3}


def test_abstains_when_two_technical_names_of_the_question_are_held_by_no_project():
    index = build_index(UNHELD_CORPUS)
    r = route("How do I implement the OAuth2 authorization-code flow with PKCE in a single-page app?",
              index, Context(), ALIASES, P)
    assert r.outcome == "abstained" and r.reason == "no_evidence"
    assert r.unheld == ["OAuth2", "PKCE"]


def test_one_technical_name_no_project_holds_does_not_decide_alone():
    index = build_index(UNHELD_CORPUS)
    r = route("How do I implement the OAuth2 flow on a single page with cookie session redirect headers?",
              index, Context(), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "gamma" and r.unheld == []


def test_technical_names_some_project_holds_route_as_before(index):
    r = route("Does the GZIP and HTTP2 cookie session redirect keep its header?", build_index(
        {**CORPUS, "gamma": CORPUS["gamma"] + " gzip http2"}), Context(), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "gamma"


def test_a_named_project_answers_even_when_its_docs_miss_two_technical_names(index):
    r = route("Does click support OAuth2 with PKCE?", index, Context(), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "click"


def test_a_question_asked_inside_a_project_answers_even_with_unheld_technical_names(index):
    r = route("Does this support OAuth2 with PKCE?", index, Context(cwd_scope="delta"), ALIASES, P)
    assert r.outcome == "routed" and r.scopes[0] == "delta"


def test_capitalised_words_joined_by_a_hyphen_are_no_technical_names():
    from loci.query.grammar import name_shaped_words

    assert name_shaped_words("Mein Node-Prozess überwacht Kernel-Beobachtungen mit OAuth2") == ["OAuth2"]


def test_a_quoted_word_raises_no_project_topic_so_a_bare_that_stays_anaphora(index):
    r = route("My tool gets 'instal' instead of 'install' from its users; can it propose the closest one? "
              "Is that built in?", index, Context(), ALIASES, P)
    assert r.outcome == "abstained" and r.reason == "no_evidence"
