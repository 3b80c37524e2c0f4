"""An incremental pull of one changed bundle into a 1,000-scope map, this tree against a baseline.

    python bench/pull_incremental.py --bed DIR [--baseline REV] [--rounds 5] [--cli] [--json OUT]

``DIR`` is what ``python bench/bundles.py --bed real --keep DIR`` leaves: ``store/`` (the published
bundles) and ``home/`` (their maps pulled). Each tree (this one, and ``--baseline``, a git revision
extracted with ``git archive``) gets its own copy of the home, ``DIR/home-<tree>``. Every manifest of
the store is dated an hour back first, as a store's listing is a while after a publish (a listing
younger than the pull's settle window is not trusted, so every manifest is read again: that is
timed apart, as ``unsettled``), and each home pulls once with nothing changed (it records the
listings). Then each round moves one bundle's manifest (its commit) and each tree pulls it, in a
process of its own, one tree after the other: the time of ``pull()`` in that process (imports
excluded: the bench's figure), the process's wall time, and the merges' time. ``--cli`` times
``loci pull DIR/store --quiet`` instead, the whole command a team member runs: the pull, then the
calibrate step (the first pull of each home, untimed, calibrates it).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STEPS = {   # module -> functions timed in the child (absent ones skipped: a baseline may lack them)
    "loci_pipeline.routing": ["merge_routing"],
    "loci_pipeline.uses": ["merge_uses"],
    "loci_pipeline.share.pull": ["_merge", "_register", "_changed"],
}


def child(home: Path, store: Path) -> dict:
    """One pull in this process (the tree on PYTHONPATH), and its steps' times."""
    import importlib

    # bench.measure of this bench, beside this script (the child's sys.path[0]): the bench package
    # on its PYTHONPATH is the compared tree's, which may predate summed_time
    from measure import summed_time

    start = time.perf_counter()
    from loci.kernel.config import layout
    from loci_pipeline.share.pull import pull

    spent: dict[str, float] = {}
    for module, names in STEPS.items():
        mod = importlib.import_module(module)
        for name in names:
            if hasattr(mod, name):
                setattr(mod, name, summed_time(getattr(mod, name), spent, name))
    imported = time.perf_counter() - start
    t = time.perf_counter()
    report = pull(layout(home), str(store), full=False)
    return {"pull_s": time.perf_counter() - t, "imports_s": imported, "steps": spent,
            "imported": report.imported, "sources": str(Path(sys.modules["loci_pipeline.share.pull"].__file__)
                                                          .resolve().parents[2])}


def run_child(tree: Path, shim: Path, home: Path, store: Path, cli: bool = False) -> dict:
    """One pull in a process of its own with the sources of ``tree``: ``child`` (``pull()`` timed
    inside), or with ``cli`` the command ``loci pull STORE --quiet`` (its imported scopes read
    back from what it prints with ``--json``)."""
    env = {**os.environ, "PYTHONPATH": f"{shim}:{tree}", "HF_HUB_OFFLINE": "1", "LOCI_HOME": str(home),
           "LOCI_SERVER": "off"}
    command = ([sys.executable, "-m", "loci", "pull", str(store), "--quiet", "--json"] if cli
               else [sys.executable, str(Path(__file__).resolve()), "--child", str(home), str(store)])
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tree, timeout=600)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"the pull with the sources at {tree} failed: {proc.stderr.strip()[-600:]}")
    out = ({"imported": json.loads(proc.stdout)["imported"], "sources": str(tree)} if cli
           else json.loads(proc.stdout.strip().splitlines()[-1]))
    out["process_s"] = wall
    out.setdefault("pull_s", wall)
    return out


def date_back(store: Path) -> None:
    past = time.time() - 3600
    for manifest in store.glob("*/manifest.json"):
        os.utime(manifest, (past, past))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bed", type=Path, help="a --keep folder of bench/bundles.py --bed real")
    ap.add_argument("--baseline", default="main", help="the revision compared against (default: main)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cli", action="store_true",
                    help="time `loci pull STORE --quiet` (the pull and the calibrate step) instead of pull()")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    if args.bed is None:
        ap.error("--bed is required")
    sys.path.insert(0, str(ROOT))
    from bench import inputs
    from bench.bundles import touch_manifest
    from bench.stamp import stamp

    store = args.bed / "store"
    trees = {"baseline": args.baseline, "this": "."}
    paths = {name: inputs.compared_tree(rev, args.bed) for name, rev in trees.items()}
    homes = {name: args.bed / f"home-{name}" for name in trees}
    for name, home in homes.items():
        if not home.is_dir():
            shutil.copytree(args.bed / "home", home, symlinks=True)
    print(stamp(f"incremental pulls on {args.bed}, baseline {args.baseline}"), flush=True)
    folders = sorted(p.parent.name for p in store.glob("*/manifest.json"))
    out: dict = {"stamp": stamp(), "baseline": args.baseline, "scopes": len(folders), "load": [os.getloadavg()[0]]}
    # unsettled: every listing too recent to trust (every manifest read), then settled
    for p in store.glob("*/manifest.json"):
        os.utime(p, None)
    touch_manifest(store, folders[0], int(time.time()))
    out["unsettled"] = {name: run_child(*paths[name], homes[name], store, args.cli) for name in trees}
    date_back(store)
    for name in trees:   # records the listings, now older than the settle window
        run_child(*paths[name], homes[name], store, args.cli)
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for r in range(args.rounds):
        touch_manifest(store, folders[-1 - r % len(folders)], int(time.time() * 1000) + r)
        for name in (trees if r % 2 == 0 else list(trees)[::-1]):   # each tree first in turn
            got = run_child(*paths[name], homes[name], store, args.cli)
            assert len(got["imported"]) == 1 and got["sources"] == str(paths[name][0]), got
            runs[name].append(got)
        out["load"].append(os.getloadavg()[0])
    out["incremental"] = runs
    med = {name: {k: statistics.median(r[k] for r in rs) for k in ("pull_s", "process_s")} for name, rs in runs.items()}
    out["median"] = med
    print(f"{'':<10} {'pull() s, median':>17} {'runs':>32} {'process s':>10} {'unsettled pull() s':>19}")
    for name in trees:
        each = " ".join(f"{r['pull_s']:.2f}" for r in runs[name])
        print(f"{name:<10} {med[name]['pull_s']:>17.3f} {each:>32} "
              f"{med[name]['process_s']:>10.2f} {out['unsettled'][name]['pull_s']:>19.2f}")
    print(f"this / baseline: pull() {med['this']['pull_s'] / med['baseline']['pull_s']:.2f}, "
          f"process {med['this']['process_s'] / med['baseline']['process_s']:.2f}; "
          f"load average {min(out['load']):.1f}-{max(out['load']):.1f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
