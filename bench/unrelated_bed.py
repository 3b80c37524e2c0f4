"""Accuracy beside unrelated real scopes: published packages made repositories, built, and pulled.

    python bench/unrelated_bed.py fetch [--pypi 400] [--npm 100] [--cache DIR] [--jobs 6]
    python bench/unrelated_bed.py build --unrelated-home H [--cache DIR] [--limit 230] [--batch 140]
    python bench/unrelated_bed.py publish --unrelated-home H [--home HOME_22] [--scopes 1000] --store DIR
    python bench/unrelated_bed.py score --store DIR [--home HOME_22] --work DIR [--homes ...]

``fetch`` takes the most downloaded PyPI projects (``rank_among_15000_most_downloaded`` of a
registry name list, ``--names``) and npm packages (``downloads_a_month``), skips the 22
development projects by name and any package that carries a copy of one (a vendored
``requests``, ``click``...), downloads each source distribution with the registry's own client
(``pip download --no-binary NAME``, ``npm pack``), skips those under ``MIN_TEXT`` or over
``MAX_TEXT`` bytes of text or over ``MAX_ARCHIVE`` bytes of archive, and makes each a git repository of one commit (fixed author
and date) under ``--cache`` (``bench/.cache/unrelated``); ``fetched.json`` there records every
name and why it was skipped. ``build`` registers the kept ones in fetch order (``--limit``) in a
home of their own and builds them as any home is built, ``--batch`` at a time (``loci add`` each,
``loci update --no-scan``; ``loci embed`` and ``loci calibrate`` after the first batch, which later
updates refresh): a run stopped between batches goes on where it stopped.

``publish`` exports the development home's scopes and the unrelated home's scopes into one
folder store, then hard-links copies of the unrelated bundles under other names (forks:
``NAME-001``...) until the store holds ``--scopes`` bundles. ``score`` pulls with ``loci pull``
(calibrating, as a team member's pull does) into four homes and scores the labelled questions
on each with bench/eval_folds.py: the development home (a copy), an empty home that pulled the
development bundles alone, an empty home that pulled the whole bed, and a copy of the
development home that pulled the unrelated bundles (and a copy calibrated again by this loci,
which that pull does); then lists the questions whose score moved between pairs of them
(``PAIRS``): what the pull itself moves, what calibrating again moves, what the unrelated scopes move.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs

CACHE = inputs.CACHE / "unrelated"
NAME_LISTS = Path("/usr/share/package-lists")
MIN_TEXT = 20_000          # bytes of text: smaller is no real project
MAX_ARCHIVE = 30_000_000   # bytes of archive: larger is mostly data
MAX_TEXT = 10_000_000      # bytes of text: about twice the largest development repository (black, 5.9 MB)
                           # (a vendored C++ tree, a lexer per language: tens of thousands of chunks)
DATE = "2026-01-01T00:00:00+00:00"
# the development projects by their registry names (and what they are published as)
DEV_NAMES = {"attrs", "awesome", "black", "chalk", "cli", "click", "commander", "commander.js", "docopt",
             "doit", "fd", "flask", "javascript-algorithms", "jinja", "jinja2", "pluggy", "rank-bm25",
             "rank_bm25", "requests", "slugify", "@sindresorhus/slugify", "sqlite-utils", "starlette",
             "tqdm", "viper", "walkdir"}
# a package that carries one of these (a vendored copy, a fork under another name) is skipped
DEV_PACKAGES = {"attr", "black", "click", "doit", "flask", "jinja2", "pluggy", "requests", "sqlite_utils",
                "starlette", "tqdm"}
DEV_MODULES = {"docopt.py", "rank_bm25.py"}
DEV_NPM = {"chalk", "commander", "@sindresorhus/slugify", "javascript-algorithms"}


def normal(name: str) -> str:
    """A registry name as a folder and scope name: lower case, runs of ``._-`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def choose(ranked: list[str], exclude: set[str], n: int, taken: set[str] | None = None) -> list[str]:
    """The first ``n`` names of ``ranked`` whose normal form is not in ``exclude`` nor already
    ``taken`` (another registry's package of the same name), scoped npm names left out."""
    banned = {normal(x) for x in exclude} | set(taken or ())
    out: list[str] = []
    for name in ranked:
        key = normal(name)
        if name.startswith("@") or key in banned:
            continue
        banned.add(key)
        out.append(name)
        if len(out) == n:
            break
    return out


def carries_dev_project(root: Path) -> str | None:
    """The first development project ``root`` carries a copy of (a package folder, a module, a
    package.json naming it), or None."""
    for path in root.rglob("*"):
        if path.name in DEV_MODULES and path.is_file():
            return path.name
        if path.name in DEV_PACKAGES and (path / "__init__.py").is_file():
            return path.name
        if path.name == "package.json" and path.parent != root and path.is_file():
            try:
                if json.loads(path.read_text(errors="replace")).get("name") in DEV_NPM:
                    return str(path.relative_to(root))
            except (ValueError, AttributeError):
                continue
    return None


def text_bytes(root: Path) -> int:
    """Bytes of the files under ``root`` whose first 4 KB hold no NUL byte."""
    total = 0
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as fh:
                if b"\0" not in fh.read(4096):
                    total += path.stat().st_size
    return total


def ranked_pypi(names: Path) -> list[str]:
    rows = [r for r in csv.DictReader(names.open(), delimiter="\t")
            if (r.get("rank_among_15000_most_downloaded") or "").isdigit()]
    return [r["name"] for r in sorted(rows, key=lambda r: int(r["rank_among_15000_most_downloaded"]))]


def ranked_npm(names: Path) -> list[str]:
    rows = [r for r in csv.DictReader(names.open(), delimiter="\t") if (r.get("downloads_a_month") or "").isdigit()]
    return [r["name"] for r in sorted(rows, key=lambda r: -int(r["downloads_a_month"]))]


def download(registry: str, name: str, dest: Path, version: str | None = None) -> Path | None:
    """The source archive of ``name`` (at ``version``, else the newest) in ``dest`` through the
    registry's own client, or None."""
    wanted = f"{name}=={version}" if version else name
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", name, "-q", wanted, "-d", str(dest)]
    # pip reads the archive's metadata: with this environment's build tools first (no build
    # environment installed per package), then as pip does by default
    tries = [pip + ["--no-build-isolation"], pip] if registry == "pypi" else \
        [["npm", "pack", f"{name}@{version}" if version else name, "--silent", "--pack-destination", str(dest)]]
    for argv in tries:
        try:
            subprocess.run(argv, capture_output=True, timeout=90, check=True, cwd=dest)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            continue
        got = [p for p in dest.iterdir() if p.is_file()]
        if len(got) == 1:
            return got[0]
    return None


def unpack(archive: Path, dest: Path) -> Path:
    """``archive`` unpacked into ``dest``; its one top folder (``NAME-1.0``, ``package``) flattened."""
    tmp = dest.with_name(dest.name + ".unpack")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
    else:
        with tarfile.open(archive) as t:
            t.extractall(tmp, filter="data")
    tops = list(tmp.iterdir())
    top = tops[0] if len(tops) == 1 and tops[0].is_dir() else tmp
    shutil.move(str(top), str(dest))
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def make_repo(folder: Path) -> None:
    """``folder`` a git repository of one commit, same author and date whoever runs it."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE}
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "--no-gpg-sign", "-m", f"{folder.name} as published"]):
        subprocess.run(argv, cwd=folder, env=env, check=True, capture_output=True)


def too_much_or_little(text: int) -> str | None:
    return "too little text" if text < MIN_TEXT else "too much text" if text > MAX_TEXT else None


def fetch_one(registry: str, name: str, repos: Path, dl: Path) -> dict:
    """One package made a repository under ``repos``; a row for ``fetched.json``."""
    row = {"name": name, "registry": registry, "folder": normal(name)}
    folder = repos / row["folder"]
    if folder.is_dir():
        return {**row, "kept": True, "note": "already fetched"}
    shutil.rmtree(dl, ignore_errors=True)
    dl.mkdir(parents=True)
    archive = download(registry, name, dl)
    if archive is None:
        return {**row, "kept": False, "note": "no source archive"}
    row["archive"], row["archive_bytes"] = archive.name, archive.stat().st_size
    if row["archive_bytes"] > MAX_ARCHIVE:
        return {**row, "kept": False, "note": "archive too large"}
    try:
        unpack(archive, folder)
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return {**row, "kept": False, "note": f"unpack failed: {exc}"[:200]}
    row["text_bytes"] = text_bytes(folder)
    why = too_much_or_little(row["text_bytes"])
    carried = carries_dev_project(folder)
    if carried:
        why = f"carries a development project ({carried})"
    if why is None and (folder / ".git").exists():
        why = "archive holds a .git folder"
    if why:
        shutil.rmtree(folder, ignore_errors=True)
        return {**row, "kept": False, "note": why}
    make_repo(folder)
    return {**row, "kept": True}


def fetch(args) -> int:
    cache: Path = args.cache
    repos, record = cache / "repos", cache / "fetched.json"
    repos.mkdir(parents=True, exist_ok=True)
    rows = {(r["registry"], r["name"]): r for r in json.loads(record.read_text())} if record.is_file() else {}
    for row in rows.values():   # kept under limits since changed
        why = too_much_or_little(row.get("text_bytes", MIN_TEXT)) if row["kept"] else None
        if why:
            shutil.rmtree(repos / row["folder"], ignore_errors=True)
            row.update(kept=False, note=why)
    pypi = choose(ranked_pypi(args.names / "pypi.tsv"), DEV_NAMES, args.pypi)
    npm = choose(ranked_npm(args.names / "npm.tsv"), DEV_NAMES, args.npm, taken={normal(n) for n in pypi})
    wanted = [("pypi", n) for n in pypi] + [("npm", n) for n in npm]
    todo = [key for key in wanted if key not in rows]
    # a download mostly waits on the network and the registry's client: several at once
    # (pip took ~14 s a package alone, most of it not on this machine's cores)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        running = {pool.submit(fetch_one, *key, repos, cache / "dl" / str(n)): key for n, key in enumerate(todo)}
        for done, future in enumerate(as_completed(running), len(wanted) - len(todo) + 1):
            key = running[future]
            r = rows[key] = future.result()
            print(f"{done}/{len(wanted)} {key[0]} {key[1]}: {'kept' if r['kept'] else r['note']}", flush=True)
            record.write_text(json.dumps(list(rows.values()), indent=1) + "\n")
    shutil.rmtree(cache / "dl", ignore_errors=True)
    kept = sum(r["kept"] for r in rows.values())
    print(f"{kept} repositories of {len(rows)} packages in {inputs.shown(repos)}")
    return 0


def next_batch(fetched: list[dict], registered: set[str], limit: int, batch: int) -> list[str]:
    """The folders of the next ``batch`` kept packages not registered yet, in fetch order, the
    home holding at most ``limit`` of them."""
    room = max(0, min(batch, limit - len(registered)))
    return [r["folder"] for r in fetched if r["kept"] and r["folder"] not in registered][:room]


def build(args) -> int:
    from bench.measure import run_checked
    from loci.kernel.config import layout
    from loci.kernel.registry import load_registry

    home: Path = args.unrelated_home
    record = args.cache / "fetched.json"
    if not record.is_file():
        inputs.fail(f"{inputs.shown(record)} is missing", "run `python bench/unrelated_bed.py fetch` first")
    if args.limit < 1 or args.batch < 1:
        inputs.fail("--limit and --batch must be at least 1", f"got --limit {args.limit} --batch {args.batch}")
    env = inputs.child_env(home)
    loci = [sys.executable, "-m", "loci"]
    fetched = json.loads(record.read_text())
    lay = layout(home)
    while True:
        registered = set(load_registry(lay).names())
        # registered by a run stopped before it built them
        todo = sorted(name for name in registered if not lay.meta(name).is_file())
        todo += next_batch(fetched, registered, args.limit, args.batch - len(todo))
        if not todo:
            break
        start = time.perf_counter()
        for folder in todo:
            if folder not in registered:
                run_checked([*loci, "add", str(args.cache / "repos" / folder)], env=env, cwd=ROOT)
        first = not (home / "embed.json").is_file()
        run_checked([*loci, "update", "--no-scan", "--quiet"], env=env, cwd=ROOT)
        if first:
            run_checked([*loci, "embed", "--quiet"], env=env, cwd=ROOT)
            run_checked([*loci, "calibrate"], env=env, cwd=ROOT)
        print(f"{len(todo)} built in {time.perf_counter() - start:.0f} s; {len(registered | set(todo))} in "
              f"{inputs.shown(home)}", flush=True)
    return 0


def bed_names(dev: list[str], unrelated: list[str], total: int) -> list[tuple[str, str]]:
    """``(source scope, published name)`` for the unrelated bundles of a bed of ``total``
    scopes beside ``dev``: each unrelated scope once under its own name, then copies under
    ``NAME-001``, ``NAME-002``... round-robin (a name already taken is passed over)."""
    if not unrelated:
        return []
    taken = set(dev) | set(unrelated)
    out = [(u, u) for u in unrelated][:max(total - len(dev), 0)]
    k = 0
    while len(out) < total - len(dev):
        k += 1
        for u in unrelated:
            name = f"{u}-{k:03d}"
            if name in taken:
                continue
            taken.add(name)
            out.append((u, name))
            if len(out) == total - len(dev):
                break
    return out


def scope_sizes(home: Path, names: list[str], exported: Path) -> list[dict]:
    """Chunks, routing tokens and bundle bytes of each scope (its meta, its exported folder)."""
    from loci.kernel.config import layout

    lay = layout(home)
    rows = []
    for name in names:
        meta = json.loads(lay.meta(name).read_text())
        folder = exported / name.replace("/", "__")
        rows.append({"scope": name, "chunks": meta.get("chunks"), "tokens": meta.get("vocab_tokens"),
                     "bundle_bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())})
    return rows


def medians(rows: list[dict]) -> dict:
    import statistics

    return {k: statistics.median(r[k] for r in rows) for k in ("chunks", "tokens", "bundle_bytes")} if rows else {}


def publish(args) -> int:
    from bench.bundles import built_scopes, export_all, link_bundle

    dev_home = inputs.home_dir(args.home)
    unrelated_home = inputs.home_dir(args.unrelated_home)
    store: Path = args.store
    if store.exists():
        inputs.fail(f"{inputs.shown(store)} exists", "give --store a folder that does not exist yet")
    once = store.with_name(store.name + "-once")
    shutil.rmtree(once, ignore_errors=True)
    dev, unrelated = built_scopes(dev_home), built_scopes(unrelated_home)
    clash = sorted(set(dev) & set(unrelated))
    if clash:
        inputs.fail(f"the unrelated home has development scopes: {', '.join(clash)}",
                    "build it from packages other than the development projects")
    export_all(dev_home, dev, store)
    export_all(unrelated_home, unrelated, once)
    names = bed_names(dev, unrelated, args.scopes)
    for src, local in names:
        link_bundle(once / src.replace("/", "__"), store, local)
    bed = {"scopes": len(dev) + len(names), "development": len(dev), "unrelated_distinct": len(unrelated),
           "unrelated_copies": len(names) - len(unrelated),
           "median_development": medians(scope_sizes(dev_home, dev, store)),
           "median_unrelated": medians(scope_sizes(unrelated_home, unrelated, once)),
           "store_bytes": sum(p.stat().st_size for p in store.rglob("*") if p.is_file())}
    (store.with_name(store.name + "-bed.json")).write_text(json.dumps(bed, indent=1) + "\n")
    print(json.dumps(bed, indent=1))
    return 0


def changed_questions(questions: list[dict], before: dict, after: dict) -> list[dict]:
    """The questions whose score moved between two runs' results: what moved, the scopes before and after."""
    from bench.folds import fold_of
    from loci.query import scoring

    out = []
    for q in questions:
        x, y = before.get(q["id"]), after.get(q["id"])
        sx, sy = vars(scoring.score_question(q, x)), vars(scoring.score_question(q, y))
        moved = {k: (v, sy[k]) for k, v in sx.items() if sy[k] != v}
        if moved:
            out.append({"id": q["id"], "family": q["family"], "fold": fold_of(q), "question": q["question"],
                        "gold": q["gold_scopes"], "moved": moved, "before": (x or {}).get("scopes"),
                        "after": (y or {}).get("scopes")})
    return out


def subset_store(store: Path, folders: list[str], dest: Path) -> Path:
    """A folder store of ``store``'s bundles ``folders`` alone, their files hard-linked."""
    if not dest.is_dir():
        tmp = dest.with_name(dest.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        for name in folders:
            (tmp / name).mkdir(parents=True)
            for f in (store / name).iterdir():
                os.link(f, tmp / name / f.name)
        tmp.rename(dest)
    return dest


HOMES = {
    "22": "the development home (a copy)",
    "22-cal": "a copy of the development home calibrated again by this loci (as a pull into it calibrates)",
    "pulled-22": "an empty home that pulled the development bundles alone",
    "bed": "an empty home that pulled the whole bed",
    "22+unrelated": "a copy of the development home that pulled the unrelated bundles",
}


def score(args) -> int:
    from bench.bundles import built_scopes, eval_home
    from bench.measure import run_checked
    from loci.query import scoring

    dev_home = inputs.home_dir(args.home)
    qfile = inputs.questions_file(args.questions, args.shared)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    dev = {name.replace("/", "__") for name in built_scopes(dev_home)}
    folders = sorted(p.name for p in args.store.iterdir() if (p / "manifest.json").is_file())
    stores = {"pulled-22": lambda: subset_store(args.store, sorted(dev), work / "store-22"), "bed": lambda: args.store,
              "22+unrelated": lambda: subset_store(args.store, [f for f in folders if f not in dev],
                                                   work / "store-unrelated")}
    pulls = {}
    for home in args.homes:
        target = work / f"home-{home}"
        if home in ("22", "22-cal", "22+unrelated") and not target.is_dir():
            shutil.copytree(dev_home, target, symlinks=True)   # the development home itself is never written
        if home == "22-cal" and not (target / ".calibrated").is_file():
            run_checked([sys.executable, "-m", "loci", "calibrate"], env=inputs.child_env(target), cwd=ROOT)
            (target / ".calibrated").write_text("")
        if home in stores and not (target / ".pulled").is_file():
            start = time.perf_counter()
            run_checked([sys.executable, "-m", "loci", "pull", str(stores[home]()), "--quiet"],
                        env=inputs.child_env(target), cwd=ROOT)
            pulls[home] = round(time.perf_counter() - start, 1)
            (target / ".pulled").write_text(f"{pulls[home]}\n")
    reports = {home: eval_home(work / f"home-{home}", work / f"eval-{home}.json", qfile) for home in args.homes}
    cols = ("top1", "set_f1", "abstain_precision", "abstain_recall", "hit5", "hit5_routed")
    lines = ["| home | fold | n | " + " | ".join(cols) + " |", "|---" * (len(cols) + 3) + "|"]
    for home, rep in reports.items():
        for fold in ("all", "A", "B"):
            m = rep[fold]["overall"]
            lines.append(f"| {home} | {fold} | {m['n']} | " + " | ".join(scoring.fmt_pct(m[k]) for k in cols) + " |")
    print("\n".join(lines))
    print("pull seconds:", pulls)
    questions = scoring.load_questions(qfile)
    results = {k: json.loads((work / f"eval-{k}.json").read_text())["results"] for k in reports}
    changes = {}
    for a, b in PAIRS:
        if a in results and b in results:
            changes[f"{a} -> {b}"] = changed_questions(questions, results[a], results[b])
            print(f"\n{a} -> {b}: {len(changes[f'{a} -> {b}'])} questions moved")
            for c in changes[f"{a} -> {b}"]:
                print(f"  {c['id']} [{c['family']}] fold {c['fold']}: {c['before']} -> {c['after']} (gold {c['gold']})")
    (work / "changed.json").write_text(json.dumps({"table": lines, "pull_s": pulls, "changes": changes},
                                                  indent=1) + "\n")
    return 0


# what each comparison isolates: the pull itself, the unrelated scopes beside pulled ones,
# the unrelated scopes beside local ones
PAIRS = (("22", "pulled-22"), ("pulled-22", "bed"), ("22", "22-cal"), ("22-cal", "22+unrelated"),
         ("22", "22+unrelated"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="published packages made git repositories under --cache")
    f.add_argument("--pypi", type=int, default=400, help="most downloaded PyPI projects taken")
    f.add_argument("--npm", type=int, default=100, help="most downloaded npm packages taken")
    f.add_argument("--names", type=Path, default=NAME_LISTS,
                   help="folder holding pypi.tsv and npm.tsv (registry name lists with download ranks)")
    f.add_argument("--cache", type=Path, default=CACHE)
    f.add_argument("--jobs", type=int, default=6, help="downloads at once (default 6)")
    b = sub.add_parser("build", help="build the fetched repositories into a home of their own, in batches")
    b.add_argument("--unrelated-home", type=Path, required=True, help="the home to build (made when missing)")
    b.add_argument("--cache", type=Path, default=CACHE, help="the folder `fetch` filled")
    b.add_argument("--limit", type=int, default=230, help="kept packages built, all told, in fetch order")
    b.add_argument("--batch", type=int, default=140, help="packages registered and built at a time")
    p = sub.add_parser("publish", help="the bed: development bundles, unrelated bundles and their copies")
    inputs.add_home(p)
    p.add_argument("--unrelated-home", required=True, help="a home built from the fetched repositories")
    p.add_argument("--scopes", type=int, default=1000, help="bundles in the bed, all told")
    p.add_argument("--store", type=Path, required=True, help="a folder store to create")
    s = sub.add_parser("score", help="pull the bed into an empty home and score it beside the development home")
    inputs.add_home(s)
    inputs.add_shared(s)
    s.add_argument("--questions", help="the labelled questions (default: corpus/dev-questions.jsonl of --shared)")
    s.add_argument("--store", type=Path, required=True, help="the bed `publish` made")
    s.add_argument("--work", type=Path, required=True, help="the homes, the stores of subsets and the scores "
                   "(a home already pulled there is kept)")
    s.add_argument("--homes", nargs="+", choices=list(HOMES), default=list(HOMES),
                   help="; ".join(f"{k}: {v}" for k, v in HOMES.items()))
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return {"fetch": fetch, "build": build, "publish": publish, "score": score}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
