"""A question about the project itself, asked from inside it, is answered from the files that hold the fact."""
import numpy as np
import pytest

from conftest import setup_home
from loci.query.project_files.facts import is_fact_file
from loci.query.project_files.topics import fact_file_patterns

FILLER_DOCS = "\n\n".join(f"## Topic {i}\n\nWidgets {i} are released often; this project still supports the "
                          f"Python version in your tests and keeps each widget under its license." for i in range(12))


@pytest.fixture
def corpus(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {
        "widgets": {
            "README.md": "# widgets\n\nBuild the widgets with `make widgets`.\n\n" + FILLER_DOCS,
            "README.fr.md": "# widgets\n\nPour construire les widgets, lancez `make widgets` : `make widgets` "
                            "construit les widgets avec `make widgets`.\n",
            "pyproject.toml": '[project]\nname = "widgets"\nrequires-python = ">=3.10"\nlicense = "MIT"\n'
                              'dependencies = ["click>=8"]\n',
            "LICENSE": "MIT License\n\nPermission is hereby granted, free of charge, to any person.\n",
            "CONTRIBUTING.md": "# Contributing\n\nRun `tox -e py` before opening a pull request.\n",
            "docs/usage.md": "# Usage\n\nThe widget engine supports every Python version we test.\n" + FILLER_DOCS,
            "widgets/core.py": "def build_widget(x):\n    return x\n",
        },
        "other": {"README.md": "# other\n\nSomething else entirely: gadget sprockets.\n",
                  "other/x.py": "def sprocket():\n    pass\n"},
    })


def sources(question, cwd):
    from loci.query.ask import ask, open_session

    res = ask(open_session(), question, cwd=cwd, fast=True)
    return [e.source for b in res.blocks for e in b.episodes]


def test_the_oldest_supported_version_is_answered_from_the_manifest(corpus):
    assert "pyproject.toml" in sources("What's the oldest Python version this project still supports?",
                                       corpus / "widgets")


def test_the_licence_question_is_answered_from_the_licence_file(corpus):
    found = sources("What license is this project released under?", corpus / "widgets")
    assert "LICENSE" in found[:3]


def test_how_to_run_the_tests_is_answered_from_contributing(corpus):
    assert "CONTRIBUTING.md" in sources("How do I run the tests here?", corpus / "widgets")[:3]


def test_a_question_naming_the_project_about_its_licence_is_answered_from_the_licence_file(corpus):
    found = sources("What license is widgets released under?", None)
    assert "LICENSE" in found[:2] and found.index("LICENSE") <= sources(
        "What license is this project released under?", corpus / "widgets").index("LICENSE")


def test_the_dependencies_are_answered_from_the_manifest(corpus):
    assert sources("What are the dependencies of this project?", corpus / "widgets")[0] == "pyproject.toml"
    assert sources("What does widgets depend on?", None)[0] == "pyproject.toml"


def test_a_content_question_naming_the_project_keeps_its_content_answer(corpus):
    # "tests" is a project-fact topic asked inside a project; naming it, it is the library's subject
    found = sources("How do I test a widget built with widgets?", None)
    assert "CONTRIBUTING.md" not in found[:1]


