"""Embed a scope's chunks and symbol labels, encoding only what has no vector yet.

Vectors live at ``layout.vectors(model_id, scope)`` (one folder per model),
keyed by the sha1 of the text; symbol labels sit in a ``symbols/`` folder
beside them. A run encodes the hashes the file lacks, drops the ones no longer
present and leaves the file untouched when nothing changed. The static model
is distilled here, once, from the packaged transformer (``distill_static``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from loci.kernel.errors import LociError
from loci.kernel.config import DEFAULT_PARAMS, Layout
from loci.query.semantic import (
    EMBED_HINT, STATIC_ID, TRANSFORMER_ID, Encoder,
    EncoderUnavailable, force_offline,
    is_static_model, label_vectors_path, matrix_path, matrix_stamp, model_id_for,
    as_unit, manifest_copies, merged_summary_files, own_row_index, packaged_model_path, read_meta, read_store,
    read_vector_store, scope_summary_path,
    static_model_dir, vector_files,
)
from loci_pipeline.build_encoder import DeferredEncoder, load_build_encoder
from loci.kernel.atomic import write_json, write_with
from loci.kernel.vectorfiles import save_npy as _save_npy, quantize, store_from_parquet, write_vectors  # noqa: F401
from loci.kernel.vectorstore import summarised_store, summary_problem
from loci_pipeline.encode_setting import BUILD_SETTING, EncodeSetting
from loci_pipeline.windows import WordPieces, chunk_windows

Progress = Callable[[int, int], None]


class EmbedError(LociError, RuntimeError):
    """A scope cannot be embedded; the message says why and what to run."""


@dataclass(frozen=True)
class EmbedResult:
    """Counts over chunks and symbol labels together: texts encoded, vectors kept, vectors dropped."""

    encoded: int
    reused: int
    dropped: int


@dataclass
class _Plan:
    """One vector file: the texts it should cover and what it already holds."""

    path: Path
    wanted: dict[str, str]          # hash -> text, in first-seen order
    key_column: str | None          # a text column stored beside the hash ("label"), or None
    old: dict[str, np.ndarray]      # hash -> stored vector, when the file matches the encoder
    old_rows: int                   # rows on disk, whatever model wrote them
    exists: bool
    copies: list[str] | None = None       # the translated copies among the chunks (None: not tracked)
    old_copies: list[str] | None = None   # those the store's manifest names

    @property
    def todo(self) -> list[str]:
        return [h for h in self.wanted if h not in self.old]

    @property
    def reused(self) -> int:
        return sum(1 for h in self.wanted if h in self.old)

    @property
    def dropped(self) -> int:
        return self.old_rows - self.reused

    @property
    def unchanged(self) -> bool:
        return self.exists and not self.todo and self.dropped == 0 and self.copies == self.old_copies


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def _read_columns(path: Path, columns: list[str], what: str) -> dict[str, list]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path, columns=columns)
    except (OSError, ValueError, KeyError) as exc:
        raise EmbedError(f"cannot read {what} at {path} ({str(exc).splitlines()[0][:120]}): "
                         f"run `loci index` to rebuild it") from None
    return {c: table.column(c).to_pylist() for c in columns}


def _by_copy(path: Path, chunks: dict[str, list]) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(hash, text, heading) of the chunks that may get windows, and the hashes of the others:
    translated copies, which the English encoder reads as noise (the multilingual store reads
    them) and a route leaves out. A chunks file without kinds, paths or headings (written by hand
    or long ago) gives every chunk, with no heading, and no copy."""
    import pyarrow.parquet as pq

    from loci.kernel.language import is_translated_copy

    rows = len(chunks["hash"])
    names = set(pq.read_schema(path).names)
    extra = _read_columns(path, [c for c in ("heading", "kind", "path") if c in names], "the chunks")
    headings = extra.get("heading") or [""] * rows
    kinds, paths = extra.get("kind") or [""] * rows, extra.get("path") or [""] * rows
    rows, copies = [], set()
    for h, t, hd, k, p in zip(chunks["hash"], chunks["text"], headings, kinds, paths):
        if is_translated_copy(k, p):
            copies.add(h)
        else:
            rows.append((h, t, hd))
    return rows, sorted(copies - {h for h, _, _ in rows})   # a text also said in English is no copy


