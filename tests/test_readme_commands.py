"""Every command the README tells a user to run is run here, and its effect is checked.

The README's commands are read from its shell blocks and inline code; ``COVERED`` records which
test runs each one, and ``test_every_readme_command_is_run_by_a_test`` fails when the README
names a command no test here runs. One home is built once per module (two tiny repositories,
indexed, with vectors of a fake encoder and a calibration); each test works on its own copy
(LOCI_HOME set per test), so a command that writes cannot disturb another test.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import GIT_ENV, git, make_repo
from loci.front.cli import app
from test_bundle import FakeEncoder

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
GIZMO_Q = "how do I calibrate a sprocket gauge?"
REPOS = {
    "gizmo": {
        "pyproject.toml": '[project]\nname = "gizmo"\n',
        "README.md": "# gizmo\n\nA sprocket calibration toolkit.\n\n## Install\n\npip install gizmo\n",
        "gizmo/__init__.py": "",
        "gizmo/sprocket.py": "def calibrate_sprocket(x):\n    \"\"\"Calibrate one sprocket gauge.\"\"\"\n"
                             "    return x\n\nclass SprocketGauge:\n    pass\n",
    },
    "webby": {
        "pyproject.toml": '[project]\nname = "webby"\ndependencies = ["gizmo>=1"]\n',
        "README.md": "# webby\n\nServe cookies and sessions over HTTP with redirects.\n",
        "webby/__init__.py": "",
        "webby/server.py": "from gizmo import sprocket\n\nclass SessionCookieJar:\n"
                           "    def redirect(self):\n        pass\n",
    },
}

# ------------------------------------------------------------------ what the README names

COVERED: dict[str, str] = {}   # command key -> the test that runs it


def covers(*keys: str):
    """Record that the decorated test runs the README commands ``keys``."""
    def mark(fn):
        for key in keys:
            COVERED[key] = fn.__name__
        return fn
    return mark


def _command_tree() -> dict[str, dict]:
    """The CLI's command names as a nested dict (``{"group": {"add": {}, ...}, ...}``)."""
    import typer.main

    def walk(cmd) -> dict:
        return {name: walk(sub) for name, sub in getattr(cmd, "commands", {}).items()}

    return walk(typer.main.get_command(app))


def readme_commands(text: str) -> list[str]:
    """Every `loci ...`, `doit ...` and `python -m loci...` command of the README: the lines of its
    shell blocks (split at ``&&``/``;``, comments dropped) and its inline code."""
    blocks = re.findall(r"```(?:bash|sh|shell|console)\n(.*?)```", text, re.S)
    lines = [part.strip() for b in blocks for line in b.splitlines()
             for part in re.split(r"&&|;", line.split("  #")[0])]
    inline = [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))]
    return [c for c in lines + inline if re.match(r"(loci(\s|$)|doit(\s|$)|python3? -m loci\b)", c)]


def command_keys(command: str, tree: dict) -> set[str]:
    """What a README command runs, as keys of ``COVERED``: ``loci group add|rm SCOPE G`` is
    ``loci group add`` and ``loci group rm``; ``python -m loci.dodo index:S`` is
    ``python -m loci.dodo index:``; ``doit -f $(loci dodo-path)`` also runs ``loci dodo-path``."""
    words = command.replace("\\|", "|").split()
    if words[0] == "doit":
        keys = {"doit -f $(loci dodo-path)", "loci dodo-path"} if "$(loci" in command else {"doit"}
        return keys
    if words[0].startswith("python"):
        arg = next((w for w in words[3:] if not w.startswith("-")), "")
        return {"python -m loci.dodo" + (f" {arg.split(':')[0]}:" if ":" in arg else f" {arg}" if arg else "")}
    if len(words) == 1:
        return set()                       # the command's bare name, in prose
    if words[1].startswith("--"):
        return {f"loci {words[1]}"}
    paths = [["loci"]]
    node = tree
    for word in words[1:]:
        names = [w for w in word.split("|") if w in node]
        if not names:
            break
        paths = [p + [n] for p in paths for n in names]
        node = node[names[0]]
    return {" ".join(p) for p in paths}


