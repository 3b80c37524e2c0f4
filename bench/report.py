"""bench/RESULTS.md: absolute figures for both tools side by side, and the
ratio loci / reference, since the machines are noisy. What ``bench/run.py`` writes sits between
two markers; the text around them (sections written by hand or by other scripts) is kept."""
from __future__ import annotations

from pathlib import Path

from bench.runner import StepResult, SynthRun, ToolRun
from loci.query.scoring import COLUMNS, fmt_pct, render_markdown

A, B = "loci", "reference"


def secs(x: float | None) -> str:
    if x is None:
        return "–"
    if x < 0.01:
        return f"{x * 1000:.2f} ms"
    return f"{x:.3f} s" if x < 1 else f"{x:.1f} s"


def mb(kb: int | None) -> str:
    return "–" if not kb else f"{kb / 1024:.0f} MB"


def size(n: int | None) -> str:
    if n is None:
        return "–"
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


def _step_cell(s: StepResult | None, skipped: str | None = None) -> str:
    if s is None:
        return f"not run ({skipped})" if skipped else "–"
    cell = f"{secs(s.wall_s)} / {mb(s.peak_rss_kb)}"
    return cell if s.ok else f"{cell} **failed**"


def _row(name: str, cells: list[str], rat: str) -> str:
    return f"| {name} | " + " | ".join(cells) + f" | {rat} |"


def _table(head: list[str]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]


def _build_rows(runs: dict[str, ToolRun]) -> list[str]:
    a, b = runs.get(A), runs.get(B)
    labels = [r.label if r else k for k, r in ((A, a), (B, b))]
    lines = _table(["build (wall / peak RSS)", *labels, "ratio (time)"])

    def step(run, phase, name):
        return getattr(run, phase).get(name) if run else None

    def wall(s):
        return s.wall_s if s and s.ok else None

    for name in ("scan", "graphs", "index", "embed", "calibrate"):
        sa, sb = step(a, "cold", name), step(b, "cold", name)
        reasons = [r.skipped.get(name) if r else None for r in (a, b)]
        if sa is None and sb is None and not any(reasons):
            continue
        lines.append(_row(f"cold `{name}`", [_step_cell(sa, reasons[0]), _step_cell(sb, reasons[1])],
                          ratio(wall(sa), wall(sb))))
    bare = [sum(s.wall_s for s in r.prose_only.values()) if r and r.prose_only
            and all(s.ok for s in r.prose_only.values()) else None for r in (a, b)]
    if any(x is not None for x in bare):
        lines.append(_row("cold `scan` + `index`, no graphs (own home)",
                          [secs(x) if x is not None else "–" for x in bare], ratio(*bare)))
    tot = [sum(s.wall_s for s in r.cold.values()) if r else None for r in (a, b)]
    rss = [max((s.peak_rss_kb or 0 for s in r.cold.values()), default=0) if r else None for r in (a, b)]
    lines.append(_row("**cold total**", [f"**{secs(t)}** / {mb(m)}" for t, m in zip(tot, rss)],
                      ratio(*tot)))
    for phase, title in (("warm", "warm, nothing changed"), ("change", "one file changed")):
        names = list(dict.fromkeys([*(getattr(a, phase) if a else {}), *(getattr(b, phase) if b else {})]))
        for name in names:
            sa, sb = step(a, phase, name), step(b, phase, name)
            cells = []
            for s in (sa, sb):
                c = _step_cell(s)
                if s is not None and s.scopes is not None:
                    c += f" · rebuilt: {', '.join(s.scopes) or 'none'}"
                cells.append(c)
            lines.append(_row(f"{title}: `{name}`", cells, ratio(wall(sa), wall(sb))))
    homes = [r.home_bytes if r else None for r in (a, b)]
    lines.append(_row("home on disk", [size(h) for h in homes], ratio(*homes)))
    litter = [r.repo_bytes if r else None for r in (a, b)]
    lines.append(_row("written inside the repositories", [size(x) for x in litter], "–"))
    return lines


def _inproc_cell(d: dict | None) -> str:
    if not d:
        return "–"
    if "error" in d:
        return f"not available ({d['error'][:80]})"
    return f"{secs(d['p50'])} / {secs(d['p95'])}"


def _inproc(d: dict | None, key: str) -> float | None:
    return d.get(key) if d and "error" not in d else None


