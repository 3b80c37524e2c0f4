"""One tool through the benchmark: cold build, queries, warm and one-file-change
rebuilds; and the synthetic scale beds. Every step's failure is recorded as a
value, never raised, so one broken step leaves the rest of the table intact."""
from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.folds import score_folds
from bench.measure import (Measured, changed_files, dir_size, percentile, run_measured,
                           scopes_touched, snapshot)
from bench.synth import broad_capture, make_bed
from bench.tools import Tool, parse_json
from loci.query.scoring import Report, score

# (repository, tracked file, comment prefix) edited for the one-file-change rebuild
CHANGE_TARGETS = (("flask", "src/flask/app.py", "#"), ("walkdir", "src/lib.rs", "//"),
                  ("click", "src/click/core.py", "#"), ("rank_bm25", "rank_bm25.py", "#"))


@dataclass
class StepResult:
    ok: bool
    wall_s: float
    peak_rss_kb: int | None
    error: str | None = None
    scopes: list[str] | None = None     # per-scope artifacts the step rewrote

    @classmethod
    def of(cls, m: Measured, scopes: list[str] | None = None) -> "StepResult":
        return cls(m.ok, m.wall_s, m.peak_rss_kb, None if m.ok else f"exit {m.rc}: {m.error_line()}", scopes)


@dataclass
class Latency:
    p50: float | None
    p95: float | None
    n: int
    failures: int
    peak_rss_kb: int | None

    @classmethod
    def of(cls, runs: list[Measured]) -> "Latency":
        ok = [m.wall_s for m in runs if m.ok]
        rss = [m.peak_rss_kb for m in runs if m.ok and m.peak_rss_kb]
        return cls(percentile(ok, 50), percentile(ok, 95), len(runs), len(runs) - len(ok),
                   max(rss) if rss else None)


@dataclass
class ToolRun:
    key: str
    label: str
    cold: dict[str, StepResult] = field(default_factory=dict)
    prose_only: dict[str, StepResult] = field(default_factory=dict)   # scan + index, no graphs
    skipped: dict[str, str] = field(default_factory=dict)
    warm: dict[str, StepResult] = field(default_factory=dict)
    change: dict[str, StepResult] = field(default_factory=dict)
    change_file: str | None = None
    home_bytes: int = 0
    repo_bytes: int = 0                 # what the tool left inside the repositories
    route: Latency | None = None
    ask: dict[str, Latency] = field(default_factory=dict)     # ask mode label -> latency
    inproc: dict | None = None          # in-process route: load_s, p50, p95 or error
    report: Report | None = None       # all questions
    folds: dict[str, Report] = field(default_factory=dict)   # "all", "A" (tuned), "B" (untuned)
    results: dict[str, dict | None] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("report", "folds", "results")}
        d["accuracy"] = self.report.as_dict() if self.report else None
        d["accuracy_by_fold"] = {k: r.as_dict() for k, r in self.folds.items()}
        return d


def _litter(corpus: Path, repos: list[str]) -> int:
    """Bytes of untracked files the tool wrote inside the repositories."""
    total = 0
    for name in repos:
        root = corpus / name
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored"],
                             cwd=root, capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line[:2] in ("??", "!!"):
                p = root / line[3:].strip().strip('"')
                total += dir_size(p) if p.is_dir() else (p.stat().st_size if p.exists() else 0)
    return total


def edit_one_file(corpus: Path, repos: list[str]) -> str | None:
    """Append a two-line comment block to one tracked source file (long enough to become an
    episode, so a rebuild has one new chunk to store and encode); return ``repo/path``."""
    for repo, rel, comment in CHANGE_TARGETS:
        path = corpus / repo / rel
        if repo in repos and path.exists():
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"\n{comment} bench: a one-file change, appended as a comment block\n"
                         f"{comment} long enough to be kept as an episode of its own.\n")
            return f"{repo}/{rel}"
    return None


def _rebuild(tool: Tool, neutral: Path, scope_names: list[str]) -> dict[str, StepResult]:
    out = {}
    for step in tool.rebuild:
        before = snapshot(tool.home)
        m = tool.run(step.args, neutral)
        touched = scopes_touched(changed_files(before, snapshot(tool.home)), scope_names)
        out[step.name] = StepResult.of(m, touched)
    return out


LATENCY_SAMPLE = 80   # questions also timed through `route` and the other ask modes


def _query(tool: Tool, question: dict, neutral: Path, timed: bool) -> tuple[dict[str, Measured], dict | None]:
    """Ask in the tool's first mode (its answer is scored, as `loci ask` returns it); when
    ``timed``, also route and ask in the other modes, for their latency. Returns the runs by
    kind ("route" or the ask mode's label) and the result in loci's contract."""
    cwd_dir = tool.corpus / question["cwd"] if question.get("cwd") else None
    modes = tool.ask_modes if timed else tool.ask_modes[:1]
    runs = {label: tool.run(tool.query_args("ask", question["question"], cwd_dir, flags), neutral, timeout=300)
            for label, flags in modes}
    if timed:
        runs["route"] = tool.run(tool.query_args("route", question["question"], cwd_dir), neutral, timeout=300)
    first = runs[tool.ask_modes[0][0]]
    ask_obj = parse_json(first.stdout) if first.ok else None
    return runs, (tool.translate(ask_obj) if ask_obj is not None else None)