def encoding_of(encoder: Encoder) -> str:
    """How ``encoder`` runs its model when that changes the vectors ("" for the model run plainly)."""
    return str(getattr(encoder, "encoding", "") or "")


def stored_encoding(path: Path) -> str:
    """The encoding a vector store's manifest records ("" when none, or unreadable)."""
    from loci.kernel.vectorstore import read_manifest

    data = read_manifest(path)
    return str(data.get("encoding", "")) if data else ""


def _plan(path: Path, wanted: dict[str, str], key_column: str | None, encoder: Encoder,
          copies: list[str] | None = None) -> _Plan:
    got = read_vector_store(path)   # one read of the manifest: its model, encoding and copies too
    old: dict[str, np.ndarray] = {}
    rows = 0
    if got is not None:
        data, keys, matrix = got
        rows = len(keys)
        if str(data.get("model")) == encoder.model_id and data.get("dim") == encoder.dim \
                and str(data.get("encoding", "")) == encoding_of(encoder):
            old = dict(zip((sha1(k) for k in keys) if key_column else keys, matrix))
    elif path.is_file():  # a vector store from before schema 2 (Parquet): reuse, then replace it
        old = _legacy(path, encoder)
        rows = len(old)
    return _Plan(path, wanted, key_column, old, rows, exists=got is not None, copies=copies,
                 old_copies=manifest_copies(got[0]) if got is not None and copies is not None else None)


def _legacy(path: Path, encoder: Encoder) -> dict[str, np.ndarray]:
    """The vectors of a schema-1 Parquet vector file, keyed by hash, when the same model wrote them."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        meta = pf.schema_arrow.metadata or {}
        if meta.get(b"loci.model", b"").decode() != encoder.model_id:
            return {}
        table = pf.read(columns=["hash", "vector"])
        flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        matrix = np.asarray(flat, dtype=np.float32).reshape(len(table), -1)
    except Exception:  # unreadable or foreign: encode afresh
        return {}
    if matrix.shape[1] != encoder.dim:
        return {}
    return dict(zip(table.column("hash").to_pylist(), matrix))


def _encode(encoder: Encoder, texts: list[str], tick: Callable[[int], None]) -> np.ndarray:
    """Vectors of ``texts`` in their order; encoded shortest first so a batch pads to similar lengths."""
    size = int(getattr(encoder, "batch_size", 64)) or 64
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), encoder.dim), dtype=np.float32)
    for start in range(0, len(order), size):
        rows = order[start:start + size]
        got = np.asarray(encoder.encode([texts[i] for i in rows]), dtype=np.float32)
        if got.shape != (len(rows), encoder.dim):
            raise EmbedError(f"model {encoder.model_id} returned vectors of shape {got.shape} "
                             f"for {len(rows)} texts (expected width {encoder.dim})")
        out[rows] = got
        tick(len(rows))
    return out




def _batches(lengths: list[int], batch_tokens: int, fixed: int = 32, most: int = 256) -> list[list[int]]:
    """Row indices grouped shortest first; a group holds ``fixed`` rows, or (``batch_tokens``) as
    many as keep rows x longest length within the budget (at least one, at most ``most``)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for i in order:
        group = groups[-1] if groups else None
        if group is not None and len(group) < (most if batch_tokens else fixed) and \
                (not batch_tokens or (len(group) + 1) * lengths[i] <= batch_tokens):
            group.append(i)
        else:
            groups.append([i])
    return groups


class BatchedBert:
    """A mean-pooled BERT sentence encoder over any forward pass ``forward(ids, mask) -> hidden``:
    texts are tokenised once, cut to ``max_tokens``, grouped by length so a batch pads little,
    and the unit mean of each text's token states is returned in the texts' order."""

    batch_size = 256    # texts per ``encode`` call (sorted by length already): a progress tick every few seconds

    def __init__(self, tokenizer, forward, dim: int, model_id: str, setting: EncodeSetting):
        tokenizer.no_padding()
        tokenizer.enable_truncation(setting.max_tokens)
        self._tokenizer, self._forward, self.setting = tokenizer, forward, setting
        self.dim, self.model_id, self.encoding = dim, model_id, setting.tag

    def encode(self, texts: list[str]) -> np.ndarray:
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        for rows in _batches([len(x) for x in ids], self.setting.batch_tokens):
            width = max(len(ids[i]) for i in rows)
            tok = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                tok[r, :len(ids[i])] = ids[i]
                mask[r, :len(ids[i])] = 1
            hidden = np.asarray(self._forward(tok, mask), dtype=np.float32)
            pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


