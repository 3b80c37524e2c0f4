"""Chunks per second of the build-side encoders on the same real texts, against the plain PyTorch one.

    nice -n 5 python bench/embed_speed.py [--home H] [--sample 1500] [--only a,b]
    nice -n 5 python bench/embed_speed.py --reencode --home COPY [--scopes a,b] [--plain | --st fp32|bf16 |
        --max-tokens N --int8 MODE --threads N --bf16 0|1]

The home defaults to ``$LOCI_HOME``, else ``bench/.cache/home-22`` (``python bench/prepare.py``).

The sample is drawn (fixed seed) from a built home's distinct chunk texts and symbol labels in
the proportion ``loci embed`` meets them. "plain" is today's path before this change: the
sentence-transformers model, 256 word pieces, batches of 32 sorted by length (timed first and
last, so a change of load on the shared machine shows as a drift between the two). Every
candidate encodes the same texts after a short warm-up; the table gives texts/s, the ratio to
plain and the cosine between each text's vector and its plain vector (mean, 1st percentile, min).
ONNX candidates run only when ``onnxruntime`` and ``onnx`` import (they are not dependencies).

``--reencode`` drops and re-encodes the given scopes' vectors in the home (a copy: it rewrites
them) through ``loci embed``'s own path under the setting the flags give
(default: the build's; ``--plain``: the path before this change; ``--st``: sentence-transformers
at the build's cut, in float32 or bfloat16), merges the summaries and
prints texts/s of that cold embed, so ``bench/eval_folds.py`` can score the result.
"""
from __future__ import annotations

import argparse
import glob
import os
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench import inputs  # noqa: E402
from bench.stamp import stamp  # noqa: E402
from loci.query.semantic import TRANSFORMER_ID, TransformerEncoder, packaged_model_path  # noqa: E402
from loci_pipeline.embed import BUILD_SETTING, BatchedBert, EncodeSetting, _encode, torch_bert  # noqa: E402


def sample_texts(home: Path, n: int, seed: int = 13) -> list[str]:
    """``n`` texts from the home's distinct chunk texts and symbol labels, in their proportion."""
    import pyarrow.parquet as pq

    chunks: set[str] = set()
    labels: set[str] = set()
    for f in sorted(glob.glob(str(home / "chunks" / "*.parquet"))):
        chunks.update(pq.read_table(f, columns=["text"]).column("text").to_pylist())
    for f in sorted(glob.glob(str(home / "symbols" / "*.parquet"))):
        labels.update(x for x in pq.read_table(f, columns=["label"]).column("label").to_pylist() if x)
    pool = sorted(chunks) + sorted(labels - chunks)
    return random.Random(seed).sample(pool, min(n, len(pool)))


def onnx_bert(path: Path, setting: EncodeSetting, int8: bool, workdir: Path) -> BatchedBert:
    """The same network exported to ONNX here (no hub), run by onnxruntime; int8: its dynamic quantiser."""
    import onnxruntime as ort
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(path), local_files_only=True).eval()
    fp32 = workdir / "model.onnx"
    if not fp32.exists():
        ids = torch.ones((2, 16), dtype=torch.long)

        class Wrapped(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask):
                return self.m(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=torch.zeros_like(input_ids)).last_hidden_state

        torch.onnx.export(Wrapped(model), (ids, ids), str(fp32), input_names=["input_ids", "attention_mask"],
                          output_names=["hidden"], dynamo=False, opset_version=17,
                          dynamic_axes={"input_ids": {0: "b", 1: "t"}, "attention_mask": {0: "b", 1: "t"},
                                        "hidden": {0: "b", 1: "t"}})
    target = fp32
    if int8:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        target = workdir / "model.int8.onnx"
        if not target.exists():
            quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = setting.threads or 2
    session = ort.InferenceSession(str(target), opts, providers=["CPUExecutionProvider"])

    def forward(tok, mask):
        return session.run(["hidden"], {"input_ids": tok, "attention_mask": mask})[0]

    return BatchedBert(Tokenizer.from_file(str(path / "tokenizer.json")), forward,
                       int(model.config.hidden_size), TRANSFORMER_ID, setting)


class SentenceTransformersBuild:
    """The build's chunk encoding done by sentence-transformers instead of ``loci_pipeline.torch_bert``:
    the same folder, cut at ``max_tokens``, its own fixed batches (``st_batch``) sorted by length;
    ``dtype`` "bf16" loads the weights in bfloat16 (``model_kwargs``), "fp32" as stored."""

    batch_size = 256   # texts per encode call, as the build's encoder

    def __init__(self, path: Path, max_tokens: int, dtype: str = "fp32", st_batch: int = 32,
                 backend: str = "torch"):
        import torch
        from sentence_transformers import SentenceTransformer

        kwargs = {"model_kwargs": {"dtype": torch.bfloat16}} if dtype == "bf16" else {}
        self._model = SentenceTransformer(str(path), device="cpu", backend=backend, **kwargs)
        self._model.max_seq_length = max_tokens
        self._st_batch = st_batch
        dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.model_id, self.dim = TRANSFORMER_ID, int(dim())
        self.encoding = EncodeSetting(max_tokens).tag

    def encode(self, texts: list[str]) -> np.ndarray:
        out = self._model.encode(list(texts), batch_size=self._st_batch, convert_to_numpy=True,
                                 normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)


