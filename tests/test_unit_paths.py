"""loci_pipeline.paths: a repository-relative path is classified by the kind of code it holds."""
import pytest

from loci_pipeline.paths import PATH_KINDS, path_kind


@pytest.mark.parametrize("path, kind", [
    ("src/app/main.py", "source"),
    ("tests/test_main.py", "test"),
    ("app/main_test.go", "test"),
    ("web/button.spec.ts", "test"),
    ("conftest.py", "test"),
    ("tests/fixtures/sample.json", "fixture"),
    ("pkg/testdata/input.txt", "fixture"),
    ("vendor/lib/x.go", "vendored"),
    ("web/node_modules/left-pad/index.js", "vendored"),
    ("build/lib/app.py", "generated"),
    ("static/app.min.js", "generated"),
    ("proto/msg_pb2.py", "generated"),
    ("examples/quickstart.py", "example"),
    ("docs/guide/intro.md", "docs"),
    ("docs/guide/intro.py", "example"),                 # code in the docs illustrates, as examples do
    ("docs/snippets/migration/collapse_excgroups.py", "example"),
    ("docs/conf.py", "example"),
    ("CHANGELOG.md", "docs"),
    ("", "source"),
])
def test_each_path_gets_the_kind_of_code_it_holds(path, kind):
    assert path_kind(path) == kind and kind in PATH_KINDS


def test_vendored_wins_over_every_other_kind_and_case_does_not_matter():
    assert path_kind("third_party/tests/fixtures/a.py") == "vendored"
    assert path_kind("Tests/Test_Main.py") == "test"
    assert path_kind("src\\tests\\a.py") == "test"