def _latency_rows(runs: dict[str, ToolRun]) -> list[str]:
    a, b = runs.get(A), runs.get(B)
    labels = [r.label if r else k for k, r in ((A, a), (B, b))]
    lines = _table(["one-shot CLI (wall)", *labels, "ratio"])
    modes = list(dict.fromkeys([*(a.ask if a else {}), *(b.ask if b else {})]))
    for kind in ("route", *modes):
        la, lb = (((r.route if kind == "route" else r.ask.get(kind)) if r else None) for r in (a, b))
        for p in ("p50", "p95"):
            va, vb = (getattr(x, p) if x else None for x in (la, lb))
            lines.append(_row(f"`{kind}` {p}", [secs(va), secs(vb)], ratio(va, vb)))
        fails = [f"{x.failures}/{x.n}" if x else "–" for x in (la, lb)]
        lines.append(_row(f"`{kind}` failures", fails, "–"))
        peaks = [x.peak_rss_kb if x else None for x in (la, lb)]
        lines.append(_row(f"`{kind}` peak RSS", [mb(p) for p in peaks], ratio(*peaks)))
    ia, ib = (r.inproc if r else None for r in (a, b))
    lines.append(_row("in-process `route` p50 / p95 (the router; loci: no second opinion)",
                      [_inproc_cell(ia), _inproc_cell(ib)],
                      ratio(_inproc(ia, "p50"), _inproc(ib, "p50"))))
    lines.append(_row("in-process index load", [secs(_inproc(ia, "load_s")), secs(_inproc(ib, "load_s"))],
                      ratio(_inproc(ia, "load_s"), _inproc(ib, "load_s"))))
    return lines


def _accuracy_rows(runs: dict[str, ToolRun]) -> list[str]:
    a, b = runs.get(A), runs.get(B)
    labels = [r.label if r else k for k, r in ((A, a), (B, b))]
    lines = _table(["accuracy (all questions)", *labels, "ratio"])
    for title, attr in COLUMNS:
        va, vb = (getattr(r.report.overall, attr) if r and r.report else None for r in (a, b))
        lines.append(_row(title, [fmt_pct(va), fmt_pct(vb)], ratio(va, vb)))
    va, vb = (_hit5_of(r, MEANING_FAMILIES) for r in (a, b))
    lines.append(_row("hit@5, why + paraphrase together", [fmt_pct(va), fmt_pct(vb)], ratio(va, vb)))
    return lines


FOLDS = (("all", "all"), ("A", "fold A (tuned)"), ("B", "fold B (untuned)"))
HEADLINE = {"one": ("top-1", "top1"), "set": ("set F1", "set_f1"), "abstain": ("abstain R", "abstain_recall")}


def _metric(report, family: str | None, attr: str) -> float | None:
    if report is None:
        return None
    m = report.overall if family is None else report.families.get(family)
    return getattr(m, attr) if m is not None else None


def _fold_rows(runs: dict[str, ToolRun]) -> list[str]:
    """Every headline metric per tool on all questions, the tuned fold and the untuned fold,
    with the untuned fold's distance from all questions (in points) for loci."""
    present = [r for r in (runs.get(A), runs.get(B)) if r and r.folds]
    head = ["metric"]
    for r in present:
        head += [f"{r.label}: {title}" for _, title in FOLDS]
        if r.key == A:
            head.append(f"{r.label}: B − all")
    lines = _table(head)
    n_cells = []
    for r in present:
        n_cells += [str(r.folds[f].overall.n) if f in r.folds else "–" for f, _ in FOLDS]
        if r.key == A:
            n_cells.append("")
    lines.append("| questions | " + " | ".join(n_cells) + " |")
    for title, attr in COLUMNS:
        cells = []
        for r in present:
            vals = [_metric(r.folds.get(f), None, attr) for f, _ in FOLDS]
            cells += [fmt_pct(v) for v in vals]
            if r.key == A:
                cells.append("–" if None in (vals[0], vals[2]) else f"{100 * (vals[2] - vals[0]):+.0f}")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return lines


def family_comparison(ours, theirs) -> list[dict]:
    """Per family of ``ours`` (a Report): its headline metric (by question mode) and hit@5 for
    both tools, and whether ours is at or above theirs on each (a missing figure of theirs
    counts as below ours)."""
    modes: dict[str, str] = {}
    for q in ours.questions:
        modes.setdefault(q.family, q.mode)
    rows = []
    for family, mode in sorted(modes.items()):
        for title, attr in (HEADLINE[mode], ("hit@5", "hit5")):
            a, b = _metric(ours, family, attr), _metric(theirs, family, attr)
            if a is None and b is None:
                continue
            ok = b is None or (a is not None and a >= b - 1e-9)
            rows.append({"family": family, "metric": title, "attr": attr, "ours": a, "theirs": b, "ok": ok})
    return rows


