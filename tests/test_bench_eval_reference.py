"""bench/eval_reference.py: the reference's build steps and questions through its CLI, scored as
bench/eval_folds.py scores loci. A fake reference ``loci`` (a script printing the reference's
JSON shapes and logging its argv) stands in for loci-mem."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import eval_reference

FAKE = r'''#!{python}
import json, os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("loci 0.6.0"); raise SystemExit(0)
with open(os.environ["FAKE_REF_LOG"], "a") as fh:
    fh.write(json.dumps(args) + "\n")
if args[0] not in ("route", "ask"):
    raise SystemExit(0)
question = args[-1]
if "weather" in question:
    routing = {{"abstain": True, "abstain_reason": "nothing matches", "selected": [], "detail": {{}}}}
else:
    routing = {{"abstain": False, "enumerative": False, "selected": ["s1"], "candidates": ["s1"],
               "detail": {{"s1": {{"name": "alpha", "score": 0.9}}}}}}
if args[0] == "route":
    print(json.dumps(routing)); raise SystemExit(0)
scopes = [] if routing["abstain"] else [{{"name": "alpha", "scope_id": "s1", "structure": [],
    "episodes": [{{"text": "def frobnicate(widget):\n    return widget.spin()", "source": "code:alpha.py",
                  "kind": "code", "score": 1.0}}]}}]
print(json.dumps({{"routing": routing, "scopes": scopes}}))
'''


@pytest.fixture
def fake_reference(tmp_path, monkeypatch):
    """A venv-like folder whose ``loci`` answers as the reference does; the log of its calls."""
    bin_dir = tmp_path / "ref-venv" / "bin"
    bin_dir.mkdir(parents=True)
    exe = bin_dir / "loci"
    exe.write_text(FAKE.format(python=sys.executable))
    exe.chmod(0o755)
    (bin_dir / "graphify").write_text("")
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_REF_LOG", str(log))
    return tmp_path / "ref-venv", log


@pytest.fixture
def checkouts(tmp_path):
    root = tmp_path / "checkouts" / "alpha"
    root.mkdir(parents=True)
    (root / "alpha.py").write_text("import os\n\n\ndef frobnicate(widget):\n    return widget.spin()\n")
    return tmp_path / "checkouts"


def _questions(tmp_path) -> Path:
    qs = [{"id": "q1", "family": "named", "question": "how does alpha frobnicate a widget", "cwd": None,
           "gold_scopes": ["alpha"], "mode": "one", "evidence": ["alpha:alpha.py:4"], "answer_terms": ["spin"]},
          {"id": "q2", "family": "deictic_cwd", "question": "how do we frobnicate here", "cwd": "alpha",
           "gold_scopes": ["alpha"], "mode": "one", "answer_terms": ["frobnicate"]},
          {"id": "q3", "family": "nonsense", "question": "what is the weather on mars", "cwd": None,
           "gold_scopes": [], "mode": "abstain"}]
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs))
    return path


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_builds_the_reference_home_with_its_bench_build_steps(tmp_path, fake_reference, checkouts):
    venv, log = fake_reference
    rc = eval_reference.main(["--questions", str(_questions(tmp_path)), "--checkouts", str(checkouts),
                              "--work", str(tmp_path / "work"), "--ref-venv", str(venv)])
    assert rc == 0
    build = [c for c in _calls(log) if c[0] not in ("route", "ask")]
    assert build == [["scan", str(checkouts.resolve())], ["graphs"], ["index"], ["calibrate"]]


def test_asks_a_question_from_inside_a_project_with_its_checkout_as_cwd(tmp_path, fake_reference, checkouts):
    venv, log = fake_reference
    eval_reference.main(["--questions", str(_questions(tmp_path)), "--checkouts", str(checkouts),
                         "--work", str(tmp_path / "work"), "--ref-venv", str(venv), "--no-build"])
    asked = {(c[0], c[-1]): c for c in _calls(log)}
    here = asked[("ask", "how do we frobnicate here")]
    assert here[here.index("--cwd") + 1] == str(checkouts.resolve() / "alpha")
    assert "--fast" in here and here[here.index("-k") + 1] == "5"
    assert "--no-cwd" in asked[("route", "what is the weather on mars")]
    assert not [c for c in _calls(log) if c[0] not in ("route", "ask")]   # --no-build: no build step


def test_scores_the_references_answers_in_the_eval_folds_table(tmp_path, fake_reference, checkouts, capsys):
    venv, _ = fake_reference
    out = tmp_path / "ref.json"
    eval_reference.main(["--questions", str(_questions(tmp_path)), "--checkouts", str(checkouts),
                         "--work", str(tmp_path / "work"), "--ref-venv", str(venv), "--json", str(out)])
    printed = capsys.readouterr().out
    assert "| **all** | 3 | 100% | – | 100% | 100% | 100% | 100% | 100% |" in printed
    saved = json.loads(out.read_text())
    assert saved["results"]["q1"]["blocks"][0]["episodes"][0] == {
        "text": "def frobnicate(widget):\n    return widget.spin()", "source": "alpha.py", "line": 4,
        "kind": "code", "score": 1.0}
    assert saved["results"]["q3"]["outcome"] == "abstained"
    assert saved["routes"]["q1"]["scopes"] == ["alpha"]
    assert saved["reports"]["all"]["overall"]["top1"] == 1.0