def _quantised(model, mode: str):
    """``model`` with Linear layers quantised to int8 (weights fixed, activations per batch):
    "all" every one, per tensor (torch's default); "channel" every one, per output channel;
    "inner" per channel, all but the attention and feed-forward output projections."""
    import warnings

    import torch
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig

    if mode not in ("all", "channel", "inner"):
        raise ValueError(f"unknown int8 mode {mode!r}")
    qconfig = default_dynamic_qconfig if mode == "all" else per_channel_dynamic_qconfig
    spec = {name: qconfig for name, mod in model.named_modules()
            if isinstance(mod, torch.nn.Linear) and (mode != "inner" or not name.endswith("output.dense"))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch's notice that this API moves to torchao
        return torch.ao.quantization.quantize_dynamic(model, spec)


def torch_bert(path: Path, model_id: str, setting: EncodeSetting = BUILD_SETTING) -> BatchedBert:
    """The BERT model at ``path`` in torch under ``setting`` (int8: Linear layers quantised dynamically),
    built by ``loci_pipeline.torch_bert`` without importing transformers."""
    force_offline()
    try:
        import torch
        from tokenizers import Tokenizer

        from loci_pipeline.torch_bert import load
    except ImportError:
        raise EncoderUnavailable(f"semantic search needs the embed extra: {EMBED_HINT}") from None
    path = Path(path)
    try:
        model = load(path)
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    except Exception as exc:
        raise EncoderUnavailable(f"cannot load the model at {path}: {str(exc).splitlines()[0][:160]}") from None
    threads = setting.threads or torch.get_num_threads()
    if setting.int8:
        model = _quantised(model, setting.int8)
    if setting.bf16:
        # the whole network in bfloat16, not autocast: autocast keeps the residual stream and the
        # layer norms in float32 and casts at every product (1.6x slower here); the vectors stay
        # within cosine 0.9998 of float32's (docs/decisions/embedding-model.md)
        model = model.to(torch.bfloat16)

    def forward(tok: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        with torch.inference_mode():
            return model(torch.from_numpy(tok), torch.from_numpy(mask)).float().numpy()

    return BatchedBert(tokenizer, forward, model.hidden_size, model_id, setting)


def store_as_parquet(path: Path, key_column: str) -> bytes:
    """The vector store ``path`` names as one Parquet table: ``key_column`` (hash or label),
    ``vector`` (float32 unit rows) and the model in the schema metadata. The form a bundle
    carries; the same store gives the same bytes."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    got = read_vector_store(path)
    if got is None:
        raise EmbedError(f"the vectors at {matrix_path(path)} are unreadable or torn: run `loci embed`")
    data, keys, matrix = got
    dim = int(data["dim"])
    table = pa.table({key_column: pa.array(keys, pa.string()),
                      "vector": pa.FixedSizeListArray.from_arrays(
                          pa.array(np.ascontiguousarray(matrix, np.float32).reshape(-1), pa.float32()), dim)})
    copies = manifest_copies(data)
    table = table.replace_schema_metadata({b"loci.model": str(data["model"]).encode(),
                                           b"loci.dim": str(dim).encode(),
                                           b"loci.encoding": str(data.get("encoding", "")).encode(),
                                           **({b"loci.copies": json.dumps(copies).encode()} if copies is not None else {})})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def _write(plan: _Plan, fresh: dict[str, np.ndarray], encoder: Encoder) -> None:
    hashes = list(plan.wanted)
    matrix = np.zeros((len(hashes), encoder.dim), dtype=np.float32)
    for i, h in enumerate(hashes):
        matrix[i] = fresh[h] if h in fresh else plan.old[h]
    keys = [plan.wanted[h] for h in hashes] if plan.key_column else hashes
    write_vectors(plan.path, keys, matrix, encoder.model_id, encoder.dim, encoding=encoding_of(encoder),
                  copies=plan.copies)


def embed_scope(name: str, layout: Layout, encoder: Encoder, *, progress: Progress | None = None,
                overlap: int = DEFAULT_PARAMS.embed_window_overlap) -> EmbedResult:
    """Bring the scope's chunk (and symbol-label) vectors up to date under ``encoder``; atomic per file.
    An encoder with a ``reach`` (``loci_pipeline.windows.Reach``) also gets the windows of every
    chunk longer than it reads (``overlap``: word pieces a window repeats; 0: none)."""
    chunks_path = layout.chunks(name)
    if not chunks_path.is_file():
        raise EmbedError(f"scope {name!r} has no episode store yet: run `loci index`")
    chunks = _read_columns(chunks_path, ["hash", "text"], "the chunks")
    wanted = dict(zip(chunks["hash"], chunks["text"]))
    windowed, copies = _by_copy(chunks_path, chunks)
    reach = getattr(encoder, "reach", None)
    if reach is not None and overlap > 0:   # a chunk longer than the encoder reads: its tail as windows too
        wanted.update(chunk_windows(windowed, reach, overlap))
    plans = [_plan(layout.vectors(encoder.model_id, name), wanted, None, encoder, copies)]
    symbols_path = layout.symbols(name)
    label_path = label_vectors_path(layout, encoder.model_id, name)
    if symbols_path.is_file():
        labels = [lab for lab in _read_columns(symbols_path, ["label"], "the symbols")["label"] if lab]
        plans.append(_plan(label_path, {sha1(lab): lab for lab in labels}, "label", encoder))
    dropped_files = 0
    if not symbols_path.is_file() and (read_meta(label_path) or label_path.is_file()):  # the structure store went away
        dropped_files = len(read_store(label_path)[0])
        for path in (*vector_files(label_path), label_path, label_path.with_suffix(".keys.npy")):
            path.unlink(missing_ok=True)

    total = sum(len(p.todo) for p in plans)
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    if progress:
        progress(0, total)
    expect = getattr(encoder, "expect", None)
    if expect is not None and total:
        expect(total)
    for plan in plans:
        if plan.unchanged:
            continue
        todo = plan.todo
        vectors = _encode(encoder, [plan.wanted[h] for h in todo], tick)
        _write(plan, dict(zip(todo, vectors)), encoder)
    refresh_summary(layout, encoder.model_id, name, changed=not plans[0].unchanged)
    return EmbedResult(encoded=total, reused=sum(p.reused for p in plans),
                       dropped=sum(p.dropped for p in plans) + dropped_files)


# --- the summaries a one-shot second opinion reads first ---------------------------------------

SUMMARY_ROUNDS = 50   # Lloyd iterations at most (a scope's few thousand rows settle in ten or twenty)


def summarise(matrix: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """``k`` unit rows standing for a scope's chunk vectors: k-means centroids (every row when
    there are no more than ``k``), seeded k-means++ then Lloyd's iterations, deterministic.

    scikit-learn's ``KMeans`` computed the same kind of centroids, but importing it costs 2.6 s,
    a fifth of a five-repository cold embed (docs/decisions/footprint.md, "Libraries")."""
    matrix = np.asarray(matrix, np.float32)
    if len(matrix) <= k:
        return matrix.copy()
    rng = np.random.default_rng(seed)
    sq = np.einsum("ij,ij->i", matrix, matrix)
    centres = [matrix[rng.integers(len(matrix))]]
    nearest = sq - 2 * matrix @ centres[0] + centres[0] @ centres[0]
    for _ in range(1, k):   # k-means++: each next seed drawn in proportion to its squared distance
        weights = np.maximum(nearest, 0)
        total = float(weights.sum())
        pick = int(rng.choice(len(matrix), p=weights / total)) if total > 0 else int(rng.integers(len(matrix)))
        centres.append(matrix[pick])
        nearest = np.minimum(nearest, sq - 2 * matrix @ matrix[pick] + matrix[pick] @ matrix[pick])
    centres = np.array(centres, dtype=np.float32)
    labels = None
    for _ in range(SUMMARY_ROUNDS):
        dist = sq[:, None] - 2 * matrix @ centres.T + np.einsum("ij,ij->i", centres, centres)[None, :]
        new = dist.argmin(axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            members = matrix[labels == j]
            if len(members):   # an emptied cluster keeps its centre
                centres[j] = members.mean(axis=0)
    norms = np.linalg.norm(centres, axis=1, keepdims=True)
    return (centres / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def refresh_summary(layout: Layout, model_id: str, name: str, changed: bool) -> None:
    """The scope's summary of ``model_id`` written again when its store ``changed``, or when it is
    missing or unreadable."""
    summary = scope_summary_path(layout, model_id, name)
    if changed or not summary.is_file() or summary_problem(summary) is not None:
        write_scope_summary(layout, model_id, name)


def write_scope_summary(layout: Layout, model_id: str, name: str, k: int = DEFAULT_PARAMS.semantic_summary_k) -> None:
    """The scope's summary from its chunks' own vectors, not their windows (no file when unreadable);
    of the multilingual encoder (``MULTILINGUAL_ID``): from its multilingual store
    (``loci.kernel.vectorstore.summarised_store``)."""
    target = scope_summary_path(layout, model_id, name)
    got = read_vector_store(summarised_store(layout, model_id, name))
    if got is None:
        target.unlink(missing_ok=True)
        return
    data, keys, matrix = got
    own = own_row_index(keys, set(manifest_copies(data) or ()))   # as a route reads them
    rows = summarise(matrix[own], k).astype(np.float16)   # no rows for a scope with no chunks
    write_with(target, lambda tmp: _save_npy(tmp, rows))


def merge_summaries(layout: Layout, model_id: str, names) -> None:
    """Every scope's summary in one file (``loci.query.semantic.merged_summary_files``), the matrix
    before its manifest: a one-shot second opinion maps it and reads only the best scopes' vectors."""
    parts, spans, start = [], [], 0
    for name in sorted(names):
        path = scope_summary_path(layout, model_id, name)
        if summary_problem(path) is not None:      # emptied or torn: made again from the vectors
            write_scope_summary(layout, model_id, name)
        try:
            rows = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError):
            continue
        if rows.ndim != 2 or not len(rows):
            continue
        parts.append(rows.astype(np.float16))
        spans.append([name, start, start + len(rows)])
        start += len(rows)
    npy, manifest = merged_summary_files(layout, model_id)
    if not parts:
        npy.unlink(missing_ok=True)
        manifest.unlink(missing_ok=True)
        return
    # float32 unit rows: the reader multiplies the mapped file as it is (a thousand scopes' rows
    # made unit at every question cost a one-shot 0.1 s; these cost 1 ms, the same cosines)
    matrix = as_unit(np.concatenate(parts))
    write_with(npy, lambda tmp: _save_npy(tmp, matrix))
    write_json(manifest, {"model": model_id, "scopes": spans, "matrix": matrix_stamp(npy), "unit": True})