def _family_rows(runs: dict[str, ToolRun]) -> list[str]:
    a, b = runs.get(A), runs.get(B)
    if not (a and a.report):
        return []
    label_b = b.label if b else "reference"
    lines = _table(["family", "n (A / B)", "metric", f"{a.label}: all", f"{label_b}: all",
                    f"{a.label}: fold B", f"{label_b}: fold B", "at or above"])
    rows = family_comparison(a.report, b.report if b else None)
    for row in rows:
        fam = row["family"]
        n = " / ".join(str(_metric(a.folds.get(f), fam, "n") or 0) for f in ("A", "B"))
        fold_b = [fmt_pct(_metric(r.folds.get("B") if r else None, fam, row["attr"])) for r in (a, b)]
        lines.append(f"| {fam} | {n} | {row['metric']} | {fmt_pct(row['ours'])} | {fmt_pct(row['theirs'])} | "
                     f"{fold_b[0]} | {fold_b[1]} | {'yes' if row['ok'] else '**no**'} |")
    below = sorted({r["family"] for r in rows if not r["ok"]})
    verdict = "yes" if not below else f"no (below on {', '.join(below)})"
    return [f"Every family at or above the reference (all questions): **{verdict}**.", "", *lines]


MEANING_FAMILIES = ("why", "paraphrase")   # the families semantic recall is for (issue #6's bar)


def _hit5_of(run, families) -> float | None:
    """hit@5 pooled over the questions of ``families`` (not the mean of the family rates)."""
    if not run or not run.report:
        return None
    scored = [q.hit5 for q in run.report.questions if q.family in families and q.hit5 is not None]
    return sum(scored) / len(scored) if scored else None


def _synth_rows(synth: list[SynthRun]) -> list[str]:
    lines = _table(["scopes", "metric", "loci", "reference", "ratio"])
    by = {(s.n_scopes, s.key): s for s in synth}
    for n in sorted({s.n_scopes for s in synth}):
        a, b = by.get((n, A)), by.get((n, B))

        def acc(s, fam, attr):
            return ((s.accuracy or {}).get(fam) or {}).get(attr) if s else None

        def build(s):
            if not s or not s.build or not all(x.ok for x in s.build.values()):
                return None
            return sum(x.wall_s for x in s.build.values())

        rows = [
            ("scan + index", secs(build(a)), secs(build(b)), ratio(build(a), build(b))),
            ("route p50, one-shot CLI", *[secs(s.cli_route.p50 if s and s.cli_route else None) for s in (a, b)],
             ratio(*[s.cli_route.p50 if s and s.cli_route else None for s in (a, b)])),
            ("route p50 / p95, in-process", _inproc_cell(a and a.inproc), _inproc_cell(b and b.inproc),
             ratio(_inproc(a and a.inproc, "p50"), _inproc(b and b.inproc, "p50"))),
            ("index load, in-process", secs(_inproc(a and a.inproc, "load_s")),
             secs(_inproc(b and b.inproc, "load_s")),
             ratio(_inproc(a and a.inproc, "load_s"), _inproc(b and b.inproc, "load_s"))),
            ("top-1, own vocabulary", fmt_pct(acc(a, "synth_vocab", "top1")), fmt_pct(acc(b, "synth_vocab", "top1")),
             ratio(acc(a, "synth_vocab", "top1"), acc(b, "synth_vocab", "top1"))),
            ("top-1, words a broad scope shares", fmt_pct(acc(a, "synth_broad", "top1")),
             fmt_pct(acc(b, "synth_broad", "top1")),
             ratio(acc(a, "synth_broad", "top1"), acc(b, "synth_broad", "top1"))),
            ("routed to the broad scope instead", fmt_pct(a and a.broad_capture), fmt_pct(b and b.broad_capture),
             ratio(a and a.broad_capture, b and b.broad_capture)),
            ("abstain recall, nonsense", fmt_pct(acc(a, "synth_nonsense", "abstain_recall")),
             fmt_pct(acc(b, "synth_nonsense", "abstain_recall")),
             ratio(acc(a, "synth_nonsense", "abstain_recall"), acc(b, "synth_nonsense", "abstain_recall"))),
        ]
        lines += [f"| {n} | {m} | {x} | {y} | {r} |" for m, x, y, r in rows]
    return lines


