"""The fixed two-fold split of the development corpus by repository.

Every constant tuned on the labelled questions is chosen on fold ``A``'s questions and
reported on fold ``B``'s (and on all). A question belongs to the fold of its first gold
scope; a question with no gold scope (abstentions) to the fold its id hashes to.
The split mixes languages and domains on both sides: two web frameworks (flask | starlette),
CLI libraries (click, docopt, cli | commander.js), Go (cli | viper), Rust (fd | walkdir),
JavaScript (chalk | slugify, commander.js, javascript-algorithms), prose (| awesome).
"""
from __future__ import annotations

import zlib
from typing import Iterable, Mapping

FOLD_A = frozenset({"click", "flask", "requests", "sqlite-utils", "attrs", "black", "docopt", "jinja",
                    "chalk", "cli", "fd"})
FOLD_B = frozenset({"doit", "rank_bm25", "slugify", "walkdir", "awesome", "commander.js",
                    "javascript-algorithms", "pluggy", "starlette", "tqdm", "viper"})
TUNED = "A"


def fold_of(question: Mapping) -> str:
    gold = list(question.get("gold_scopes") or ())
    if gold:
        return "A" if gold[0] in FOLD_A else "B"
    return "AB"[zlib.crc32(str(question["id"]).encode()) % 2]


def split(questions: Iterable[Mapping]) -> dict[str, list[Mapping]]:
    """``{"all": [...], "A": [...], "B": [...]}`` in the input order."""
    out: dict[str, list[Mapping]] = {"all": [], "A": [], "B": []}
    for q in questions:
        out["all"].append(q)
        out[fold_of(q)].append(q)
    return out


def score_folds(questions: Iterable[Mapping], results: Mapping[str, Mapping | None]) -> dict:
    """``{"all": Report, "A": Report, "B": Report}``: the same results scored on every fold."""
    from loci.query.scoring import score

    return {fold: score(qs, {q["id"]: results.get(q["id"]) for q in qs})
            for fold, qs in split(questions).items()}
