"""A synthetic scale bed: N tiny git repositories with controllable vocabulary
overlap and breadth skew, and labelled questions for them.

Every word is a made-up CV-syllable word, so no scope is favoured by real
language. Each scope owns ``DISTINCT`` words of its own; ``overlap`` (0..1) is
the share of a further ``DISTINCT`` words drawn from one pool common to all
scopes; ``breadth_skew`` (0..1) makes one broad scope (two from 100 scopes up)
that holds the whole common pool and that share of every other scope's own
words. The broad-scope failure: a question about a narrow scope, in two of its
own words plus two common words it lacks, routed to the broad scope.
"""
from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

DISTINCT = 24
CONSONANTS = "bdfgklmnprtvz"
VOWELS = "aeou"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1"}


def _words(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct made-up words of three or four syllables."""
    seen: set[str] = set()
    out = []
    while len(out) < count:
        n = rng.choice((3, 3, 4))
        word = "".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(n))
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def _prose(rng: random.Random, vocab: list[str], sentences: int) -> str:
    linkers = ("feeds", "wraps", "checks", "stores", "turns into", "waits for", "signs")
    lines = []
    for _ in range(sentences):
        a, b, c = rng.sample(vocab, 3)
        lines.append(f"The {a} {rng.choice(linkers)} the {b} before every {c}.")
    return "\n".join(lines)


def _write_repo(root: Path, name: str, own: list[str], shared: list[str], extra: list[str],
                rng: random.Random) -> None:
    (root / "src").mkdir(parents=True, exist_ok=True)
    vocab = own + shared
    readme = [f"# {name}", "", _prose(rng, vocab, max(8, len(vocab) // 2)), "",
              "## Usage", "", " ".join(f"`{w}`" for w in own), ""]
    (root / "README.md").write_text("\n".join(readme), encoding="utf-8")
    funcs = []
    for i in range(0, min(len(own), 12), 3):
        a, b, c = own[i:i + 3]
        funcs.append(f'def {a}_{b}({c}):\n    """Turn the {c} into a {a} {b}."""\n    return {c}\n')
    (root / "src" / f"{name}.py").write_text("\n\n".join(funcs), encoding="utf-8")
    if extra:
        (root / "docs").mkdir(exist_ok=True)
        chunks = [extra[i:i + 60] for i in range(0, len(extra), 60)]
        body = "\n\n".join(f"## Part {i}\n\n" + _prose(rng, c, len(c) // 2) for i, c in enumerate(chunks)
                           if len(c) >= 3)
        (root / "docs" / "notes.md").write_text(f"# {name} notes\n\n{body}\n", encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    for argv in (["git", "init", "-q", "--template=", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", f"Start {name}: {own[0]} and {own[1]}"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)


def _question(qid: str, family: str, words4: list[str], gold: list[str], mode: str,
              **extra) -> dict:
    a, b, c, d = words4
    return {"id": qid, "family": family,
            "question": f"How does the {a} {b} deal with {c} when the {d} is missing?",
            "cwd": None, "gold_scopes": gold, "mode": mode, "evidence": [],
            "answer_terms": [a] if gold else [], **extra}


def make_bed(dest: str | Path, n_scopes: int, overlap: float = 0.3, breadth_skew: float = 0.0,
             seed: int = 0, n_questions: int = 30) -> list[dict]:
    """Create ``n_scopes`` repositories under ``dest`` and return labelled questions.

    Families: ``synth_vocab`` (four of one scope's own words -> that scope),
    ``synth_broad`` (two own words the broad scope also holds and two common
    words -> the narrow scope; each carries ``broad_scopes``) and
    ``synth_nonsense`` (unused words -> abstain).
    """
    if n_scopes < 3 or not 0 <= overlap <= 1 or not 0 <= breadth_skew <= 1:
        raise ValueError("need n_scopes >= 3 and overlap, breadth_skew in [0, 1]")
    rng = random.Random(seed)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    pool = _words(rng, n_scopes * (DISTINCT + 1) + max(60, n_scopes) + 40)
    names, pool = pool[:n_scopes], pool[n_scopes:]
    own = {n: pool[i * DISTINCT:(i + 1) * DISTINCT] for i, n in enumerate(names)}
    pool = pool[n_scopes * DISTINCT:]
    unused, common = pool[:40], pool[40:]
    n_broad = 0 if breadth_skew == 0 else (1 if n_scopes < 100 else 2)
    broad, narrow = names[:n_broad], names[n_broad:]
    held = round(breadth_skew * DISTINCT)  # own words of each narrow scope a broad scope also holds
    extra = {b: [w for n in narrow for w in own[n][:held]] + common for b in broad}
    n_shared = round(overlap * DISTINCT)
    shared = {n: rng.sample(common, n_shared) for n in names}
    for name in names:
        _write_repo(dest / name, name, own[name], shared[name], extra.get(name, []), rng)

    questions = []
    picks = rng.sample(narrow, min(n_questions, len(narrow)))
    for i, name in enumerate(picks):
        exclusive = own[name][held:]
        if len(exclusive) >= 4:
            questions.append(_question(f"synth-vocab-{i:03d}", "synth_vocab",
                                       rng.sample(exclusive, 4), [name], "one"))
        if broad and held >= 2:
            a, c = rng.sample(own[name][:held], 2)
            b, d = rng.sample([w for w in common if w not in shared[name]], 2)
            questions.append(_question(f"synth-broad-{i:03d}", "synth_broad", [a, b, c, d],
                                       [name], "one", broad_scopes=list(broad)))
    for i in range(max(3, n_questions // 5)):
        questions.append(_question(f"synth-nonsense-{i:03d}", "synth_nonsense",
                                   rng.sample(unused, 4), [], "abstain"))
    return questions


def broad_capture(questions: list[dict], results: dict[str, dict | None]) -> float | None:
    """Share of ``synth_broad`` questions whose first routed scope is a broad scope."""
    broad_qs = [q for q in questions if q["family"] == "synth_broad"]
    if not broad_qs:
        return None
    captured = 0
    for q in broad_qs:
        r = results.get(q["id"]) or {}
        scopes = r.get("scopes") or []
        captured += r.get("outcome") == "routed" and bool(scopes) and scopes[0] in q["broad_scopes"]
    return captured / len(broad_qs)