def render(meta: dict, runs: dict[str, ToolRun], synth: list[SynthRun], extra: str = "") -> str:
    """The generated part of RESULTS.md: the run, then every table it measured (``extra``: more
    sections in markdown, before the notes on reading them)."""
    out = ["## The run (`bench/run.py`)", "",
           "Every table between this section and the end marker comes from the one run described here.",
           "", "| run | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in meta.items()]
    out += ["", "## Build", "", *_build_rows(runs), "",
            "## Query latency", "", *_latency_rows(runs), "",
            "## Accuracy on the development questions", "", *_accuracy_rows(runs), "",
            "## Cross-validated by repository", "",
            "Constants are tuned on fold A's repositories and reported on fold B's (`bench/folds.py`); "
            "a question belongs to the fold of its first gold scope.", "", *_fold_rows(runs), "",
            "### Per family, against the reference", "", *_family_rows(runs), ""]
    for key in (A, B):
        run = runs.get(key)
        if run and run.report:
            out += [f"### {run.label}, per family", "", render_markdown(run.report)]
    if synth:
        out += ["## Synthetic scale bed", "",
                "Tiny generated repositories (made-up words; see `bench/synth.py`); "
                "both tools run `scan` and `index` only (no graphs).", "", *_synth_rows(synth), ""]
    notes = []
    for key in (A, B):
        run = runs.get(key)
        if not run:
            continue
        for phase in ("cold", "warm", "change"):
            for name, s in getattr(run, phase).items():
                if not s.ok:
                    notes.append(f"- {run.label}, {phase} `{name}`: {s.error}")
        if run.errors:
            notes.append(f"- {run.label}: {len(run.errors)} failed queries, first: {run.errors[0]}")
    for s in synth:
        for name, st in s.build.items():
            if not st.ok:
                notes.append(f"- {s.key}, {s.n_scopes}-scope bed `{name}`: {st.error}")
    if notes:
        out += ["## Failures", "", *notes, ""]
    if extra.strip():
        out += [extra.strip(), ""]
    out += ["## How to read it", "",
            "- Cells are wall time / peak RSS of that one command (`/usr/bin/time`). "
            "Ratios are loci ÷ reference: below 1 means loci is faster, smaller or scores lower.",
            "- The reference runs `ask --fast`; its episodes carry no line numbers, so the harness "
            "finds each chunk's first line in the file to score citations by path and line.",
            "- Accuracy scores what `ask` returns (loci: `ask --k 5`; the reference: `ask --fast -k 5`), "
            "for every question; `route` and the other ask modes are timed on an evenly spread sample "
            "(their `failures` cell gives its size).",
            "- hit@5: a gold scope's block has, among its first five episodes or structure results, "
            "one holding every answer term or citing an evidence location (see `loci/scoring.py`).",
            "- \"rebuilt\" names the scopes whose per-scope artifacts under the home were rewritten.",
            "- The reference's `calibrate` exits 1 when its fitted bands overlap, yet saves the "
            "calibration its router then uses; that exit is listed under Failures.", ""]
    return "\n".join(out)


BEGIN = "<!-- bench/run.py writes from here to its end marker: edits in between are lost at its next run -->"
END = "<!-- bench/run.py: end of what it writes -->"
TITLE = "# Benchmark: loci against loci-mem 0.6.0\n\n"
UNSTAMPED = ("The run (`bench/run.py`)", "How to read it")


def stamped(block: str, line: str) -> str:
    """``block`` with ``line`` (commit, date, load) in italics under each of its ``##`` and ``###``
    headings (not the run's own description, nor the notes on reading it)."""
    out = []
    for row in block.splitlines():
        out.append(row)
        if row.startswith(("## ", "### ")) and row.lstrip("#").strip() not in UNSTAMPED:
            out.append(f"_{line}_")
    return "\n".join(out) + "\n"


def scrubbed(text: str, work: Path) -> str:
    """``text`` without this machine's paths: the run's work folder as ``$WORK``, the clone as
    relative paths, the user's home as ``~``."""
    root = Path(__file__).resolve().parents[1]
    for path, shown in ((work, "$WORK"), (root, "."), (Path.home(), "~")):
        for form in dict.fromkeys((str(path), str(Path(path).resolve()))):
            text = text.replace(form + "/", "" if shown == "." else shown + "/").replace(form, shown)
    return text


def merged_results(block: str, old: str | None) -> str:
    """``old`` with what lies between its markers replaced by ``block``; the text around the markers
    (sections by hand or by other scripts) is kept as it is. Without markers, the block goes first,
    under the title, and ``old`` follows it whole."""
    wrapped = f"{BEGIN}\n\n{block.strip()}\n\n{END}"
    if not old:
        return f"{TITLE}{wrapped}\n"
    start, end = old.find(BEGIN), old.find(END)
    if start >= 0 and end > start:
        return old[:start] + wrapped + old[end + len(END):]
    return f"{TITLE}{wrapped}\n\n{old}"
