"""A code name in a question is evidence of the project that defines it."""
from collections import Counter

import pytest

from loci.kernel.config import Params
from loci.kernel.tokens import tokenize
from loci.query import grammar
from loci.query.router import Context, route
from loci.query.store import RoutingIndex

FILLER = "module function class value return config default option error test file data parser "


def index_of(definitions: dict[str, list[str]], prose: dict[str, str] | None = None) -> RoutingIndex:
    """Scopes whose vocabulary holds the tokens of their definitions (weight 1) and prose (0.35)."""
    scopes = sorted(definitions)
    postings: dict[str, dict[int, float]] = {}
    sizes = []
    for i, s in enumerate(scopes):
        c: Counter = Counter()
        for name in definitions[s]:
            c.update({t: 1.0 for t in tokenize(name)})
        for t in tokenize(FILLER * 3 + (prose or {}).get(s, "")):
            c[t] += 0.35
        sizes.append(sum(c.values()))
        for t, w in c.items():
            postings.setdefault(t, {})[i] = w
    return RoutingIndex(scopes, sizes, [""] * len(scopes), postings, complete=True)


DEFS = {
    "parsers": ["parse_defaults", "parse_shorts", "Option", "__init__"],
    "styles": ["getModelAnsi", "stringEncaseCRLFWithFirstIndex", "__init__"],
    "webapp": ["collapse_excgroups", "Request", "__init__", "PluginManager._verify_hook"],
    "hooks": ["PluginManager._verify_hook", "HookCaller", "__init__"],
    "tasks": ["Task", "run_task", "__init__"],
    "more": ["__init__", "helper"],
}
ALIASES = {s: [s] for s in DEFS}


@pytest.fixture
def index():
    return index_of(DEFS, {"webapp": "a passing mention of parse_defaults in our docs"})


def test_a_symbol_defined_in_one_project_routes_there(index):
    r = route("What calls parse_defaults?", index, Context(), ALIASES)
    assert r.outcome == "routed" and r.scopes == ["parsers"] and r.gate == "symbol"


def test_a_camel_case_function_routes_to_its_project(index):
    r = route("Where is stringEncaseCRLFWithFirstIndex defined, and what calls it?", index, Context(), ALIASES)
    assert r.outcome == "routed" and r.scopes == ["styles"]


def test_a_symbol_defined_in_two_projects_routes_to_both(index):
    r = route("Where is PluginManager._verify_hook defined?", index, Context(), ALIASES)
    assert r.outcome == "routed" and sorted(r.scopes) == ["hooks", "webapp"]


def test_a_symbol_many_projects_define_abstains_with_them_as_the_shortlist(index):
    r = route("What calls `__init__`?", index, Context(), ALIASES)
    assert r.outcome == "abstained" and r.reason == "ambiguous"
    assert len(r.candidates) == 5 and all(c["terms"] == ["__init__"] for c in r.candidates)


def test_a_passing_mention_in_another_projects_docs_is_no_definition(index):
    r = route("What calls parse_defaults?", index, Context(), ALIASES)
    assert "webapp" not in r.scopes


def test_a_named_project_still_wins_over_a_symbol(index):
    r = route("In tasks, what calls parse_defaults?", index, Context(), ALIASES)
    assert r.scopes[0] == "tasks"


def test_an_upper_camel_product_name_is_no_code_name_by_its_shape():
    assert grammar.identifiers("Can I use this with JavaScript on GitHub?") == []
    assert grammar.identifiers("What calls `Option`, and removeMootSeparators()?") == ["Option", "removeMootSeparators"]


def test_a_code_name_in_an_open_question_is_vocabulary_not_a_forced_route(index):
    r = route("Why does it catch errors with parse_defaults before running tasks with run_task?", index,
              Context(), ALIASES)
    assert r.gate != "symbol"


def test_a_symbol_the_threshold_share_admits_counts_as_held(index):
    strict = Params(symbol_holder_share=1.01)
    r = route("What calls parse_defaults?", index, Context(), ALIASES, strict)
    assert r.gate != "symbol"


def test_a_code_name_route_is_not_put_to_the_vectors(index):
    # the name the question spells is the evidence: meaning cannot veto it, so a one-shot need not
    # load the encoder (on the 266 dev questions the vectors never changed a symbol route)
    from loci.query.router import open_to_opinion, second_opinion

    r = route("What calls parse_defaults?", index, Context(), ALIASES)
    assert r.gate == "symbol" and not open_to_opinion(r)
    for affinity in ({s: 0.0 for s in DEFS}, {"parsers": 0.5, "tasks": 0.9, "styles": 0.1}):
        judged = second_opinion(r, affinity, Context())   # neither vetoed nor widened
        assert judged.outcome == "routed" and judged.scopes == ["parsers"] and judged.semantic is None


def test_the_project_that_defines_a_name_leads_a_stub_that_only_declares_it():
    """A type-stub package repeats a library's names (declared in .pyi files: they weigh less);
    both hold the name, but "where is it defined?" is answered by the library first, however much
    more of the small stub package the name is."""
    stub = {"lib": ["should_strip_auth"] + [f"helper_{i}" for i in range(40)], "stubs": ["should_strip_auth"]}
    index = index_of(stub)
    i_stub = index.scopes.index("stubs")
    for t in tokenize("should_strip_auth"):
        index.postings[t][i_stub] = 0.7                          # two declarations at 0.35 each
    r = route("Where is should_strip_auth defined?", index, Context(), {s: [s] for s in stub})
    assert r.gate == "symbol" and r.scopes == ["lib", "stubs"]
    totals = {d.scope: d.total for d in r.details}
    assert totals["stubs"] > totals["lib"]                   # by the words alone the stub would lead
