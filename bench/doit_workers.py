"""doit's worker threads against its worker processes on a forced ``index`` of a home.

Alternates the two modes (``doit run -a -n N -P MODE index`` through
``loci_pipeline.runner.doit_main``) and prints wall and CPU time of each; run it on a COPY
(every scope is re-indexed):

    LOCI_HOME=$HOME_COPY python bench/doit_workers.py [--jobs 2] process thread process thread
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # run as a script: the checkout's bench package and loci
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench  # noqa: F401,E402  (one BLAS thread, as loci runs)


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv=None) -> int:
    from loci.kernel.config import layout
    from loci_pipeline.runner import RunReport, doit_main
    from loci_pipeline.tasks import home_context

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modes", nargs="+", choices=("process", "thread"))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for mode in args.modes:
        ctx = home_context(layout(), scan=False, graphs=False, embed=False, calibrate=False)
        report = RunReport()
        start, cpu = time.perf_counter(), _cpu()
        code = doit_main(ctx, report, quiet=True).run(["run", "-a", "-n", str(args.jobs), "-P", mode, "index"])
        print(f"{mode}: exit {code}, {time.perf_counter() - start:.1f} s wall, {_cpu() - cpu:.1f} s CPU, "
              f"{len(report.scopes('index'))} scopes", flush=True)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
