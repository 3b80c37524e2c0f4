"""How often the second opinion's first pass puts the right project among the scopes it reads.

    python bench/first_pass.py [--home $HOME] [--questions FILE] [--depths 1 4 8 16 32] [--against EVAL_JSON]

The one-shot second opinion reads the vectors of the scopes a first pass over the merged
per-scope summaries ranks closest (``semantic_read`` of them; whether the question stands out is
judged on the first ``semantic_shortlist``). For every labelled one-scope question asked
without a working directory, prints how many have their gold scope within each depth of that
first pass, and of the ranking the affinity itself gives when every scope's chunk vectors are
read (what a perfect first pass would find). Copies of another scope (``name-001``) are left
out of both rankings, as the live opinion spends no place on them. Reads every scope's vectors
for every question: about 3 minutes for the 431 distinct scopes of the 1,000-scope bed.

``--against`` takes ``bench/eval_folds.py --json`` of the same home and sets the router beside the
affinity: its top-1 on the same questions, and per bucket of the words' strength (the route's
first total) and of the meaning's lead (the closest scope's affinity over the next one's), how
many the router's first and the closest in meaning each get right. Where meaning leads clearly
and the words are weak, a rule "trust meaning there" would pay; docs/decisions/routing.md,
session 27, found no such bucket.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.folds import fold_of  # noqa: E402
from loci.query import scoring  # noqa: E402

COPY = re.compile(r"-\d{3}$")   # the bed's copies of a scope under another name


def ranks(scores: dict[str, float], gold: str) -> int | None:
    """The gold scope's place (0 first) when ``scores`` order the scopes, None when unscored."""
    if gold not in scores:
        return None
    return sum(1 for s, v in scores.items() if v > scores[gold] or (v == scores[gold] and s < gold))


WORD_EDGES = (0.8, 1.5)   # the route's first total: weak, middling, strong words
LEAD_EDGE = 0.03          # the closest scope's affinity this far above the next: meaning leads clearly


def buckets(rows) -> dict[tuple[str, str], list[int]]:
    """(words' first total, meaning's lead, router right, meaning right) per question ->
    {(words bucket, lead bucket): [questions, router right, meaning right]}."""
    lo, hi = WORD_EDGES
    out: dict[tuple[str, str], list[int]] = {}
    for total, lead, router_ok, meaning_ok in rows:
        words = f"T < {lo}" if total < lo else (f"{lo} <= T < {hi}" if total < hi else f"T >= {hi}")
        cell = out.setdefault((words, f"lead >= {LEAD_EDGE}" if lead >= LEAD_EDGE else f"lead < {LEAD_EDGE}"), [0, 0, 0])
        cell[0] += 1
        cell[1] += bool(router_ok)
        cell[2] += bool(meaning_ok)
    return out


def _router_rows(results: dict, qs: list[dict], affinities: dict[str, dict[str, float]]) -> list[tuple]:
    rows = []
    for q in qs:
        got = results.get(q["id"]) or {}
        totals = got.get("scores") or {}
        aff = sorted(affinities[q["id"]].values(), reverse=True)
        router_ok = got.get("outcome") == "routed" and bool(got.get("scopes")) and got["scopes"][0] == q["gold_scopes"][0]
        closest = max(affinities[q["id"]], key=affinities[q["id"]].get) if aff else None
        rows.append((max(totals.values(), default=0.0), aff[0] - aff[1] if len(aff) > 1 else 0.0,
                     router_ok, closest == q["gold_scopes"][0]))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", help="labelled questions (default: the shared folder's dev-questions.jsonl)")
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 4, 8, 16, 32], help="depths to count (default: 1 4 8 16 32)")
    ap.add_argument("--against", metavar="EVAL_JSON", help="bench/eval_folds.py --json of the same home: the router "
                    "beside the affinity, overall and by the words' strength and the meaning's lead")
    inputs.add_shared(ap)
    inputs.add_home(ap)
    args = ap.parse_args(argv)
    if any(d < 1 for d in args.depths):
        ap.error("every --depths value must be at least 1")
    results = None
    if args.against:
        try:
            results = json.loads(Path(args.against).read_text())["results"]
        except (OSError, ValueError, KeyError, TypeError):
            inputs.fail(f"{args.against} is no bench/eval_folds.py --json output", "run bench/eval_folds.py --json FILE on this home")
    questions = scoring.load_questions(inputs.questions_file(args.questions, args.shared))
    inputs.use_home(inputs.home_dir(args.home))

    from loci.query.ask import open_session
    from loci.query.semantic import load_summary, shortlist

    session = open_session()
    sem = session.semantic()
    summary = load_summary(session.layout, sem.model_id) if sem is not None else None
    if summary is None:
        inputs.fail("this home has no merged vector summary", "run `loci embed` (and `loci update`) in it")
    scopes = [s for s in session.indexed() if not COPY.search(s)]
    qs = [q for q in questions if q["mode"] == "one" and not q.get("cwd") and len(q["gold_scopes"]) == 1
          and q["gold_scopes"][0] in scopes]
    found = {(name, fold): [0] * len(args.depths) for name in ("first pass", "affinity") for fold in ("A", "B")}
    affinities = {}
    for q in qs:
        gold = q["gold_scopes"][0]
        first = shortlist(summary, sem.qvec(q["question"]), scopes, len(scopes))
        by_pass = {s: -float(i) for i, s in enumerate(first)}
        by_affinity = affinities[q["id"]] = sem.affinities(q["question"], scopes, session.params.semantic_route_k)
        for name, scores in (("first pass", by_pass), ("affinity", by_affinity)):
            r = ranks(scores, gold)
            for j, depth in enumerate(args.depths):
                found[(name, fold_of(q))][j] += r is not None and r < depth
    n = {f: sum(1 for q in qs if fold_of(q) == f) for f in ("A", "B")}
    print(f"{len(scopes)} scopes (copies left out); {len(qs)} one-scope questions without a working directory"
          f" (fold A {n['A']}, fold B {n['B']}); gold scope within the first ...")
    print("| ranking | fold | " + " | ".join(str(d) for d in args.depths) + " |")
    print("|---|---|" + "---|" * len(args.depths))
    for (name, fold), counts in found.items():
        print(f"| {name} | {fold} | " + " | ".join(str(c) for c in counts) + " |")
    for name in ("first pass", "affinity"):
        both = [a + b for a, b in zip(found[(name, "A")], found[(name, "B")])]
        print(f"| {name} | all | " + " | ".join(str(c) for c in both) + " |")
    if results is not None:
        rows = _router_rows(results, qs, affinities)
        print(f"\nthe router's first right: {sum(r[2] for r in rows)}; the closest in meaning: {sum(r[3] for r in rows)}"
              f" (of {len(rows)})\n")
        print("| words | meaning | questions | router right | meaning right |")
        print("|---|---|---|---|---|")
        for (words, lead), (n_q, r_ok, m_ok) in sorted(buckets(rows).items()):
            print(f"| {words} | {lead} | {n_q} | {r_ok} | {m_ok} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