def open_encoder(name: str | None, layout: Layout, setting: EncodeSetting = BUILD_SETTING) -> Encoder:
    """The build side's ``load_encoder``: distils the static model first when it is the one asked
    for, and runs a mean-pooled BERT (the default transformer) as ``setting`` says: torch for a
    big job, the same network in numpy, cut to the same length, for a small one (no torch import)."""
    model_id = model_id_for(name)
    if model_id == STATIC_ID:
        ensure_static_model(layout)
    encoder = load_build_encoder(name, layout)
    if not isinstance(encoder, DeferredEncoder):
        return encoder
    path = packaged_model_path() if model_id == TRANSFORMER_ID else Path(str(name)).expanduser()
    encoder = DeferredEncoder(lambda: torch_bert(path, model_id, setting), model_id, encoder.dim,
                              small=lambda: NumpyBuild(path, model_id, setting))
    encoder.batch_size, encoder.encoding = BatchedBert.batch_size, setting.tag
    encoder.reach = WordPieces(path / "tokenizer.json", setting.max_tokens)
    return encoder


class NumpyBuild:
    """The query side's numpy BERT, cut at ``setting.max_tokens`` like the build side's torch run."""

    def __init__(self, path: Path, model_id: str, setting: EncodeSetting):
        from loci.query.bert_numpy import NumpyBert

        self._bert = NumpyBert(Path(path), max_length=setting.max_tokens)
        self.model_id, self.dim = model_id, self._bert.dim

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._bert.encode(list(texts))