# commands the README names in prose, next to a command it shows
PROSE = {"loci hook uninstall", "loci hook status", "python -m loci.dodo list", "python -m loci.dodo info",
         "python -m loci.dodo forget"}


def test_every_readme_command_is_run_by_a_test():
    tree = _command_tree()
    named = set().union(*(command_keys(c, tree) for c in readme_commands((ROOT / "README.md").read_text())))
    named |= PROSE
    assert {"loci setup", "loci group rm", "loci server stop", "python -m loci.dodo index:"} <= named  # the parser reads
    missing = sorted(named - set(COVERED))
    assert not missing, f"README commands no test in this file runs: {missing}"


def test_the_readme_parser_splits_alternatives_and_doit_targets():
    tree = _command_tree()
    assert command_keys("loci group add\\|rm SCOPE G", tree) == {"loci group add", "loci group rm"}
    assert command_keys("loci server status|stop", tree) == {"loci server status", "loci server stop"}
    assert command_keys("python -m loci.dodo bundle:NAME", tree) == {"python -m loci.dodo bundle:"}
    assert command_keys("loci ask \"Q\"", tree) == {"loci ask"}
    assert command_keys("doit -f $(loci dodo-path)", tree) == {"doit -f $(loci dodo-path)", "loci dodo-path"}


# ------------------------------------------------------------------ homes

def fake_encoder(mp) -> FakeEncoder:
    """The packaged model replaced by unit vectors seeded by each text (no model, no download)."""
    import loci.query.semantic
    import loci_pipeline.embed

    encoder = FakeEncoder()
    mp.setattr(loci_pipeline.embed, "open_encoder", lambda name, lay: encoder)
    mp.setattr(loci.query.semantic, "load_encoder", lambda name, lay, **kw: encoder)
    return encoder


def cli(*args: str, code: int | None = 0, **kw):
    res = runner.invoke(app, list(args), **kw)
    if code is not None:
        assert res.exit_code == code, res.output
    return res


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """`loci setup DIR -y` (no graphs), `loci embed` and `loci calibrate`, once, on two repositories."""
    base = tmp_path_factory.mktemp("readme")
    home = base / "home"
    with pytest.MonkeyPatch.context() as mp:
        for k, v in {**GIT_ENV, "LOCI_HOME": str(home)}.items():
            mp.setenv(k, v)
        fake_encoder(mp)
        for name, files in REPOS.items():
            make_repo(base / "code" / name, files)
        setup = cli("setup", str(base / "code"), "-y", "--no-graphs", "--no-embed", "--no-calibrate", code=None)
        shutil.copytree(home, base / "lexical", symlinks=True)
        embed = cli("embed")
        calibrate = cli("calibrate")
    return {"code": base / "code", "home": home, "lexical": base / "lexical", "setup": setup, "embed": embed,
            "calibrate": calibrate}


def _own_copy(source: Path, tmp_path: Path, monkeypatch) -> Path:
    home = tmp_path / "home"
    shutil.copytree(source, home, symlinks=True)
    monkeypatch.setenv("LOCI_HOME", str(home))
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    return home


@pytest.fixture
def home(built, tmp_path, monkeypatch) -> Path:
    """A copy of the built home (vectors of the fake encoder, calibrated), as this test's LOCI_HOME."""
    fake_encoder(monkeypatch)
    return _own_copy(built["home"], tmp_path, monkeypatch)


@pytest.fixture
def lexical_home(built, tmp_path, monkeypatch) -> Path:
    """A copy of the home as `loci setup --no-embed --no-calibrate` left it: what a command run in
    another process (where the fake encoder cannot reach) is given."""
    return _own_copy(built["lexical"], tmp_path, monkeypatch)


