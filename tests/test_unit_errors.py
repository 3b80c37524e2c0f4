"""The one line an unknown scope or group is reported with."""
from loci.kernel.errors import unknown_name


def test_an_unknown_name_lists_the_few_known_ones_and_suggests_the_closest():
    assert unknown_name("scope", "nope", ["webby", "gizmo"]) == "unknown scope 'nope'; known scopes: gizmo, webby"
    assert unknown_name("scope", "flaskk", ["flask", "click", "black"]) == (
        "unknown scope 'flaskk'; did you mean flask? known scopes: black, click, flask")


def test_beside_a_thousand_scopes_the_names_are_not_all_printed():
    known = [f"pkg{i:04d}" for i in range(1000)] + ["requests"]
    line = unknown_name("scope", "reqeusts", known, listing="loci scopes")
    assert line == "unknown scope 'reqeusts'; did you mean requests? 1,001 scopes are known: `loci scopes` lists them"
    assert "pkg0001" not in line


def test_with_nothing_known_the_line_says_what_to_do():
    assert unknown_name("scope", "x", [], none="none (run `loci setup DIR`)") == (
        "unknown scope 'x'; known scopes: none (run `loci setup DIR`)")
