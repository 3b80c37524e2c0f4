"""One-shot `route` and `ask` timed as separate processes, side by side, interleaved question by
question so every implementation sees the same machine load.

    python bench/oneshot.py [--impl new=.:HOME] [--impl old=OLD_CHECKOUT:HOME]
                            [--ref BIN_DIR:REF_HOME] [--questions 20] [--shared DIR] [--json OUT]
                            [--mode cold|warm|first] [--foreign]

Each ``--impl`` is a checkout (byte-compiled first, as an install is, and run through a console
script as an install writes it, without the editable install's import hook: ``plain_python``) and
the home it reads (without ``--impl``: this clone on ``$LOCI_HOME``, else ``bench/.cache/home-22``,
which ``python bench/prepare.py`` builds); ``--ref`` is the folder of the reference's ``loci`` and its home. Measured per command: p50
p90 and p95 wall seconds and peak RSS (MB) over the dev questions asked without a working directory:
``route`` (with the second opinion), ``ask`` (semantic ranking), and the reference's ``route``
and ``ask --fast``; also CPU seconds (user + system), which a loaded machine inflates less than
wall time. Numbers are only comparable within one run.

``--mode`` says how loci's warm engine (docs/decisions/engine.md) takes part: ``cold`` (the
default) answers every question in its own process (``LOCI_SERVER=off``); ``warm`` asks one
warm-up question per home first, which starts the engine, and then times questions it answers
(its resident memory is reported at the end); ``first`` times each question as the first one
of a home with no engine (answered in-process, starting one), stopping the engine between.
Both time the in-process one-shot (``--no-server``) alongside, as the same run's baseline.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import inputs  # noqa: E402
from bench.measure import run_checked, run_measured  # noqa: E402
from bench.stamp import stamp  # noqa: E402
from bench.tools import OFFLINE  # noqa: E402


def spread(rows: list[dict], n: int) -> list[dict]:
    step = max(1, len(rows) // n)
    return rows[::step][:n]


def questions_asked(rows: list[dict], n: int, foreign: bool = False) -> list[str]:
    """``n`` questions spread over the labelled ones asked without a working directory; with
    ``foreign``, over those not in English only."""
    from loci.kernel.language import question_is_foreign

    rows = [r for r in rows if not r.get("cwd") and (not foreign or question_is_foreign(r["question"]))]
    return [r["question"] for r in spread(rows, n)]


PLAIN = ROOT / "bench" / ".cache" / "plain-python"


def plain_python() -> str:
    """A ``loci`` console script, as an install writes it, run by an interpreter that sees this
    venv's packages as an installed loci's would, without the editable install's import hook,
    which costs every command ~18 ms a user's install doesn't pay (``python -m`` another ~7).

    A venv of its own whose one ``.pth`` line names this venv's site-packages: a directory named
    that way is on the path, but the ``.pth`` files inside it (the editable hook) are not run.
    """
    import site
    import venv

    py = PLAIN / "bin" / "python"
    if not py.exists():
        venv.EnvBuilder(with_pip=False, symlinks=True).create(PLAIN)
    lib = next(PLAIN.glob("lib/python*/site-packages"))
    (lib / "main-venv.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    script = PLAIN / "bin" / "loci"      # what pip writes for the console script
    script.write_text(f"#!{py}\nimport sys\nfrom loci.front.cli import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n")
    script.chmod(0o755)
    return str(script)


def engine(exe: list[str], env: dict, action: str) -> dict | None:
    """``loci server ACTION`` for one implementation: the status object, or None after a stop
    (waiting until the engine has gone)."""
    if action == "status":
        got = subprocess.run([*exe, "server", "status", "--json"], env=env, cwd="/", capture_output=True,
                             text=True, timeout=60)
        return json.loads(got.stdout) if got.returncode == 0 else {"running": False}
    subprocess.run([*exe, "server", "stop"], env=env, cwd="/", capture_output=True, timeout=60)
    for _ in range(200):
        if not (engine(exe, env, "status") or {}).get("running"):
            break
        time.sleep(0.05)
    return None


def warm_up(exe: list[str], env: dict, question: str) -> None:
    """Ask one question (answered in-process; it starts the engine) and wait until the engine answers."""
    subprocess.run([*exe, "route", "--json", "--no-cwd", "--", question], env=env, cwd="/",
                   capture_output=True, timeout=120)
    wait_running(exe, env)


def wait_running(exe: list[str], env: dict) -> None:
    """Until the engine answers and has loaded and warmed its session."""
    for _ in range(600):
        if engine(exe, env, "status").get("ready"):
            return
        time.sleep(0.1)
    raise SystemExit("the warm engine did not start")


def commands(args) -> list[tuple[str, list[str], dict]]:
    """(label, argv prefix, env) of every command to time."""
    out = []
    loci = plain_python()
    for spec in args.impl:
        name, rest = spec.split("=", 1)
        checkout, home = rest.split(":", 1)
        checkout, home = str(Path(checkout).resolve()), str(Path(home).resolve())   # run from /
        run_checked([sys.executable, "-m", "compileall", "-q", f"{checkout}/loci", f"{checkout}/pipeline"])
        env = {**os.environ, **OFFLINE, "LOCI_HOME": home, "PYTHONPATH": checkout}
        if args.mode == "cold":
            env["LOCI_SERVER"] = "off"
        else:
            env.pop("LOCI_SERVER", None)
        exe = [loci]
        out += [(f"{name} route", [*exe, "route", "--json", "--no-cwd", "--"], env),
                (f"{name} ask", [*exe, "ask", "--json", "--no-cwd", "--"], env)]
        if args.mode != "cold":   # the one-shot baseline, in the same run
            out += [(f"{name} route in-process", [*exe, "route", "--json", "--no-cwd", "--no-server", "--"], env),
                    (f"{name} ask in-process", [*exe, "ask", "--json", "--no-cwd", "--no-server", "--"], env)]
    if args.ref:
        bin_dir, home = (str(Path(x).resolve()) for x in args.ref.split(":", 1))
        env = {**os.environ, **OFFLINE, "LOCI_HOME": home}
        env.pop("PYTHONPATH", None)
        exe = [str(Path(bin_dir) / "loci")]
        out += [("reference route", [*exe, "route", "--json", "--no-cwd", "--"], env),
                ("reference ask --fast", [*exe, "ask", "--json", "--fast", "-k", "5", "--no-cwd", "--"], env)]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", action="append", default=[], help="NAME=CHECKOUT:HOME")
    ap.add_argument("--ref", help="BIN_DIR:HOME of the reference")
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--questions-file", type=Path, help="the labelled questions (default: "
                    "corpus/dev-questions.jsonl of --shared)")
    inputs.add_shared(ap)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--mode", choices=("cold", "warm", "first"), default="cold",
                    help="loci's warm engine: off, started by a warm-up question, or timed starting")
    ap.add_argument("--foreign", action="store_true",
                    help="only the questions not in English (those the multilingual encoder reads)")
    args = ap.parse_args(argv)
    qfile = inputs.questions_file(args.questions_file, args.shared)
    rows = [json.loads(line) for line in qfile.read_text().splitlines() if line.strip()]
    qs = questions_asked(rows, args.questions, args.foreign)
    if not qs:
        inputs.fail(f"no question of {qfile} to time ({'not in English, ' if args.foreign else ''}asked "
                    "without a working directory)", "pass --questions-file with such questions"
                    + ("" if not args.foreign else ", or drop --foreign"))
    if not args.impl:
        args.impl = [f"loci={ROOT}:{inputs.home_dir()}"]
    for spec in args.impl:
        if "=" not in spec or ":" not in spec.split("=", 1)[1]:
            inputs.fail(f"--impl {spec!r} is not NAME=CHECKOUT:HOME", "e.g. --impl new=.:bench/.cache/home-22")
        inputs.home_dir(spec.split("=", 1)[1].split(":", 1)[1])
    print(stamp())
    cmds = commands(args)
    times: dict[str, list[float]] = {label: [] for label, _, _ in cmds}
    cpus: dict[str, list[float]] = {label: [] for label, _, _ in cmds}
    peaks: dict[str, list[int]] = {label: [] for label, _, _ in cmds}
    ours = {label: (argv_[:1], env) for label, argv_, env in cmds
            if not label.startswith("reference") and "--no-server" not in argv_}
    if args.mode == "warm":
        for exe, env in {e["LOCI_HOME"]: (x, e) for x, e in ours.values()}.values():
            engine(exe, env, "stop")
            warm_up(exe, env, "warm up")
    for q in qs:
        for label, argv_, env in cmds:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            m = run_measured([*argv_, q], env=env, cwd="/", timeout=120)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if args.mode == "first" and label in ours:   # the engine it started warms, then leaves, untimed
                wait_running(argv_[:1], env)
                engine(argv_[:1], env, "stop")
            if not m.ok:
                print(f"{label} failed on {q!r}: {m.error_line()}", file=sys.stderr)
                continue
            times[label].append(m.wall_s)
            cpus[label].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if m.peak_rss_kb:
                peaks[label].append(m.peak_rss_kb)
    out = {}
    for label in times:
        t = sorted(times[label])
        if not t:
            continue
        out[label] = {"n": len(t), "p50_s": round(statistics.median(t), 3),
                      "cpu_p50_s": round(statistics.median(cpus[label]), 3),
                      "p90_s": round(t[min(len(t) - 1, int(0.9 * len(t)))], 3),
                      "p95_s": round(t[min(len(t) - 1, int(0.95 * len(t)))], 3),
                      "peak_rss_mb": round(max(peaks[label]) / 1024, 1) if peaks[label] else None}
        print(f"{label:24s} p50 {out[label]['p50_s']:.3f} s  p90 {out[label]['p90_s']:.3f} s  "
              f"p95 {out[label]['p95_s']:.3f} s  "
              f"cpu p50 {out[label]['cpu_p50_s']:.3f} s  "
              f"peak {out[label]['peak_rss_mb']} MB  (n={len(t)})")
    if args.mode != "cold":
        for exe, env in {e["LOCI_HOME"]: (x, e) for x, e in ours.values()}.values():
            info = engine(exe, env, "status")
            if info.get("running"):
                out[f"engine {env['LOCI_HOME']}"] = {k: info.get(k) for k in
                                                      ("questions", "rss_mb", "rss_anon_mb", "cached_mb")}
                print(f"engine of {env['LOCI_HOME']}: {info.get('questions')} questions, "
                      f"{info.get('rss_mb')} MB resident ({info.get('rss_anon_mb')} MB anonymous, "
                      f"{info.get('cached_mb')} MB in its byte budget)")
            engine(exe, env, "stop")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
