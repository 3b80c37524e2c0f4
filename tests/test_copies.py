"""Identical copies of one repository (two clones at one commit, a mirror pulled beside the
original) answer once: the route names one of them and lists the others as the same content."""
from __future__ import annotations

import json

from conftest import GIZMO, WEBBY, git, setup_home
from typer.testing import CliRunner

from loci.front.cli import app

SPROCKET_Q = "how do I calibrate a sprocket with the cogwheel ratchet?"


def _route(*args: str) -> dict:
    res = CliRunner().invoke(app, ["route", "--json", "--no-cwd", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def _home_with_a_clone(tmp_path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    git(code, "clone", "-q", str(_source(tmp_path)), str(code / "gizmo"))
    git(code, "clone", "-q", str(_source(tmp_path)), str(code / "gizmo-clone"))
    setup_home(code, {"webby": WEBBY})


def _source(tmp_path):
    from conftest import make_repo

    src = tmp_path / "src" / "gizmo"
    return src if src.exists() else make_repo(src, GIZMO)


def test_a_second_clone_at_the_same_commit_is_named_as_the_same_content_not_as_a_second_answer(tmp_path, loci_home):
    _home_with_a_clone(tmp_path)
    out = _route(SPROCKET_Q)
    assert out["outcome"] == "routed"
    assert out["scopes"] == ["gizmo"]
    assert out["same_content"] == {"gizmo": ["gizmo-clone"]}
    evidence = {d["scope"]: d["evidence"] for d in _route("--explain", SPROCKET_Q)["explain"]["details"]}
    assert evidence["gizmo-clone"] == 0       # a copy is no second witness of the same words


def test_a_clone_that_moved_on_is_its_own_scope_again(tmp_path, loci_home):
    _home_with_a_clone(tmp_path)
    clone = tmp_path / "code" / "gizmo-clone"
    (clone / "NOTES.md").write_text("# notes\n\nThe sprocket calibration needs a cogwheel ratchet.\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "notes")
    res = CliRunner().invoke(app, ["index", "--quiet"])
    assert res.exit_code == 0, res.output
    out = _route("--explain", SPROCKET_Q)
    assert "same_content" not in out
    evidence = {d["scope"]: d["evidence"] for d in out["explain"]["details"]}
    assert evidence["gizmo-clone"] > 0 and evidence["gizmo"] > 0     # two witnesses again


def test_asked_from_inside_the_clone_the_clone_answers(tmp_path, loci_home):
    _home_with_a_clone(tmp_path)
    res = CliRunner().invoke(app, ["route", "--json", "--cwd", str(tmp_path / "code" / "gizmo-clone"),
                                   "how does this project calibrate a sprocket?"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["scopes"][0] == "gizmo-clone"
    assert out["same_content"] == {"gizmo-clone": ["gizmo"]}


def test_the_text_answer_says_which_copies_it_answers_for(tmp_path, loci_home):
    _home_with_a_clone(tmp_path)
    res = CliRunner().invoke(app, ["route", "--no-cwd", SPROCKET_Q])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[:2] == ["ROUTED -> gizmo",
                                           "  gizmo also answers for gizmo-clone (the same content)"]


def test_the_second_opinion_spends_no_place_of_its_shortlist_on_a_copy(tmp_path, loci_home, monkeypatch):
    from loci.query import ask as ask_mod
    from loci.query.ask import open_session, route_question

    _home_with_a_clone(tmp_path)
    measured: list[list[str]] = []

    class Side:
        background = None

        def route_params(self, params):
            return params

        def affinities(self, text, scopes, k, *, include=(), shortlist=None, keep=True):
            measured.append(list(scopes))
            return {s: 0.3 for s in scopes}

        def first_pass(self, text, scopes, n, include=()):
            return list(scopes)

    session = open_session()
    monkeypatch.setattr(ask_mod.Session, "semantic", lambda self: Side())
    route_question(session, "how do I keep cookies across redirects?")
    assert measured and "gizmo" in measured[0] and "gizmo-clone" not in measured[0]


def test_doctor_notes_which_scopes_are_copies_and_which_one_answers_for_them(tmp_path, loci_home):
    from loci.front.doctor import NOTE, diagnose
    from loci.kernel.config import layout

    _home_with_a_clone(tmp_path)
    notes = [f for f in diagnose(layout()) if f.problem == "copies"]
    assert [(f.scope, f.severity, f.fix) for f in notes] == [("gizmo-clone", NOTE, None)]
    assert "gizmo" in notes[0].message and "same commit" in notes[0].message


def test_a_home_merged_by_an_older_loci_learns_its_copies_at_the_next_index(tmp_path, loci_home, monkeypatch):
    from loci.kernel import merged_metas

    with monkeypatch.context() as old:       # a loci that kept fewer of the metas' fields
        old.setattr(merged_metas, "QUERY_FIELDS", ("chunks", "origin"))
        _home_with_a_clone(tmp_path)
        assert "same_content" not in _route(SPROCKET_Q)
    res = CliRunner().invoke(app, ["index", "--quiet"])          # nothing changed in any repository
    assert res.exit_code == 0, res.output
    assert _route(SPROCKET_Q)["same_content"] == {"gizmo": ["gizmo-clone"]}


def test_scopes_lists_a_copy_with_the_scope_that_answers_for_it(tmp_path, loci_home):
    _home_with_a_clone(tmp_path)
    rows = {r["name"]: r for r in json.loads(CliRunner().invoke(app, ["scopes", "--json"]).output)}
    assert rows["gizmo-clone"]["copy_of"] == "gizmo" and "copy_of" not in rows["gizmo"]
    text = CliRunner().invoke(app, ["scopes"]).output
    assert [line for line in text.splitlines() if "[copy of gizmo]" in line][0].startswith("gizmo-clone")


def test_a_name_every_copy_goes_by_routes_to_one_of_them_that_answers_for_the_others(tmp_path, loci_home):
    _home_with_a_clone(tmp_path)
    for clone in ("gizmo", "gizmo-clone"):   # both go by their package's name, as two clones of a library do
        res = CliRunner().invoke(app, ["add", str(tmp_path / "code" / clone), "--alias", "sprocketkit"])
        assert res.exit_code == 0, res.output
    out = _route("how do I calibrate a sprocket in sprocketkit?")
    assert out["outcome"] == "routed" and out["scopes"] == ["gizmo"], out["scopes"]
    assert out["same_content"] == {"gizmo": ["gizmo-clone"]}
    assert _route("how does gizmo-clone calibrate a sprocket?")["scopes"][0] == "gizmo-clone"   # named alone


def test_many_copies_are_named_a_few_and_counted_in_the_text_answer():
    from loci.front.render import copies_line

    assert copies_line("gizmo", ["gizmo-clone"]) == "  gizmo also answers for gizmo-clone (the same content)"
    many = [f"attrs-{i:03d}" for i in range(1, 46)]
    line = copies_line("attrs", many)
    assert line == "  attrs also answers for attrs-001, attrs-002, attrs-003 and 42 other copies (the same content)"
