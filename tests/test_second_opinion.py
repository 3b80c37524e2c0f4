"""The semantic second opinion: pure, on small in-memory indexes and hand-made affinities."""

from dataclasses import replace

from conftest import routing_index
from test_router import ALIASES, CORPUS, P

from loci.query.router import Context, _above_background, route, second_opinion

INDEX = routing_index(CORPUS)


def near(**scores: float) -> dict[str, float]:
    return {s: scores.get(s, 0.3) for s in CORPUS}


def ask(question: str, affinity: dict[str, float], context: Context = Context()):
    return second_opinion(route(question, INDEX, context, ALIASES, P), affinity, context, P, question)


def test_the_vectors_favourite_joins_a_vocabulary_route_after_the_lexical_choice():
    r = ask("how is the sprocket calibration parser wired", near(delta=0.45))
    assert r.outcome == "routed" and r.scopes == ["alpha", "delta"]
    assert r.semantic["action"] == "added" and r.to_json()["semantic"]["scope"] == "delta"


def test_a_favourite_below_the_add_floor_changes_nothing():
    r = ask("how is the sprocket calibration parser wired", near(delta=0.39))
    assert r.scopes == ["alpha"] and r.semantic["action"] == "none"


def test_agreement_keeps_the_route_as_it_was():
    r = ask("how is the sprocket calibration parser wired", near(alpha=0.7))
    assert r.scopes == ["alpha"] and r.semantic["action"] == "agreed"


def test_a_clear_favourite_answers_a_no_evidence_abstention():
    lexical = route("when wiping nested folders bottom up", INDEX, Context(), ALIASES, P)
    assert lexical.outcome == "abstained" and lexical.reason == "no_evidence"
    r = second_opinion(lexical, near(delta=0.62, gamma=0.45), Context(), P)
    assert r.outcome == "routed" and r.scopes == ["delta"] and r.gate == "semantic"
    assert r.reason is None and r.candidates == []


def test_without_a_clear_favourite_words_and_meaning_together_pick_two_scopes():
    # "walk" is delta's word (too weak here to route alone); gamma is closer in meaning but holds none
    weak = replace(P, concentrated_min_evidence=5.0)
    q = "when wiping nested folders bottom up with a walk"
    lexical = route(q, INDEX, Context(), ALIASES, weak)
    assert lexical.outcome == "abstained"
    r = second_opinion(lexical, near(delta=0.58, gamma=0.62), Context(), weak, q)
    assert r.outcome == "routed" and r.semantic["action"] == "fused" and r.gate == "semantic"
    assert r.scopes[0] == "delta" and len(r.scopes) == 2


def test_a_question_near_nothing_off_topic_questions_do_not_reach_keeps_its_abstention():
    r = ask("when wiping nested folders bottom up", near(delta=0.39, gamma=0.38))
    assert r.outcome == "abstained" and r.semantic["action"] == "none"


def test_a_foreign_question_is_measured_against_the_off_topic_median_and_may_get_three_scopes():
    q = "¿Cómo borro las carpetas anidadas de abajo hacia arriba, primero los hijos?"
    r = ask(q, near(delta=0.34, gamma=0.33, alpha=0.31))
    assert r.outcome == "routed" and r.semantic["action"] == "fused" and len(r.scopes) == 3
    english = ask("when wiping nested folders bottom up", near(delta=0.34, gamma=0.33, alpha=0.31))
    assert english.outcome == "abstained"


def test_a_deictic_abstention_is_never_rescued():
    r = ask("how do I run the tests for this project?", near(delta=0.9))
    assert r.outcome == "abstained" and r.reason == "deictic"


def test_a_forced_route_is_not_second_guessed():
    r = ask("how do I run the tests for this project?", near(alpha=0.9), Context(cwd_scope="delta"))
    assert r.scopes == ["delta"]


def test_the_favourite_is_taken_among_eligible_scopes_only():
    ctx = Context(eligible=frozenset({"alpha", "gamma"}))
    r = ask("how is the sprocket calibration parser wired", near(delta=0.9, gamma=0.5), ctx)
    assert "delta" not in r.scopes and r.scopes == ["alpha", "gamma"]


def test_a_scope_the_question_excludes_is_not_brought_back():
    r = ask("besides delta, how is the sprocket calibration parser wired", near(delta=0.9))
    assert "delta" not in r.scopes


def test_the_route_is_not_widened_past_the_selection_limit():
    full = route("how is the sprocket calibration parser wired", INDEX, Context(), ALIASES, P)
    full.scopes = ["alpha", "beta", "gamma"]
    r = second_opinion(full, near(delta=0.8), Context(), P)
    assert r.scopes == ["alpha", "beta", "gamma"]


