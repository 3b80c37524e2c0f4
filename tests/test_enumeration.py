"""Enumeration: facts recorded at index time (with citations) and the set they answer."""
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import routing_index, setup_home
from loci.front.cli import app
from loci.kernel.tokens import tokenize
from loci.query.router import route
from loci_pipeline.facts import fact_vocabulary, scope_facts

FILLER = "module function class value return config default option error file data " * 3


def _facts(root: Path, files: dict[str, str]):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return {(f.kind, f.value): f for f in scope_facts(root, sorted(files))}


def test_each_fact_is_recorded_with_the_file_and_line_that_show_it(tmp_path):
    facts = _facts(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\nlicense = "Apache-2.0"\ndependencies = [\n  "click>=8",\n]\n\n'
                          '[tool.towncrier]\ndirectory = "changelog.d"\n',
        "src/x/__init__.py": "", "src/x/py.typed": "", "README.zh-CN.md": "# x\n",
        ".github/workflows/ci.yml": "on: push\n", "tests/test_x.py": "", "docs/conf.py": "",
        "CHANGES.md": "# changes\n",
    })
    cites = {k: (f.source, f.line) for k, f in facts.items()}
    assert cites[("license", "apache")] == ("pyproject.toml", 3)
    assert cites[("dependency", "click")] == ("pyproject.toml", 5)
    assert cites[("language", "python")] == ("pyproject.toml", 1)
    assert cites[("file", "py.typed")] == ("src/x/py.typed", 1)
    assert cites[("docs", "towncrier")] == ("pyproject.toml", 8)
    assert cites[("docs", "sphinx")] == ("docs/conf.py", 1)
    assert cites[("translation", "chinese")] == ("README.zh-CN.md", 1)
    assert cites[("ci", "ci")][0] == ".github/workflows/ci.yml"
    assert cites[("tests", "tests")][0] == "tests/test_x.py"
    assert cites[("file", "changelog")] == ("CHANGES.md", 1)


def test_shipped_type_declarations_are_a_fact_named_as_questions_name_them(tmp_path):
    facts = _facts(tmp_path, {"package.json": '{\n  "name": "x",\n  "types": "./index.d.ts"\n}\n',
                              "index.js": "", "index.d.ts": ""})
    types = facts[("types", "d.ts")]
    assert (types.source, types.line) == ("package.json", 3)
    assert {"d.ts", "typescript", "declaration"} <= set(types.tokens())


def test_a_phrase_valued_fact_is_not_matched_by_its_common_words(tmp_path):
    facts = _facts(tmp_path, {"CODE_OF_CONDUCT.md": "be nice\n"})
    conduct = facts[("file", "code of conduct")]
    assert "code" not in conduct.tokens() and "conduct" in conduct.tokens()
    assert "fact:code" not in fact_vocabulary(tmp_path, ["CODE_OF_CONDUCT.md"])


def _index(facts: dict[str, list[str]], texts: dict[str, str] | None = None):
    texts = texts or {}
    idx = routing_index({s: FILLER + texts.get(s, "") for s in facts})
    for scope, toks in facts.items():
        for t in toks:
            idx.postings.setdefault("fact:" + tokenize(t)[0], {})[idx.position[scope]] = 1.0
    return idx


ALIASES = {s: [s] for s in ("alpha", "bravo", "charlie", "delta")}


def test_every_holder_of_an_asked_fact_is_a_member_whatever_its_vocabulary():
    idx = _index({"alpha": ["apache", "python"], "bravo": ["apache", "rust"], "charlie": ["mit", "python"],
                  "delta": ["mit", "go"]}, {"alpha": "apache license apache " * 20})
    r = route("Which of my projects are Apache licensed?", idx, aliases=ALIASES)
    assert r.outcome == "enumerated" and sorted(r.scopes) == ["alpha", "bravo"]
    assert {m["scope"]: m["facts"] for m in r.to_json()["members"]} == {"alpha": ["apache"], "bravo": ["apache"]}


def test_a_qualifier_and_a_feature_must_both_hold():
    idx = _index({"alpha": ["python", "click"], "bravo": ["python"], "charlie": ["javascript", "click"],
                  "delta": ["go"]})
    r = route("Which of my Python projects depend on click?", idx, aliases=ALIASES)
    assert r.scopes == ["alpha"]


