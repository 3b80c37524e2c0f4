""""How do I build the docs?" asked from inside a project (or naming it) is answered by the passages
that say how: a contributing guide's section on the documentation, a README's section on building
them, a docs folder's README, a runner's or manifest's passage naming the docs tooling."""
from conftest import chunk_rows, fact_rows_of, project_beside_another


def test_a_question_on_building_the_docs_raises_a_topic_inside_a_project_and_of_one_by_name():
    from loci.query.project_files.topics import fact_file_patterns

    for question in ("How do I build the docs?", "how do I build the documentation locally?",
                     "How can I preview the docs?", "What do I run to build docs locally?",
                     "the docs build fails for me, what do I run?"):
        assert fact_file_patterns(question), question
        assert fact_file_patterns(question, named=True), question
    for question in ("Where are the docs?", "How do I render a template?", "How do I build a wheel?",
                     "How do I generate documentation for my commands?", "Does it document its API?"):
        assert not fact_file_patterns(question, named=True), question


def test_in_a_contributing_guide_only_the_passages_on_the_docs_hold_it_and_the_docs_section_leads():
    guide = chunk_rows("CONTRIBUTING.md", [
        "# Contributing\n\nContributions are welcome! Build something great.",
        "## Running the tests\n\nRun `tox` to build and test every environment.",
        "## Documentation\n\nThe docs are written in reStructuredText: `tox -e docs` renders them.",
        "## Code style\n\nWe format with ruff."])
    assert fact_rows_of("How do I build the docs?", guide) == ({2}, {2})   # its section on the docs alone
    assert fact_rows_of("How do I run the tests?", guide)[0] == {1, 2, 3}   # tox; ruff; not the welcome


def test_a_runners_or_manifests_passage_holds_it_only_when_it_names_the_docs_tooling():
    rows = (chunk_rows("Makefile", ["docs:\n\tcd docs && make html"])
            | chunk_rows("tox.ini", ["[testenv]\ncommands = pytest"], first=1)
            | chunk_rows("pyproject.toml", ['[project]\nname = "widgets"\n\n[project.urls]\n'
                                            'Documentation = "https://docs.example.org/widgets"\n'
                                            'include = ["docs/"]'], first=2)
            | chunk_rows("noxfile.py", ["@nox.session\ndef docs(session):\n    session.run('sphinx-build', 'docs', 'out')"],
                         first=3))
    assert fact_rows_of("How do I build the docs?", rows) == ({0, 3}, set())


def test_a_readme_section_on_building_the_docs_holds_it_and_a_link_to_the_docs_does_not():
    readme = chunk_rows("README.md", ["# widgets\n\nWidgets.", "## Documentation\n\nRead them at example.org.",
                                      "## Building the docs\n\nRun `mkdocs build`.", "## License\n\nMIT."])
    assert fact_rows_of("How do I build the documentation locally?", readme) == ({2}, {2})
    del readme[2]
    assert fact_rows_of("How do I build the documentation locally?", readme) == (set(), set())


def test_a_docs_folders_readme_holds_how_to_build_the_docs_and_another_folders_does_not():
    rows = (chunk_rows("docs/README.md", ["# The docs\n\nInstall the docs requirements, then `make html`."])
            | chunk_rows("examples/README.md", ["# Examples\n\nBuild the examples with `make`."], first=1))
    assert fact_rows_of("How do I build the docs?", rows) == ({0}, {0})   # its heading says the docs


def test_how_do_i_build_the_docs_opens_with_the_contributing_guides_section_on_them(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    readme = ("# widgets\n\nWidgets builds sprocket dashboards from sheets; the docs site shows the gallery.\n\n"
              "## Build a dashboard\n\nBuild one with `widgets build sheet.csv`: the build writes the dashboard "
              "and its docs page.\n\n## License\n\nMIT.\n")
    guide = ("# Contributing\n\nContributions are welcome, and they are greatly appreciated!\n\n"
             "## Running the tests\n\nRun `pytest` before you open a pull request.\n\n"
             "## Documentation\n\nThe documentation lives in `docs/` and is written in reStructuredText. "
             "Run `tox -e docs`; open `docs/_build/html/index.html` to check your changes.\n")
    widgets = project_beside_another(tmp_path, {
        "README.md": readme, "CONTRIBUTING.md": guide,
        "widgets/core.py": "def build(sheet):\n    \"\"\"Build the dashboard of a sheet.\"\"\"\n    return sheet\n",
        "tox.ini": "[testenv]\ncommands = pytest\n\n[testenv:docs]\ncommands = sphinx-build docs docs/_build/html\n"})
    session = open_session()
    for question, cwd in (("How do I build the docs?", widgets), ("How do I build the documentation locally?", widgets),
                          ("How do I build the docs of widgets?", tmp_path)):
        got = ask(session, question, cwd=cwd, fast=True).blocks[0].episodes
        assert (got[0].source, got[0].heading) == ("CONTRIBUTING.md", "Documentation"), \
            (question, [(e.source, e.heading) for e in got])


def test_a_docs_builds_own_files_hold_how_to_build_the_docs():
    files = [("mkdocs.yml", "site_name: widgets\ntheme: material"),
             (".readthedocs.yaml", "version: 2\nbuild:\n  commands:\n    - sphinx-build docs out"),
             ("docs/conf.py", "project = 'widgets'\nextensions = ['sphinx.ext.autodoc']"),
             ("widgets/conf.py", "LEVEL = 1  # the docs level"),
             ("docs/Makefile", "SPHINXBUILD ?= sphinx-build\n%:\n\t$(SPHINXBUILD) -M $@ . _build")]
    rows = {}
    for i, (path, text) in enumerate(files):
        rows |= chunk_rows(path, [text], first=i)
        rows[i]["heading"] = path.rsplit("/", 1)[-1]   # a note's heading is its file's name
    assert fact_rows_of("How do I build the docs?", rows) == ({0, 1, 2, 4}, set())


def test_a_projects_nox_sessions_and_mkdocs_config_are_cited_on_running_the_tests_and_building_the_docs(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    readme = ("# widgets\n\nWidgets renders sprocket dashboards; the docs show the gallery and the tests cover "
              "every sprocket.\n\n## Usage\n\nRun `widgets build sheet.csv` to build a dashboard.\n")
    widgets = project_beside_another(tmp_path, {
        "README.md": readme, "widgets/core.py": "def build(sheet):\n    return sheet\n",
        "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n    session.install('pytest')\n"
                      "    session.run('pytest')\n",
        "mkdocs.yml": "site_name: widgets\ntheme:\n  name: material\nnav:\n  - index.md\n"})
    session = open_session()
    for question, source in (("How do I run the tests?", "noxfile.py"), ("How do I build the docs?", "mkdocs.yml")):
        got = [e.source for e in ask(session, question, cwd=widgets, fast=True).blocks[0].episodes]
        assert source in got[:3], (question, got)
