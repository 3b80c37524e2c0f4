"""Where a one-shot `loci route` spends its time, step by step, in one fresh process per question.

    python bench/route_breakdown.py [--home H] ["a question" ...]   (default: three dev questions)

Prints, per question, the seconds of: loci's imports, the lexical route, numpy's import, opening
the semantic side, encoding the question, and the shortlisted scopes' affinities (the last four
only when the route is open to the vectors' second opinion). Each question runs in its own
interpreter, as a `loci route` does, and without the editable install's import hook (the
interpreter ``bench.oneshot.plain_python`` sets up); the interpreter's own start is not counted.
The home defaults to ``$LOCI_HOME``, else ``bench/.cache/home-22`` (``python bench/prepare.py``).
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
from bench.measure import ChildFailed, run_checked  # noqa: E402
from bench.oneshot import PLAIN, plain_python  # noqa: E402  (bench/__init__: one BLAS thread)
from bench.stamp import stamp  # noqa: E402

STEPS = r'''
import json, sys, time
t0 = time.perf_counter()
from loci.query.ask import context_for, open_session
from loci.query.router import open_to_opinion, route
t1 = time.perf_counter()
q = sys.argv[1]
s = open_session()
r = route(q, s.routing_for(q), context_for(s, None, None), s.aliases(), s.params)
t2 = time.perf_counter()
out = {"imports": t1 - t0, "lexical": t2 - t1}
if open_to_opinion(r):
    import numpy
    t3 = time.perf_counter()
    side = s.semantic()
    t4 = time.perf_counter()
    side.qvec(q)
    t5 = time.perf_counter()
    p = side.route_params(s.params)
    side.affinities(q, s.indexed(), p.semantic_route_k, include=r.scopes, shortlist=p.semantic_scopes_read,
                    keep=False)
    t6 = time.perf_counter()
    out.update(numpy=t3 - t2, open_semantic=t4 - t3, encode=t5 - t4, affinities=t6 - t5)
print(json.dumps(out))
'''

DEFAULT = ("How can a class field automatically coerce whatever is passed to it?",
           "Where is `parse_shorts` defined and what calls it?",
           "How do I stop black from converting all my single-quoted strings to double quotes?")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap)
    ap.add_argument("questions", nargs="*", help="questions to route (default: three dev questions)")
    args = ap.parse_args(argv)
    home = inputs.home_dir(args.home)
    plain_python()
    print(stamp(f"home {inputs.shown(home)}"))
    for q in args.questions or DEFAULT:
        try:
            got = run_checked([str(PLAIN / "bin" / "python"), "-c", STEPS, q], env=inputs.child_env(home))
        except ChildFailed as exc:
            print(f"{q!r}: failed\n{exc.code}")
            continue
        steps = json.loads(got.strip().splitlines()[-1])
        print(f"{q[:60]!r}: " + ", ".join(f"{k} {v:.3f}" for k, v in steps.items())
              + f" = {sum(steps.values()):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
