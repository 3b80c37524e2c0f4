"""The questions a new contributor asks from inside a project ("how do I set up a development
environment?", "where do I report a bug?", "how do I run the tests?") are answered by the section
of the project's own files that says it, not by the user's install section or a list of people."""
from conftest import chunk_rows, fact_rows_of, project_beside_another


def test_a_readme_list_of_contributors_is_no_section_on_how_to_contribute_or_test():
    rows = chunk_rows("README.md", ["# widgets\n\nWidgets.", "## Contributors\n\nThanks to all the people who contribute.",
                               "### Star Contributors\n\n- @ann", "## Development\n\nRun `make test`."])
    assert fact_rows_of("How do I contribute?", rows) == ({3}, {3})
    assert fact_rows_of("How do I run the tests?", rows) == ({3}, {3})


def test_a_development_environment_question_asks_how_to_contribute_not_how_to_install():
    from loci.query.project_files.topics import fact_file_patterns

    rows = chunk_rows("README.md", ["# widgets\n\nWidgets.", "## Install\n\nnpm install widgets",
                               "## Development\n\nClone it, then `npm ci` and `npm test`."])
    assert fact_rows_of("How do I set up a development environment?", rows) == ({2}, {2})
    assert fact_rows_of("How do I set up a local dev environment?", rows) == ({2}, {2})
    assert fact_rows_of("How do I set up widgets?", rows) == ({1}, {1})     # still an install question
    assert fact_file_patterns("How do I set up a development environment?", named=True) == []


def test_where_to_report_a_bug_is_the_readmes_section_on_issues_when_no_file_says_it():
    rows = chunk_rows("README.md", ["# widgets\n\nWidgets.", "## Usage\n\nCall it; a bug in a sheet shows red.",
                               "## Reporting issues\n\nOpen an issue at example.org/widgets/issues.",
                               "## Browser support\n\nEvery browser; report nothing here."])
    assert fact_rows_of("Where do I report a bug?", rows) == ({2}, {2})
    assert fact_rows_of("How do I file an issue?", rows) == ({2}, {2})


def test_a_security_question_is_answered_by_the_readmes_security_section_when_there_is_no_policy_file():
    rows = chunk_rows("README.md", ["# widgets\n\nWidgets.", "## Security\n\nMail security@example.org, not the tracker.",
                               "## Usage\n\nCall it."])
    assert fact_rows_of("How do I report a security issue?", rows) == ({1}, {1})
    rows |= chunk_rows("SECURITY.md", ["# Security policy\n\nMail us."], first=7)
    assert fact_rows_of("How do I report a security issue?", rows) == ({1, 7}, set())   # the policy file says it better


def test_in_a_contributing_file_the_section_headed_for_what_is_asked_leads():
    guide = chunk_rows("CONTRIBUTING.md", [
        "# Contributing\n\nContributions are welcome! You can contribute in many ways.",
        "## Report Bugs\n\nReport bugs at example.org/issues.",
        "## Get Started!\n\nFork, clone, `pip install -e .`, branch.",
        "## Tests\n\nRun `pytest`.",
        "## Code style\n\nWe format with ruff: `ruff format`."])
    assert fact_rows_of("How do I contribute?", guide)[1] == {2}
    assert fact_rows_of("How do I set up a development environment?", guide)[1] == {2}
    assert fact_rows_of("How do I run the tests?", guide)[1] == set()   # "Tests" often says how to write them
    assert fact_rows_of("How do I lint or format the code?", guide)[1] == {4}
    assert fact_rows_of("Where do I report a bug?", guide) == ({0, 1, 2, 3, 4}, {1})