def test_a_vocabulary_route_nothing_comes_close_to_in_meaning_abstains_with_its_scopes_as_shortlist():
    question = "how is the sprocket calibration parser wired"
    r = ask(question, {s: 0.2 for s in CORPUS})
    assert r.outcome == "abstained" and r.reason == "no_evidence" and r.scopes == []
    assert r.semantic["action"] == "vetoed"
    assert r.candidates[0]["scope"] == "alpha" and "sprocket" in r.candidates[0]["terms"]


def test_the_veto_reads_the_routes_own_scopes_not_the_nearest_of_all():
    # among hundreds of scopes one is always near-ish: alpha, the words' choice, is far, and
    # gamma is not near enough to join the route
    r = ask("how is the sprocket calibration parser wired", near(gamma=0.35, alpha=0.1))
    assert r.outcome == "abstained" and r.semantic["action"] == "vetoed"
    assert r.candidates[0]["scope"] == "alpha"


def test_a_far_route_stands_when_a_scope_is_near_enough_to_join_it():
    r = ask("how is the sprocket calibration parser wired", near(gamma=0.45, alpha=0.1))
    assert r.outcome == "routed" and r.scopes == ["alpha", "gamma"] and r.semantic["action"] == "added"


def test_a_route_whose_own_scope_is_near_is_not_vetoed():
    r = ask("how is the sprocket calibration parser wired", near(alpha=0.33, gamma=0.3))
    assert r.outcome == "routed" and r.scopes[0] == "alpha"


def test_a_forced_route_is_never_vetoed():
    r = ask("how do I run the tests for this project?", {s: 0.0 for s in CORPUS}, Context(cwd_scope="delta"))
    assert r.outcome == "routed" and r.scopes == ["delta"]


def test_a_route_to_a_scope_without_vectors_is_never_vetoed():
    question = "how is the sprocket calibration parser wired"
    r = ask(question, {s: 0.2 for s in CORPUS if s != "alpha"})  # alpha indexed but not embedded
    assert r.outcome == "routed" and r.scopes[0] == "alpha"


def test_a_question_in_another_script_gets_no_opinion_from_an_english_encoder():
    r = ask("如何让程序在运行时检测到配置文件被修改并自动重新读取？", near(delta=0.45, gamma=0.44, alpha=0.43))
    assert r.outcome == "abstained"


# --- the off-topic background (issue 10: paraphrases and plain words below the absolute floor)

BACKGROUND = {s: (0.20, 0.04) for s in CORPUS} | {"gamma": (0.30, 0.04)}


def test_a_question_standing_far_above_one_scopes_background_is_answered_below_the_absolute_floor():
    weak = replace(P, concentrated_min_evidence=5.0)
    q = "when wiping nested folders bottom up with a walk"   # "walk": a word witness, too weak to route alone
    lexical = route(q, INDEX, Context(), ALIASES, weak)
    assert lexical.outcome == "abstained"
    aff = near(delta=0.38, gamma=0.39, alpha=0.22, beta=0.21, click=0.2)
    assert max(aff.values()) < P.semantic_add_floor
    assert second_opinion(lexical, aff, Context(), weak, q).outcome == "abstained"   # no background: no opinion
    r = second_opinion(lexical, aff, Context(), weak, q, BACKGROUND)
    assert r.outcome == "routed" and r.semantic["action"] == "fused"


def test_scopes_are_ordered_by_closeness_above_their_own_background():
    # gamma is closer in raw cosine, but it is that close to every off-topic question too
    weak = replace(P, concentrated_min_evidence=5.0)
    q = "when wiping nested folders bottom up with a walk"
    lexical = route(q, INDEX, Context(), ALIASES, weak)
    r = second_opinion(lexical, near(delta=0.38, gamma=0.39, alpha=0.22, beta=0.21, click=0.2),
                       Context(), weak, q, BACKGROUND)
    assert "delta" in r.scopes and "gamma" not in r.scopes
    assert _above_background(["gamma", "delta", "alpha"], {"gamma": 0.39, "delta": 0.38, "alpha": 0.22},
                             BACKGROUND) == ["delta", "gamma", "alpha"]


def test_a_question_within_every_scopes_background_keeps_its_abstention():
    q = "when wiping nested folders bottom up"
    lexical = route(q, INDEX, Context(), ALIASES, P)
    r = second_opinion(lexical, near(delta=0.28, gamma=0.36, alpha=0.22), Context(), P, q, BACKGROUND)
    assert r.outcome == "abstained" and r.semantic["action"] == "none"