@pytest.fixture
def code(built) -> Path:
    return built["code"]


def own_repo(tmp_path: Path, name: str = "fresh") -> Path:
    """A repository of this test's own (a test that commits or installs hooks)."""
    return make_repo(tmp_path / "mine" / name, {
        "README.md": f"# {name}\n\nA turbine vortex anemometer for windmill telemetry.\n",
        f"{name}/vortex.py": "def spin_turbine():\n    return 1\n",
    })


def scopes_json(home: Path) -> dict:
    return {s["name"]: s for s in json.loads(cli("scopes", "--json").stdout)}


def route_json(question: str, *flags: str) -> dict:
    """`loci route --json --fast`: the fake encoder's vectors mean nothing, so no second opinion."""
    return json.loads(cli("route", "--json", "--no-cwd", "--fast", *flags, question).stdout)


# ------------------------------------------------------------------ try it, use it

@covers("loci demo")
def test_demo_lays_out_three_projects_one_question_abstains_and_its_fix_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "user-home"))
    res = cli("demo", str(tmp_path / "demo"))
    assert "example projects in" in res.stdout
    asked = res.stdout.split("\n$ ")[1:]
    assert len(asked) == 5 and "ABSTAINED" in asked[3]
    # asked from inside a project, as the abstention's fix says: that project's own description
    assert asked[4].startswith("cd ") and "ROUTED -> weatherlog" in asked[4]
    assert "Record temperature and humidity readings" in asked[4].split("[readme] README.md:1", 1)[1]
    assert (tmp_path / "demo" / "loci-home" / "routing.sqlite").is_file()
    assert not (tmp_path / "user-home").exists()    # the user's home is never touched


@covers("loci setup")
def test_setup_registers_indexes_and_ends_with_doctor(built):
    assert built["setup"].exit_code == 0, built["setup"].output
    assert "registered 2 scope(s)" in built["setup"].stdout
    home = built["home"]
    assert set(json.loads((home / "scopes.json").read_text())["scopes"][0]) >= {"name", "path"}
    assert (home / "routing.sqlite").is_file() and (home / "query" / "gizmo.sqlite").is_file()
    assert re.search(r"^2 scope\(s\): \d+ gap\(s\)", built["setup"].stdout, re.M)    # doctor's summary, last


@covers("loci ask")
def test_ask_answers_from_the_routed_scope_with_a_citation(home):
    text = cli("ask", "--no-cwd", "--fast", GIZMO_Q).stdout
    assert "gizmo" in text and "sprocket" in text
    cli("ask", "--no-cwd", GIZMO_Q)    # with the (fake) vectors' second opinion
    out = json.loads(cli("ask", "--json", "--no-cwd", "--fast", "--k", "2", GIZMO_Q).stdout)
    assert out["scopes"][0] == "gizmo" and out["blocks"][0]["scope"] == "gizmo"
    sources = {e["source"] for e in out["blocks"][0]["episodes"]}
    assert sources & {"README.md", "gizmo/sprocket.py"} and len(out["blocks"][0]["episodes"]) <= 2
    assert json.loads(cli("ask", "--json", "--scope", "webby", "--fast", GIZMO_Q).stdout)["scopes"] == ["webby"]


@covers("loci route")
def test_route_explain_shows_the_gate_and_each_scopes_parts(home):
    text = cli("route", "--explain", "--no-cwd", GIZMO_Q).stdout
    assert "gizmo" in text and "sprocket" in text
    out = route_json(GIZMO_Q, "--explain")
    assert out["scopes"][0] == "gizmo" and out["explain"]["gate"]


