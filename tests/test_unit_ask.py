"""loci.query.ask, black-box through ``open_session`` and ``ask``: route, then answer each scope."""
from __future__ import annotations

import pytest

from conftest import GIT_ENV, make_repo
from loci.kernel.errors import UsageError
from loci.query.ask import ask, open_session

SPROCKET_Q = "how do I calibrate a sprocket gauge?"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """Two indexed repositories (no graphs, no vectors), built once: ``ask`` only reads the home."""
    from typer.testing import CliRunner

    from loci.front.cli import app

    base = tmp_path_factory.mktemp("ask")
    make_repo(base / "code" / "gizmo", {
        "README.md": "# gizmo\n\nA sprocket calibration toolkit.\n\n## Gauges\n\nCalibrate a sprocket gauge "
                     "with calibrate_sprocket.\n",
        "gizmo/sprocket.py": "def calibrate_sprocket(x):\n    \"\"\"Calibrate one sprocket gauge.\"\"\"\n"
                             "    return x\n",
        "docs/ratchet.md": "# Ratchets\n\nThe cogwheel ratchet holds a sprocket in place.\n",
    })
    make_repo(base / "code" / "webby", {
        "README.md": "# webby\n\nServe cookies and sessions over HTTP with redirects.\n",
        "webby/server.py": "class SessionCookieJar:\n    def redirect(self):\n        pass\n",
    })
    home = base / "home"
    with pytest.MonkeyPatch.context() as mp:
        for k, v in {**GIT_ENV, "LOCI_HOME": str(home)}.items():
            mp.setenv(k, v)
        res = CliRunner().invoke(app, ["setup", str(base / "code"), "-y", "--quiet", "--no-graphs",
                                       "--no-embed", "--no-calibrate"])
    assert res.exit_code == 0, res.output
    return home


@pytest.fixture
def session(home):
    return open_session(home)


def test_a_question_is_routed_and_answered_with_cited_passages_of_that_scope(session):
    result = ask(session, SPROCKET_Q, cwd=None)
    assert result.route.outcome == "routed" and result.route.scopes[0] == "gizmo"
    block = result.blocks[0]
    assert block.scope == "gizmo" and block.episodes
    assert {e.source for e in block.episodes} <= {"README.md", "gizmo/sprocket.py", "docs/ratchet.md"}
    assert all(e.line >= 0 and e.score > 0 for e in block.episodes)
    assert [e.score for e in block.episodes] == sorted((e.score for e in block.episodes), reverse=True)


def test_an_abstention_carries_no_blocks(session):
    result = ask(session, "how do I install this project?", cwd=None)
    assert result.route.outcome == "abstained" and result.blocks == []
    assert result.to_json()["blocks"] == [] and result.to_json()["reason"]


def test_k_bounds_the_passages_of_each_scope(session):
    assert len(ask(session, SPROCKET_Q, k=1).blocks[0].episodes) == 1


def test_a_named_scope_skips_routing_and_its_gate(session):
    result = ask(session, SPROCKET_Q, scope="webby")
    assert result.route.scopes == ["webby"] and result.route.gate == "--scope"
    assert [b.scope for b in result.blocks] == ["webby"]


def test_asking_from_inside_a_scope_answers_a_deictic_question_there(session, home):
    webby = home.parent / "code" / "webby" / "webby"
    result = ask(session, "how do I install it?", cwd=webby)
    assert result.route.scopes[0] == "webby" and result.blocks[0].scope == "webby"


@pytest.mark.parametrize("question", ["", "   ", "\x00\x01"])
def test_an_empty_question_is_a_usage_error(session, question):
    with pytest.raises(UsageError, match="empty"):
        ask(session, question)


def test_an_unknown_scope_or_group_is_a_usage_error_naming_the_known_ones(session):
    with pytest.raises(UsageError, match="known scopes: gizmo, webby"):
        ask(session, SPROCKET_Q, scope="nope")
    with pytest.raises(UsageError, match="unknown group 'nope'"):
        ask(session, SPROCKET_Q, group="nope")
    with pytest.raises(UsageError, match="unknown group 'nope'"):   # a named scope does not hide it
        ask(session, SPROCKET_Q, scope="gizmo", group="nope")


def test_the_json_of_an_answer_follows_the_contract(session):
    out = ask(session, SPROCKET_Q).to_json()
    assert {"outcome", "scopes", "reason", "candidates", "scores", "blocks"} <= set(out)
    assert set(out["blocks"][0]) >= {"scope", "episodes", "structure"}
    assert set(out["blocks"][0]["episodes"][0]) == {"text", "source", "line", "kind", "score"}


def test_fast_never_opens_the_vectors(session, monkeypatch):
    monkeypatch.setattr(type(session), "semantic", lambda self: pytest.fail("fast opened the vectors"))
    assert ask(session, SPROCKET_Q, fast=True).blocks[0].scope == "gizmo"


def test_a_home_without_vectors_answers_lexically(session):
    assert session.semantic() is None
    assert ask(session, SPROCKET_Q).route.semantic is None


def test_a_scope_whose_folder_is_gone_answers_from_its_last_index_and_says_so(tmp_path, monkeypatch):
    import json
    import shutil

    from typer.testing import CliRunner

    from conftest import setup_home
    from loci.front.cli import app

    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    code = setup_home(tmp_path / "code", {"gizmo": {"README.md": "# gizmo\n\nA sprocket calibration toolkit.\n"}})
    shutil.rmtree(code / "gizmo")
    res = CliRunner().invoke(app, ["ask", "--json", "--no-cwd", "--scope", "gizmo", "how do I calibrate a sprocket?"],
                             env={"LOCI_SERVER": "off"})
    assert res.exit_code == 0, res.output
    block = json.loads(res.stdout)["blocks"][0]
    assert block["scope"] == "gizmo" and block["episodes"]            # still answers, from its last index
    assert any("missing" in n and "loci forget gizmo" in n for n in block["notes"])


def test_a_deictic_question_asked_from_a_folder_no_scope_holds_says_how_to_register_it(session, tmp_path):
    from loci.query.ask import route_question

    stray = tmp_path / "stray"
    (stray / ".git").mkdir(parents=True)
    (stray / "src").mkdir()
    session.notes.clear()
    r = route_question(session, "what license is this project under?", cwd=str(stray / "src"))
    assert r.outcome == "abstained" and r.reason == "deictic"
    assert any("no registered scope" in n and f"loci add {stray}" in n for n in session.notes), session.notes
    session.notes.clear()
    route_question(session, "what license is this project under?", cwd=str(tmp_path))   # no repository here
    assert not any("no registered scope" in n for n in session.notes)