class OneThread:
    """An encoder run on one torch thread (``measure`` restores the default before every run)."""

    def __init__(self, encoder):
        self._encoder = encoder
        self.model_id, self.dim, self.batch_size = encoder.model_id, encoder.dim, encoder.batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch

        torch.set_num_threads(1)
        return self._encoder.encode(texts)


def candidates(path: Path, workdir: Path) -> dict[str, object]:
    """name -> a zero-argument loader of an encoder (loaded only when measured)."""
    S = EncodeSetting
    out = {
        "plain, 1 thread": lambda: OneThread(TransformerEncoder(str(path), TRANSFORMER_ID)),
        "torch 256 b32 (plain's setting)": lambda: torch_bert(path, TRANSFORMER_ID, S(256)),
        "torch 256 by-tokens": lambda: torch_bert(path, TRANSFORMER_ID, S(256, batch_tokens=4096)),
        "torch 128 by-tokens": lambda: torch_bert(path, TRANSFORMER_ID, S(128, batch_tokens=4096)),
        "torch 96 by-tokens": lambda: torch_bert(path, TRANSFORMER_ID, S(96, batch_tokens=4096)),
    }
    for tokens, mode in ((256, "all"), (256, "inner"), (128, "all"), (128, "channel"), (128, "inner"),
                         (96, "all"), (96, "inner")):
        out[f"torch {tokens} int8-{mode} by-tokens"] = \
            lambda t=tokens, m=mode: torch_bert(path, TRANSFORMER_ID, S(t, m, 4096))
    for tokens in (256, 128):   # bfloat16: fast only where the CPU has it (AMX, AVX512-BF16)
        out[f"torch {tokens} bf16 by-tokens"] = lambda t=tokens: torch_bert(path, TRANSFORMER_ID, S(t, "", 4096, bf16=True))
    tokens = BUILD_SETTING.max_tokens
    for dtype in ("fp32", "bf16"):
        for batch in (32, 64):
            out[f"sentence-transformers {tokens} {dtype} b{batch}"] = \
                lambda d=dtype, b=batch, t=tokens: SentenceTransformersBuild(path, t, d, b)
    from importlib.util import find_spec

    if find_spec("onnxruntime") and find_spec("optimum"):   # its ONNX backend (not a dependency)
        out[f"sentence-transformers {tokens} onnx b32"] = \
            lambda t=tokens: SentenceTransformersBuild(path, t, "fp32", 32, backend="onnx")
    out[f"build setting {BUILD_SETTING.tag}, {BUILD_SETTING.threads or 'default'} thread(s)"] = \
        lambda: torch_bert(path, TRANSFORMER_ID, BUILD_SETTING)
    out[f"build setting {BUILD_SETTING.tag}, default threads"] = \
        lambda: torch_bert(path, TRANSFORMER_ID, replace(BUILD_SETTING, threads=0))
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return out
    out["onnx 128 by-tokens"] = lambda: onnx_bert(path, S(128, batch_tokens=4096), False, workdir)
    out["onnx 128 int8 by-tokens"] = lambda: onnx_bert(path, S(128, "all", 4096), True, workdir)
    return out


def timed(encoder, texts: list[str]) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    vectors = _encode(encoder, texts, lambda n: None)
    return time.perf_counter() - start, vectors


def measure(encoders: dict[str, object], texts: list[str], rounds: int) -> dict[str, tuple[float, np.ndarray]]:
    """name -> (best seconds over ``rounds`` round-robin passes, vectors): the best of interleaved
    runs is the one least disturbed by the other jobs sharing the machine."""
    import torch

    threads = torch.get_num_threads()   # what plain runs with, whatever a candidate set before it
    best: dict[str, tuple[float, np.ndarray]] = {}
    for name, enc in encoders.items():
        _encode(enc, texts[:16], lambda n: None)   # warm-up: first-call allocations
    for r in range(rounds):
        for name, enc in encoders.items():
            torch.set_num_threads(threads)
            seconds, vecs = timed(enc, texts)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, vecs)
            print(f"  round {r + 1}: {name}: {seconds:.1f} s", flush=True)
    return best


