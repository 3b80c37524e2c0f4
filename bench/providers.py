"""An incremental pull of one changed bundle when many scopes provide the same names.

    python bench/providers.py [--home H] [--scope click] [--copies 100] [--baseline REV]
                              [--rounds 2] [--map] [--json OUT]

One real scope of a built home (``--home``, default ``$LOCI_HOME``) is exported once (no
vectors) and published ``--copies`` times under other names: forks or vendored copies, every
one providing the same package and importing it. A fresh home pulls them all (cold), then
one copy's manifest changes (its commit) and the next pull takes that one bundle (the
incremental pull timed here, in its own process: wall time, peak memory, and the time in the
uses and routing merges). The same is run with the sources of ``--baseline`` (a git revision,
extracted with ``git archive``) in the same run, alternating, and the ratio is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "--child" not in sys.argv and str(ROOT) not in sys.path:  # a child runs the tree on its PYTHONPATH
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.stamp import stamp  # noqa: E402


OLD_ROLES = ("query", "summary")   # what a bundle of a loci before maps does not carry (it refuses them)


def publish(home: Path, scope: str, copies: int, store: Path, old: bool = False) -> None:
    """``copies`` bundles of ``scope`` under other names, their files hard-linked to one export;
    ``old``: without the roles a loci before maps refuses (for a baseline tree)."""
    from loci.kernel.config import layout
    from loci_pipeline.share.bundle import MANIFEST, export_scope

    one = export_scope(layout(home), scope, store / ".one", no_vectors=True)
    manifest = json.loads((one / MANIFEST).read_text())
    if old:
        manifest["files"] = [f for f in manifest["files"] if f["role"] not in OLD_ROLES]
        manifest.pop("derived", None)
    listed = {f["path"] for f in manifest["files"]}
    for k in range(copies):
        folder = store / f"{scope}-{k:03d}"
        folder.mkdir(parents=True)
        for f in one.iterdir():
            if f.name in listed:
                os.link(f, folder / f.name)
        (folder / MANIFEST).write_text(json.dumps({**manifest, "scope": folder.name, "aliases": []}))
    shutil.rmtree(one.parent)


def touch_one(store: Path, scope: str, n: int) -> None:
    """The first copy's manifest moves (another commit), so the next pull fetches that bundle."""
    path = store / f"{scope}-000" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["commit"] = f"{n:040d}"
    path.write_text(json.dumps(manifest))
    past = time.time() - 3600  # older than pull's settle window, as a store's listing would be
    os.utime(path, (past, past))


def child(home: Path, store: Path) -> dict:
    """One pull in this process (the tree on PYTHONPATH): its time, and that of the merges."""
    import resource

    import loci_pipeline.routing
    import loci_pipeline.uses
    from loci.kernel.config import layout
    from loci_pipeline.share.pull import pull

    # bench.measure of this bench, beside this script (the child's sys.path[0]): the bench package
    # on its PYTHONPATH is the compared tree's, which may predate summed_time
    from measure import summed_time

    spent = {"uses": 0.0, "routing": 0.0}
    loci_pipeline.uses.merge_uses = summed_time(loci_pipeline.uses.merge_uses, spent, "uses")
    loci_pipeline.routing.merge_routing = summed_time(loci_pipeline.routing.merge_routing, spent, "routing")
    import inspect

    # --map: the pull of this tree brings the maps alone (a tree without maps pulls everything)
    kw = {"full": False} if os.environ.get("BENCH_PULL_MAP") and "full" in inspect.signature(pull).parameters else {}
    start = time.perf_counter()
    report = pull(layout(home), str(store), no_vectors=True, **kw)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"pull_s": wall, "uses_s": spent["uses"], "routing_s": spent["routing"], "peak_mb": peak,
            "imported": len(report.imported), "sources": str(Path(loci_pipeline.uses.__file__).resolve().parents[1])}


def run_child(tree: Path, shim: Path, home: Path, store: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{shim}:{tree}", "HF_HUB_OFFLINE": "1", "LOCI_HOME": str(home)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(home), str(store)],
                          env=env, capture_output=True, text=True, cwd=tree, timeout=3600)
    if proc.returncode != 0:
        inputs.fail(f"the pull with the sources at {tree.name} failed: {proc.stderr.strip()[-400:]}",
                    "run it by hand to see why")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap)
    ap.add_argument("--scope", default="click", help="the scope published many times (default: click)")
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--baseline", default="main", help="the revision compared against (default: main)")
    ap.add_argument("--rounds", type=int, default=2, help="incremental pulls per tree, alternating")
    ap.add_argument("--map", action="store_true", help="this tree pulls the maps alone (the stores "
                    "stay in the store), as `loci pull` without --all does")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    if args.map:
        os.environ["BENCH_PULL_MAP"] = "1"
    home = inputs.home_dir(args.home)
    print(stamp(f"{args.copies} copies of {args.scope}, baseline {args.baseline}"), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-providers-") as tmp:
        work = Path(tmp)
        stores = {"baseline": work / "store-old", "this": work / "store"}
        for name, store in stores.items():
            publish(home, args.scope, args.copies, store, old=name == "baseline")
        trees = {name: inputs.compared_tree(rev, work) for name, rev in (("baseline", args.baseline), ("this", "."))}
        homes = {name: work / f"home-{name}" for name in trees}
        cold = {name: run_child(*trees[name], homes[name], stores[name]) for name in trees}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for n in range(args.rounds):
            for name, (tree, shim) in trees.items():
                touch_one(stores[name], args.scope, len(runs["baseline"]) + len(runs["this"]) + 1)
                got = run_child(tree, shim, homes[name], stores[name])
                assert got["imported"] == 1 and got["sources"] == str(tree), got
                runs[name].append(got)
    out = {"stamp": stamp(), "copies": args.copies, "scope": args.scope, "baseline": args.baseline,
           "cold": cold, "incremental": runs}
    med = {name: {k: statistics.median(r[k] for r in rs) for k in ("pull_s", "uses_s", "routing_s", "peak_mb")}
           for name, rs in runs.items()}
    print(f"{'':<10} {'pull s':>8} {'uses merge s':>13} {'routing merge s':>16} {'peak MB':>8}")
    for name in trees:
        m = med[name]
        print(f"{name:<10} {m['pull_s']:>8.2f} {m['uses_s']:>13.2f} {m['routing_s']:>16.2f} {m['peak_mb']:>8.0f}")
    print(f"this / baseline: pull {med['this']['pull_s'] / med['baseline']['pull_s']:.3f}, "
          f"uses merge {med['this']['uses_s'] / max(med['baseline']['uses_s'], 1e-9):.3f}, "
          f"peak memory {med['this']['peak_mb'] / med['baseline']['peak_mb']:.2f}")
    out["median"] = med
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