def test_a_bare_it_in_a_content_question_without_evidence_is_anaphora_open_to_the_vectors():
    q = "my folders get wiped bottom up and it hands me the parents first; how do I flip it?"
    lexical = route(q, INDEX, Context(), ALIASES, P)
    assert lexical.outcome == "abstained" and lexical.reason == "no_evidence"
    r = second_opinion(lexical, near(delta=0.62, gamma=0.45), Context(), P, q)
    assert r.outcome == "routed" and r.scopes == ["delta"]


def test_a_bare_it_in_a_question_about_a_projects_own_facts_stays_deictic():
    for q in ("How do I install it?", "Where can I find the changelog for it?", "What license is it under?"):
        r = ask(q, near(delta=0.9))
        assert r.outcome == "abstained" and r.reason == "deictic", q


def test_a_scope_clearly_ahead_above_its_background_leads_whatever_the_words_say():
    # "walk" is delta's word: by words and meaning together delta would come first
    weak = replace(P, concentrated_min_evidence=5.0)
    q = "when wiping nested folders bottom up with a walk"
    lexical = route(q, INDEX, Context(), ALIASES, weak)
    bg = {s: (0.20, 0.04) for s in CORPUS}
    clear = second_opinion(lexical, near(gamma=0.49, delta=0.30, alpha=0.22, beta=0.21, click=0.2), Context(), weak, q, bg)
    assert clear.semantic["action"] == "fused" and clear.scopes[0] == "gamma"   # lifts 0.29 against 0.10
    close = second_opinion(lexical, near(gamma=0.49, delta=0.46, alpha=0.22, beta=0.21, click=0.2), Context(), weak, q, bg)
    assert close.scopes[0] == "delta"          # lifts 0.29 against 0.26: words decide


def test_a_vocabulary_route_standing_out_from_no_background_is_vetoed():
    q = "how is the sprocket calibration parser wired"
    bg = {s: (0.25, 0.05) for s in CORPUS}
    flat = near(alpha=0.32, beta=0.31, gamma=0.30, delta=0.30, click=0.29)   # all above the raw veto floor
    r = ask(q, flat)
    assert r.outcome == "routed"
    vetoed = second_opinion(route(q, INDEX, Context(), ALIASES, P), flat, Context(), P, q, bg)
    assert vetoed.outcome == "abstained" and vetoed.semantic["action"] == "vetoed"
    assert vetoed.candidates[0]["scope"] == "alpha"
    kept = second_opinion(route(q, INDEX, Context(), ALIASES, P), near(alpha=0.45), Context(), P, q, bg)
    assert kept.outcome == "routed"


def test_a_foreign_question_that_abstains_gets_the_scopes_nearest_in_meaning_as_its_shortlist():
    q = "如何让程序在运行时检测到配置文件被修改并自动重新读取"   # another script: the vectors give no route
    r = ask(q, near(delta=0.45, gamma=0.40))
    assert r.outcome == "abstained" and [c["scope"] for c in r.candidates][:2] == ["delta", "gamma"]
    assert len(r.candidates) <= 5
    english = ask("frimble the zanzibar flux until it snorps", near(delta=0.25))
    assert english.candidates == []


def test_a_route_split_between_projects_is_led_by_the_one_clearly_closest_in_meaning():
    from loci.query.router import RouteResult

    split = RouteResult("routed", ["alpha", "delta"], None, [], {"alpha": 1.0, "delta": 0.9}, gate="evidence")
    bg = {s: (0.20, 0.04) for s in CORPUS}
    clear = second_opinion(split, near(delta=0.50, alpha=0.26, beta=0.21, gamma=0.21, click=0.2), Context(), P, "q", bg)
    assert clear.scopes == ["delta", "alpha"] and clear.semantic["action"] == "led"   # lifts 0.30 against 0.06
    close = second_opinion(split, near(delta=0.50, alpha=0.46, beta=0.21, gamma=0.21, click=0.2), Context(), P, "q", bg)
    assert close.scopes == ["alpha", "delta"] and close.semantic["action"] == "agreed"   # 0.30 against 0.26


def test_a_favourite_the_words_missed_goes_first_only_when_it_leads_clearly_above_its_background():
    q = "how is the sprocket calibration parser wired"
    bg = {s: (0.20, 0.04) for s in CORPUS}
    lexical = route(q, INDEX, Context(), ALIASES, P)
    clear = second_opinion(lexical, near(delta=0.55, alpha=0.24, beta=0.2, gamma=0.2, click=0.2), Context(), P, q, bg)
    assert clear.scopes == ["delta", "alpha"] and clear.semantic["action"] == "added"
    close = second_opinion(lexical, near(delta=0.55, alpha=0.48, beta=0.2, gamma=0.2, click=0.2), Context(), P, q, bg)
    assert close.scopes == ["alpha", "delta"] and close.semantic["action"] == "added"