@covers("loci --install-completion")
def test_install_completion_writes_the_completion_script_for_the_shell(tmp_path, monkeypatch):
    import shellingham

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SHELL", "/bin/bash")
    # the shell is found from the parent processes: run from a detached job it is none
    monkeypatch.setattr(shellingham, "detect_shell", lambda *a, **kw: ("bash", "/bin/bash"))
    res = runner.invoke(app, ["--install-completion"], prog_name="loci")
    assert res.exit_code == 0, res.output
    scripts = list(tmp_path.rglob("loci*"))
    assert scripts and "_LOCI_COMPLETE" in scripts[0].read_text()
    assert str(scripts[0]) in (tmp_path / ".bashrc").read_text()


# ------------------------------------------------------------------ the build steps

@covers("loci update")
def test_update_folds_a_new_commit_and_a_new_folder_into_routing(home, tmp_path):
    fresh = own_repo(tmp_path)
    cli("update", str(fresh.parent), "--quiet")
    assert "fresh" in scopes_json(home)
    assert route_json("how does the turbine vortex anemometer spin?")["scopes"] == ["fresh"]
    (fresh / "fresh" / "gust.py").write_text("def measure_gust_squall_flurry():\n    pass\n")
    git(fresh, "add", "-A")
    git(fresh, "commit", "-q", "-m", "measure gust squall flurry")
    res = cli("update")
    assert "fresh" in res.stdout
    assert route_json("how is a gust squall flurry measured?")["scopes"] == ["fresh"]


@covers("loci forget")
def test_forget_drops_a_scope_from_routing_the_vectors_summary_and_the_calibration(home):
    before = json.loads((home / "calibration.json").read_text())
    res = cli("forget", "webby")
    assert "forgot webby" in res.stdout
    assert set(scopes_json(home)) == {"gizmo"}
    from loci.kernel.config import layout
    from loci.query.store import indexed_metas

    assert set(indexed_metas(layout())) == {"gizmo"}
    assert not [p for p in home.rglob("*webby*") if p.is_file()]
    summaries = [json.loads(p.read_text()) for p in home.rglob("summary/*.json")]
    assert summaries and all([s[0] for s in m["scopes"]] == ["gizmo"] for m in summaries)
    assert json.loads((home / "calibration.json").read_text())["index_written_at"] != before["index_written_at"]
    assert "calibration_stale" not in cli("doctor", "--json", code=None).stdout
    out = route_json("how are session cookies kept over HTTP with redirects?")   # webby's words
    assert "webby" not in json.dumps(out)


@covers("loci scan")
def test_scan_registers_every_repository_under_a_folder(home, tmp_path):
    own_repo(tmp_path, "alpha")
    own_repo(tmp_path, "beta")
    res = cli("scan", str(tmp_path / "mine"))
    assert "registered 2 scope(s)" in res.stdout
    assert set(scopes_json(home)) == {"alpha", "beta", "gizmo", "webby"}   # the remembered roots stay


@covers("loci add")
def test_add_registers_a_directory_and_an_alias_routes_at_once(home, tmp_path):
    fresh = own_repo(tmp_path)
    res = cli("add", str(fresh))
    assert "registered fresh" in res.stdout and "loci index" in res.stdout
    assert scopes_json(home)["fresh"]["path"] == str(fresh)
    res = cli("add", str(home.parent.parent / "x"), code=None)      # a directory that is not there
    assert res.exit_code != 0 and "Traceback" not in res.output
    question = "In cogworks, where are the sessions kept?"
    assert route_json(question)["scopes"][0] == "webby"
    cli("add", scopes_json(home)["gizmo"]["path"], "--alias", "cogworks")
    assert "cogworks" in scopes_json(home)["gizmo"]["aliases"]
    assert route_json(question)["scopes"][0] == "gizmo"


@covers("loci scopes")
def test_scopes_lists_each_scope_with_its_path(home, code):
    rows = scopes_json(home)
    assert set(rows) == {"gizmo", "webby"} and rows["webby"]["path"] == str(code / "webby")
    assert all(r["exists"] for r in rows.values())
    assert str(code / "gizmo") in cli("scopes").stdout


