"""Two build-side timings, each against its baseline in the same run, on one scope of a built home.

    python bench/build_micro.py [--home H] [--scope flask] [--texts 96]

The home defaults to ``$LOCI_HOME``, else ``bench/.cache/home-22`` (``python bench/prepare.py``).

- char-gram fit: ``loci_pipeline.lexical_fit.fit_chargrams`` against scikit-learn's
  ``TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)`` on the scope's
  query texts (what ``loci index`` fits), best of three each;
- a small embed job: the numpy BERT (no torch) against loading torch's model and encoding the
  same texts (``DeferredEncoder.SMALL_JOB`` is where the two cross).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _best(fn, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from bench import inputs

    inputs.add_home(ap)
    ap.add_argument("--scope", default="flask")
    ap.add_argument("--texts", type=int, default=96, help="texts in the small embed job")
    args = ap.parse_args(argv)
    args.home = inputs.home_dir(args.home)
    from bench.stamp import stamp

    print(stamp(f"home {inputs.shown(args.home)}"))
    import pyarrow.parquet as pq
    from sklearn.feature_extraction.text import TfidfVectorizer

    from loci_pipeline.index import GRAM_TEXT_CHARS
    from loci_pipeline.lexical_fit import fit_chargrams

    rows = pq.read_table(Path(args.home) / "chunks" / f"{args.scope}.parquet").to_pylist()
    texts = [(r["heading"] + "\n" + r["text"])[:GRAM_TEXT_CHARS] for r in rows]
    ours = _best(lambda: fit_chargrams(texts, 3, 5))
    sk = _best(lambda: TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True).fit_transform(texts))
    print(f"char-gram fit, {args.scope} ({len(texts)} texts): loci {ours:.3f} s, scikit-learn {sk:.3f} s "
          f"({ours / sk:.2f}x)")

    from loci.query.semantic import BertEncoder, TRANSFORMER_ID, packaged_model_path
    from loci_pipeline.embed import BUILD_SETTING, torch_bert

    job = [r["heading"] + "\n" + r["text"] for r in rows[: args.texts]]
    start = time.perf_counter()
    small = BertEncoder(packaged_model_path(), TRANSFORMER_ID)
    small._model.max_length = BUILD_SETTING.max_tokens
    small.encode(job)
    numpy_s = time.perf_counter() - start
    start = time.perf_counter()
    torch_bert(packaged_model_path(), TRANSFORMER_ID).encode(job)   # torch imported and loaded here
    torch_s = time.perf_counter() - start
    print(f"embed job of {len(job)} texts: numpy {numpy_s:.1f} s ({len(job) / numpy_s:.1f} texts/s), "
          f"torch with its load {torch_s:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
