"""An enumeration built from common words keeps only the members that mean the question."""
from loci.kernel.config import DEFAULT_PARAMS
from loci.query.router import RouteResult, enumeration_opinion

P = DEFAULT_PARAMS
BACKGROUND = {s: (0.25, 0.05) for s in ("cli", "click", "black", "algos", "sqlite")}


def enumerated(*members: dict) -> RouteResult:
    return RouteResult("enumerated", [m["scope"] for m in members], None, [], {}, gate="enumeration",
                       members=list(members))


def vocab(scope: str, rare=()) -> dict:
    return {"scope": scope, "facts": [], "terms": ["closest", "valid"], "rare": list(rare)}


def z(value: float) -> float:   # the affinity that stands ``value`` spreads above the background
    return 0.25 + value * 0.05


def test_a_member_held_only_by_common_words_and_far_in_meaning_leaves_the_set():
    r = enumeration_opinion(enumerated(vocab("cli"), vocab("click"), vocab("algos")),
                            {"cli": z(6), "click": z(4.5), "algos": z(1.8)}, BACKGROUND, P)
    assert r.scopes == ["cli", "click"] and [m["scope"] for m in r.members] == ["cli", "click"]
    assert r.semantic["action"] == "narrowed" and r.semantic["dropped"] == ["algos"]


def test_a_member_holding_a_rare_word_of_the_question_stays_however_far():
    r = enumeration_opinion(enumerated(vocab("cli"), vocab("sqlite", rare=["relevance"])),
                            {"cli": z(9), "sqlite": z(1.0)}, BACKGROUND, P)
    assert r.scopes == ["cli", "sqlite"]


def test_a_set_chosen_by_facts_is_never_narrowed():
    facts = [{"scope": s, "facts": [{"kind": "license", "value": "MIT"}], "terms": []} for s in ("cli", "algos")]
    r = enumeration_opinion(enumerated(*facts), {"cli": z(6), "algos": z(0.5)}, BACKGROUND, P)
    assert r.scopes == ["cli", "algos"]


def test_no_member_is_dropped_without_a_background_or_its_own_vectors():
    members = enumerated(vocab("cli"), vocab("algos"))
    assert enumeration_opinion(members, {"cli": z(6), "algos": z(0.5)}, None, P).scopes == ["cli", "algos"]
    assert enumeration_opinion(members, {"cli": z(6)}, BACKGROUND, P).scopes == ["cli", "algos"]


def test_the_set_is_never_emptied_by_meaning():
    r = enumeration_opinion(enumerated(vocab("black"), vocab("algos")),
                            {"black": z(2.0), "algos": z(1.0)}, BACKGROUND, P)
    assert r.scopes == ["black", "algos"]


def test_the_text_view_names_the_members_left_out_and_explains_the_closest():
    from loci.front.render import route_lines

    r = enumeration_opinion(enumerated(vocab("cli"), vocab("click"), vocab("algos")),
                            {"cli": z(6), "click": z(4.5), "algos": z(1.8)}, BACKGROUND, P)
    lines = route_lines(r, explain=True)
    assert lines[0] == "ENUMERATED -> cli, click  (algos left out: only common words, far in meaning)"
    assert any(line.startswith("  vectors: cli closest in meaning") and line.endswith(": narrowed") for line in lines)
