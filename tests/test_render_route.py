"""What the text view says of a route: each claim is true of the route it describes."""
from __future__ import annotations

from types import SimpleNamespace

from loci.front.render import REASONS, route_lines


def _detail(scope: str, evidence: float):
    return SimpleNamespace(scope=scope, evidence=evidence, alias=0.0, cwd=0.0, recency=0.0, total=evidence,
                           matched={}, demoted=False)


def _route(outcome="routed", scopes=(), reason=None, candidates=(), details=(), semantic=None):
    return SimpleNamespace(outcome=outcome, scopes=list(scopes), reason=reason, candidates=list(candidates),
                           details=list(details), semantic=semantic, gate="semantic", copies={}, tokens=[],
                           excluded=[], other_language=[], languages=[])


def test_a_fused_route_names_the_scope_its_words_did_not_choose():
    fused = {"action": "fused", "scope": "jinja", "affinity": 0.5, "margin": 0.1}
    line = route_lines(_route(scopes=["attrs", "jinja"], details=[_detail("attrs", 0.8), _detail("jinja", 0.0)],
                              semantic=fused))[0]
    assert "ranked high by both its words and its meaning" in line and "jinja by meaning alone" in line
    both = route_lines(_route(scopes=["attrs", "jinja"], details=[_detail("attrs", 0.8), _detail("jinja", 0.3)],
                              semantic=fused))[0]
    assert "by meaning alone" not in both


def test_an_abstention_says_no_project_holds_a_term_only_when_none_holds_any_word():
    held = _route("abstained", reason="no_evidence", details=[_detail("starlette", 0.27)])
    assert REASONS["no_evidence"] in route_lines(held)[0]
    nothing = _route("abstained", reason="no_evidence", details=[_detail("starlette", 0.0)])
    assert REASONS["no_terms"] in route_lines(nothing)[0]


def test_an_abstention_for_a_language_no_project_is_written_in_names_the_language():
    route = _route("abstained", reason="no_evidence", details=[_detail("click", 0.48)])
    route.languages, route.other_language, route.unwritten = ["kotlin"], ["click", "flask"], True
    lines = route_lines(route)
    assert lines[0] == "ABSTAINED - no project here is written in kotlin."
    assert "pick a candidate" not in lines[1] and "loci add" in lines[1]


def test_a_language_that_left_some_projects_out_is_no_cause_while_others_remain_candidates():
    route = _route("abstained", reason="no_evidence", details=[_detail("cli", 0.3)],
                   candidates=[{"scope": "cli", "terms": ["flag"]}])
    route.languages, route.other_language, route.unwritten = ["go"], ["click"], False
    assert REASONS["no_evidence"] in route_lines(route)[0]


def test_an_abstention_on_unheld_technical_names_says_which_names_no_project_mentions():
    from conftest import routing_index
    from loci.kernel.config import Params
    from loci.query.router import Context, route

    index = routing_index({"a": "cookie session redirect header " * 5, "b": "tree walk directory symlink " * 5})
    r = route("How do I convert RGB to CMYK for a print shop?", index, Context(), {"a": ["a"], "b": ["b"]},
              Params(evidence_floor=1.5))
    text = "\n".join(route_lines(r))
    assert "no project here mentions RGB or CMYK" in text