def _two_way_route(first: float, second: float):
    from loci.query.router import RouteResult, ScopeScore

    details = [ScopeScore("alpha", evidence=first), ScopeScore("beta", evidence=second)]
    return RouteResult("routed", ["alpha", "beta"], None, [], {"alpha": first, "beta": second},
                       gate="evidence", details=details)


def test_when_the_words_all_but_tie_the_scope_closer_in_meaning_goes_first():
    affinity = {**near(), "alpha": 0.52, "beta": 0.56}
    r = second_opinion(_two_way_route(1.675, 1.663), affinity, Context(), P)
    assert r.scopes == ["beta", "alpha"] and r.semantic["action"] == "led"


def test_words_within_fifteen_percent_of_each_other_do_not_order_two_projects():
    """Among hundreds of projects a word one of them uses a lot (flask 0.97, jinja 0.86 for a
    question about jinja's templates) is no lead: meaning orders them."""
    affinity = {**near(), "alpha": 0.52, "beta": 0.56}
    r = second_opinion(_two_way_route(1.0, 0.86), affinity, Context(), P)
    assert r.scopes == ["beta", "alpha"] and r.semantic["action"] == "led"


def test_a_clearly_stronger_first_by_words_keeps_its_place_when_meaning_differs_a_little():
    affinity = {**near(), "alpha": 0.52, "beta": 0.56}
    r = second_opinion(_two_way_route(1.675, 1.2), affinity, Context(), P)
    assert r.scopes == ["alpha", "beta"] and r.semantic["action"] == "agreed"


def test_a_scope_without_a_background_is_lifted_above_the_typical_background_not_above_zero():
    # a pulled scope whose calibration piece did not land has no background: its raw closeness
    # (0.40) is not 0.40 above its own off-topic level, it is about the others' typical one
    background = {"alpha": (0.25, 0.03), "beta": (0.26, 0.03), "gamma": (0.24, 0.03)}
    affinity = {"alpha": 0.45, "beta": 0.30, "gamma": 0.28, "pulled": 0.40}
    assert _above_background(["pulled", "alpha", "beta", "gamma"], affinity, background)[:2] == ["alpha", "pulled"]


def test_a_fused_route_keeps_a_place_for_the_scope_closest_in_meaning():
    # delta and alpha hold the question's words, gamma none; gamma is closest in meaning, by a hair
    weak = replace(P, concentrated_min_evidence=5.0)
    q = "when wiping nested folders bottom up with a walk near the sprocket"
    lexical = route(q, INDEX, Context(), ALIASES, weak)
    assert lexical.outcome == "abstained"
    r = second_opinion(lexical, near(gamma=0.62, delta=0.61, alpha=0.60, click=0.59, beta=0.2), Context(), weak, q)
    assert r.semantic["action"] == "fused" and r.scopes == ["delta", "gamma"]


def test_meaning_does_not_add_a_project_in_a_language_the_question_rules_out():
    idx = routing_index(CORPUS)
    idx.postings["fact:python"] = {idx.position[s]: 1.0 for s in ("alpha", "beta", "gamma", "click")}
    idx.postings["fact:go"] = {idx.position["delta"]: 1.0}
    q = "how is the sprocket calibration parser wired in my Python service"
    lexical = route(q, idx, Context(), ALIASES, P)
    assert lexical.scopes == ["alpha"] and lexical.other_language == ["delta"]
    r = second_opinion(lexical, near(delta=0.7, beta=0.45), Context(), P, q)
    assert "delta" not in r.scopes and r.scopes == ["alpha", "beta"]


# --- a wider read finds the closest scope; the calibrated few judge whether the question is on-topic

def test_a_scope_read_only_to_find_the_closest_does_not_save_an_off_topic_route_from_the_veto():
    # beta stands 3 spreads above its background, but it was read beyond the few whose closeness
    # calibration fitted the veto on (the first pass's first and the route's own): as many draws
    # as are read, one of them stands out by chance
    q = "how is the sprocket calibration parser wired"
    bg = {s: (0.25, 0.05) for s in CORPUS}
    flat = near(alpha=0.32, beta=0.40, gamma=0.30, delta=0.30, click=0.29)
    lexical = route(q, INDEX, Context(), ALIASES, P)
    assert second_opinion(lexical, flat, Context(), P, q, bg).outcome == "routed"     # beta judged: not vetoed
    r = second_opinion(lexical, flat, Context(), P, q, bg, judged={"alpha", "gamma"})
    assert r.outcome == "abstained" and r.semantic["action"] == "vetoed"