@covers("loci graphs")
def test_graphs_extracts_a_code_graph_or_names_the_missing_extra(home):
    from loci.kernel.config import layout
    from loci_pipeline.graphs import graphify_available

    res = cli("graphs", "gizmo", code=None)
    if not graphify_available():
        assert res.exit_code == 1 and "graph" in res.output
        return
    assert res.exit_code == 0, res.output
    assert "1 scope(s) checked, 0 failed" in res.stdout
    assert any(layout().graph_dir("gizmo").iterdir())
    assert not layout().graph_dir("webby").exists()
    assert cli("graphs", "nope", code=2).output.count("\n") <= 2


@covers("loci index")
def test_index_rebuilds_a_changed_scope_and_leaves_the_other(home, tmp_path):
    fresh = own_repo(tmp_path)
    cli("add", str(fresh))
    res = cli("index")
    assert "fresh" in res.stdout
    assert (home / "query" / "fresh.sqlite").is_file()
    meta = json.loads((home / "meta" / "gizmo.json").read_text())
    cli("index", "--quiet")
    assert json.loads((home / "meta" / "gizmo.json").read_text()) == meta


@covers("loci embed")
def test_embed_writes_every_scopes_vectors_and_names_the_model(built):
    assert built["embed"].exit_code == 0, built["embed"].output
    home = built["home"]
    assert json.loads((home / "embed.json").read_text())["model_id"] == "fake-model"
    assert sorted(p.stem for p in (home / "vectors" / "fake-model").glob("*.npy")) == ["gizmo", "webby"]


@covers("loci calibrate")
def test_calibrate_fits_the_floors_and_show_prints_them(built, home):
    assert built["calibrate"].exit_code == 0, built["calibrate"].output
    data = json.loads((home / "calibration.json").read_text())
    assert "evidence_floor" in data["params"]
    assert "evidence" in cli("calibrate", "--show").stdout.lower()


# ------------------------------------------------------------------ reading

@covers("loci eval")
def test_eval_scores_generated_questions(home):
    out = json.loads(cli("eval", "--json").stdout)
    assert out["scopes"] == 2
    families = {f["family"]: f for f in out["families"]}
    assert families["deictic_cwd"]["n"] > 0
    assert all(0 <= f["correct"] <= f["n"] for f in families.values())


@covers("loci uses")
def test_uses_finds_the_project_that_imports_another(home):
    out = json.loads(cli("uses", "--json").stdout)
    assert [(e["from"], e["to"]) for e in out] == [("webby", "gizmo")]
    assert {(u["how"], u["path"], u["line"]) for u in out[0]["uses"]} == {
        ("dependency", "pyproject.toml", 3), ("import", "webby/server.py", 1)}


@covers("loci doctor")
def test_doctor_reports_every_scope(home):
    res = cli("doctor", "--json", code=None)
    assert res.exit_code in (0, 1)            # 1: gaps
    gaps = {(p["scope"], p["problem"]): p["fix"] for p in json.loads(res.stdout)}
    assert gaps[("gizmo", "no_graph")] == "loci graphs --scope gizmo" and ("webby", "no_graph") in gaps
    assert not [k for k in gaps if k[1] in ("stale", "no_index", "no_vectors")]


# ------------------------------------------------------------------ groups

@covers("loci groups")
def test_groups_lists_each_group_with_its_mode_and_count(home):
    cli("group", "add", "gizmo", "tools")
    rows = {r["group"]: r for r in json.loads(cli("groups", "--json").stdout)}
    assert rows["tools"]["count"] == 1 and rows["tools"]["mode"] == "soft"
    assert "tools" in cli("groups").stdout


@covers("loci groups infer")
def test_groups_infer_labels_each_scope_and_writes_the_owner(home):
    reg = json.loads((home / "scopes.json").read_text())
    for s in reg["scopes"]:
        s["owner"] = "someone-else"
    (home / "scopes.json").write_text(json.dumps(reg))
    res = cli("groups", "infer")
    owners = {s["name"]: s["owner"] for s in json.loads((home / "scopes.json").read_text())["scopes"]}
    assert set(owners) == {"gizmo", "webby"} and "someone-else" not in owners.values()
    for name, owner in owners.items():
        assert re.search(rf"^{name}\s+{re.escape(owner)}", res.stdout, re.M)


