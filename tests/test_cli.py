"""The command line, end to end on tiny repositories."""
import json

import pytest
from typer.testing import CliRunner

from conftest import make_repo, setup_home
from loci.front.cli import app

runner = CliRunner()


@pytest.fixture
def corpus(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {
        "gizmo": {
            "README.md": "# gizmo\n\nA sprocket calibration toolkit.\n\n## Install\n\npip install gizmo\n",
            "gizmo/sprocket.py": "def calibrate_sprocket(x):\n    return x\n\nclass SprocketGauge:\n    pass\n",
        },
        "webby": {
            "README.md": "# webby\n\nServe cookies and sessions over HTTP with redirects.\n",
            "webby/server.py": "class SessionCookieJar:\n    def redirect(self):\n        pass\n",
        },
    }, "--no-embed", "--no-calibrate")


def test_route_json_follows_the_contract(corpus):
    res = runner.invoke(app, ["route", "--json", "--no-cwd", "how do I calibrate a sprocket gauge?"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert set(out) == {"outcome", "scopes", "reason", "candidates", "scores"}
    assert out["outcome"] == "routed" and out["scopes"][0] == "gizmo"


def test_route_explain_json_carries_the_explanation(corpus):
    res = runner.invoke(app, ["route", "--json", "--explain", "--no-cwd", "how do I calibrate a sprocket gauge?"])
    out = json.loads(res.output)
    explain = out["explain"]
    assert explain["gate"] and "sprocket" in explain["tokens"]
    top = explain["details"][0]
    assert top["scope"] == "gizmo" and top["total"] > 0 and "sprocket" in top["matched"]


def test_ask_json_has_one_block_per_scope_with_cited_episodes(corpus):
    res = runner.invoke(app, ["ask", "--json", "--no-cwd", "how do I calibrate a sprocket gauge?"])
    out = json.loads(res.output)
    block = out["blocks"][0]
    assert block["scope"] == "gizmo" and block["episodes"]
    ep = block["episodes"][0]
    assert set(ep) == {"text", "source", "line", "kind", "score"} and ep["line"] >= 0


def test_cwd_inside_a_scope_routes_a_deictic_question_there(corpus):
    res = runner.invoke(app, ["route", "--json", "--cwd", str(corpus / "webby" / "webby"), "how do I install it?"])
    assert json.loads(res.output)["scopes"][0] == "webby"


def test_abstention_text_names_the_cause_and_the_fix(corpus):
    res = runner.invoke(app, ["ask", "--no-cwd", "how do I install this project?"])
    assert res.exit_code == 0
    assert "ABSTAINED" in res.output and "--scope" in res.output


def test_empty_question_is_a_usage_error(corpus):
    res = runner.invoke(app, ["ask", "   "])
    assert res.exit_code == 2 and "empty" in res.output


def test_unknown_scope_lists_the_known_ones(corpus):
    res = runner.invoke(app, ["ask", "--scope", "nope", "anything"])
    assert res.exit_code == 2 and "gizmo" in res.output and "webby" in res.output


def test_unknown_group_lists_the_known_ones(corpus):
    res = runner.invoke(app, ["route", "--group", "nope", "anything"])
    assert res.exit_code == 2 and "unknown group" in res.output


def test_scope_flag_skips_routing_and_the_gate(corpus):
    res = runner.invoke(app, ["ask", "--json", "--scope", "webby", "sprocket calibration"])
    out = json.loads(res.output)
    assert out["scopes"] == ["webby"] and out["outcome"] == "routed"


def test_no_index_yet_says_to_run_setup(tmp_path, loci_home):
    res = runner.invoke(app, ["route", "anything"])
    assert res.exit_code == 1 and "loci setup" in res.output


def test_corrupted_registry_is_named_and_left_untouched(tmp_path, loci_home):
    loci_home.mkdir(parents=True)
    (loci_home / "scopes.json").write_text("{not json")
    res = runner.invoke(app, ["index"])
    assert res.exit_code == 1 and "scopes.json" in res.output
    assert (loci_home / "scopes.json").read_text() == "{not json"


def test_unwritable_home_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("LOCI_HOME", str(blocker / "home"))
    res = runner.invoke(app, ["scan", str(tmp_path)])
    assert res.exit_code == 1 and "LOCI_HOME" in res.output


def test_a_probe_another_command_holds_does_not_make_the_home_unwritable(tmp_path, loci_home):
    (loci_home / ".write-probe").mkdir(parents=True)    # what a fixed probe name collides with
    res = runner.invoke(app, ["scan", str(tmp_path / "empty")])
    assert "cannot write" not in res.output
    assert not [p for p in loci_home.iterdir() if p.name.startswith(".write-probe-")]


def test_a_relative_loci_home_is_made_absolute(tmp_path, monkeypatch):
    from loci.kernel.config import layout, loci_home

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCI_HOME", "rel/home")
    assert loci_home() == tmp_path / "rel" / "home"
    assert layout().home.is_absolute()


def test_a_huge_question_answers(corpus):
    res = runner.invoke(app, ["route", "--json", "--no-cwd", "sprocket " * 20000])
    assert res.exit_code == 0 and json.loads(res.output)["outcome"] in ("routed", "abstained")


def test_mixed_scripts_do_not_crash(corpus):
    res = runner.invoke(app, ["ask", "--json", "--no-cwd", "如何 calibrate спрокет ∑ 🚀?"])
    assert res.exit_code == 0


def test_index_reports_redactions_per_scope(tmp_path, loci_home):
    make_repo(tmp_path / "code" / "leaky", {
        "README.md": "# leaky\n\nexport AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n",
    })
    runner.invoke(app, ["scan", str(tmp_path / "code"), "--quiet"])
    res = runner.invoke(app, ["index"])
    assert res.exit_code == 0 and "redacted aws-access-key x1" in res.output


def test_update_registers_a_repository_created_since_the_last_scan(corpus):
    make_repo(corpus / "newbie", {"README.md": "# newbie\n\nflux capacitor\n"})
    res = runner.invoke(app, ["update", "--quiet"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["scopes", "--json"])
    assert "newbie" in {s["name"] for s in json.loads(res.output)}


def test_update_re_embeds_with_the_model_that_built_the_vectors_not_a_newer_default(corpus, loci_home,
                                                                                   monkeypatch):
    from loci.query.semantic import STATIC_ID

    asked = []
    _recording_encoder(monkeypatch, asked)
    (loci_home / "embed.json").write_text(json.dumps({"model": "default", "model_id": STATIC_ID}))
    assert runner.invoke(app, ["update", "--quiet", "--no-scan"]).exit_code == 0
    assert asked == [STATIC_ID]


def _recording_encoder(monkeypatch, asked: list):
    import numpy as np

    import loci_pipeline.embed
    from loci.query.semantic import STATIC_ID

    class Recorder:
        model_id, dim = STATIC_ID, 4

        def encode(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32) / 2

    monkeypatch.setattr(loci_pipeline.embed, "open_encoder", lambda name, layout: asked.append(name) or Recorder())


def test_embed_without_model_keeps_the_model_the_home_already_uses(corpus, loci_home, monkeypatch):
    from loci.query.semantic import STATIC_ID

    asked = []
    _recording_encoder(monkeypatch, asked)
    (loci_home / "embed.json").write_text(json.dumps({"model": "static", "model_id": STATIC_ID}))
    res = runner.invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output
    assert asked == ["static"]


def test_embed_without_model_on_a_home_without_vectors_uses_the_default(corpus, monkeypatch):
    asked = []
    _recording_encoder(monkeypatch, asked)
    res = runner.invoke(app, ["embed", "--quiet"])
    assert res.exit_code == 0, res.output
    assert asked == [None]


def test_groups_and_modes_survive_a_rescan(corpus):
    assert runner.invoke(app, ["group", "add", "gizmo", "client:acme"]).exit_code == 0
    assert runner.invoke(app, ["group", "set", "client:acme", "--mode", "hard"]).exit_code == 0
    runner.invoke(app, ["scan", str(corpus), "--quiet"])
    res = runner.invoke(app, ["groups", "--json"])
    rows = {r["group"]: r for r in json.loads(res.output)}
    assert rows["client:acme"]["mode"] == "hard" and rows["client:acme"]["count"] == 1


def test_setting_the_mode_of_a_new_group_creates_it_and_says_it_is_empty(corpus):
    res = runner.invoke(app, ["group", "set", "web", "--mode", "hard"])
    assert res.exit_code == 0 and "no members yet" in res.output, res.output
    rows = {r["group"]: r for r in json.loads(runner.invoke(app, ["groups", "--json"]).output)}
    assert rows["web"] == {"group": "web", "mode": "hard", "count": 0, "members": []}
    assert runner.invoke(app, ["group", "add", "webby", "web"]).exit_code == 0
    rows = {r["group"]: r for r in json.loads(runner.invoke(app, ["groups", "--json"]).output)}
    assert rows["web"]["count"] == 1


def test_hard_group_flag_abstains_out_of_group(corpus):
    runner.invoke(app, ["group", "add", "gizmo", "team"])
    runner.invoke(app, ["group", "set", "team", "--mode", "hard"])
    res = runner.invoke(app, ["route", "--json", "--no-cwd", "--group", "team",
                              "SessionCookieJar redirect cookies sessions"])
    out = json.loads(res.output)
    assert out["outcome"] == "abstained" and out["reason"] == "out_of_group"


@pytest.fixture
def mixed(tmp_path, loci_home):
    return setup_home(tmp_path / "code", {
        "handbook": {
            "README.md": "# handbook\n\nOnboarding guide: expense reports, vacation policy and laptop provisioning.\n",
            "docs/expenses.md": "# Expenses\n\nSubmit expense reports with receipts within thirty days.\n",
        },
        "app": {
            "README.md": "# app\n\nA small service.\n",
            "CONTRIBUTING.md": "# Contributing\n\n## Running the tests\n\nRun `make test` from the repository root.\n",
            "app/main.py": "def serve():\n    \'\'\'Serve the tests of the service.\'\'\'\n    pass\n",
            "tests/test_main.py": "def test_serve():\n    \'\'\'run the tests here and there\'\'\'\n    pass\n",
            "vendor/sprocketlib/calibrate.py": "def calibrate_sprocket_gauge():\n    pass\n",
        },
        "sprocketlib": {
            "README.md": "# sprocketlib\n\nCalibrate sprocket gauges.\n",
            "sprocketlib/calibrate.py": "def calibrate_sprocket_gauge():\n    pass\n",
        },
    })


def test_a_documentation_only_repository_routes_on_its_prose(mixed):
    out = json.loads(runner.invoke(app, ["route", "--json", "--no-cwd", "how do I submit expense reports?"]).output)
    assert out["scopes"][:1] == ["handbook"]


def test_vendored_code_does_not_attract_the_vendored_projects_questions(mixed):
    out = json.loads(runner.invoke(app, ["route", "--json", "--no-cwd", "calibrate_sprocket_gauge"]).output)
    assert out["scopes"][:1] == ["sprocketlib"] and "app" not in out["scopes"]


def test_a_question_asked_from_inside_a_repo_finds_its_project_docs_first(mixed):
    out = json.loads(runner.invoke(app, ["ask", "--json", "--cwd", str(mixed / "app"),
                                         "How do I run the tests here?"]).output)
    assert out["scopes"][0] == "app"
    assert out["blocks"][0]["episodes"][0]["source"] == "CONTRIBUTING.md"


def test_a_second_concurrent_index_refuses_politely(corpus, loci_home):
    import subprocess
    import sys

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (loci_home / ".build.lock").write_text(json.dumps({"pid": sleeper.pid, "what": "index"}))
        res = runner.invoke(app, ["index", "--force"])
        assert res.exit_code == 1 and "another loci index is running" in res.output
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_corrupted_manifest_leaves_questions_answered_and_doctor_names_it_with_its_fix(corpus, loci_home):
    (loci_home / "manifest.json").write_text("{truncated")
    assert runner.invoke(app, ["route", "anything"]).exit_code == 0   # a question reads routing.sqlite
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 1 and "manifest.json" in res.output and "`loci index`" in res.output
    assert (loci_home / "manifest.json").read_text() == "{truncated"
    assert runner.invoke(app, ["index", "--quiet"]).exit_code == 0
    assert runner.invoke(app, ["route", "anything"]).exit_code == 0


def test_embed_before_any_index_says_what_to_run_and_loads_no_model(tmp_path, loci_home):
    res = runner.invoke(app, ["embed"])
    assert res.exit_code == 1 and "loci setup" in res.output
    assert not (loci_home / "models").exists()


def test_version_prints_the_package_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("loci ")


def test_the_setup_prompt_estimates_the_embedding_time_from_the_chunk_count(loci_home):
    from loci.front.cli_build import EMBED_RATE, _embed_estimate
    from loci.kernel.config import layout
    from loci_pipeline.routing import merge_routing
    from test_manifest_header import _scope

    _scope(layout(), "a", chunks=EMBED_RATE * 60 * 3)
    _scope(layout(), "b", chunks=0)
    merge_routing(layout(), ["a", "b"])
    assert "about 3 minutes for 8,100 chunks" in _embed_estimate()
    layout().routing_db.unlink()
    assert _embed_estimate() == "no download"


def test_dodo_path_names_the_installed_packages_dodo_file():
    from pathlib import Path

    res = runner.invoke(app, ["dodo-path"])
    path = Path(res.output.strip())
    assert res.exit_code == 0 and path.name == "dodo.py" and path.parent.name == "loci" and path.is_file()


def test_options_that_did_nothing_are_gone():
    assert runner.invoke(app, ["ask", "--rerank", "anything"]).exit_code == 2
    assert runner.invoke(app, ["graphs", "--all"]).exit_code == 2


def test_every_option_of_every_command_says_what_it_does_in_help():
    import click
    import typer.main

    from loci.front.cli_app import app

    silent = []

    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])
            return
        silent.extend(f"loci {' '.join(path)} {p.opts[0]}" for p in cmd.params
                      if isinstance(p, click.Option) and not p.help and "--help" not in p.opts)

    walk(typer.main.get_command(app), [])
    assert silent == []


def test_the_embed_line_of_a_recheck_that_encoded_nothing_does_not_read_as_a_contradiction():
    from loci.front.cli_embed import embed_line
    from loci_pipeline.build import EmbedReport

    line = embed_line(EmbedReport(embedded=["a", "b"], unchanged=[], encoded=0, reused=9877))
    assert line == "embeddings: 2 scope(s) rechecked, no chunk needed encoding, 9877 vector(s) kept"
    line = embed_line(EmbedReport(embedded=["a"], unchanged=["b", "c"], encoded=12, reused=30))
    assert line == ("embeddings: 1 scope(s) rechecked, 12 new or changed chunk(s) encoded, 30 vector(s) kept; "
                    "2 scope(s) already up to date")
    assert embed_line(EmbedReport(unchanged=["b"])) == "embeddings: 1 scope(s) already up to date"


def test_an_alias_added_to_an_indexed_scope_is_not_told_to_reindex(corpus):
    res = runner.invoke(app, ["add", str(corpus / "gizmo"), "--alias", "gz"])
    assert res.exit_code == 0 and "alias gz added" in res.output and "loci index" not in res.output
    rows = {r["name"]: r for r in json.loads(runner.invoke(app, ["scopes", "--json"]).output)}
    assert "gz" in rows["gizmo"]["aliases"]
    res = runner.invoke(app, ["add", str(corpus / "gizmo"), "--glob", "docs/*.md"])
    assert "run `loci index` to collect the new globs" in res.output


def test_a_new_directory_added_is_told_to_index(corpus):
    make_repo(corpus / "fresh", {"README.md": "# fresh\n"})
    res = runner.invoke(app, ["add", str(corpus / "fresh"), "--alias", "fr"])
    assert res.exit_code == 0 and "registered fresh; run `loci index`" in res.output


def test_graphs_with_nothing_new_does_not_tell_to_index(corpus, monkeypatch):
    from loci_pipeline import build, graphs

    monkeypatch.setattr(graphs, "graphify_available", lambda: True)
    results = {"gizmo": {"status": "uptodate", "message": "gizmo: unchanged"}}
    monkeypatch.setattr(build, "graphs", lambda ctx, names, force=False: build.GraphsReport(results=dict(results)))
    res = runner.invoke(app, ["graphs"])
    assert res.exit_code == 0 and "loci index" not in res.output, res.output
    results["webby"] = {"status": "built", "message": "webby: graph built"}
    assert "run `loci index`" in runner.invoke(app, ["graphs"]).output


def test_groups_infer_says_why_an_owner_is_unknown(tmp_path, loci_home, monkeypatch):
    setup_home(tmp_path / "code", {"theirs": {"README.md": "# theirs\n\nSomeone else's notes.\n"}})
    res = runner.invoke(app, ["groups", "infer"])   # no git identity at all (GIT_CONFIG_GLOBAL is empty)
    assert res.exit_code == 0 and "unknown  (no remote, and no git identity" in res.output, res.output
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\temail = me@example.invalid\n\tname = Someone Else Entirely\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    res = runner.invoke(app, ["groups", "infer"])
    assert "unknown  (no remote, and the recent commits are not yours)" in res.output, res.output


def complete(words: str) -> list[str]:
    """What bash completion offers for the last word of ``words``."""
    parts = words.split(" ")
    res = runner.invoke(app, [], prog_name="loci", env={"_LOCI_COMPLETE": "complete_bash",
                                                         "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)})
    return res.output.split()


@pytest.mark.parametrize("words", ["loci ask --scope gi", "loci uses --scope gi", "loci export --scope gi",
                                   "loci graphs --scope gi", "loci push DEST --scope gi", "loci group add gi",
                                   "loci export gi", "loci graphs gi", "loci uses gi"])
def test_shell_completion_offers_the_registered_scope_names(corpus, words):
    assert complete(words) == ["gizmo"]


def test_shell_completion_of_a_scope_in_a_damaged_home_offers_nothing(corpus, loci_home):
    (loci_home / "scopes.json").write_text("{damaged")
    assert complete("loci ask --scope gi") == []


def test_embed_extracts_no_code_graph(corpus, monkeypatch):
    from loci_pipeline import build

    asked = []
    monkeypatch.setattr(build, "embed", lambda ctx: asked.append(ctx.graphs) or build.EmbedReport())
    assert runner.invoke(app, ["embed", "--quiet"]).exit_code == 0
    assert asked == [False]


def test_embed_help_states_the_static_models_one_time_distillation():
    import typer.main

    option = next(p for p in typer.main.get_command(app).commands["embed"].params if "--model" in p.opts)
    assert "in seconds" not in option.help and "one-time cost" in option.help
