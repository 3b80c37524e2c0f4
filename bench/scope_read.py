"""What the second opinion pays to read one scope's vectors, with and without the query file.

    python bench/scope_read.py [--home $HOME_22] [--passes 5]

A one-shot route reads each scope it measures (``semantic_search.scope_vectors``): its chunk
vectors, and the translated copies it leaves out. A store whose manifest names them is read
alone; one written before (session 18) opens the scope's query file to ask. Both paths are
timed on every embedded scope of the home, interleaved pass by pass (the same page cache), the
second by reading the same stores as if their manifests named no copies. Prints each path's
median milliseconds a scope and their ratio.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap)
    ap.add_argument("--passes", type=int, default=5, help="passes over every scope, each path (default 5)")
    args = ap.parse_args(argv)
    if args.passes < 1:
        inputs.fail(f"--passes {args.passes} times nothing", "give one pass or more")
    home = inputs.home_dir(args.home)
    inputs.use_home(home)
    from loci.kernel.config import layout, read_embed_config
    from loci.query import semantic
    from loci.query.semantic_search import scope_vectors

    lay = layout()
    cfg = read_embed_config(lay)
    if cfg is None:
        inputs.fail(f"{inputs.shown(home)} has no vectors", "run `loci embed` there first")
    model = cfg["model_id"]
    scopes = sorted(p.stem for p in lay.vectors(model, "x").parent.glob("*.json"))
    named = semantic.manifest_copies
    times: dict[str, list[float]] = {"manifest": [], "query file": []}
    for _ in range(args.passes):
        for path, copies in (("manifest", named), ("query file", lambda data: None)):
            semantic.manifest_copies = copies
            try:
                start = time.perf_counter()
                for scope in scopes:
                    scope_vectors(lay, model, scope)
                times[path].append((time.perf_counter() - start) / max(len(scopes), 1) * 1000)
            finally:
                semantic.manifest_copies = named
    ms = {k: statistics.median(v) for k, v in times.items()}
    print(f"{len(scopes)} scopes, {args.passes} passes, home {inputs.shown(home)}")
    for k, v in ms.items():
        print(f"  {k:<11} {v:6.2f} ms a scope")
    print(f"  ratio       {ms['manifest'] / ms['query file']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