@covers("loci group set")
def test_group_set_hard_confines_routing_to_the_group(home):
    cli("group", "add", "webby", "web")
    res = cli("group", "set", "web", "--mode", "hard")
    assert "web: hard" in res.stdout
    assert json.loads((home / "groups.json").read_text())
    assert route_json(GIZMO_Q, "--group", "web")["scopes"] in ([], ["webby"])
    assert cli("group", "set", "web", "--mode", "bogus", code=None).exit_code == 2


@covers("loci group add", "loci group rm")
def test_group_add_and_rm_edit_membership_in_groups_json(home):
    cli("group", "add", "gizmo", "tools")
    assert "tools" in scopes_json(home)["gizmo"]["groups"]
    assert "tools" in (home / "groups.json").read_text()
    res = cli("group", "rm", "gizmo", "tools")
    assert "no longer in tools" in res.stdout
    assert "tools" not in scopes_json(home)["gizmo"]["groups"]
    assert cli("group", "rm", "nope", "tools", code=None).exit_code != 0


# ------------------------------------------------------------------ front ends

@covers("loci mcp")
def test_mcp_serves_the_three_tools_over_stdio(lexical_home, tmp_path):
    from test_mcp import talk, text_of

    async def body(session):
        return await session.list_tools(), await session.call_tool("ask", {"question": GIZMO_Q})

    tools, answer = talk(lexical_home, tmp_path, body)
    assert sorted(t.name for t in tools.tools) == ["ask", "doctor", "scopes"]
    assert json.loads(text_of(answer))["scopes"][0] == "gizmo"


@covers("loci server status", "loci server stop")
def test_server_status_and_stop_without_an_engine(home):
    out = json.loads(cli("server", "status", "--json").stdout)
    assert out.get("running") is False
    assert "no warm engine serves" in cli("server", "stop").stdout
    assert not (home / "run").exists() or not any((home / "run").iterdir())


@covers("loci skill install")
def test_skill_install_writes_the_skill_file(tmp_path, home):
    cli("skill", "install", "--dir", str(tmp_path / "skills" / "loci"))
    skill = tmp_path / "skills" / "loci" / "SKILL.md"
    assert skill.is_file() and "loci ask" in skill.read_text()


@covers("loci export")
def test_export_writes_one_bundle_per_scope_with_its_checksums(home, tmp_path):
    import hashlib

    res = cli("export", "gizmo", "--to", str(tmp_path / "out"))
    assert "gizmo:" in res.stdout
    folder = tmp_path / "out" / "gizmo"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["scope"] == "gizmo" and manifest["embedding"]["model"] == "fake-model"
    for f in manifest["files"]:
        assert hashlib.sha256((folder / f["path"]).read_bytes()).hexdigest() == f["sha256"]
    assert not (tmp_path / "out" / "webby").exists()
    cli("export", "--to", str(tmp_path / "all"))
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["gizmo", "webby"]


@covers("loci push", "loci pull")
def test_push_then_pull_into_an_empty_home_answers_there(home, tmp_path, monkeypatch):
    store = tmp_path / "store"
    assert "pushed 2 bundle(s)" in cli("push", str(store)).stdout
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "other"))
    res = cli("pull", f"file://{store}", "--no-calibrate")
    assert "pulled 2 scope(s)" in res.stdout
    assert set(scopes_json(tmp_path / "other")) == {"gizmo", "webby"}
    assert route_json(GIZMO_Q)["scopes"][0] == "gizmo"
    assert "0 unchanged" not in cli("pull", str(store), "--no-calibrate").stdout   # nothing moves twice


