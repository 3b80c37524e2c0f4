"""Where each ranker puts the answer inside the right project: the passage-ranking diagnostic.

    python bench/passage_ranks.py [--home $HOME_22] [--questions FILE] [--family paraphrase ...]

For every labelled question with one gold scope, searches only that scope (as `ask --scope`
does, but with the question's own gate) and prints the rank of the first passage holding the
answer under each ranker alone (words: BM25, character n-grams; meaning: the vectors' cosine
over every passage, and the multilingual encoder's ranking of the prose when the home has it)
and under what `ask` returns; and how many any one ranker answers, the best chosen per question
afterwards (what the rankers reach on their own; a fusion may still find more). A rank of 20 or more prints as "-".
It separates what ranking can still win from what no ranker sees.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.folds import fold_of  # noqa: E402
from loci.query import scoring  # noqa: E402
from loci.query.ask import open_session, search_block  # noqa: E402
from loci.query.question import Plan  # noqa: E402
from loci.query.router import question_tokens  # noqa: E402

DEEP = 20


def answer_rows(lex, question: dict, scope: str) -> set[int]:
    """Rows of the scope's passages that hold the answer (the scorer's own rule)."""
    ev = [e for e in (scoring.parse_evidence(x) for x in question.get("evidence") or ()) if e.scope == scope]
    terms = list(question.get("answer_terms") or ())
    need_all = question["mode"] == "one"
    n = len(lex.hashes())
    rows = lex.chunks(list(range(n)))
    out = set()
    for i, row in rows.items():
        item = {"text": row["text"], "source": row["path"], "line": int(row["line"])}
        if scoring.hit_ranks({"episodes": [item]}, ev, terms, need_all, 1)[0] is not None:
            out.add(i)
    return out


def first_rank(order, good: set[int]) -> int | None:
    for r, i in enumerate(order[:DEEP]):
        if i in good:
            return r
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", help="labelled questions (default: the shared folder's dev-questions.jsonl)")
    ap.add_argument("--family", nargs="*", default=None, help="only these families")
    inputs.add_shared(ap)
    inputs.add_home(ap)
    args = ap.parse_args(argv)
    questions = scoring.load_questions(inputs.questions_file(args.questions, args.shared))
    inputs.use_home(inputs.home_dir(args.home))
    import numpy as np

    session = open_session(keep_full_index=True)
    sem = session.semantic()
    qs = [q for q in questions
          if q["mode"] == "one" and len(q["gold_scopes"]) == 1
          and (args.family is None or q["family"] in args.family)]
    fmt = lambda r: "-" if r is None else str(r)  # noqa: E731
    multi = session.multilingual()
    tally = {k: 0 for k in ("bm25", "grams", "sem", "ml", "ask")}
    ceiling = 0
    print(f"{'id':<44} fold  bm25 grams  sem    ml  ask  (answer rows)")
    for q in qs:
        scope = q["gold_scopes"][0]
        lex = session.lexical(scope)
        if lex is None:
            continue
        good = answer_rows(lex, q, scope)
        toks = question_tokens(q["question"], False)
        ranks = {}
        for name, scores in (("bm25", lex.bm25_scores(toks)), ("grams", lex.gram_scores(q["question"]))):
            order = sorted(scores or {}, key=lambda i: -scores[i])
            ranks[name] = first_rank(order, good)
        if sem is not None:
            vectors = sem.vectors(scope, lex)
            full = (vectors.passages(lex.hashes, sem.window_chance).scores(sem.qvec(q["question"]))
                    if vectors is not None else np.zeros(0))
            ranks["sem"] = first_rank(list(np.argsort(-full, kind="stable")), good)
        if multi is not None:
            ranks["ml"] = first_rank([row for row, _ in multi.passages(q["question"], scope) or ()], good)
        block = search_block(session, scope, q["question"], Plan(k=DEEP, prefer_project_docs=bool(q.get("cwd"))),
                             semantic=sem)
        rows = {(r["path"], int(r["line"])): i for i, r in lex.chunks(sorted(good)).items()}
        ranks["ask"] = next((r for r, e in enumerate(block.episodes) if (e.source, e.line) in rows), None)
        for k, r in ranks.items():
            tally[k] += r is not None and r < 5
        ceiling += any(r is not None and r < 5 for k, r in ranks.items() if k != "ask")
        print(f"{q['id']:<44} {fold_of(q):>4} " + " ".join(f"{fmt(ranks.get(k)):>5}" for k in tally)
              + f"  ({len(good)})")
    print(f"\nanswer in the first five, of {len(qs)}: " + ", ".join(f"{k} {v}" for k, v in tally.items())
          + f"; any one ranker alone, the best chosen afterwards: {ceiling}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
