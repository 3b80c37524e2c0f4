"""The benchmark harness: its pure pieces (run by default) and its quick mode end
to end (about two minutes; ``pytest -m bench``)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is a folder of scripts, not an installed package

from bench.measure import percentile, scopes_touched  # noqa: E402
from bench.reference import LineFinder, to_contract  # noqa: E402
from bench.synth import make_bed  # noqa: E402

REF_ASK = {
    "routing": {"selected": ["rank-bm25"], "abstain": False, "enumerative": False,
                "abstain_reason": None, "candidates": ["rank-bm25", "walkdir"],
                "detail": {"rank-bm25": {"name": "rank_bm25", "score": 7.5},
                           "walkdir": {"name": "walkdir", "score": 0.1}}},
    "scopes": [{"scope_id": "rank-bm25", "name": "rank_bm25",
                "episodes": [{"kind": "doc", "source": "doc:README.md", "text": "use get_top_n here",
                              "score": 0.7},
                             {"kind": "commit", "source": "git:2ed84f5abc", "text": "fix", "score": 0.2}],
                "structure": [{"source": "code", "text": "Graph: x\nNODE BM25 [src=rank_bm25.py loc=L15 c=1]\n"
                                                         "NODE numpy [src= loc= c=2]"}]}],
}


def test_reference_answer_is_translated_to_the_contract():
    out = to_contract(REF_ASK)
    assert out["outcome"] == "routed"
    assert out["scopes"] == ["rank_bm25"]
    assert [c["scope"] for c in out["candidates"]] == ["rank_bm25", "walkdir"]
    block = out["blocks"][0]
    assert block["scope"] == "rank_bm25"
    assert [e["source"] for e in block["episodes"]] == ["README.md", "commit:2ed84f5abc"]
    assert block["structure"] == [{"label": "BM25", "kind": "node", "source_file": "rank_bm25.py",
                                   "line": 15, "relation": None, "score": None}]


def test_reference_abstention_returns_no_scopes():
    routing = {"selected": ["a", "b"], "abstain": True, "abstain_reason": "deictic", "detail": {}}
    out = to_contract(routing)
    assert (out["outcome"], out["scopes"], out["reason"]) == ("abstained", [], "deictic")
    assert "blocks" not in out


def test_line_finder_locates_the_chunk_where_its_following_lines_match(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "doc.md").write_text("intro line here\nother\nintro line here\nsecond line of it\n")
    finder = LineFinder({"r": tmp_path / "r"})
    assert finder.line_of("r", "doc.md", "intro line here\nsecond line of it") == 3
    assert finder.line_of("r", "missing.md", "intro line here") is None


def test_changed_artifacts_map_to_scope_names():
    changed = ["rankers/rank-bm25.lex", "chunks/walkdir.parquet", ".doit.db", "manifest.json"]
    assert scopes_touched(changed, ["rank_bm25", "walkdir", "click"]) == ["rank_bm25", "walkdir"]


def test_the_timed_questions_can_be_only_those_not_in_english():
    from bench.oneshot import questions_asked

    rows = [{"question": "How do I stop waiting after a few seconds?"},
            {"question": "¿Cómo dejo de esperar después de unos segundos?"},
            {"question": "Wie kann ich sehen, wie weit die Verarbeitung ist?", "cwd": "tqdm"},
            {"question": "Comment afficher les fichiers cachés depuis le terminal ?"}]
    assert questions_asked(rows, 10) == [rows[0]["question"], rows[1]["question"], rows[3]["question"]]
    assert questions_asked(rows, 10, foreign=True) == [rows[1]["question"], rows[3]["question"]]


def test_timing_no_question_is_refused_in_one_line(tmp_path, capsys):
    from bench import oneshot

    english = tmp_path / "q.jsonl"
    english.write_text(json.dumps({"id": "a", "question": "How do I stop waiting after a few seconds?"}) + "\n")
    with pytest.raises(SystemExit) as exc:
        oneshot.main(["--questions-file", str(english), "--foreign", "--impl", f"new=.:{tmp_path}"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--foreign" in err


def test_every_bench_script_starts_and_explains_itself():
    """Each script a RESULTS command runs imports and answers --help (one had stopped importing
    after a helper moved; another read its arguments before checking them)."""
    scripts = [p for p in sorted((ROOT / "bench").glob("*.py")) if "__main__" in p.read_text()]
    assert len(scripts) > 20
    for script in scripts:
        got = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, cwd=ROOT,
                             timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})   # as RESULTS runs them
        assert got.returncode in (0, 2) and "usage" in (got.stdout + got.stderr).lower(), (script, got.stderr[-300:])


def test_percentile_interpolates():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([], 50) is None


def test_synthetic_bed_questions_point_at_the_scope_holding_their_words(tmp_path):
    questions = make_bed(tmp_path, 6, overlap=0.3, breadth_skew=0.5, seed=3, n_questions=4)
    repos = sorted(p.name for p in tmp_path.iterdir())
    assert len(repos) == 6
    assert all((tmp_path / r / ".git").is_dir() for r in repos)
    vocab = [q for q in questions if q["family"] == "synth_vocab"]
    assert vocab
    for q in vocab:
        word = q["answer_terms"][0]
        holders = [r for r in repos if word in (tmp_path / r / "README.md").read_text()]
        assert holders == q["gold_scopes"]
    nonsense = [q for q in questions if q["family"] == "synth_nonsense"]
    word = nonsense[0]["question"].split()[3]
    assert not any(word in p.read_text() for p in tmp_path.rglob("*.md"))
    assert {q["family"] for q in questions} == {"synth_vocab", "synth_broad", "synth_nonsense"}


def test_synthetic_bed_rejects_out_of_range_parameters(tmp_path):
    with pytest.raises(ValueError):
        make_bed(tmp_path, 5, overlap=1.5)


def _row(text: str, name: str) -> list[str]:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f"no row {name!r} in RESULTS")


@pytest.mark.bench
def test_quick_run_writes_both_tools_side_by_side(tmp_path):
    out = tmp_path / "RESULTS.md"
    # --force-load: this checks that the run works, not its timings (the machine may be busy)
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--force-load", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    for section in ("## Build", "## Query latency", "## Accuracy on the development questions",
                    "## Synthetic scale bed"):
        assert section in text
    assert "| command | `python bench/run.py --quick" in text
    assert re.search(r"^\| commit \| [0-9a-f]{7}", text, re.M) and "| load average | " in text
    assert "_measured at loci " in text and str(tmp_path) not in text.replace(str(out), "")
    header = _row(text, "build (wall / peak RSS)")
    assert header[1:3] == ["loci", "loci-mem 0.6.0"]
    top1 = _row(text, "top-1")
    assert re.fullmatch(r"\d+%", top1[1]) and re.fullmatch(r"\d+%", top1[2])
    route = _row(text, "`route` p50")
    assert route[1].endswith(" s") and route[2].endswith(" s")


def test_why_and_paraphrase_hit5_is_pooled_over_their_questions():
    from types import SimpleNamespace

    from bench.report import MEANING_FAMILIES, _hit5_of
    from loci.query.scoring import score

    questions = [{"id": f"w{i}", "family": "why", "question": "q", "gold_scopes": ["a"], "mode": "one",
                  "answer_terms": ["needle"]} for i in range(3)]
    questions.append({"id": "p0", "family": "paraphrase", "question": "q", "gold_scopes": ["a"], "mode": "one",
                      "answer_terms": ["needle"]})
    hit = {"outcome": "routed", "scopes": ["a"], "blocks": [{"scope": "a", "episodes": [{"text": "a needle"}]}]}
    miss = {"outcome": "routed", "scopes": ["a"], "blocks": [{"scope": "a", "episodes": [{"text": "hay"}]}]}
    report = score(questions, {"w0": hit, "w1": hit, "w2": hit, "p0": miss})
    assert _hit5_of(SimpleNamespace(report=report), MEANING_FAMILIES) == 0.75  # 3 of 4, not (100% + 0%) / 2
    assert _hit5_of(None, MEANING_FAMILIES) is None


def _q(qid, family, gold, mode="one"):
    return {"id": qid, "family": family, "question": "q", "gold_scopes": gold, "mode": mode}


def test_the_bench_covers_every_repository_of_both_folds():
    from bench.folds import FOLD_A, FOLD_B
    from bench.run import ALL_REPOS, QUICK_REPOS

    assert len(ALL_REPOS) == 22 and set(ALL_REPOS) == FOLD_A | FOLD_B and not FOLD_A & FOLD_B
    assert set(QUICK_REPOS) & FOLD_A and set(QUICK_REPOS) & FOLD_B and len(QUICK_REPOS) <= 3


def test_folds_score_the_same_results_on_each_side_of_the_split():
    from bench.folds import score_folds

    questions = [_q("a1", "vocab", ["click"]), _q("b1", "vocab", ["doit"]), _q("b2", "vocab", ["walkdir"])]
    results = {"a1": {"outcome": "routed", "scopes": ["click"]},
               "b1": {"outcome": "routed", "scopes": ["click"]},
               "b2": {"outcome": "routed", "scopes": ["walkdir"]}}
    folds = score_folds(questions, results)
    assert (folds["all"].overall.n, folds["A"].overall.n, folds["B"].overall.n) == (3, 1, 2)
    assert folds["A"].overall.top1 == 1.0 and folds["B"].overall.top1 == 0.5


def test_family_comparison_flags_each_family_below_the_reference():
    from bench.report import family_comparison
    from loci.query.scoring import score

    questions = [_q("v", "vocab", ["a"]), _q("n", "nonsense", [], "abstain"), _q("e", "enumerative", ["a", "b"], "set")]
    ours = score(questions, {"v": {"outcome": "routed", "scopes": ["a"]},
                             "n": {"outcome": "routed", "scopes": ["a"]},
                             "e": {"outcome": "enumerated", "scopes": ["a", "b"]}})
    theirs = score(questions, {"v": {"outcome": "routed", "scopes": ["b"]},
                               "n": {"outcome": "abstained", "scopes": []},
                               "e": {"outcome": "enumerated", "scopes": ["a"]}})
    rows = {(r["family"], r["metric"]): r["ok"] for r in family_comparison(ours, theirs)}
    assert rows == {("vocab", "top-1"): True, ("nonsense", "abstain R"): False, ("enumerative", "set F1"): True}


def test_footprint_rows_size_each_part_of_a_home_and_count_a_build_s_lines(tmp_path):
    import sys

    from bench.footprint import home_rows, progress_gaps

    (tmp_path / "query").mkdir()
    (tmp_path / "query" / "a.sqlite").write_bytes(b"x" * 10000)
    rows = dict(home_rows(tmp_path, reference=tmp_path))
    assert set(rows) == {"query", "**total**", "reference home"} and rows["reference home"].endswith("(1.00x)")
    gap, lines, wall = progress_gaps([sys.executable, "-c", "import sys; print('a'); print('b', file=sys.stderr)"])
    assert lines == 2 and 0 <= gap <= wall


def test_a_bench_run_rewrites_only_what_lies_between_its_markers():
    from bench.report import BEGIN, END, merged_results

    old = f"# Bench\n\nintro by hand\n\n{BEGIN}\n\n## Build\nold build rows\n\n{END}\n\n## Redaction\nby hand\n"
    merged = merged_results("## Build\nnew build rows\n\n## Query latency\nrows\n", old)
    assert "new build rows" in merged and "old build rows" not in merged
    assert merged.startswith("# Bench\n\nintro by hand\n\n" + BEGIN)
    assert merged.endswith(f"{END}\n\n## Redaction\nby hand\n")
    again = merged_results("## Build\nthird\n", merged)
    assert again.count(BEGIN) == 1 and "new build rows" not in again and "by hand" in again


def test_a_results_file_without_markers_is_kept_whole_below_the_generated_part():
    from bench.report import END, merged_results

    merged = merged_results("## Build\nrows\n", "## Redaction\nby hand\n")
    assert merged.index("rows") < merged.index(END) < merged.index("## Redaction\nby hand")


# ------------------------------------------------------------ a fresh clone runs the bench

MACHINE_PATH = re.compile(r"(?<![\w.<>~$-])/(tmp|work|root|home)/")
PLACEHOLDER = re.compile(r"\$([A-Z][A-Z0-9_]+)")
ENVIRONMENT = {"LOCI_HOME", "LOCI_SHARED", "PYTHONPATH", "PATH"}
SHA = re.compile(r"\b[0-9a-f]{7,40}\b")


def _committed_texts():
    for folder in ("bench", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".json", ".sh", ".txt") and ".cache" not in path.parts:
                yield path


def test_no_file_under_bench_or_docs_names_a_path_of_one_machine():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()[:80]}" for p in _committed_texts()
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if MACHINE_PATH.search(line)]
    assert not found, "\n".join(found)


def _documents():
    return [ROOT / "bench" / "RESULTS.md", *sorted((ROOT / "docs" / "decisions").glob("*.md"))]


def test_every_placeholder_a_document_uses_is_defined_above_its_first_section():
    for doc in _documents():
        text = doc.read_text(encoding="utf-8")
        cut = text.find("\n## ")
        top, rest = (text[:cut], text[cut:]) if cut >= 0 else (text, "")
        defined = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", top, re.M)) | set(PLACEHOLDER.findall(top))
        undefined = set(PLACEHOLDER.findall(rest)) - defined - ENVIRONMENT
        assert not undefined, f"{doc.relative_to(ROOT)} uses {sorted(undefined)} without defining them at the top"


def test_every_table_of_the_results_names_the_commit_it_was_measured_at():
    lines = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|---"):
            continue
        start = next((j for j in range(i - 1, -1, -1) if lines[j].startswith("## ")), 0)
        end = next((j for j in range(i, len(lines)) if not lines[j].startswith("|")), len(lines))
        assert any(SHA.search(x) for x in lines[start:end]), f"table at line {i} names no commit: {lines[i - 1]}"


def test_a_failed_child_ends_the_script_with_its_last_lines():
    from bench.measure import ChildFailed, run_checked

    code = "import sys\nfor i in range(40): print('line', i)\nprint('the real cause', file=sys.stderr)\nsys.exit(3)"
    with pytest.raises(ChildFailed) as caught:
        run_checked([sys.executable, "-c", code])
    message = str(caught.value.code)
    assert caught.value.rc == 3 and isinstance(caught.value, SystemExit)
    assert "exited 3" in message and "the real cause" in message and "line 39" in message
    assert "line 0\n" not in message
    assert run_checked([sys.executable, "-c", "print('fine')"]) == "fine\n"


def test_missing_questions_name_the_option_that_points_at_them(tmp_path, capsys):
    from bench import inputs

    with pytest.raises(SystemExit) as caught:
        inputs.questions_file(None, shared=tmp_path)
    err = capsys.readouterr().err.strip()
    assert caught.value.code == 2 and len(err.splitlines()) == 1
    assert str(tmp_path / "corpus" / "dev-questions.jsonl") in err and "--shared" in err


def test_a_missing_home_names_the_command_that_builds_it(tmp_path, capsys, monkeypatch):
    from bench import inputs

    monkeypatch.delenv("LOCI_HOME", raising=False)
    with pytest.raises(SystemExit):
        inputs.home_dir(tmp_path / "h")
    assert f"python bench/prepare.py --home {tmp_path / 'h'}" in capsys.readouterr().err
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "manifest.json").write_text("{}")
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "h"))
    assert inputs.home_dir() == tmp_path / "h"


def test_the_shared_folder_is_the_option_then_the_environment_then_beside_the_clone(tmp_path, monkeypatch):
    from bench import inputs

    monkeypatch.setenv("LOCI_SHARED", str(tmp_path / "env"))
    assert inputs.shared_dir(tmp_path / "opt") == tmp_path / "opt"
    assert inputs.shared_dir() == tmp_path / "env"
    monkeypatch.delenv("LOCI_SHARED")
    if not any((p / "shared" / "corpus").is_dir() for p in ROOT.parents):
        assert inputs.shared_dir() == ROOT.parent / "shared"


def test_the_run_does_not_start_on_a_machine_loaded_above_its_cores(tmp_path, monkeypatch, capsys):
    import bench.run
    import bench.stamp

    monkeypatch.setattr(bench.stamp, "load", lambda: bench.stamp.cores() + 1.0)
    out = tmp_path / "RESULTS.md"
    assert bench.run.main(["--quick", "--out", str(out)]) == 2
    assert not out.exists() and "--force-load" in capsys.readouterr().err


def test_generated_tables_carry_the_commit_and_no_path_of_the_run(tmp_path):
    from bench.report import scrubbed, stamped

    work = tmp_path / "loci-bench-x"
    block = f"## The run (`bench/run.py`)\n\n## Build\n\n| a |\n|---|\n\n## Failures\n\n- saved to {work}/home/c.json\n"
    out = stamped(scrubbed(block, work), "measured at loci abc1234")
    assert out.count("_measured at loci abc1234_") == 2
    assert "$WORK/home/c.json" in out and str(tmp_path) not in out


def test_the_load_watch_keeps_the_highest_load_it_saw(monkeypatch):
    import bench.stamp

    seen = iter([0.5, 3.5, 1.0])
    monkeypatch.setattr(bench.stamp, "load", lambda: next(seen))
    watch = bench.stamp.LoadWatch(limit=2.0)
    for _ in range(3):
        watch.sample()
    assert watch.peak == 3.5 and watch.over
    assert watch.describe().startswith("0.5 at the start, 3.5 at most, 1.0 at the end")


def test_a_bench_copy_of_a_home_leaves_the_engine_socket_behind(tmp_path):
    import socket

    from bench.dag import copy_home

    home = tmp_path / "home"
    (home / "run").mkdir(parents=True)
    (home / "graphs" / "run").mkdir(parents=True)     # a scope named "run" keeps its graph
    (home / "manifest.json").write_text("{}")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(home / "run" / "engine.sock"))
    try:
        copy_home(home, tmp_path / "copy")
    finally:
        sock.close()
    assert (tmp_path / "copy" / "manifest.json").is_file() and (tmp_path / "copy" / "graphs" / "run").is_dir()
    assert not (tmp_path / "copy" / "run").exists()


def test_a_bench_child_answers_in_its_own_process():
    from bench.inputs import child_env
    from bench.tools import IN_PROCESS

    assert child_env()["LOCI_SERVER"] == "off" and IN_PROCESS == {"LOCI_SERVER": "off"}


def test_the_overview_bench_counts_answers_from_where_a_project_keeps_them(tmp_path, loci_home, capsys):
    from conftest import setup_home

    from bench import overview

    code = setup_home(tmp_path / "code", {
        "gizmo": {"README.md": "# gizmo\n\nGizmo turns spreadsheets into static dashboards you can host.\n\n"
                               "## Usage\n\nRun `gizmo render sheet.xlsx`.\n",
                  "CONTRIBUTING.md": "# Contributing to this project\n\nThis project reviews every patch.\n"}})
    assert overview.main(["--home", str(loci_home), "--corpus", str(code), "--kind", "overview", "usage"]) == 0
    out = capsys.readouterr().out
    n_overview, n_usage = len(overview.QUESTIONS["overview"]), len(overview.QUESTIONS["usage"])
    assert (f"overview: {n_overview} of {n_overview} answers open where the project keeps the answer, "
            f"{n_overview} routed to the project alone") in out
    assert f"usage: {n_usage} of {n_usage}" in out
    assert overview.right_place("overview", "README.md") and not overview.right_place("overview", "CONTRIBUTING.md")


def test_the_overview_bench_refuses_a_corpus_holding_no_scope_in_one_line(tmp_path, loci_home, capsys):
    from conftest import setup_home

    from bench import overview

    setup_home(tmp_path / "code", {"gizmo": {"README.md": "# gizmo\n\nA tool.\n"}})
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(SystemExit) as caught:
        overview.main(["--home", str(loci_home), "--corpus", str(tmp_path / "elsewhere")])
    err = capsys.readouterr().err.strip()
    assert caught.value.code == 2 and len(err.splitlines()) == 1 and "--corpus" in err


def test_first_pass_refuses_a_depth_below_one_in_one_line(tmp_path, capsys):
    from bench import first_pass

    with pytest.raises(SystemExit) as caught:
        first_pass.main(["--depths", "4", "0", "--home", str(tmp_path)])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "--depths" in err and "at least 1" in err


def test_first_pass_refuses_an_against_file_that_is_no_eval_output_in_one_line(tmp_path, capsys):
    from bench import first_pass

    bad = tmp_path / "eval.json"
    bad.write_text('{"reports": {}}')
    with pytest.raises(SystemExit) as caught:
        first_pass.main(["--against", str(bad), "--home", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert caught.value.code == 2 and len(err.splitlines()) == 1 and "eval_folds.py --json" in err


def test_first_pass_on_a_home_without_vectors_names_the_command_that_makes_them(tmp_path, loci_home, capsys):
    from conftest import GIZMO, WEBBY, setup_home

    from bench import first_pass

    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})   # indexed, never embedded
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "family": "vocab", "question": "how do I calibrate a sprocket?",
                                     "cwd": None, "gold_scopes": ["gizmo"], "mode": "one"}) + "\n")
    with pytest.raises(SystemExit) as caught:
        first_pass.main(["--home", str(loci_home), "--questions", str(questions)])
    err = capsys.readouterr().err.strip()
    assert caught.value.code == 2 and len(err.splitlines()) == 1
    assert "no merged vector summary" in err and "loci embed" in err


@pytest.mark.parametrize("which", ["1", "2"])
def test_the_held_out_questions_are_labelled_over_their_sets_packages_alone(which):
    from bench.heldout import SETS
    from loci.query.scoring import load_questions, parse_evidence

    chosen = SETS[which]
    questions = load_questions(chosen.questions)
    assert len(questions) >= 40 and len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert set(q["gold_scopes"]) <= set(chosen.pinned)
        assert bool(q["gold_scopes"]) == (q["mode"] != "abstain") and (len(q["gold_scopes"]) > 1) == (q["mode"] == "set")
        assert q["cwd"] in (None, *q["gold_scopes"])
        assert {parse_evidence(e).scope for e in q["evidence"]} <= set(q["gold_scopes"])
        assert bool(q["answer_terms"]) == (q["mode"] != "abstain")


@pytest.mark.parametrize("which, registry", [("1", "package index"), ("2", "npm registry")])
def test_a_held_out_package_that_cannot_be_downloaded_is_one_line_and_leaves_no_folder(tmp_path, monkeypatch, capsys,
                                                                                      which, registry):
    from bench import heldout

    monkeypatch.setattr(heldout, "download", lambda registry, name, dest, version=None: None)
    with pytest.raises(SystemExit) as exc:
        heldout.main(["lay-out", "--set", which, "--dest", str(tmp_path / "repos")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "==" in err and registry in err
    assert list((tmp_path / "repos").iterdir()) == []


def test_scope_read_refuses_no_pass_and_a_home_without_vectors_in_one_line(tmp_path, loci_home, capsys):
    from conftest import GIZMO, setup_home

    from bench import scope_read

    setup_home(tmp_path / "code", {"gizmo": GIZMO})   # indexed, never embedded
    for argv, said in ((["--passes", "0"], "--passes"), ([], "loci embed")):
        with pytest.raises(SystemExit) as caught:
            scope_read.main(["--home", str(loci_home), *argv])
        err = capsys.readouterr().err.strip()
        assert caught.value.code == 2 and len(err.splitlines()) == 1 and said in err


def test_first_pass_buckets_count_the_router_and_meaning_right_by_word_strength_and_meaning_lead():
    from bench.first_pass import WORD_EDGES, buckets

    rows = [(0.5, 0.05, True, False), (0.5, 0.01, False, True), (1.0, 0.05, True, True), (2.0, 0.0, True, False)]
    got = buckets(rows)
    assert WORD_EDGES == (0.8, 1.5)
    assert got[("T < 0.8", "lead >= 0.03")] == [1, 1, 0]
    assert got[("T < 0.8", "lead < 0.03")] == [1, 0, 1]
    assert got[("0.8 <= T < 1.5", "lead >= 0.03")] == [1, 1, 1]
    assert got[("T >= 1.5", "lead < 0.03")] == [1, 1, 0]