@covers("loci hook install", "loci hook status", "loci hook uninstall")
def test_hook_install_status_and_uninstall(home, tmp_path):
    fresh = own_repo(tmp_path)
    cli("add", str(fresh))
    hooks = fresh / ".git" / "hooks"
    (hooks / "post-merge").write_text("#!/bin/sh\necho mine\n")
    (hooks / "post-merge").chmod(0o755)
    res = cli("hook", "install", str(fresh))
    assert "hooks.log" in res.stdout
    for name in ("post-commit", "post-merge", "post-checkout"):
        assert "loci" in (hooks / name).read_text() and os.access(hooks / name, os.X_OK)
    assert re.search(r"post-commit\s+loci", cli("hook", "status", str(fresh)).stdout)
    cli("hook", "uninstall", str(fresh))
    assert not (hooks / "post-commit").exists()
    assert (hooks / "post-merge").read_text() == "#!/bin/sh\necho mine\n"
    assert not re.search(r"post-commit\s+loci", cli("hook", "status", str(fresh)).stdout)


# ------------------------------------------------------------------ doit

def dodo(*args: str) -> int:
    """`python -m loci.dodo ARGS`, in this process (the module's main is what `-m` runs)."""
    from loci.dodo import main

    return main(list(args))


@covers("python -m loci.dodo")
def test_python_m_loci_dodo_is_loci_update(lexical_home, tmp_path):
    fresh = own_repo(tmp_path)
    cli("add", str(fresh))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "loci.dodo"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "\n  fresh: 2 chunks" in out.stdout
    assert (lexical_home / "query" / "fresh.sqlite").is_file()
    assert route_json("how does the turbine vortex anemometer spin?")["scopes"] == ["fresh"]


@covers("python -m loci.dodo index:")
def test_python_m_loci_dodo_index_rebuilds_one_scope_and_its_routing(home, tmp_path, capsys):
    fresh = own_repo(tmp_path)
    cli("add", str(fresh))
    assert dodo("index:fresh") == 0
    assert (home / "query" / "fresh.sqlite").is_file()
    assert route_json("how does the turbine vortex anemometer spin?")["scopes"] == ["fresh"]


@covers("python -m loci.dodo list", "python -m loci.dodo info", "python -m loci.dodo forget")
def test_python_m_loci_dodo_list_info_and_forget_are_doits(home, capsys):
    assert dodo("list") == 0
    listed = capsys.readouterr().out
    assert {"scan", "routing", "index", "calibrate"} <= set(listed.split())
    assert dodo("info", "index:gizmo") == 0
    assert "index:gizmo" in capsys.readouterr().out
    assert not dodo("forget", "index:gizmo")
    assert "forgetting index:gizmo" in capsys.readouterr().out


@covers("python -m loci.dodo bundle:")
def test_python_m_loci_dodo_bundle_writes_the_scopes_bundle_under_the_home(home):
    assert dodo("bundle:webby") == 0
    manifest = json.loads((home / "bundles" / "webby" / "manifest.json").read_text())
    assert manifest["scope"] == "webby"


@covers("loci dodo-path", "doit -f $(loci dodo-path)", "doit")
def test_plain_doit_and_doit_f_dodo_path_load_the_same_tasks(lexical_home):
    path = cli("dodo-path").stdout.strip()
    assert Path(path).is_file() and Path(path).name == "dodo.py" and "loci" in Path(path).parts
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    packaged = subprocess.run([sys.executable, "-m", "doit", "-f", path, "list"], capture_output=True, text=True,
                              env=env, timeout=120)
    checkout = subprocess.run([sys.executable, "-m", "doit", "list"], capture_output=True, text=True, cwd=ROOT,
                              env=env, timeout=120)
    assert packaged.returncode == 0 and checkout.returncode == 0, packaged.stderr + checkout.stderr
    assert "routing" in packaged.stdout.split() and packaged.stdout == checkout.stdout