def test_translated_copies_do_not_crowd_an_english_answer_out_of_the_first_five(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    copies = {f"README.{lang}.md": f"# widgets\n\n{word} `npm run widgets` : `npm run widgets` widgets.\n"
              for lang, word in (("fr", "Lancez"), ("de", "Starten Sie"), ("es", "Ejecute"), ("pt", "Execute"),
                                 ("it", "Esegui"), ("nl", "Voer uit"))}
    code = setup_home(tmp_path / "code", {"widgets": {
        "README.md": "# widgets\n\nBuild the widgets with `npm run widgets`.\n", **copies,
        "docs/build.md": "# Building\n\nThe build step bundles every widget into dist/.\n",
        "widgets/core.js": "export function buildWidget(x) { return x }\n"},
        "other": {"README.md": "# other\n\nSomething else entirely: gadget sprockets.\n"}})
    res = ask(open_session(), "How do I build the widgets with npm run widgets?", cwd=code / "widgets", fast=True)
    found = [e.source for b in res.blocks for e in b.episodes]
    assert found[0] == "README.md" and "docs/build.md" in found


@pytest.mark.parametrize("question, path, expected", [
    ("What license is this under?", "LICENSE.txt", True),
    ("What license is this under?", "docs/usage.md", False),
    ("What minimum Node.js version does this package require?", "package.json", True),
    ("How do I run the tests and the linter here?", "Makefile", True),
    ("Who do I contact here to report a security vulnerability?", ".github/SECURITY.md", True),
    ("Where can I find the changelog for it?", "CHANGES.rst", True),
    ("How do I render a template?", "CHANGES.rst", False),
    ("What license is this project released under?", "CHANGES.rst", False),
    ("What changed in the latest release?", "CHANGES.rst", True),
    ("How do I run just a single test?", "docs/contributing/the_basics.md", True),
    ("What are the dependencies of this project?", "pyproject.toml", True),
    ("What does it depend on?", "requirements-dev.txt", True),
    ("What does it depend on?", "docs/usage.md", False),
])
def test_a_question_topic_names_the_files_that_hold_its_fact(question, path, expected):
    assert is_fact_file(path, fact_file_patterns(question)) is expected


# --- "what is this project?": the project's own description first ---------------------------

OVERVIEW_FILES = {
    "README.md": '<div align="center"><img src="https://example.org/logo.svg" alt="" height="150"></div>\n\n'
                 "# gizmo\n\nGizmo turns spreadsheets into static dashboards you can host anywhere.\n\n"
                 "## Contributing\n\nThis project welcomes contributions: read CONTRIBUTING before you send "
                 "a patch to the project, and follow the project's code of conduct.\n\n"
                 "## A simple example\n\n```python\nimport gizmo\ngizmo.render('sales.xlsx')\n```\n\n" + FILLER_DOCS,
    "pyproject.toml": '[project]\nname = "gizmo"\nversion = "2.1.0"\ndescription = "Spreadsheets to dashboards"\n',
    "CHANGELOG.md": "# Changelog\n\n## 2.1.0 (2026-05-01)\n\n- Dashboards now render pivot tables and export "
                    "them as static HTML pages you can host.\n\n## 2.0.0 (2025-11-02)\n\n- Dropped the old "
                    "project layout; every project file is read again from the new layout on upgrade.\n\n"
                    + "\n\n".join(f"## 1.{i}.0\n\n- Fixed the project's widget {i} and its release "
                                  f"notes about the project." for i in range(9, 0, -1)) + "\n",
    "CONTRIBUTING.md": "# Contributing to this project\n\nThis project does code review on every patch; "
                       "what the project does with your patch is described here.\n",
    "docs/index.md": "# gizmo documentation\n\nThe gizmo project renders dashboards; start with the tutorial.\n",
    "docs/quickstart.md": "# Quickstart\n\nInstall gizmo, point it at a workbook and open the dashboard it writes.\n",
    "gizmo/core.py": "def render(sheet):\n    return sheet\n\n\ndef show(sheet):\n    return render(sheet)\n",
}


@pytest.fixture
def gizmo(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {
        "gizmo": OVERVIEW_FILES,
        "other": {"README.md": "# other\n\nSomething else entirely: gadget sprockets.\n",
                  "other/x.py": "def sprocket():\n    pass\n"}})


def answers(question, cwd=None):
    from loci.query.ask import ask, open_session

    res = ask(open_session(), question, cwd=cwd, fast=True)
    return [(b.scope, e.source, e.text) for b in res.blocks for e in b.episodes]


@pytest.mark.parametrize("question", ["What does this project do?", "what is this?", "What is this repo for?",
                                      "Tell me about this project.", "What problem does this library solve?"])
def test_a_question_about_what_the_project_is_asked_inside_it_opens_with_its_readme(gizmo, question):
    got = answers(question, gizmo / "gizmo")
    assert got[0][:2] == ("gizmo", "README.md") and "static dashboards" in got[0][2]
    assert [s for _, s, _ in got[1:3]] == ["pyproject.toml", "docs/index.md"]


@pytest.mark.parametrize("question", ["How do I use this?", "Show me a quick example", "how do I get started?"])
def test_a_question_about_how_to_use_the_project_opens_with_its_usage_section(gizmo, question):
    got = answers(question, gizmo / "gizmo")
    assert got[0][:2] == ("gizmo", "README.md") and "gizmo.render(" in got[0][2]
    assert got[1][1] == "docs/quickstart.md"


def test_a_question_about_the_project_itself_shows_no_code_names_its_words_happen_to_spell(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    gizmo = setup_home(tmp_path / "code", {"gizmo": OVERVIEW_FILES}, "--no-embed", "--no-calibrate")
    res = ask(open_session(), "Show me a quick example", cwd=gizmo / "gizmo", fast=True)
    assert [b.structure for b in res.blocks] == [[]]
    assert ask(open_session(), "Where is show defined?", cwd=gizmo / "gizmo", fast=True).blocks[0].structure


@pytest.mark.parametrize("question", ["What is gizmo?", "what does gizmo do?", "What is gizmo used for?",
                                      "Give me an overview of the gizmo project"])
def test_a_question_about_what_a_named_project_is_opens_with_its_readme(gizmo, question):
    got = answers(question)
    assert got[0][:2] == ("gizmo", "README.md") and "static dashboards" in got[0][2]


@pytest.mark.parametrize("question, cwd", [("What's new in the latest version?", True),
                                           ("What changed in the latest gizmo release?", False),
                                           ("Show me the latest release notes", True)])
def test_what_is_new_in_a_release_opens_with_the_changelogs_newest_entry(gizmo, question, cwd):
    got = answers(question, gizmo / "gizmo" if cwd else None)
    assert got[0][:2] == ("gizmo", "CHANGELOG.md") and "pivot tables" in got[0][2]


def test_what_changed_recently_opens_with_the_newest_commits_then_the_changelog(tmp_path, loci_home):
    from conftest import git, make_repo

    repo = make_repo(tmp_path / "code" / "gizmo", OVERVIEW_FILES)
    (repo / "gizmo" / "core.py").write_text("def render(sheet, theme=None):\n    return sheet\n")
    git(repo, "commit", "-qam", "Let render take a theme\n\nDashboards looked alike; a theme tells them apart.")
    setup_home(tmp_path / "code", {})
    got = answers("What changed recently?", repo)
    assert got[0][1].startswith("commit:") and "theme" in got[0][2]
    assert got[1][1].startswith("commit:") and "initial commit" in got[1][2]
    assert got[2][1] == "CHANGELOG.md" and "pivot tables" in got[2][2]


def test_what_is_new_without_a_changelog_opens_with_the_newest_commits(tmp_path, loci_home):
    files = {k: v for k, v in OVERVIEW_FILES.items() if k != "CHANGELOG.md"}
    code = setup_home(tmp_path / "code", {"gizmo": files})
    got = answers("What's new in the latest version?", code / "gizmo")
    assert got[0][1].startswith("commit:")


def test_what_version_this_is_opens_with_the_manifest(gizmo):
    got = answers("What version is this?", gizmo / "gizmo")
    assert got[0][1] == "pyproject.toml" and got[1][1] == "CHANGELOG.md" and "pivot tables" in got[1][2]


def test_a_content_question_asked_inside_the_project_is_not_an_overview(gizmo):
    got = answers("How do I send a patch to this project?", gizmo / "gizmo")
    assert "static dashboards" not in got[0][2]


@pytest.mark.parametrize("question, subject", [
    ("What does this project do?", "this project"),
    ("what's it for?", "it"),
    ("What is tqdm?", "tqdm"),
    ("What's the purpose of the walkdir crate?", "the walkdir crate"),
    ("What is the purpose of pluggy?", "pluggy"),
    ("Describe fd.", "fd"),
    ("What problem does sqlite-utils solve?", "sqlite-utils"),
    ("What is a blueprint?", "a blueprint"),
    ("What is the default timeout in requests?", None),
    ("What does fd do with hidden files?", None),
    ("Which of my projects are written in Rust?", None),
])
def test_the_subject_of_an_overview_question_is_read_from_its_shape(question, subject):
    from loci.query.grammar import about_project

    assert about_project(question) == (("overview", subject) if subject else None)


@pytest.mark.parametrize("question, subject", [
    ("How do I use this?", "this"),
    ("how do I get started with click?", "click"),
    ("Show me a quick example", ""),
    ("show me an example of using the flask library", "the flask library"),
    ("How to use docopt", "docopt"),
    ("How do I use click to add a --verbose option?", None),
])
def test_the_subject_of_a_usage_question_is_read_from_its_shape(question, subject):
    from loci.query.grammar import about_project

    assert about_project(question) == (("usage", subject) if subject is not None else None)


@pytest.mark.parametrize("question, expected", [
    ("What's new in the latest version?", ("changes", "")),
    ("what changed in the latest tqdm release?", ("changes", "tqdm")),
    ("What's new in click?", ("changes", "click")),
    ("what changed recently?", ("recent", "")),
    ("What has been happening in fd lately?", ("recent", "fd")),
    ("show me the recent commits", ("recent", "")),
    ("Show me the latest release notes for fd", ("changes", "fd")),
    ("What version is this?", ("version", "this")),
    ("what is the current version of flask?", ("version", "flask")),
    ("What are the main modules here?", ("layout", "")),
    ("what are the key packages of click?", ("layout", "click")),
    ("How is this project organized?", ("layout", "this project")),
    ("give me an overview of the code structure", ("layout", "")),
    ("What's the architecture of fd?", ("layout", "fd")),
    ("what's the version of this project?", ("version", "this project")),
    ("What is the version number of click?", ("version", "click")),
    ("What changed in the way flask handles sessions?", None),
    ("", None), ("?", None), ("what " * 40, None),
])
def test_the_subject_of_a_question_about_recent_changes_or_the_version_is_read_from_its_shape(question, expected):
    from loci.query.grammar import about_project

    assert about_project(question) == expected


@pytest.mark.parametrize("subject, names, cwd, expected", [
    ("this project", ["gizmo"], True, True),
    ("this project", ["gizmo"], False, False),
    ("it", ["gizmo"], True, True),
    ("gizmo", ["gizmo"], False, True),
    ("the gizmo library", ["gizmo"], False, True),
    ("a blueprint", ["gizmo"], True, False),
    ("this function", ["gizmo"], True, False),
    ("", ["gizmo"], True, True),
    ("", ["gizmo"], False, False),
    ("cli", ["cli"], False, True),          # a project named like a noun for a project
    ("the cli", ["cli", "urfave/cli"], False, True),
    ("the cli", ["gizmo"], False, False),
])
def test_an_overview_is_of_the_scope_it_names_or_points_at(subject, names, cwd, expected):
    from loci.query.grammar import is_about

    assert is_about(subject, names, is_cwd=cwd) is expected


def test_the_usage_page_of_the_newest_docs_version_is_shown():
    from loci.query.project_files.about import own_files

    prose = {1: "README.md", 2: "docs/v1/getting-started.md", 3: "docs/v3/getting-started.md",
             4: "docs/v2/getting-started.md", 5: "docs/guide/deep/quickstart.md", 6: "docs/tutorial.md"}
    assert own_files(prose, lambda path: None)["docs_usage"] == [3]
    del prose[3], prose[4], prose[2]
    assert own_files(prose, lambda path: None)["docs_usage"] == [5]    # a quick start before a tutorial


class MeaningSide:
    """A multilingual side whose vectors say only which question each text is: the canonical
    English questions about a project by their kind, the foreign ones by a word they use."""

    AXES = (("what does this project do", "proyecto", "progetto", "projekt"), ("how do i use this", "cómo uso esto"),
            ("what changed recently", "cambió"))

    def model(self):
        return self

    def encode(self, texts):
        return np.stack([self.qvec(t) for t in texts])

    def qvec(self, text):
        import zlib

        v = np.zeros(len(self.AXES) + 64)
        for i, words in enumerate(self.AXES):
            v[i] = any(w in text.lower() for w in words)
        if not v.any():   # any other text: a direction of its own
            v[len(self.AXES) + zlib.crc32(text.encode()) % 64] = 1.0
        return v / np.linalg.norm(v)


@pytest.mark.parametrize("question, first", [("¿Qué hace este proyecto?", "README.md"),
                                             ("Cosa fa questo progetto?", "README.md"),
                                             ("¿Cómo uso esto?", "README.md"),
                                             # no function word says German or Polish: the word for "project" does
                                             ("Was macht dieses Projekt?", "README.md"),
                                             ("Co robi ten projekt?", "README.md")])
def test_a_question_about_the_project_in_another_language_is_read_by_its_meaning(gizmo, monkeypatch, question, first):
    from loci.query.ask import Session, ask, open_session

    monkeypatch.setattr(Session, "multilingual", lambda self: MeaningSide())
    monkeypatch.setattr("loci.query.ask._foreign_affinity", lambda *a: None)   # the route: the cwd's
    res = ask(open_session(), question, cwd=gizmo / "gizmo")
    got = [(e.source, e.text) for b in res.blocks for e in b.episodes]
    assert got[0][0] == first
    assert ("static dashboards" in got[0][1]) == any(w in question.lower() for w in ("proyecto", "progetto", "projekt"))


def test_a_content_question_in_another_language_is_not_read_as_one_about_the_project(gizmo, monkeypatch):
    from loci.query.ask import Session, ask, open_session

    monkeypatch.setattr(Session, "multilingual", lambda self: MeaningSide())
    monkeypatch.setattr("loci.query.ask._foreign_affinity", lambda *a: None)   # the route: the cwd's
    res = ask(open_session(), "¿Cómo se renderiza una hoja con la función render?", cwd=gizmo / "gizmo")
    assert not any("static dashboards" in e.text for b in res.blocks for e in b.episodes[:1])


def test_a_question_about_a_project_it_leaves_unsaid_points_at_it(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    code = setup_home(tmp_path / "code", {
        "gizmo": OVERVIEW_FILES,
        "notes": {"CHANGELOG.md": "# Changelog\n\n## 0.2\n\n- Changed the notes format; changed the changed "
                                  "sections again, as recently changed.\n",
                  "README.md": "# notes\n\nChanged notes, recently changed.\n"}})
    inside = ask(open_session(), "What changed recently?", cwd=code / "gizmo", fast=True)
    assert inside.route.scopes == ["gizmo"]       # not the project whose words are "changed"
    outside = ask(open_session(), "What changed recently?", cwd=None, fast=True)
    assert outside.route.outcome == "abstained" and outside.route.reason == "deictic"


def test_a_short_foreign_question_is_answered_when_the_multilingual_encoder_cannot_load(gizmo, monkeypatch):
    from loci.query.ask import Session, ask, open_session
    from loci.kernel.errors import EncoderUnavailable

    class Broken(MeaningSide):
        def model(self):
            raise EncoderUnavailable("questions in other languages need the multilingual extra")

    monkeypatch.setattr(Session, "multilingual", lambda self: Broken())
    monkeypatch.setattr("loci.query.ask._foreign_affinity", lambda *a: None)
    res = ask(open_session(), "¿Qué hace este proyecto?", cwd=gizmo / "gizmo")
    assert res.route.scopes == ["gizmo"]


def test_a_version_stated_only_in_setup_py_is_found_past_a_manifest_without_one(tmp_path, loci_home):
    files = {k: v for k, v in OVERVIEW_FILES.items() if k not in ("pyproject.toml", "CHANGELOG.md")}
    files["setup.cfg"] = "[wheel]\nuniversal = 1\n"
    files["setup.py"] = ('from setuptools import setup\n\nsetup(\n    name="gizmo",\n    version="2.1.0",\n'
                         '    description="Spreadsheets to dashboards",\n)\n')
    code = setup_home(tmp_path / "code", {"gizmo": files})
    assert answers("What version is this?", code / "gizmo")[0][1] == "setup.py"
    assert [s for _, s, _ in answers("What does this project do?", code / "gizmo")[:2]] == ["README.md", "setup.py"]


@pytest.mark.parametrize("question, says", [("Was macht dieses Projekt?", True), ("Co robi ten projekt?", True),
                                            ("Bu proje ne yapar?", True), ("Что делает этот проект?", True),
                                            ("What does this project do?", False), ("project roadmap", False),
                                            ("How do I compile the projection matrix?", False)])
def test_the_word_for_project_in_another_language_is_told_from_the_english_one(question, says):
    from loci.query.grammar import names_a_project_abroad

    assert names_a_project_abroad(question) is says


def test_a_foreign_question_about_the_project_it_is_asked_in_is_answered_by_that_project_alone(tmp_path, loci_home,
                                                                                              monkeypatch):
    from loci.query.ask import Session, ask, open_session

    code = setup_home(tmp_path / "code", {
        "gizmo": OVERVIEW_FILES,
        "other": {"README.md": "# robi ten projekt\n\n" + "Co robi ten projekt? Robi ten projekt co robi. " * 20 + "\n"}})
    monkeypatch.setattr(Session, "multilingual", lambda self: MeaningSide())
    monkeypatch.setattr("loci.query.ask._foreign_affinity", lambda *a: None)
    words_only = ask(open_session(), "Co robi ten projekt?", cwd=code / "gizmo", fast=True)
    assert words_only.route.scopes[0] == "gizmo" and "other" in words_only.route.scopes
    res = ask(open_session(), "Co robi ten projekt?", cwd=code / "gizmo")
    assert res.route.scopes == ["gizmo"] and [b.scope for b in res.blocks] == ["gizmo"]
    assert "static dashboards" in res.blocks[0].episodes[0].text


@pytest.mark.parametrize("question, expected", [
    ("give me an overview", ("overview", "")),
    ("An overview of fd, please", None),                       # a tail after the subject: content
    ("explain this codebase", ("overview", "this codebase")),
    ("What are the main features?", ("overview", "")),
    ("what are the key features of sqlite-utils?", ("overview", "sqlite-utils")),
    ("What's the latest release?", ("changes", "")),
    ("what was in the last release of click?", ("changes", "click")),
    ("usage examples", ("usage", "")),
    ("How do I run it?", ("usage", "it")),
    ("How do I run the tests?", ("usage", "the tests")),       # read as usage, but of no project (is_about)
    ("explain how the cache is invalidated", None),
])
def test_more_plain_ways_of_asking_about_the_project_are_read_as_such(question, expected):
    from loci.query.grammar import about_project, is_about

    assert about_project(question) == expected
    if question == "How do I run the tests?":
        assert not is_about(expected[1], ["gizmo"], is_cwd=True)


def test_a_project_versioned_by_its_tags_answers_which_version_from_the_newest_tag(tmp_path, loci_home):
    from conftest import git, make_repo

    from loci.front.render import ask_lines
    from loci.query.ask import ask, open_session

    code = tmp_path / "code"
    make_repo(code / "gadget", {"README.md": "# gadget\n\nGadget serves sprockets over HTTP.\n",
                                "go.mod": "module example.org/gadget\n", "main.go": "package main\n"})
    git(code / "gadget", "tag", "v0.9.1")
    setup_home(code, {})
    res = ask(open_session(), "What version is this?", cwd=code / "gadget", fast=True)
    first = res.blocks[0].episodes[0]
    assert first.source == "tag:v0.9.1" and "v0.9.1" in first.text
    shown = "\n".join(ask_lines(res))
    assert "tag:v0.9.1" in shown and "tag:v0.9.1:0" not in shown


@pytest.mark.parametrize("question, expected", [
    ("what's in this repo?", ("overview", "this repo")),
    ("What can I do with this?", ("overview", "this")),
    ("overview", ("overview", "")),
    ("tl;dr", ("overview", "")),
    ("where do I start?", ("usage", "")),
    ("what's the changelog?", ("changes", "")),
    ("what's changed?", ("recent", "")),
    ("any recent changes?", ("changes", "")),
    ("what's in the config file?", ("overview", "the config file")),   # read so, but of no project (is_about)
    ("where do I start the server?", None),
])
def test_the_shortest_ways_of_asking_about_the_project_are_read_as_such(question, expected):
    from loci.query.grammar import about_project, is_about

    assert about_project(question) == expected
    if expected and expected[1] == "the config file":
        assert not is_about(expected[1], ["gizmo"], is_cwd=True)


def test_a_question_typed_with_a_typographic_apostrophe_is_read_as_the_same_question():
    # "What’s" (U+2019), as a phone types it, read as a content question before
    from loci.query.question import Question

    assert Question.of("What’s this project for?").about_project == Question.of("What's this project for?").about_project
    assert Question.of("what’s new in click?").about_project == ("changes", "click")


def test_a_question_about_the_projects_own_files_asked_inside_it_shows_no_symbol_for_its_plain_words(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    root = setup_home(tmp_path / "code", {"runner": {
        "README.md": "# runner\n\nA job runner.\n",
        "CONTRIBUTING.md": "# Contributing\n\n## Running the tests\n\nRun the tests with `pytest -q`.\n",
        "runner/core.py": "class Monitor:\n    def run(self):\n        \"\"\"Run the monitor thread.\"\"\"\n",
    }}, "--no-embed", "--no-calibrate")   # with its code graph: a symbol named run exists
    session = open_session()
    inside = ask(session, "how do I run the tests?", cwd=root / "runner")
    assert inside.blocks[0].structure == []
    assert inside.blocks[0].episodes[0].source == "CONTRIBUTING.md"
    named = ask(session, "how do I run `Monitor.run` in the tests?", cwd=root / "runner")   # code named: shown
    assert any("Monitor.run" in s["label"] for s in named.blocks[0].structure)


def test_the_newest_changelog_entry_is_found_when_only_its_sections_hold_prose():
    # "# Unreleased" and "# 10.4.2" hold no prose of their own: their "## Features" / "## Bugfixes" do
    from loci.query.project_files.about import about_rows

    rows = {1: {"heading": "Changelog", "text": "# Changelog\n\nAll notable changes to this project are here."},
            2: {"heading": "Features", "text": "## Features\n- Add `--ignore-parent` to override the parent ignore files."},
            3: {"heading": "Bugfixes", "text": "## Bugfixes\n- Fixed a performance regression due to ignore-contain."},
            4: {"heading": "10.4.1", "text": "# 10.4.1\n\nThis is just a re-release of 10.4.0 due to an issue."}}
    files = {"changelog": [1, 2, 3, 4], "commits": [], "readme": [], "manifest": [], "docs_index": [],
             "docs_usage": [], "tag": []}
    assert about_rows("changes", files, rows)[:2] == [2, 3]