def test_alternatives_of_one_attribute_each_qualify():
    idx = _index({"alpha": ["rust"], "bravo": ["go"], "charlie": ["python"], "delta": ["python"]})
    r = route("Which of my projects are written in Rust or Go?", idx, aliases=ALIASES)
    assert sorted(r.scopes) == ["alpha", "bravo"]


def test_negation_keeps_every_project_lacking_the_fact():
    idx = _index({"alpha": ["rust"], "bravo": ["go"], "charlie": ["python"], "delta": ["javascript"]})
    r = route("Which of my projects aren't written in Python?", idx, aliases=ALIASES)
    assert sorted(r.scopes) == ["alpha", "bravo", "delta"]


def test_a_member_chosen_for_lacking_a_fact_names_a_project_that_holds_it():
    idx = _index({"alpha": ["rust"], "bravo": ["go"], "charlie": ["python"], "delta": ["javascript"]})
    r = route("Which of my projects aren't written in Python?", idx, aliases=ALIASES)
    assert {m["scope"]: m.get("lacks") for m in r.to_json()["members"]} == {
        s: {"python": "charlie"} for s in ("alpha", "bravo", "delta")}


def test_a_member_that_lacks_a_fact_is_cited_by_what_it_holds_in_its_place():
    from loci.query.enumeration import cite

    facts = {
        "charlie": [{"kind": "language", "value": "python", "source": "pyproject.toml", "line": 1,
                     "tokens": ["python"]}],
        "alpha": [{"kind": "language", "value": "rust", "source": "Cargo.toml", "line": 1, "tokens": ["rust"]},
                  {"kind": "license", "value": "mit", "source": "LICENSE", "line": 1, "tokens": ["mit"]}],
    }
    member = {"scope": "alpha", "facts": [], "terms": [], "lacks": {"python": "charlie"}}
    (cited,) = cite([member], lambda s: facts.get(s, []))
    assert cited["facts"] == [{"kind": "language", "value": "rust", "source": "Cargo.toml", "line": 1}]
    assert "lacks" not in cited


def test_a_member_is_cited_by_the_facts_that_hold_the_most_of_what_was_asked():
    """"Which repos contain a Chinese translation?": the algorithms collection has fourteen
    translations; its Chinese one is why it is in the set, not its Arabic or German ones."""
    from loci.query.enumeration import cite

    def tr(lang, path):
        return {"kind": "translation", "value": lang, "source": path, "line": 1, "tokens": [lang, "translation"]}

    facts = {"algos": [tr("arabic", "README.ar-AR.md"), tr("chinese", "README.zh-CN.md"), tr("german", "README.de-DE.md")],
             "cli": [{"kind": "language", "value": "python", "source": "pyproject.toml", "line": 3, "tokens": ["python"]},
                     {"kind": "dependency", "value": "click", "source": "pyproject.toml", "line": 9, "tokens": ["click"]}]}
    asked = cite([{"scope": "algos", "facts": ["chinese", "translation"], "terms": []},
                  {"scope": "cli", "facts": ["python", "click"], "terms": []}], lambda s: facts.get(s, []))
    assert [f["value"] for f in asked[0]["facts"]] == ["chinese"]
    assert [f["value"] for f in asked[1]["facts"]] == ["python", "click"]    # one each: both are why


def test_a_project_named_after_besides_is_left_out_of_the_set():
    idx = _index({"alpha": ["apache"], "bravo": ["apache"], "charlie": ["apache"], "delta": ["mit"]})
    r = route("Besides alpha, which of my projects are Apache licensed?", idx, aliases=ALIASES)
    assert sorted(r.scopes) == ["bravo", "charlie"]


def test_a_fact_only_the_projects_left_out_hold_makes_an_empty_set_not_a_vocabulary_one():
    # "click" is the project the question is about: its own words are full of it, but it does not
    # depend on itself; only alpha does, and alpha is left out
    idx = _index({"alpha": ["click"], "bravo": ["python"], "charlie": ["python"], "delta": ["go"]},
                 {"charlie": "click command option click " * 10})
    r = route("Which of my projects depend on click besides alpha?", idx, aliases=ALIASES)
    assert r.outcome == "abstained" and r.scopes == []
    assert route("Which of my projects depend on click?", idx, aliases=ALIASES).scopes == ["alpha"]