def test_how_to_set_up_a_development_environment_opens_with_the_contributing_guides_section(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    readme = ("# widgets\n\nWidgets renders sprockets as dashboards.\n\n"
              "## Installation\n\nSet up widgets with `pip install widgets`.\n\n## License\n\nMIT.\n")
    guide = ("# Contributing\n\nContributions are welcome, and they are greatly appreciated! Every little bit helps.\n\n"
             "## Report Bugs\n\nReport bugs at https://example.org/widgets/issues with your setup.\n\n"
             "## Get Started!\n\nReady to contribute? Fork the repository, clone it, run `pip install -e .` "
             "in a virtualenv and make a branch.\n\n"
             "## Tests\n\nRun `pytest` before you open a pull request.\n")
    widgets = project_beside_another(tmp_path, {"README.md": readme, "CONTRIBUTING.md": guide,
                                                "widgets/core.py": "def render(sheet):\n    return sheet\n",
                                                "setup.cfg": "[egg_info]\ntag_build =\n"})
    session = open_session()
    for question, heading in (("How do I set up a development environment?", "Get Started!"),
                              ("How do I contribute to this?", "Get Started!"),
                              ("Where do I report a bug?", "Report Bugs")):
        got = ask(session, question, cwd=widgets, fast=True).blocks[0].episodes
        assert got[0].heading == heading, (question, [(e.source, e.heading) for e in got])


def test_in_a_contributing_guide_only_the_passages_on_the_tests_hold_how_to_run_them():
    guide = chunk_rows("CONTRIBUTING.md", [
        "# Contributing\n\nContributions are welcome! You can contribute in many ways.",
        "## Report Bugs\n\nReport bugs at example.org/issues with a minimal example.",
        "## Get Started!\n\nFork, clone, `pip install -e .`, then run `tox` before you push.",
        "## Code style\n\nFollow the existing code; keep lines short."])
    assert fact_rows_of("How do I run the tests?", guide)[0] == {2, 3}   # tox; the code style section
    assert fact_rows_of("How do I contribute?", guide)[0] == {0, 1, 2, 3}   # how to contribute is the guide's subject


def test_a_guides_section_on_running_the_tests_leads_and_one_on_writing_them_does_not():
    guide = chunk_rows("CONTRIBUTING.md", [
        "# Contributing\n\nThanks for testing widgets and for every test you add.",
        "## Testing\n\nEvery test case sits in `tests/cases/`: an input, then the output it should give.",
        "## Running the tests\n\nRun `nox -s tests`; `nox -s tests -- -k name` runs one test."])
    assert fact_rows_of("How do I run the tests?", guide) == ({0, 1, 2}, {2})
    assert fact_rows_of("How do I run a single test?", guide)[1] == {2}


def test_a_question_on_the_tests_and_one_on_contributing_are_two_topics():
    from loci.query.project_files.topics import raised

    tests, contribute = raised("How do I run the tests?", False), raised("How do I contribute?", False)
    assert len(tests) == len(contribute) == 1 and tests != contribute
    assert tests[0].keyed and not contribute[0].keyed
    both = raised("What should I run to verify my changes before opening a PR?", False)
    assert tests[0] in both and contribute[0] in both


def test_how_do_i_run_the_tests_opens_with_the_guides_section_on_running_them(tmp_path, loci_home):
    from loci.query.ask import ask, open_session

    guide = ("# Contributing\n\nThank you for contributing! Tests, docs and bug reports all help; "
             "we review every contribution and every new test.\n\n"
             "## Writing a test\n\nEach test module mirrors a module of the package; run it beside the code it tests.\n\n"
             "## Running the tests\n\nInstall the development requirements, then `nox -s tests`.\n")
    widgets = project_beside_another(tmp_path, {
        "README.md": "# widgets\n\nWidgets renders sprockets as dashboards.\n", "CONTRIBUTING.md": guide,
        "widgets/core.py": "def render(sheet):\n    return sheet\n"})
    got = ask(open_session(), "How do I run the tests?", cwd=widgets, fast=True).blocks[0].episodes
    assert (got[0].source, got[0].heading) == ("CONTRIBUTING.md", "Running the tests"), \
        [(e.source, e.heading) for e in got]


def test_a_developers_readme_is_a_guide_for_contributors():
    rows = chunk_rows("DEV-README.rst", ["developers\n==========\n\nsee AUTHORS", "tests\n=====\n\nUse py.test.",
                                         "documentation\n=============\n\n``doc$ make html``"])
    assert fact_rows_of("How do I run the tests?", rows)[0] == {1}
    assert fact_rows_of("How do I build the docs?", rows) == ({2}, {2})
