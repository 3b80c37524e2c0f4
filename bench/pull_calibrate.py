"""What calibrating a pulled home costs: `loci pull` with and without `--no-calibrate`.

    python bench/pull_calibrate.py [--home H | --store DIR] [--scope click] [--rounds 2] [--json OUT]

Every scope of a built home (``--home``, default ``$LOCI_HOME``) is exported to a folder
store (or ``--store``: a folder of bundles already published, such as the 1,000-scope bed of
``bench/bundles.py --keep``; its ``--scope`` manifest is rewritten in place) and pulled into two fresh homes, one calibrating (the default), one with
``--no-calibrate``; then, ``--rounds`` times and alternating, ``--scope``'s manifest moves
(another commit) before each home pulls again: one changed bundle. Each pull is one
`loci pull` process; the ratio is calibrated / not calibrated in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.measure import run_checked  # noqa: E402
from bench.stamp import stamp  # noqa: E402

MODES = {"calibrated": [], "not calibrated": ["--no-calibrate"]}


def move(store: Path, scope: str, n: int) -> None:
    """``scope``'s manifest names another commit (its listing older than pull's settle window)."""
    path = store / scope / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["commit"] = f"{n:040d}"
    path.write_text(json.dumps(manifest))
    past = time.time() - 3600
    os.utime(path, (past, past))


def timed_pull(home: Path, store: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    run_checked([sys.executable, "-m", "loci", "pull", str(store), "--quiet", *extra],
                env=inputs.child_env(home), cwd=ROOT)
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap)
    ap.add_argument("--scope", default="click", help="the scope whose bundle changes (default: click)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--store", type=Path, help="a folder of bundles to pull instead of the home's export "
                    "(the changed scope's manifest is rewritten there)")
    args = ap.parse_args(argv)
    print(stamp(f"every scope of {'the store' if args.store else 'the home'} pulled, then {args.scope} changed"),
          flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-pull-calibrate-") as tmp:
        work = Path(tmp)
        store = args.store.resolve() if args.store else work / "store"
        if not args.store:
            run_checked([sys.executable, "-m", "loci", "export", "--to", str(store), "--quiet"],
                        env=inputs.child_env(inputs.home_dir(args.home)), cwd=ROOT)
        if not (store / args.scope / "manifest.json").is_file():
            inputs.fail(f"the home has no scope {args.scope!r} to change", "give --scope one of its scopes")
        homes = {mode: work / f"home-{i}" for i, mode in enumerate(MODES)}
        cold = {mode: timed_pull(homes[mode], store, extra) for mode, extra in MODES.items()}
        incremental: dict[str, list[float]] = {mode: [] for mode in MODES}
        n = 0
        for _ in range(args.rounds):
            for mode, extra in MODES.items():
                n += 1
                move(store, args.scope, n)
                incremental[mode].append(timed_pull(homes[mode], store, extra))
    med = {mode: statistics.median(v) for mode, v in incremental.items()}
    print(f"{'':<16} {'cold pull s':>12} {'incremental pull s (median)':>28}")
    for mode in MODES:
        print(f"{mode:<16} {cold[mode]:>12.2f} {med[mode]:>28.2f}")
    print(f"calibrated / not calibrated: cold {cold['calibrated'] / cold['not calibrated']:.2f}, "
          f"incremental {med['calibrated'] / med['not calibrated']:.2f}")
    print(stamp("after"))
    if args.json:
        args.json.write_text(json.dumps({"cold": cold, "incremental": incremental, "median": med,
                                         "stamp": stamp()}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
