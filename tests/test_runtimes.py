"""Declared runtime versions as facts: what a range admits, what a question asks, the set it answers."""
import json

import pytest
from typer.testing import CliRunner

from conftest import setup_home
from loci.front.cli import app
from loci.kernel.runtimes import admitted, asked_tokens, runtime_tokens
from loci_pipeline.facts import scope_facts


@pytest.mark.parametrize("spec, admits, refuses", [
    (">=3.9", [(3, 9), (3, 13)], [(3, 8), (2, 7)]),
    (">=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*, !=3.4.*, !=3.5.*, !=3.6.*", [(2, 7), (3, 7), (3, 9)], [(3, 4), (2, 6)]),
    ("~=3.8", [(3, 8), (3, 12)], [(3, 7)]),
    (">3.8", [(3, 9)], [(3, 8)]),
    (">3.8.1", [(3, 8), (3, 9)], [(3, 7)]),
    (">=3.8,<3.11", [(3, 8), (3, 10)], [(3, 11), (3, 7)]),
])
def test_a_python_range_admits_the_lines_some_release_of_which_satisfies_it(spec, admits, refuses):
    lines = admitted("python", spec)
    assert all(line in lines for line in admits) and not any(line in lines for line in refuses)


@pytest.mark.parametrize("spec, admits, refuses", [
    (">=20", [(20,), (24,)], [(18,)]),
    (">= 22.22", [(22,), (23,)], [(20,)]),
    ("^20.19.0 || ^22.12.0 || >=23", [(20,), (22,), (30,)], [(21,), (18,)]),
    ("14 - 18", [(14,), (18,)], [(13,), (19,)]),
    (">=12 <16", [(12,), (15,)], [(16,)]),
])
def test_a_node_range_admits_the_majors_some_release_of_which_satisfies_it(spec, admits, refuses):
    lines = admitted("node", spec)
    assert all(line in lines for line in admits) and not any(line in lines for line in refuses)


def test_an_unreadable_range_admits_nothing_rather_than_everything():
    assert admitted("python", "banana") == [] and admitted("node", ">=lts") == []


def test_a_range_gives_each_admitted_line_and_its_lowest():
    tokens = runtime_tokens("node", admitted("node", "^20.19.0 || >=23"))
    assert "node-20" in tokens and "node-23" in tokens and "node-21" not in tokens
    assert [t for t in tokens if "-min-" in t] == ["node-min-20"]


def test_a_question_asks_for_the_line_it_names_or_every_lowest_from_it_on():
    assert asked_tokens("Which of my projects still support Python 3.9?") == ["python-3.9"]
    upward = asked_tokens("Which of my projects need Node.js 20 or newer?")
    assert "node-min-20" in upward and "node-min-24" in upward and "node-min-18" not in upward
    assert "node-min-22" in asked_tokens("which require at least node 22?")
    assert "python-min-3.12" in asked_tokens("which need Python 3.10+?")
    assert asked_tokens("Is Python 3 supported?") == [] and asked_tokens("which use py.typed?") == []


def test_the_declared_ranges_are_facts_cited_at_their_line(tmp_path):
    for rel, text in {"pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.10"\n',
                      "x.py": "", "web/package.json": "{}"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    facts = {(f.kind, f.value): f for f in scope_facts(tmp_path, ["pyproject.toml", "web/package.json", "x.py"])}
    python = facts[("runtime", "python >=3.10")]
    assert (python.source, python.line) == ("pyproject.toml", 3)
    assert "python-3.10" in python.tokens() and "python-3.9" not in python.tokens()
    assert "python-min-3.10" in python.tokens()


def test_the_node_range_is_cited_at_the_engines_entry_not_an_earlier_node_key(tmp_path):
    (tmp_path / "package.json").write_text('{\n  "name": "x",\n  "exports": {"node": "./a.js"},\n'
                                           '  "engines": {\n    "node": ">=18"\n  }\n}\n')
    (tmp_path / "a.js").write_text("")
    node = [f for f in scope_facts(tmp_path, ["a.js", "package.json"]) if f.kind == "runtime"]
    assert [(f.value, f.line) for f in node] == [("node >=18", 5)] and "node-min-18" in node[0].tokens()


def test_classifiers_speak_for_a_manifest_without_a_range(tmp_path):
    (tmp_path / "setup.py").write_text('setup(\n    name="x",\n    classifiers=[\n'
                                       '        "Programming Language :: Python :: 3.8",\n'
                                       '        "Programming Language :: Python :: 3.9",\n    ],\n)\n')
    facts = [f for f in scope_facts(tmp_path, ["setup.py"]) if f.kind == "runtime"]
    assert len(facts) == 1 and (facts[0].source, facts[0].line) == ("setup.py", 4)
    assert {"python-3.8", "python-3.9", "python-min-3.8"} <= set(facts[0].tokens())
    assert "python-3.10" not in facts[0].tokens()


def test_which_projects_need_node_20_or_newer_are_those_whose_range_starts_there(tmp_path, loci_home):
    def pkg(name, engines):
        return {"package.json": json.dumps({"name": name, **({"engines": {"node": engines}} if engines else {})},
                                           indent=2) + "\n",
                "index.js": "export function run() {\n  return 1;\n}\n"}
    setup_home(tmp_path / "code", {"newer": pkg("newer", ">=20"), "split": pkg("split", "^20.19.0 || >=22"),
                                   "older": pkg("older", ">=14"), "silent": pkg("silent", None)})
    res = CliRunner().invoke(app, ["route", "--json", "--no-cwd", "Which of my projects need Node.js 20 or newer?"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["outcome"] == "enumerated" and sorted(out["scopes"]) == ["newer", "split"]
    for member in out["members"]:
        assert member["facts"][0]["source"] == "package.json" and member["facts"][0]["kind"] == "runtime"
