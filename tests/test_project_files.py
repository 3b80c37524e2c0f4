"""How a project's own files answer questions about it: which files are its tests, which sections
say how to install it, and where its manifest states its version."""
from pathlib import Path

import pytest

from conftest import setup_home
from loci_pipeline.facts import scope_facts


def _tests_fact(root: Path, files: dict[str, str]):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    found = [f for f in scope_facts(root, sorted(files)) if f.kind == "tests"]
    return (found[0].source, found[0].line) if found else None


# --- defect 1: a project's tests are its test files, whatever the language's convention ----------

def test_go_test_files_beside_the_code_are_the_projects_tests(tmp_path):
    assert _tests_fact(tmp_path, {"go.mod": "module example.org/gadget\n", "gadget.go": "package gadget\n",
                                  "gadget_test.go": "package gadget\n"}) == ("gadget_test.go", 1)


@pytest.mark.parametrize("test_file", ["src/widget.test.js", "src/widget.spec.ts", "test.js",
                                       "widgets/test_core.py", "src/tests/mod.rs", "__tests__/widget.js"])
def test_each_languages_test_files_are_the_projects_tests(tmp_path, test_file):
    assert _tests_fact(tmp_path, {"README.md": "# widgets\n", "src/widget.js": "", test_file: ""}) == (test_file, 1)


def test_a_rust_crate_testing_inside_its_source_has_tests_cited_where_they_begin(tmp_path):
    lib = "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n}\n"
    assert _tests_fact(tmp_path, {"Cargo.toml": '[package]\nname = "adder"\n', "src/lib.rs": lib,
                                  "src/main.rs": "fn main() {}\n"}) == ("src/lib.rs", 5)


def test_a_benchmark_folder_alone_is_not_the_projects_tests(tmp_path):
    assert _tests_fact(tmp_path, {"widgets/core.py": "", "benchmarks/test_speed.py": ""}) is None


def test_a_test_folder_is_cited_before_a_benchmark_named_like_a_test(tmp_path):
    assert _tests_fact(tmp_path, {"bench/test_speed.py": "", "tests/conftest.py": ""}) == ("tests/conftest.py", 1)