def test_a_scope_read_beyond_the_judged_few_can_still_join_a_route_as_the_closest():
    q = "how is the sprocket calibration parser wired"
    bg = {s: (0.20, 0.04) for s in CORPUS}
    lexical = route(q, INDEX, Context(), ALIASES, P)
    r = second_opinion(lexical, near(delta=0.55, alpha=0.48, beta=0.2, gamma=0.2, click=0.2), Context(), P, q, bg,
                       judged={"alpha", "beta"})
    assert r.outcome == "routed" and r.scopes == ["alpha", "delta"] and r.semantic["action"] == "added"


def test_the_clear_lead_in_meaning_is_weighed_among_the_judged_scopes():
    # among the judged, delta leads clearly (0.35 against alpha's 0.04); gamma, read further out, is
    # as close as delta but was never part of what calibration measured such a lead on
    q = "how is the sprocket calibration parser wired"
    bg = {s: (0.20, 0.04) for s in CORPUS}
    lexical = route(q, INDEX, Context(), ALIASES, P)
    aff = near(delta=0.55, gamma=0.54, alpha=0.24, beta=0.2, click=0.2)
    wide = second_opinion(lexical, aff, Context(), P, q, bg)
    assert wide.scopes[0] == "alpha"                       # no clear leader among all read
    judged = second_opinion(lexical, aff, Context(), P, q, bg, judged={"alpha", "delta", "beta"})
    assert judged.scopes[0] == "delta"


def test_a_question_no_project_holds_a_word_of_is_routed_on_meaning_only_when_clearly_close():
    # gibberish stands out from every background (its vector is odd), but no project holds a word of
    # it: meaning alone must answer as a rescue does, close and clearly ahead, not "fused" with no words
    q = "blorp the quizzical fendrake until it wibbles"
    lexical = route(q, INDEX, Context(), ALIASES, P)
    assert lexical.outcome == "abstained" and all(d.evidence == 0 for d in lexical.details)
    standing_out = second_opinion(lexical, near(delta=0.38, gamma=0.33, alpha=0.22), Context(), P, q, BACKGROUND)
    assert standing_out.outcome == "abstained" and standing_out.semantic["action"] == "none"
    above_add_floor = second_opinion(lexical, near(delta=0.45, gamma=0.43), Context(), P, q, BACKGROUND)
    assert above_add_floor.outcome == "abstained"
    clear = second_opinion(lexical, near(delta=0.62, gamma=0.45), Context(), P, q, BACKGROUND)
    assert clear.outcome == "routed" and clear.scopes == ["delta"] and clear.semantic["action"] == "rescued"


def test_a_bare_it_with_nothing_else_in_the_question_to_stand_for_is_deictic():
    for q in ("How do I configure it?", "How do I deploy it?", "what does it return?"):
        r = ask(q, near(delta=0.9))
        assert r.outcome == "abstained" and r.reason == "deictic", q


def test_a_follow_up_that_leans_on_the_question_before_is_deictic():
    for q in ("and for async?", "What about Windows?", "how about the other one?"):
        r = ask(q, near(delta=0.9))
        assert r.outcome == "abstained" and r.reason == "deictic", q
    r = ask("and how is the sprocket calibration parser wired?", near(alpha=0.7))   # it says enough itself
    assert r.outcome == "routed" and r.scopes[0] == "alpha"


def test_a_route_carried_by_one_word_yields_first_place_to_the_scope_clearly_closer_in_meaning():
    # alpha holds "sprocket" alone of the question's words; delta is clearly closer in meaning
    q = "how do I paint a sprocket while descending the folders"
    lexical = route(q, INDEX, Context(), ALIASES, P)
    assert lexical.scopes[0] == "alpha" and list(lexical.details[0].matched) == ["sprocket"]
    r = second_opinion(lexical, near(alpha=0.42, delta=0.50), Context(), P, q)
    assert r.scopes[:2] == ["delta", "alpha"] and r.semantic["action"] == "added"


def test_a_route_carried_by_one_word_keeps_its_place_when_the_other_is_barely_closer():
    q = "how do I paint a sprocket while descending the folders"
    r = second_opinion(route(q, INDEX, Context(), ALIASES, P), near(alpha=0.47, delta=0.50), Context(), P, q)
    assert r.scopes[:2] == ["alpha", "delta"]