# --- the static model ------------------------------------------------------------------------

def ensure_static_model(layout: Layout, *, source: Path | None = None,
                        distill: Callable[[Path, Path], None] | None = None) -> Path:
    """The distilled static model's folder, distilling it first if absent (into a temp dir, then renamed)."""
    target = static_model_dir(layout)
    if is_static_model(target):
        return target
    source = Path(source) if source is not None else packaged_model_path()
    distill = distill or distill_static
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        distill(source, tmp)
        if not is_static_model(tmp):
            raise EmbedError(f"distilling {source} left an incomplete model; nothing was installed")
        if target.exists():  # a torn folder left by hand: replace it whole
            shutil.rmtree(target)
        try:
            os.replace(tmp, target)
        except OSError:
            if not is_static_model(target):  # lost a race only if the winner finished
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


_UNUSED = re.compile(r"^\[unused\d+\]$")


def distill_static(source: Path, out: Path, *, pca_dims: int = 256, sif: float = 1e-4) -> None:
    """Write a model2vec model distilled from the transformer at ``source`` into ``out``.

    Each vocabulary token is run through the transformer alone (between the
    tokenizer's special tokens) and mean-pooled; the table is reduced by PCA
    and weighted by a Zipf-estimated SIF weight, as model2vec's own recipe does.
    """
    force_offline()
    try:
        import torch
        from safetensors.numpy import save_file
        from tokenizers import Tokenizer

        from loci_pipeline.torch_bert import load
    except ImportError:
        raise EncoderUnavailable(f"distilling the static model needs the embed extra: {EMBED_HINT}") from None
    source, out = Path(source), Path(out)
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_padding()  # the packaged tokenizer pads every input to 128 tokens
    tokenizer.no_truncation()
    model = load(source)
    size = tokenizer.get_vocab_size()
    specials = set(tokenizer.get_added_tokens_decoder())
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1])
    keep = np.array([i for tok, i in vocab if i not in specials and not _UNUSED.match(tok)], dtype=np.int64)
    around = tokenizer.encode("", add_special_tokens=True).ids
    prefix, suffix = around[:1], around[1:]

    hidden = np.zeros((len(keep), model.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(keep), 1024):
            ids = torch.as_tensor(keep[start:start + 1024]).unsqueeze(1)
            n = ids.shape[0]
            seq = torch.cat([torch.tensor([prefix] * n, dtype=torch.long).reshape(n, -1), ids,
                             torch.tensor([suffix] * n, dtype=torch.long).reshape(n, -1)], dim=1)
            states = model(seq, torch.ones_like(seq))
            hidden[start:start + n] = states.mean(dim=1).float().numpy()

    centred = hidden - hidden.mean(axis=0)
    eigvals, eigvecs = np.linalg.eigh(centred.T @ centred / max(len(centred) - 1, 1))
    components = eigvecs[:, ::-1][:, :min(pca_dims, hidden.shape[1])]
    reduced = centred @ components
    reduced *= np.sign(reduced[np.abs(reduced).argmax(axis=0), np.arange(reduced.shape[1])])
    rank = 1.0 / np.arange(2, len(keep) + 2)
    reduced *= (sif / (sif + rank / rank.sum()))[:, None]

    table = np.zeros((size, reduced.shape[1]), dtype=np.float16)
    table[keep] = reduced.astype(np.float16)
    out.mkdir(parents=True, exist_ok=True)
    save_file({"embeddings": table}, str(out / "model.safetensors"))
    tokenizer.save(str(out / "tokenizer.json"))
    (out / "config.json").write_text(json.dumps({
        "model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": int(table.shape[1]),
        "normalize": True, "apply_pca": pca_dims, "sif_coefficient": sif, "embedding_dtype": "float16",
        "loci": {"model_id": STATIC_ID, "source": str(source)},
    }, indent=2) + "\n")