def reencode(scopes: list[str], setting: EncodeSetting | str | None) -> int:
    """Drop the scopes' vectors (a cold embed), then encode them as ``loci embed`` does under
    ``setting`` (None: the plain path this change replaced, sentence-transformers at 256)."""
    from loci.kernel.config import layout as home_layout
    from loci.query.semantic import label_vectors_path, vector_files
    from loci_pipeline.build_encoder import load_build_encoder
    from loci_pipeline.embed import embed_scope, merge_summaries, open_encoder

    lay = home_layout()
    names = scopes or sorted(p.stem for p in (lay.home / "chunks").glob("*.parquet"))
    start, total = time.perf_counter(), 0
    if isinstance(setting, str):   # "st-<dtype>": sentence-transformers at the build's cut
        encoder = SentenceTransformersBuild(packaged_model_path(), BUILD_SETTING.max_tokens, setting[3:])
    else:
        encoder = open_encoder(None, lay, setting) if setting else load_build_encoder(None, lay)
    for name in names:
        for store in (lay.vectors(encoder.model_id, name), label_vectors_path(lay, encoder.model_id, name)):
            for f in vector_files(store):
                f.unlink(missing_ok=True)
        t0 = time.perf_counter()
        r = embed_scope(name, lay, encoder)
        total += r.encoded
        print(f"  {name}: {r.encoded} encoded in {time.perf_counter() - t0:.1f} s", flush=True)
    merge_summaries(lay, encoder.model_id, sorted(p.stem for p in (lay.home / "chunks").glob("*.parquet")))
    seconds = time.perf_counter() - start
    shown = setting if isinstance(setting, str) else setting.tag if setting else "plain"
    print(f"{shown}: {total} texts in {seconds:.1f} s = "
          f"{total / max(seconds, 1e-9):.1f} texts/s (model load included)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    inputs.add_home(ap, "a built home to sample texts from; with --reencode, a copy it rewrites")
    ap.add_argument("--sample", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated substrings of candidate names to run")
    ap.add_argument("--base", default="", help="the candidate the ratios are against (default: plain, always run)")
    ap.add_argument("--reencode", action="store_true", help="re-encode LOCI_HOME's scopes (see above)")
    ap.add_argument("--scopes", default="", help="with --reencode: comma-separated scopes (default all)")
    ap.add_argument("--max-tokens", type=int, default=BUILD_SETTING.max_tokens)
    ap.add_argument("--int8", default=BUILD_SETTING.int8, help="'' none, all, channel or inner")
    ap.add_argument("--threads", type=int, default=BUILD_SETTING.threads)
    ap.add_argument("--bf16", type=int, choices=(0, 1), default=int(BUILD_SETTING.bf16),
                    help="compute in bfloat16 (default: the build's choice on this CPU)")
    ap.add_argument("--plain", action="store_true", help="with --reencode: the path before this change")
    ap.add_argument("--st", choices=("fp32", "bf16"), default="",
                    help="with --reencode: sentence-transformers in this dtype at the build's cut")
    args = ap.parse_args(argv)
    home = inputs.use_home(inputs.home_dir(args.home))
    print(stamp(f"home {inputs.shown(home)}"))
    if args.reencode:
        setting = EncodeSetting(args.max_tokens, args.int8, BUILD_SETTING.batch_tokens, args.threads, bool(args.bf16))
        chosen = f"st-{args.st}" if args.st else None if args.plain else setting
        return reencode([s for s in args.scopes.split(",") if s], chosen)
    texts = sample_texts(home, args.sample)
    path = packaged_model_path()
    print(f"{len(texts)} texts from {inputs.shown(home)} (mean {np.mean([len(t) for t in texts]):.0f} chars)\n")
    encoders = {} if args.base else {"plain": TransformerEncoder(str(path), TRANSFORMER_ID)}
    with tempfile.TemporaryDirectory(prefix="embed-speed-") as tmp:
        for name, load in candidates(path, Path(tmp)).items():
            if not args.only or any(w in name for w in args.only.split(",")) or name == args.base:
                encoders[name] = load()
        best = measure(encoders, texts, args.rounds)
    base, ref = best[args.base or "plain"]
    question = question_side_vectors(path, texts, BUILD_SETTING.max_tokens)
    print(f"\nbest of {args.rounds} interleaved rounds; base {args.base or 'plain'}; plain = sentence-transformers, 256 word pieces, "
          f"batches of 32 sorted by length; numpy = the query side's encoder (loci.query.bert_numpy) "
          f"cut at the build's {BUILD_SETTING.max_tokens} word pieces\n")
    print("| encoder | texts/s | vs base | cosine to base: mean | p1 | min | cosine to numpy: mean | min |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (seconds, vecs) in best.items():
        cos, num = np.sum(vecs * ref, axis=1), np.sum(vecs * question, axis=1)
        print(f"| {name} | {len(texts) / seconds:.1f} | {base / seconds:.2f}x | {cos.mean():.4f} "
              f"| {np.percentile(cos, 1):.4f} | {cos.min():.4f} | {num.mean():.5f} | {num.min():.5f} |")
    return 0


def question_side_vectors(path: Path, texts: list[str], max_tokens: int) -> np.ndarray:
    """The texts through the query side's numpy encoder, cut where the build cuts them."""
    from loci.query.bert_numpy import NumpyBert

    bert = NumpyBert(path, max_length=max_tokens)
    return np.concatenate([bert.encode(texts[i:i + 64]) for i in range(0, len(texts), 64)])


if __name__ == "__main__":
    raise SystemExit(main())