def test_which_of_my_projects_have_tests_lists_a_go_project_testing_beside_its_code(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    code = setup_home(tmp_path / "code", {
        "gadget": {"README.md": "# gadget\n\nGadget serves sprockets over HTTP.\n",
                   "go.mod": "module example.org/gadget\n", "gadget.go": "package gadget\n\nfunc Serve() {}\n",
                   "gadget_test.go": "package gadget\n\nimport \"testing\"\n\nfunc TestServe(t *testing.T) {}\n"},
        "plain": {"README.md": "# plain\n\nPlain prints sprockets.\n", "plain/core.py": "def show():\n    pass\n"},
        "checked": {"README.md": "# checked\n\nChecked checks sprockets.\n", "checked/core.py": "def check():\n    pass\n",
                    "tests/test_core.py": "def test_check():\n    pass\n"}})
    res = ask(open_session(), "Which of my projects have tests?", cwd=tmp_path)
    assert res.route.outcome == "enumerated" and sorted(res.route.scopes) == ["checked", "gadget"]


# --- defect 2: a section under an "Installation" heading answers how to install the project ------

INSTALL_README = (
    "# widgets\n\nWidgets renders sprockets as dashboards.\n\n"
    "## Plugins\n\nA plugin can install its own hooks and install templates.\n\n"
    "## Themes\n\nThemes install fonts the first time they render.\n\n"
    "## Installation\n\nPick the way that suits you.\n\n"
    "### With uv\n\n```sh\nuv add widgets\n```\n\n"
    "### From source\n\n```sh\ngit clone https://example.org/widgets\ncd widgets && make\n```\n\n"
    "## Hooks\n\nHooks install themselves on every render.\n\n"
    "## Caching\n\nThe cache is kept across an install of a new version.\n\n"
    "## Usage\n\nCall `widgets.render(sheet)`.\n")


def test_how_to_install_is_answered_by_the_sections_under_the_installation_heading(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    code = setup_home(tmp_path / "code", {
        "widgets": {"README.md": INSTALL_README, "widgets/core.py": "def render(sheet):\n    return sheet\n"},
        "other": {"README.md": "# other\n\nSomething else entirely: gadget sprockets.\n"}})
    got = ask(open_session(), "How do I install this?", cwd=code / "widgets", fast=True).blocks[0].episodes
    # "With uv" never says "install": it answers for sitting under "Installation" (it was not in the five)
    assert "With uv" in [e.heading for e in got[:3]]


def test_a_readme_holds_how_to_install_in_its_installation_sections_when_it_has_any():
    from loci.query.project_files.facts import fact_rows

    texts = ["# widgets\n\nWidgets.", "## Installation\n\nPick one.", "### With uv\n\nuv add widgets",
             "## Usage\n\nCall it."]
    rows, line = {}, 1
    for i, text in enumerate(texts):
        rows[i] = {"path": "README.md", "line": line, "heading": text.split("\n")[0].lstrip("# "), "text": text}
        line += text.count("\n") + 2
    prose = {i: "README.md" for i in rows} | {9: "pyproject.toml"}
    rows[9] = {"path": "pyproject.toml", "line": 1, "heading": "", "text": "[project]\ndependencies = [\"sprockets\"]"}

    def read(ids):
        return {i: rows[i] for i in ids}

    assert fact_rows("How do I install this?", prose, read) == ({1, 2, 9}, {1, 2})
    del rows[1], rows[2], prose[1], prose[2]    # no such section: the whole README holds it
    assert fact_rows("How do I install this?", prose, read) == ({0, 3, 9}, set())


def _readme_rows(texts):
    rows, line = {}, 1
    for i, text in enumerate(texts):
        rows[i] = {"path": "README.md", "line": line, "heading": text.split("\n")[0].lstrip("# "), "text": text}
        line += text.count("\n") + 2
    return rows


def test_a_readme_section_on_contributing_or_testing_holds_how_to_contribute_or_test():
    from loci.query.project_files.facts import fact_rows

    rows = _readme_rows(["# widgets\n\nWidgets.", "## Usage\n\nCall it.",
                         "## Contributing\n\nFork, branch, open a pull request.",
                         "### Running the tests\n\nRun `make test`.", "## License\n\nMIT."])
    prose = {i: "README.md" for i in rows} | {9: "Makefile"}
    rows[9] = {"path": "Makefile", "line": 1, "heading": "", "text": "test:\n\tpytest -q"}

    def read(ids):
        return {i: rows[i] for i in ids}

    assert fact_rows("How do I contribute?", prose, read) == ({2, 3, 9}, {2, 3})
    # the tests are one section of it: only the passages saying them
    assert fact_rows("How do I run the tests?", prose, read) == ({3, 9}, {3})


def test_a_readme_without_such_a_section_is_no_answer_to_how_to_contribute():
    from loci.query.project_files.facts import fact_rows

    rows = _readme_rows(["# widgets\n\nWidgets.", "## Usage\n\nCall it."])
    prose = {i: "README.md" for i in rows} | {9: "CONTRIBUTING.md"}
    assert fact_rows("How do I contribute?", prose, lambda ids: {i: rows[i] for i in ids if i in rows}) == ({9}, set())


def test_a_readme_section_leads_only_where_no_file_is_given_to_the_topic_and_only_the_projects_own():
    from loci.query.project_files.facts import fact_rows

    rows = _readme_rows(["# widgets\n\nWidgets.", "## Testing\n\nRun `make test`."])
    rows[5] = {"path": "src/primality-test/README.md", "line": 1, "heading": "Primality Test",
               "text": "# Primality Test\n\nTrial division."}
    prose = {0: "README.md", 1: "README.md", 5: "src/primality-test/README.md", 9: "Makefile"}
    rows[9] = {"path": "Makefile", "line": 1, "heading": "", "text": "test:\n\tpytest -q"}

    def read(ids):   # as the index reads them: a row it does not hold is left out
        return {i: rows[i] for i in ids if i in rows}

    assert fact_rows("How do I run the tests?", prose, read) == ({1, 9}, {1})
    prose[7] = "docs/contributing.md"   # a file given to the topic says it better than a README pointer
    rows[7] = {"path": "docs/contributing.md", "line": 1, "heading": "Tests", "text": "## Tests\n\nRun `tox`."}
    assert fact_rows("How do I run the tests?", prose, read) == ({1, 7, 9}, set())
    # an example's README is no install instruction of the project
    assert fact_rows("How do I install this?", prose, read)[0] == {0, 1}


def test_how_to_contribute_opens_with_the_readmes_contributing_section(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    readme = ("# widgets\n\nWidgets renders sprockets as dashboards.\n\n"
              "## Usage\n\nCall `widgets.render(sheet)`; plugins contribute panels.\n\n"
              "## Contributing\n\nFork the repository, make a branch and open a pull request; "
              "run `make check` first.\n\n## License\n\nMIT.\n")
    code = setup_home(tmp_path / "code", {
        "widgets": {"README.md": readme, "widgets/core.py": "def render(sheet):\n    return sheet\n",
                    "pyproject.toml": "[project]\nname = \"widgets\"\nversion = \"1.0\"\n"},
        "other": {"README.md": "# other\n\nSomething else entirely: gadget sprockets.\n"}})
    got = ask(open_session(), "How do I contribute?", cwd=code / "widgets", fast=True).blocks[0].episodes
    assert got[0].heading == "Contributing"


def test_a_sections_heading_path_holds_the_headings_it_sits_under():
    from loci.query.project_files.headings import heading_paths

    rows = {1: {"line": 1, "heading": "widgets", "text": "# widgets\n\nWidgets renders sprockets.\n\n"},
            2: {"line": 5, "heading": "Installation", "text": "## Installation\n\nTwo ways.\n\n"},
            3: {"line": 9, "heading": "From PyPI", "text": "### From PyPI\n\npip install widgets\n\n"},
            4: {"line": 13, "heading": "Usage", "text": "## Usage\n\nCall it.\n"}}
    assert heading_paths(rows) == {1: ("widgets",), 2: ("widgets", "Installation"),
                                   3: ("widgets", "Installation", "From PyPI"), 4: ("widgets", "Usage")}


def test_a_heading_path_claims_no_parent_across_a_section_that_was_left_out():
    # "## Usage" had no body of its own, so no row: "### Basics" is not under Installation
    from loci.query.project_files.headings import heading_paths

    rows = {1: {"line": 1, "heading": "Installation", "text": "## Installation\n\npip install widgets"},
            2: {"line": 7, "heading": "Basics", "text": "### Basics\n\nCall it."}}   # stored stripped
    assert "Installation" not in heading_paths(rows)[2]


def test_setext_and_rst_headings_are_read_by_their_levels():
    from loci.query.project_files.headings import heading_paths

    rows = {1: {"line": 1, "heading": "Installation", "text": "Installation\n------------\n\nTwo ways.\n\n"},
            2: {"line": 6, "heading": "Latest PyPI release", "text": "Latest PyPI release\n~~~~~~~~~~~~~~~~~~~\n\n"
                                                                     "pip install tqdm\n\n"},
            3: {"line": 11, "heading": "Usage", "text": "Usage\n-----\n\nCall it.\n"}}
    assert heading_paths(rows) == {1: ("Installation",), 2: ("Installation", "Latest PyPI release"), 3: ("Usage",)}


# --- defect 3: which version it is: the manifest's version line, cited at that line ---------------

VERSIONED = {
    "README.md": "# gizmo\n\nGizmo turns spreadsheets into dashboards.\n",
    "CHANGELOG.md": "# Changelog\n\n## 2.1.0 (2026-05-01)\n\n- Dashboards now render pivot tables and export "
                    "them as static HTML pages you can host.\n",
    "gizmo/core.py": "def render(sheet):\n    return sheet\n",
}


@pytest.mark.parametrize("manifest, text, line", [
    ("pyproject.toml", '[project]\nname = "gizmo"\nversion = "2.1.0"\ndescription = "Dashboards"\n', 3),
    ("package.json", '{\n  "name": "gizmo",\n  "description": "Dashboards",\n  "version": "2.1.0"\n}\n', 4),
    ("Cargo.toml", '[package]\nname = "gizmo"\nedition = "2021"\nversion = "2.1.0"\n', 4),
])
def test_which_version_opens_with_the_manifest_cited_at_its_version_line(tmp_path, loci_home, manifest, text, line):
    from loci.query.ask import ask, open_session

    code = setup_home(tmp_path / "code", {"gizmo": {**VERSIONED, manifest: text}})
    first = ask(open_session(), "what version is this?", cwd=code / "gizmo", fast=True).blocks[0].episodes[0]
    assert (first.source, first.line) == (manifest, line)


def test_a_version_stated_past_the_manifests_first_passage_opens_before_the_changelog(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    build = "[build-system]\n" + "".join(f'# build note {i}: the backend reads this table first.\n' for i in range(30))
    build += 'requires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
    pyproject = build + '[tool.other]\nversion = "{version}"\n\n[project]\nname = "gizmo"\nversion = "2.1.0"\n'
    code = setup_home(tmp_path / "code", {"gizmo": {**VERSIONED, "pyproject.toml": pyproject}})
    first = ask(open_session(), "what version is this?", cwd=code / "gizmo", fast=True).blocks[0].episodes[0]
    assert (first.source, first.line) == ("pyproject.toml", pyproject.splitlines().index('version = "2.1.0"') + 1)


def test_the_version_key_of_the_manifests_own_table_is_the_one_read():
    from loci.query.project_files.versions import version_line

    assert version_line('[tool.hatch]\nversion = "{version}"\n[project]\nversion = "1.0"\n') == 4
    assert version_line('name = "x"\nversion = "1.0"\n', table="project") == 2
    assert version_line('[tool.hatch]\nversion = "{version}"\n') is None
    assert version_line('setup(\n    name="x",\n    version="1.0",\n)\n') == 3


def test_the_main_modules_are_answered_by_the_architecture_section_and_the_modules_own_docstrings(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    readme = ("# widgets\n\nWidgets renders sprockets as dashboards.\n\n"
              "## Usage\n\nCall `widgets.render(sheet)`; the main function renders a sheet.\n\n"
              "## Architecture\n\nA sheet is parsed, laid out, then drawn.\n")
    code = setup_home(tmp_path / "code", {
        "widgets": {"README.md": readme,
                    "src/widgets/__init__.py": '"""Widgets: render sprocket sheets as dashboards."""\n',
                    "src/widgets/parse.py": '"""Read a sprocket sheet into rows."""\n\ndef main():\n    """Run the parser."""\n',
                    "src/widgets/draw.py": '"""Draw laid-out rows as a dashboard."""\n\ndef draw(rows):\n    return rows\n',
                    "tests/test_parse.py": '"""Tests of the parser."""\n'},
        "other": {"README.md": "# other\n\nSomething else entirely: gadget sprockets.\n"}})
    block = ask(open_session(), "What are the main modules here?", cwd=code / "widgets", fast=True).blocks[0]
    first = [(e.source, e.line) for e in block.episodes[:4]]
    assert first[0] == ("README.md", 9)                      # the README's own architecture section
    assert {("src/widgets/__init__.py", 1), ("src/widgets/parse.py", 1), ("src/widgets/draw.py", 1)} <= set(first)
    assert block.structure == []                             # no `main` symbol for the word "main"


@pytest.mark.parametrize("path, heading, own", [
    ("src/jinja2/bccache.py", "jinja2.bccache", True), ("src/click/__init__.py", "click", True),
    ("src/sanitize.rs", "", True), ("experimental.go", "ExperimentalBindStruct", False),
    ("src/widgets/parse.py", "main", False),
])
def test_a_doc_at_the_top_of_a_file_is_the_files_own_unless_a_declaration_heads_it(path, heading, own):
    from loci.query.project_files.layout import opens_its_file

    assert opens_its_file(path, heading) is own


def test_the_main_modules_are_a_packages_before_a_top_level_script_and_no_shell_script():
    from loci.query.project_files.layout import main_modules

    def docs(paths):   # row -> (path, heading): each the file's own doc
        return {row: (path, "") for row, path in paths.items()}

    assert main_modules(docs({1: "show_off.py", 2: "ci/run.sh", 3: "src/pkg/_impl.py", 4: "src/pkg/core.py",
                              5: "src/pkg/__init__.py", 6: "src/pkg/core.py"})) == [5, 4, 3, 1]
    assert main_modules(docs({1: "tabulate.py", 2: "setup.py"})) == [2, 1]   # a single-module project: its files


def test_a_go_package_at_the_top_comes_before_the_projects_build_scripts():
    from loci.query.project_files.layout import main_modules

    docs = {1: ("scripts/build.go", ""), 2: ("cli.go", ""), 3: ("internal/argh/argh.go", "")}
    assert main_modules(docs) == [2, 3, 1]


def test_a_topic_word_the_question_only_quotes_raises_no_topic():
    from loci.query.project_files.topics import fact_file_patterns

    assert fact_file_patterns("my users type 'instal' instead of 'install'; can the parser suggest it?") == []
    assert fact_file_patterns("how do I install it?") != []


def test_code_in_backticks_still_raises_its_topic():
    from loci.query.project_files.topics import fact_file_patterns

    assert fact_file_patterns("what does `CONTRIBUTING.md` ask of me?") != []


@pytest.mark.parametrize("name", ["VERSION", "VERSION.txt", "version.txt"])
def test_which_version_opens_with_a_version_file_when_the_manifest_reads_it_from_there(tmp_path, loci_home, name):
    from loci.query.ask import ask, open_session

    pyproject = '[project]\nname = "gizmo"\ndynamic = ["version"]\n\n[tool.setuptools.dynamic]\nversion = {file = "VERSION"}\n'
    code = setup_home(tmp_path / "code", {"gizmo": {**VERSIONED, "pyproject.toml": pyproject, name: "2.3.0\n"}})
    first = ask(open_session(), "what version is this?", cwd=code / "gizmo", fast=True).blocks[0].episodes[0]
    assert (first.source, first.line) == (name, 1) and "2.3.0" in first.text


def test_a_version_file_is_no_answer_to_what_the_project_depends_on(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    pyproject = '[project]\nname = "gizmo"\nversion = "2.1.0"\ndependencies = ["jinja2>=3"]\n'
    code = setup_home(tmp_path / "code", {"gizmo": {**VERSIONED, "pyproject.toml": pyproject, "VERSION": "2.1.0\n"}})
    sources = [e.source for e in ask(open_session(), "what does this depend on?", cwd=code / "gizmo",
                                     fast=True).blocks[0].episodes]
    assert sources[0] == "pyproject.toml" and "VERSION" not in sources[:2]


def test_the_fact_rows_of_a_question_read_each_passage_once():
    from collections import Counter

    from loci.query.project_files.facts import fact_rows

    rows = (_readme_rows(["# widgets\n\nWidgets.", "## Contributing\n\nFork, branch, open a pull request.",
                          "### Running the tests\n\nRun `make test`."])
            | {5: {"path": "CONTRIBUTING.md", "line": 1, "heading": "Testing", "text": "# Testing\n\nRun `pytest`."},
               9: {"path": "Makefile", "line": 1, "heading": "", "text": "test:\n\tpytest -q"}})
    prose = {i: r["path"] for i, r in rows.items()}
    reads = Counter()

    def read(ids):
        reads.update(ids)
        return {i: rows[i] for i in ids if i in rows}

    got = fact_rows("How do I contribute and run the tests?", prose, read)
    assert got == fact_rows("How do I contribute and run the tests?", prose,
                            lambda ids: {i: rows[i] for i in ids if i in rows})
    assert reads and max(reads.values()) == 1, reads