def test_a_project_named_in_a_use_question_is_asked_for_by_its_published_name_and_is_no_member():
    # the project "jinja" is published as Jinja2: the projects that declare Jinja2 use it; jinja's own
    # words are full of its name, but it does not use itself
    idx = _index({"alpha": ["jinja2"], "bravo": ["python"], "charlie": ["python"], "jinja": ["python"]},
                 {"jinja": "jinja template jinja render " * 10})
    aliases = {**{s: [s] for s in ("alpha", "bravo", "charlie")}, "jinja": ["jinja", "Jinja2"]}
    r = route("Which of my projects use jinja?", idx, aliases=aliases)
    assert r.outcome == "enumerated" and r.scopes == ["alpha"]


def test_a_fact_every_project_holds_leaves_the_answer_to_vocabulary():
    idx = _index({s: ["python"] for s in ALIASES}, {"bravo": "sqlite database sqlite table " * 10})
    r = route("Which of my Python projects store data in sqlite?", idx, aliases=ALIASES)
    assert r.scopes == ["bravo"] and r.to_json()["members"][0]["facts"] == []


def test_route_cites_the_file_and_line_of_each_members_fact(tmp_path, loci_home):
    apache = {"LICENSE": "Apache License\nVersion 2.0, January 2004\n", "a.py": "def f():\n    pass\n",
              "pyproject.toml": '[project]\nname = "apa"\n'}
    mit = {"LICENSE": "MIT License\n\nPermission is hereby granted, free of charge\n", "b.py": "x = 1\n"}
    setup_home(tmp_path / "code", {"apa": apache, "apb": {**apache, "README.md": "# apb\n"}, "emm": mit})
    res = CliRunner().invoke(app, ["route", "--json", "--no-cwd", "Which of my projects are Apache-2.0 licensed?"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["outcome"] == "enumerated" and sorted(out["scopes"]) == ["apa", "apb"]
    for member in out["members"]:
        assert member["facts"] == [{"kind": "license", "value": "apache", "source": "LICENSE", "line": 1}]


def test_a_dependency_counts_only_when_the_question_asks_what_projects_use():
    idx = _index({"alpha": ["python", "py.typed", "mypy"], "bravo": ["python", "py.typed"],
                  "charlie": ["python"], "delta": ["go"]})
    idx.postings["fact:uses:" + tokenize("mypy")[0]] = {idx.position["alpha"]: 1.0}
    r = route("Which of my Python projects ship a py.typed marker for mypy?", idx, aliases=ALIASES)
    assert sorted(r.scopes) == ["alpha", "bravo"]
    r = route("Which of my Python projects use mypy?", idx, aliases=ALIASES)
    assert r.scopes == ["alpha"]


def test_a_hyphenated_qualifier_and_where_do_i_have_read_as_enumerations():
    from loci.query.grammar import is_enumerative

    assert is_enumerative("Which of my command-line tools install a man page?")
    assert is_enumerative("Where do I have support for loading configuration from a .env file?")


def test_a_manifest_declaring_no_runtime_dependency_is_dependency_free(tmp_path):
    free = _facts(tmp_path / "a", {"pyproject.toml": '[project]\nname = "a"\ndependencies = []\n'
                                                      '[project.optional-dependencies]\ndev = ["pytest"]\n'})
    assert ("dependency-free", "dependency-free") in free
    windows = _facts(tmp_path / "b", {"pyproject.toml": '[project]\nname = "b"\n'
                                                         'dependencies = ["colorama; platform_system == \'Windows\'"]\n'})
    assert ("dependency-free", "dependency-free") not in windows
    computed = _facts(tmp_path / "c", {"pyproject.toml": '[project]\nname = "c"\ndynamic = ["dependencies"]\n'})
    assert ("dependency-free", "dependency-free") not in computed


def test_zero_dependencies_asks_for_the_dependency_free_projects():
    idx = _index({"alpha": ["python", "dependency-free"], "bravo": ["python", "click"],
                  "charlie": ["javascript", "dependency-free"], "delta": ["python"]})
    r = route("Which of my Python packages install with zero third-party runtime dependencies?", idx, aliases=ALIASES)
    assert r.scopes == ["alpha"]
    r = route("Which of my projects have no dependencies?", idx, aliases=ALIASES)
    assert sorted(r.scopes) == ["alpha", "charlie"]


def test_the_changelog_records_each_runtime_version_it_mentions_with_its_line(tmp_path):
    facts = _facts(tmp_path, {"CHANGES.md": "# 2.0\n\n- Drop Python 3.8.\n- Add support for Python 3.14.\n"})
    mention = facts[("changelog", "python 3.14")]
    assert (mention.source, mention.line) == ("CHANGES.md", 4)
    assert mention.tokens() == tokenize("3.14")


def test_every_scope_using_a_rare_word_of_the_question_is_a_member():
    idx = _index({s: [] for s in ALIASES}, {"alpha": "no_color terminal colour " * 8,
                                            "bravo": "no_color " * 3 + "parser grammar token " * 5,
                                            "charlie": "colour theme palette " * 10})
    r = route("Which of my projects honour the NO_COLOR variable?", idx, aliases=ALIASES)
    assert sorted(r.scopes) == ["alpha", "bravo"]


def test_frame_words_are_stripped_in_their_stemmed_form_too():
    from loci.query.router import question_tokens

    assert question_tokens("Which of my CLI libraries and repositories have a workspace?", True) == ["cli"]


def test_a_members_cited_facts_lead_its_block_with_their_file_and_line():
    from loci.query.ask import _fact_episodes, _with_facts
    from loci.query.search import EpisodeHit

    member = {"scope": "black", "facts": [{"kind": "dependency", "value": "click", "source": "pyproject.toml", "line": 57}]}
    searched = [EpisodeHit(text=f"passage {i}", source="CHANGES.md", line=i, kind="doc", score=0.5) for i in range(5)]
    out = _with_facts(_fact_episodes(member), searched, 5)
    assert (out[0].source, out[0].line, out[0].text) == ("pyproject.toml", 57, "dependency: click")
    assert len(out) == 5 and out[1:] == searched[:4]
    assert _with_facts(_fact_episodes({"scope": "x", "facts": []}), searched, 5) == searched


def test_a_project_holding_several_of_the_questions_common_words_is_a_member_one_holding_one_is_not():
    # "parse", "command" and "argument" are every CLI project's words: none is distinctive here,
    # but a project that uses several of them well is about the topic; one common word is not
    many = {s: [] for s in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")}
    idx = _index(many, {"alpha": "parse command argument option " * 6 + "docopt usage pattern " * 6,
                        "bravo": "parse command argument flag " * 6,
                        "charlie": "command task runner " * 6 + "parse " * 2,
                        "delta": "command argument parse " * 2 + "grammar ",
                        "echo": "command parse argument " * 2 + "template ",
                        "foxtrot": "spreadsheet formula chart " * 6})
    r = route("Which of my projects parse command-line arguments?", idx, aliases={s: [s] for s in many})
    assert r.outcome == "enumerated"
    assert "bravo" in r.scopes          # three of the question's words, none distinctive alone
    assert "charlie" not in r.scopes     # one common word, however often


def test_a_language_spelled_as_an_everyday_word_is_a_fact_only_where_the_question_names_it():
    # alpha and bravo ship a few .sh scripts (language "shell"); charlie and delta offer completions
    idx = _index({"alpha": ["shell"], "bravo": ["shell"], "charlie": ["python"], "delta": ["go"]},
                 {"charlie": "shell completion zsh fish bash completion " * 5,
                  "delta": "shell completion zsh fish completion " * 5})
    offer = route("Which of my projects offer shell tab-completion (bash/zsh/fish)?", idx, aliases=ALIASES)
    assert sorted(offer.scopes) == ["charlie", "delta"]
    written = route("Which of my projects are written in shell?", idx, aliases=ALIASES)
    assert sorted(written.scopes) == ["alpha", "bravo"]
    going = route("Which of my projects go beyond plain completion?", idx, aliases=ALIASES)
    assert not any(m.get("facts") for m in going.members)


def test_in_a_small_home_an_everyday_word_two_projects_share_is_no_topic_of_its_own():
    topics = ["parse flags argv options", "watch files events directory", "colour terminal ansi styles",
              "lock file process mutex", "config folder platform paths", "log json level transport",
              "size bytes human readable units", "time delta human natural", "cron schedule jobs",
              "retry backoff attempts", "table grid columns rows", "semver version compare"]
    texts = {f"p{i:02d}": (FILLER + topics[i] + " ") * 3 for i in range(12)}
    texts["p06"] += "convert bytes into human readable sizes " * 4
    texts["p02"] += "turn on colours " * 2   # "turn": an everyday word two of twelve projects use
    texts["p05"] += "turn off levels " * 2
    idx = routing_index(texts)
    r = route("Which of my projects can turn raw bytes into human readable sizes?", idx,
              aliases={s: [s] for s in texts})
    assert r.outcome == "enumerated" and "p06" in r.scopes
    assert "p02" not in r.scopes and "p05" not in r.scopes


def test_a_name_shaped_word_is_read_from_how_the_question_writes_it():
    from loci.query.grammar import name_shaped_tokens

    shaped = name_shaped_tokens("Which honour NO_COLOR, rank by BM25, offer tab-completion, or listen on 8080 "
                                "and turn 'MB' sizes friendly, or read a .env file?")
    assert {"no_color", "bm25", "8080", "mb", ".env"} <= shaped
    assert not {"turn", "friendli", "size", "honour", "listen", "tab", "completion"} & shaped


def test_a_member_chosen_by_words_is_cited_by_the_names_the_question_writes_not_its_everyday_words():
    idx = _index({s: [] for s in ALIASES}, {"alpha": "no_color terminal colour " * 8,
                                            "bravo": "no_color " * 3 + "parser grammar token " * 5,
                                            "charlie": "colour theme palette " * 10})
    r = route("Which of my projects honour the NO_COLOR variable in the terminal?", idx, aliases=ALIASES)
    cites = {m["scope"]: m["cites"] for m in r.members}
    assert cites["alpha"][0] == "no_color" and cites["bravo"][0] == "no_color"
    assert "terminal" not in cites["alpha"]   # held by alpha alone, but an everyday word


def test_a_members_block_leads_with_a_passage_holding_the_word_that_made_it_a_member(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    loading = "".join(f"## Loading configuration {i}\n\nSupport for loading configuration from a settings "
                      f"file, loading configuration support, configuration file loading {i}.\n\n" for i in range(8))
    dotenv = ("## Variables from dotenv\n\nThe command reads a .env file in the folder it starts in; a .env "
              "file beside it wins, and a .env file names each variable once.\n")
    repos = {"webapp": {"README.md": "# webapp\n\nA small web framework.\n", "docs/config.md": loading + dotenv},
             "settings": {"README.md": "# settings\n\nTyped settings read from a .env file and the environment.\n"}}
    for i, topic in enumerate(["sprocket ratchet cogwheel", "palette theme colour", "grammar token parser",
                               "socket packet stream", "matrix vector tensor"]):
        repos[f"other{i}"] = {"README.md": f"# other{i}\n\nA {topic} library with support for loading its "
                                           "configuration file at start.\n"}
    setup_home(tmp_path / "code", repos)
    res = ask(open_session(), "Where do I have support for loading configuration from a .env file?")
    assert res.route.outcome == "enumerated" and "webapp" in res.route.scopes, res.route.members
    block = next(b for b in res.blocks if b.scope == "webapp")
    assert ".env" in block.episodes[0].text


def test_a_set_question_may_call_the_askers_projects_by_another_plural_noun():
    from loci.query import grammar

    for q in ("Which of my CLIs support shell completion?", "Which of our services expose a health check?",
              "How many of my Rust crates use serde?", "which of my apps log to syslog?"):
        assert grammar.is_enumerative(q), q
    for q in ("What modules does flask import at start-up?", "Which programs does the installer start?"):
        assert not grammar.is_enumerative(q), q


def test_a_set_of_the_users_of_a_named_project_holds_only_projects_that_declare_it():
    # "Rust" qualifies, "depend on walkdir" is what is asked: a Rust project that does not use it is no member
    idx = _index({"alpha": ["rust"], "bravo": ["rust"], "charlie": ["go"], "walkdir": ["rust"]})
    aliases = {s: [s] for s in ("alpha", "bravo", "charlie", "walkdir")}
    r = route("Which of my Rust projects depend on walkdir?", idx, aliases=aliases)
    assert r.outcome == "abstained" and r.scopes == []
    idx.postings.setdefault("fact:walkdir", {})[idx.position["bravo"]] = 1.0
    assert route("Which of my Rust projects depend on walkdir?", idx, aliases=aliases).scopes == ["bravo"]


def test_the_users_of_two_named_projects_are_counted_per_project():
    idx = _index({"alpha": ["click", "jinja2"], "bravo": ["click"], "charlie": ["python"],
                  "click": ["python"], "jinja": ["python"]})
    aliases = {**{s: [s] for s in ("alpha", "bravo", "charlie", "click")}, "jinja": ["jinja", "Jinja2"]}
    assert route("Which of my projects use both click and jinja?", idx, aliases=aliases).scopes == ["alpha"]


# "click" and "jinja" are ordinary words here: other projects' own words hold them
USERS = {"alpha": ["python", "click", "jinja2"], "bravo": ["python", "click"], "charlie": ["python", "jinja2"],
         "delta": ["python"], "click": ["python"], "jinja": ["python"]}
USER_TEXTS = {"delta": "click the button jinja template " * 4, "alpha": "click jinja " * 2,
              "click": "click command option " * 10, "jinja": "jinja template render " * 10}
USER_ALIASES = {**{s: [s] for s in ("alpha", "bravo", "charlie", "delta", "click")}, "jinja": ["jinja", "Jinja2"]}


def test_a_project_named_after_and_in_a_use_question_is_a_named_project_as_well():
    idx = _index(USERS, USER_TEXTS)
    r = route("which of my projects use click and jinja?", idx, aliases=USER_ALIASES)
    assert r.outcome == "enumerated" and r.scopes == ["alpha"]
    both = route("Which of my projects use both click and jinja?", idx, aliases=USER_ALIASES)
    assert both.scopes == ["alpha"]


def test_projects_named_with_or_are_alternatives_and_with_and_both_are_required():
    idx = _index(USERS, USER_TEXTS)
    either = route("Which of my projects use click or jinja?", idx, aliases=USER_ALIASES)
    assert sorted(either.scopes) == ["alpha", "bravo", "charlie"]
    listed = route("Which of my projects depend on jinja, click or attrs?", idx, aliases=USER_ALIASES)
    assert sorted(listed.scopes) == ["alpha", "bravo", "charlie"]
    del idx.postings["fact:jinja2"][idx.position["alpha"]]   # now no project declares both
    r = route("Which of my projects use click and jinja?", idx, aliases=USER_ALIASES)
    assert r.outcome == "abstained" and r.scopes == []


def test_a_name_joined_to_a_name_by_and_or_or_a_comma_reads_as_a_name():
    from loci.query.grammar import name_uses

    assert name_uses("which of my projects use click and jinja?", "jinja")[0] == 0   # alone: a bare word
    assert name_uses("which of my projects use click and jinja?", "jinja", {"click": "named"})[0] == 1
    assert name_uses("which use jinja, click or black?", "click", {"jinja": "named"})[0] == 1
    assert name_uses("which use `attrs` and jinja?", "jinja", {"attrs": "marked"})[3] == 1
    assert name_uses("which projects use jinja besides flask and starlette?", "starlette",
                     {"flask": "excluded"})[2] is True
    assert name_uses("which of my projects use click and a template engine?", "engine", {"click": "named"})[0] == 0


def test_every_project_a_list_after_besides_names_is_left_out():
    idx = _index({"alpha": ["apache"], "bravo": ["apache"], "charlie": ["apache"], "delta": ["mit"]},
                 {"charlie": "charlie alpha " * 5, "delta": "charlie " * 5})
    r = route("Besides alpha and charlie, which of my projects are Apache licensed?", idx, aliases=ALIASES)
    assert r.scopes == ["bravo"]


def test_a_user_of_a_named_project_is_cited_by_the_name_it_declares():
    idx = _index(USERS, USER_TEXTS)
    r = route("Which of my projects use jinja?", idx, aliases=USER_ALIASES)
    assert {m["scope"]: m["facts"] for m in r.members} == {"alpha": ["jinja2"], "charlie": ["jinja2"]}


def test_the_users_of_a_named_project_are_members_when_every_other_project_uses_it():
    idx = _index({"alpha": ["python", "click"], "bravo": ["python", "click"], "click": ["python"]})
    aliases = {s: [s] for s in ("alpha", "bravo", "click")}
    r = route("Which of my projects use click?", idx, aliases=aliases)
    assert r.outcome == "enumerated" and sorted(r.scopes) == ["alpha", "bravo"]


def test_the_object_of_a_verb_of_use_reads_as_a_name():
    from loci.query.grammar import name_uses

    for q in ("Which of my projects depend on jinja?", "Which of my projects require jinja?",
              "Which of my tools are built on jinja?", "which package relies on either jinja or mako?"):
        assert name_uses(q, "jinja")[0] == 1, q
    assert name_uses("Which of my projects render a jinja template?", "jinja")[0] == 0


LANGS = {"alpha": ["python", "click"], "bravo": ["python"], "charlie": ["rust"], "delta": ["javascript", "click"]}


def test_a_set_of_projects_in_a_language_none_is_written_in_is_empty_and_says_so():
    idx = _index(LANGS, {"bravo": "kotlin bindings kotlin " * 4})
    for q in ("Which of my projects are written in Kotlin?", "Which of my Kotlin projects use click?"):
        r = route(q, idx, aliases=ALIASES)
        assert r.outcome == "abstained" and r.scopes == [] and r.reason == "no_evidence", q
        assert "no project is written in kotlin" in r.gate and r.languages == ["kotlin"], q
        assert r.candidates == [] and sorted(r.other_language) == sorted(LANGS), q


def test_a_language_held_only_by_a_project_set_aside_empties_the_set_too():
    idx = _index(LANGS)
    r = route("Besides charlie, which of my Rust projects use click?", idx, aliases=ALIASES)
    assert r.outcome == "abstained" and r.scopes == []


def test_a_language_none_is_written_in_empties_no_set_that_does_not_ask_for_it():
    idx = _index(LANGS, {"bravo": "kotlin bindings kotlin " * 4})
    negated = route("Which of my projects aren't written in Kotlin?", idx, aliases=ALIASES)
    assert negated.outcome == "enumerated" and {"alpha", "charlie", "delta"} <= set(negated.scopes)
    assert route("Which of my projects ship Kotlin bindings?", idx, aliases=ALIASES).scopes == ["bravo"]
    assert sorted(route("Which of my projects are written in Rust or Kotlin?", idx, aliases=ALIASES).scopes) == ["charlie"]


def test_the_language_a_set_is_written_in_is_read_from_the_words_around_it():
    from loci.query.grammar import set_languages

    assert set_languages("Which of my Kotlin projects use click?") == ("Kotlin",)
    assert set_languages("which of my projects are written in Rust or Go?") == ("Rust", "Go")
    assert set_languages("Which of my Python CLI tools log to syslog?") == ("Python",)
    assert set_languages("Which of my projects ship Kotlin bindings?") == ()
    assert set_languages("Which of my projects can be called from Python?") == ()


def test_every_language_a_question_can_name_is_one_the_index_records():
    from loci.query.grammar import ECOSYSTEMS
    from loci_pipeline.facts import LANGUAGES

    assert {lang for langs in ECOSYSTEMS.values() for lang in langs} <= set(LANGUAGES.values())


@pytest.mark.parametrize("files, language", [
    ({"src/Lib.hs": "module Lib where\n"}, "haskell"),
    ({"engine/core.hpp": "#pragma once\n", "engine/core.cxx": "int f();\n"}, "cpp"),
    ({"lib/parse.ml": "let x = 1\n"}, "ocaml"),
    ({"lib/app.dart": "void main() {}\n"}, "dart"),
    ({"src/eval.jl": "f(x) = x\n"}, "julia"),
    ({"lib/Tool.pm": "package Tool;\n"}, "perl"),
    ({"src/srv.erl": "-module(srv).\n"}, "erlang"),
    ({"src/core.clj": "(ns core)\n"}, "clojure"),
    ({"build.gradle.kts": "plugins {}\n"}, "kotlin"),
])
def test_the_languages_users_write_beyond_the_common_ones_are_recorded(tmp_path, files, language):
    assert ("language", language) in _facts(tmp_path, files)


@pytest.mark.parametrize("question, languages", [
    ("which of my C++ projects use boost?", {"cpp"}),
    ("which of my Haskell projects have tests?", {"haskell"}),
    ("which of my C# services use Serilog?", {"csharp"}),
    ("which of my projects are written in OCaml or Dart?", {"ocaml", "dart"}),
    ("which of my projects are written in Julia?", {"julia"}),
    ("Julia asked which of my projects have tests", set()),   # a name, not the language
])
def test_a_question_names_those_languages_too(question, languages):
    from loci.query.grammar import ECOSYSTEMS, set_languages

    assert {lang for w in set_languages(question) for lang in ECOSYSTEMS[w.lower()]} >= languages
    if not languages:
        assert not set_languages(question)
