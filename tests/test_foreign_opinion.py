"""A question not in English is judged by the multilingual encoder (loci.query.router.foreign_opinion)."""

from conftest import routing_index
from test_router import ALIASES, CORPUS, P

from loci.query.router import Context, foreign_opinion, route

INDEX = routing_index(CORPUS)
FLOOR = P.multilingual_route_floor


def best(**scores: float) -> dict[str, float]:
    """Each scope's best passage by the multilingual encoder; the rest far below the floor."""
    return {s: scores.get(s, 0.15) for s in CORPUS}


def lexical(question: str, context: Context = Context()):
    return route(question, INDEX, context, ALIASES, P)


def test_a_foreign_question_the_words_cannot_route_goes_to_the_scope_closest_in_its_language():
    r0 = lexical("¿cómo recorro un árbol sin seguir los enlaces simbólicos?")
    assert r0.outcome == "abstained" and r0.reason == "no_evidence"
    r = foreign_opinion(r0, best(delta=FLOOR + 0.1, gamma=FLOOR), Context(), P)
    assert r.outcome == "routed" and r.scopes == ["delta"]
    assert r.gate == "multilingual" and r.semantic["action"] == "foreign" and r.candidates == []


def test_scopes_within_the_close_margin_of_the_best_answer_too():
    r0 = lexical("¿cómo recorro un árbol sin seguir los enlaces simbólicos?")
    close = FLOOR + 0.1 - P.multilingual_close / 2
    r = foreign_opinion(r0, best(delta=FLOOR + 0.1, gamma=close), Context(), P)
    assert r.scopes == ["delta", "gamma"]


def test_below_the_floor_the_abstention_stands_as_off_topic_questions_in_other_languages_do():
    r0 = lexical("¿qué vino tinto combina mejor con una paella de mariscos?")
    r = foreign_opinion(r0, best(delta=FLOOR - 0.01), Context(), P)
    assert r.outcome == "abstained" and r.reason == "no_evidence"
    assert r.semantic["action"] == "none"


def test_the_words_own_route_follows_the_scope_closest_in_meaning():
    r0 = lexical("wie funktioniert der sprocket calibration parser genau?")
    assert r0.outcome == "routed" and r0.scopes[0] == "alpha"
    r = foreign_opinion(r0, best(delta=FLOOR + 0.05), Context(), P)
    assert r.scopes == ["delta", "alpha"]


def test_a_route_by_name_or_by_the_cwd_is_not_second_guessed():
    named = lexical("In click, wie schreibe ich eine Option?")
    assert foreign_opinion(named, best(delta=0.9), Context(), P).scopes == named.scopes
    here = Context(cwd_scope="beta")
    r0 = lexical("wie teste ich dieses Projekt hier?", here)
    assert foreign_opinion(r0, best(delta=0.9), here, P).scopes == r0.scopes


def test_only_eligible_scopes_are_chosen():
    r0 = lexical("¿cómo recorro un árbol sin seguir los enlaces simbólicos?")
    ctx = Context(eligible=frozenset({"gamma", "alpha"}))
    r = foreign_opinion(r0, best(delta=0.9, gamma=FLOOR + 0.01), ctx, P)
    assert r.scopes == ["gamma"]
