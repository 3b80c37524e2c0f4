"""A passage of a project's fact files answers a question about the project only when it says
something of its own on it: a manifest or runner passage that holds none of the topic's words, a
bare include of another file, a changelog that only points elsewhere are no such answer."""
from conftest import chunk_rows, fact_rows_of


def test_a_manifest_passage_without_the_topics_words_is_no_fact_row():
    rows = (chunk_rows("setup.cfg", ["[egg_info]\ntag_build =\ntag_date = 0"])
            | chunk_rows("setup.py", ["from setuptools import setup\nsetup()"], first=1)
            | chunk_rows("tox.ini", ["[tox]\nenvlist = py3\n\n[testenv]\ncommands = pytest"], first=2)
            | chunk_rows("pyproject.toml", ["[project]\nname = \"widgets\"\nlicense = \"MIT\"",
                                       "[project.optional-dependencies]\nlint = [\"ruff\"]"], first=3))
    assert fact_rows_of("How do I run the tests?", rows)[0] == {2, 4}
    assert fact_rows_of("What license is this under?", rows)[0] == {3}
    assert fact_rows_of("What are its dependencies?", rows)[0] == {4}


def test_a_mako_style_setup_cfg_naming_a_test_folder_is_no_answer_on_how_to_run_the_tests():
    rows = chunk_rows("setup.cfg", ["[mako_testing]\nmodule_base = ./test/templates/modules\n\n[egg_info]\ntag_build ="])
    assert fact_rows_of("How do I run the tests?", rows)[0] == set()


def test_a_manifests_classifiers_naming_development_say_nothing_on_how_to_run_the_tests():
    rows = chunk_rows("pyproject.toml", ["[project]\nname = \"widgets\"\nclassifiers = [\n    \"Development Status :: 5 - Production/Stable\",\n"
                                    "    \"Intended Audience :: Developers\",\n    \"Topic :: Software Development\",\n]",
                                    "[project.optional-dependencies]\ndev = [\"pytest\"]"])
    assert fact_rows_of("How do I run the tests?", rows)[0] == {1}


def test_a_runner_passage_on_the_tests_still_answers_how_to_run_them():
    rows = chunk_rows("Makefile", [".PHONY: all\nall:\n\tpython -m build", "test:\n\tpytest -q"])
    assert fact_rows_of("How do I run the tests?", rows)[0] == {1}


def test_a_passage_that_only_includes_another_file_is_no_fact_row():
    rows = (chunk_rows("docs/contributing.rst", [".. include:: ../CONTRIBUTING.rst"])
            | chunk_rows("docs/src/markdown/about/license.md", ["# License\n\n--8<-- \"LICENSE.md\""], first=1)
            | chunk_rows("docs/license.md", ["{!LICENSE.md!}"], first=2)
            | chunk_rows("CONTRIBUTING.rst", ["Contributing\n============\n\nRun the tests with ``tox``."], first=3)
            | chunk_rows("LICENSE.md", ["MIT License\n\nCopyright (c) 2020 Ann"], first=4))
    assert fact_rows_of("How do I contribute?", rows)[0] == {3}
    assert fact_rows_of("What license is this under?", rows)[0] == {4}


def test_an_include_directive_among_prose_is_still_an_answer():
    from loci.query.project_files.headings import only_includes

    assert only_includes(".. include:: ../CONTRIBUTING.rst")
    assert only_includes("License\n=======\n\n--8<-- \"LICENSE.md\"\n")
    assert only_includes(".. _contributing:\n.. include:: ../CONTRIBUTING.rst")
    assert not only_includes("Run the tests with tox.\n\n.. include:: ../AUTHORS.rst")


def test_a_passage_that_only_includes_another_file_is_no_answer_at_all():
    from loci.query.search import distinct

    rows = (chunk_rows("docs/src/markdown/about/license.md", ["## Wildcard Match\n\n--8<-- \"LICENSE.md\""])
            | chunk_rows("LICENSE.md", ["MIT License\n\nCopyright (c) 2020 Ann"], first=1))
    assert distinct([(0, 2.0), (1, 1.0)], rows) == [(1, 1.0)]


def _about(kind, rows):
    from loci.query.project_files.about import about_rows, own_files, rows_read

    prose = {i: r["path"] for i, r in rows.items()}
    files = own_files(prose, lambda path: None)
    wanted = rows_read(kind, files)
    return about_rows(kind, files, {i: rows[i] for i in wanted})


def _pointer_and_docs_changelog():
    return (chunk_rows("CHANGES", ["=====\nMOVED\n=====\n\nPlease see: /docs/changelog.html and /docs/build/changelog.rst for it"])
            | chunk_rows("docs/build/changelog.rst", ["Changelog\n=========\n\nThe changes of each release, newest first, here.",
                                                 "1.3.10\n------\n\nFixed the loop variable scope in nested blocks of templates."],
                    first=1))


def test_a_changelog_that_only_points_elsewhere_gives_way_to_one_with_entries():
    rows = _pointer_and_docs_changelog()
    assert _about("changes", rows) == [2]
    assert _about("version", rows) == [2]


def test_a_top_level_changelog_with_entries_still_comes_first():
    rows = _pointer_and_docs_changelog()
    rows[0] = {**rows[0], "heading": "2.0.0", "text": "2.0.0\n=====\n\nDropped Python 2 and the old loader entirely, at last."}
    assert _about("changes", rows) == [0]


def test_checking_the_tracker_or_a_ci_folder_says_nothing_on_the_tests_and_a_check_script_does():
    rows = (chunk_rows("CONTRIBUTING.md", ["## Good bug reports\n\nCheck the issue tracker first; builds: travis-ci.org/widgets."])
            | chunk_rows("package.json", ['{\n  "scripts": {\n    "check": "xo && tsd"\n  }\n}'], first=1)
            | chunk_rows("Makefile", ["all: build\n\tmake check"], first=2)
            | chunk_rows("Cargo.toml", ['[package]\nname = "widgets"\nexclude = ["/ci/*"]'], first=3))
    assert fact_rows_of("How do I run the tests?", rows)[0] == {1, 2}