def bench_tool(tool: Tool, questions: list[dict], repos: list[str], neutral: Path, log=print) -> ToolRun:
    """Cold build, every question through route and ask, then the rebuilds."""
    run = ToolRun(tool.key, tool.label, skipped=dict(tool.skipped))
    tool.home.mkdir(parents=True, exist_ok=True)
    litter_before = _litter(tool.corpus, repos)
    # first, before any graph exists: cold scan + index alone, in a home of its own
    bare = tool.elsewhere(tool.home.parent / "home-no-graphs", tool.corpus)
    bare.home.mkdir(parents=True, exist_ok=True)
    for step in tool.build:
        if step.name in ("scan", "index"):
            log(f"  [{tool.key}] cold {step.name}, no graphs")
            run.prose_only[step.name] = StepResult.of(bare.run(step.args, neutral))
    for step in tool.build:
        log(f"  [{tool.key}] cold {step.name}")
        run.cold[step.name] = StepResult.of(tool.run(step.args, neutral))
    run.home_bytes = dir_size(tool.home)
    run.repo_bytes = _litter(tool.corpus, repos) - litter_before

    timed = {q["id"] for q in spread(questions, LATENCY_SAMPLE)}
    measured: dict[str, list[Measured]] = {"route": [], **{label: [] for label, _ in tool.ask_modes}}
    log(f"  [{tool.key}] {len(questions)} questions through ask ({len(timed)} also through route "
        f"and every ask mode)")
    for q in questions:
        runs, run.results[q["id"]] = _query(tool, q, neutral, q["id"] in timed)
        for kind, m in runs.items():
            measured[kind].append(m)
            if not m.ok:
                run.errors.append(f"{q['id']} {kind}: exit {m.rc}: {m.error_line()}")
    run.route = Latency.of(measured.pop("route"))
    run.ask = {label: Latency.of(ms) for label, ms in measured.items()}
    run.folds = score_folds(questions, run.results)
    run.report = run.folds["all"]
    run.inproc, _ = _in_process(tool, questions, neutral)

    log(f"  [{tool.key}] warm rebuild")
    run.warm = _rebuild(tool, neutral, repos)
    run.change_file = edit_one_file(tool.corpus, repos)
    log(f"  [{tool.key}] one-file change ({run.change_file})")
    run.change = _rebuild(tool, neutral, repos)
    return run


# ------------------------------------------------------------------ synthetic beds

@dataclass
class SynthRun:
    n_scopes: int
    key: str
    build: dict[str, StepResult] = field(default_factory=dict)
    cli_route: Latency | None = None
    inproc: dict | None = None          # load_s, p50, p95, n, or error
    accuracy: dict | None = None        # family -> metrics, from in-process (else CLI) results
    broad_capture: float | None = None
    source: str = ""                    # which results the accuracy came from


def _in_process(tool: Tool, questions: list[dict], neutral: Path) -> tuple[dict, dict]:
    """Time ``route`` inside one process (index loaded once, cwd ignored) with the
    tool's own python; return (latency summary or error, question id -> contract result)."""
    qfile = tool.home.parent / f"{tool.home.name}-route-questions.json"
    qfile.write_text(json.dumps(questions), encoding="utf-8")
    driver = Path(__file__).with_name("route_driver.py")
    m = run_measured([str(tool.python), str(driver), tool.driver_impl, str(qfile)],
                     env=tool.env(), cwd=neutral, timeout=600)
    obj = parse_json(m.stdout) if m.ok else None
    if obj is None or "error" in obj:
        return {"error": obj["error"] if obj else f"exit {m.rc}: {m.error_line()}"}, {}
    lat = obj["latencies"]
    summary = {"load_s": obj["load_s"], "p50": percentile(lat, 50), "p95": percentile(lat, 95), "n": len(lat)}
    return summary, {qid: tool.translate(r) for qid, r in obj["results"].items()}


def spread(items: list, k: int) -> list:
    """``k`` items evenly spaced through ``items`` (all of them when k >= len)."""
    if k >= len(items):
        return list(items)
    return [items[i * len(items) // k] for i in range(k)]


def bench_synth(tool: Tool, home: Path, n_scopes: int, bed: Path, questions: list[dict],
                neutral: Path, cli_sample: int, log=print) -> SynthRun:
    """Build ``tool`` over one bed in ``home``; time routing one-shot and in-process; score it."""
    run = SynthRun(n_scopes, tool.key)
    tool = tool.elsewhere(home, bed)
    tool.home.mkdir(parents=True, exist_ok=True)
    log(f"  [{tool.key}] synthetic bed, {n_scopes} scopes")
    for name, args in (("scan", ("scan", str(bed))), ("index", ("index",))):
        run.build[name] = StepResult.of(tool.run(args, neutral))
    runs, cli_results = [], {}
    sample = spread(questions, cli_sample)
    for q in sample:
        m = tool.run(tool.query_args("route", q["question"], None), neutral, timeout=120)
        runs.append(m)
        obj = parse_json(m.stdout) if m.ok else None
        cli_results[q["id"]] = tool.translate(obj) if obj is not None else None
    run.cli_route = Latency.of(runs)
    run.inproc, results = _in_process(tool, questions, neutral)
    scored, run.source = questions, "in-process"
    if not results:
        results, scored, run.source = cli_results, sample, "one-shot CLI"
    report = score(scored, results)
    run.accuracy = {k: m.as_dict() for k, m in report.families.items()}
    run.accuracy["overall"] = report.overall.as_dict()
    run.broad_capture = broad_capture(scored, results)
    return run


def synth_beds(root: Path, scales: list[int], overlap: float, breadth_skew: float,
               n_questions: int) -> dict[int, tuple[Path, list[dict]]]:
    """One bed per scale, shared by both tools (neither writes inside a bed's repositories
    when graphs are not built)."""
    beds = {}
    for n in scales:
        bed = root / f"bed-{n}"
        beds[n] = (bed, make_bed(bed, n, overlap, breadth_skew, seed=n, n_questions=n_questions))
    return beds
