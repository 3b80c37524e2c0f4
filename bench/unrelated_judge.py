"""Is an unrelated scope a right member of an enumeration? Checked on its fetched repository.

    python bench/unrelated_judge.py CHANGED_JSON [--repos DIR] [--pair "22 -> 22+unrelated"]

For each enumerative question whose route moved (``changed.json`` of ``unrelated_bed.py score``),
every scope named that is not a development scope is checked against the question's criterion
on the files of the package it was built from (a copy ``NAME-001`` is checked as ``NAME``):
a licence text, a dependency in the package metadata, a file present, a word in the sources.
Prints per question the members that meet it (legitimate) and those that do not (wrong routes).
The criteria are literal and coarse (a word present somewhere, not a feature documented); the
report says which questions were judged by hand instead.
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

from bench.unrelated_bed import CACHE

COPY = re.compile(r"-\d{3}$")
TEXT_SUFFIXES = {".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg", ".js", ".ts", ".json", ".go", ".rs", ".sh",
                 ".bash", ".zsh", ".fish", ".c", ".h", ".ini", ".yml", ".yaml", ".in", ""}


def files(repo: Path):
    for p in repo.rglob("*"):
        if p.is_file() and ".git" not in p.parts and p.suffix.lower() in TEXT_SUFFIXES:
            yield p


def grep(repo: Path, pattern: str, names: str | None = None) -> bool:
    rx, nx = re.compile(pattern, re.IGNORECASE), re.compile(names, re.IGNORECASE) if names else None
    for p in files(repo):
        if nx and not nx.search(p.name):
            continue
        try:
            if rx.search(p.read_text(errors="replace")):
                return True
        except OSError:
            continue
    return False


def has_file(repo: Path, pattern: str) -> bool:
    rx = re.compile(pattern, re.IGNORECASE)
    return any(rx.search(p.name) for p in repo.rglob("*") if ".git" not in p.parts)


def metadata(repo: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in (repo / "PKG-INFO", repo / "package.json") if p.is_file())


def runtime_requires(repo: Path) -> list[str]:
    """Requires-Dist lines without an extra (PKG-INFO), or package.json dependencies."""
    meta = repo / "PKG-INFO"
    if meta.is_file():
        return [line for line in meta.read_text(errors="replace").splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    pkg = repo / "package.json"
    if pkg.is_file():
        try:
            return list(json.loads(pkg.read_text()).get("dependencies") or {})
        except ValueError:
            return []
    return []


def is_python(repo: Path) -> bool:
    return (repo / "PKG-INFO").is_file()


def licence(repo: Path, pattern: str) -> bool:
    return bool(re.search(pattern, metadata(repo), re.IGNORECASE)) or grep(repo, pattern, r"^(LICEN[CS]E|COPYING)")


BSD3 = r"BSD-3-Clause|Neither the name of"
CRITERIA = {
    "dev-enum-01": lambda r: licence(r, r"Apache"),
    "d2d-all-enumerative-01": lambda r: licence(r, r"Apache"),
    "dev-enum-02": lambda r: any(re.match(r"Requires-Dist: click\b", x, re.IGNORECASE) for x in runtime_requires(r)),
    "d2d-all-enumerative-07": lambda r: is_python(r) and any(re.match(r"Requires-Dist: click\b", x, re.IGNORECASE)
                                                             for x in runtime_requires(r)),
    "dev-enum-03": lambda r: grep(r, r"sqlite"),
    "dev-enum-04": lambda r: grep(r, r"(bash|zsh)[^\n]{0,60}complet|complet[^\n]{0,60}(bash|zsh)"),
    "d2d-all-enumerative-05": lambda r: grep(r, r"(bash|zsh|fish)[^\n]{0,60}complet|complet[^\n]{0,60}(bash|zsh|fish)"),
    "dev-enum-05": lambda r: is_python(r) and has_file(r, r"^py\.typed$"),
    "dev-enum-06": lambda r: not is_python(r) or not any(p.suffix == ".py" for p in r.rglob("*.py")),
    "dev-enum-07": lambda r: grep(r, r"bm25"),
    "dev-enum-08": lambda r: grep(r, r"follow[^\n]{0,40}(sym)?links?|(sym)?links?[^\n]{0,40}follow|resolve[^\n]{0,20}symlink"),
    "d2d-all-enumerative-02": lambda r: licence(r, BSD3),
    "d2d-all-enumerative-03": lambda r: has_file(r, r"^go\.mod$"),
    "d2d-all-enumerative-04": lambda r: not is_python(r) and has_file(r, r"\.d\.ts$"),
    "d2d-all-enumerative-06": lambda r: grep(r, r"NO_COLOR"),
    "d2d-all-enumerative-08": lambda r: has_file(r, r"^CITATION"),
    "d2d-all-enumerative-09": lambda r: grep(r, r"towncrier"),
    "d2d-all-enumerative-10": lambda r: has_file(r, r"zh[-_]?(cn|tw|hans|hant)?\.(md|rst)$|^zh[-_]"),
    "d2d-all-enumerative-11": lambda r: grep(r, r"python\s*3\.14|3\.14\b", r"change|history|news|release"),
    "d2d-all-enumerative-12": lambda r: has_file(r, r"\.[1-8]$"),
    "d2d-all-enumerative-13": lambda r: grep(r, r"did you mean"),
    "d2d-all-enumerative-14": lambda r: grep(r, r"dotenv|\.env\b"),
    "d2d-all-enumerative-15": lambda r: is_python(r) and not runtime_requires(r),
    "d2d-all-enumerative-16": lambda r: is_python(r) and has_file(r, r"^uv\.lock$"),
}


def judge(changes: list[dict], repos: Path, dev: set[str]) -> list[dict]:
    out = []
    for c in changes:
        crit = CRITERIA.get(c["id"])
        if crit is None:
            continue
        new = [s for s in (c["after"] or []) if s not in dev]
        right, wrong, cache = [], [], {}
        for s in new:
            base = COPY.sub("", s) if not (repos / s).is_dir() else s
            if base not in cache:
                cache[base] = (repos / base).is_dir() and bool(crit(repos / base))
            (right if cache[base] else wrong).append(s)
        out.append({"id": c["id"], "right": right, "wrong": wrong})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("changed", type=Path, help="changed.json of `unrelated_bed.py score`")
    ap.add_argument("--repos", type=Path, default=CACHE / "repos")
    ap.add_argument("--pair", default="22 -> 22+unrelated")
    args = ap.parse_args(argv)
    data = json.loads(args.changed.read_text())
    changes = data["changes"][args.pair]
    from bench.folds import FOLD_A, FOLD_B

    for row in judge(changes, args.repos, set(FOLD_A | FOLD_B)):
        print(f"{row['id']}: {len(row['right'])} right {sorted(row['right'])}; "
              f"{len(row['wrong'])} wrong {sorted(row['wrong'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
