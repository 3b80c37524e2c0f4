"""A BERT sentence encoder in numpy: the packaged MiniLM without importing torch.

Importing torch and sentence-transformers costs 5 to 8 s here, which a
one-shot `loci ask` cannot pay. A question is a few dozen tokens, and six
layers of 384 wide are a few million multiply-adds per token, so numpy runs
the same network in milliseconds. It reads a sentence-transformers folder
whose first module is a BERT model (``config.json``, ``model.safetensors``,
``tokenizer.json``) with mean pooling, and returns L2-normalised vectors that
match sentence-transformers' to float precision (``tests/test_bert_numpy.py``
checks against a reference written with the torch model).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# Abramowitz and Stegun 7.1.26: erf to 1.5e-7, enough for float32 activations.
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: np.ndarray) -> np.ndarray:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    poly = ((((_A[4] * t + _A[3]) * t + _A[2]) * t + _A[1]) * t + _A[0]) * t
    return sign * (1.0 - poly * np.exp(-a * a))


_SQRT2 = np.float32(np.sqrt(2.0))   # a float32 scalar: a float64 one (np.sqrt's) turns float32 arrays into float64


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / _SQRT2))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


class _Tensors:
    """The float tensors of a safetensors file, read on demand (one-shot) or mapped (resident).

    The format is an 8-byte little-endian header length, a JSON header of
    name -> dtype, shape, [begin, end) offsets, then the raw bytes. The first
    ``encode`` of a process reads each layer's weights as it reaches that layer
    and drops them after, and of the 47 MB word-embedding table only the rows
    the text's tokens use: a one-shot question never holds the 90 MB model.
    From the second ``encode`` on (a server, a batch) the weights stay in memory
    (``map``): the dense layers' as C-ordered float32 copies of the transposed
    matrices (43 MB; BLAS multiplies by them ~1.4x faster than by the transposed
    view, and the products are the same to the bit: tests/test_bert_numpy.py), the
    small tensors mapped, and the word-embedding table still read a row at a time
    (a mapping of it kept every page a question had touched resident: ~30 MB after
    the 266 development questions). A tensor read for one use is freed after it; a
    dense layer's weight matrix (``dense``) is read into one buffer kept for them
    all, so at most one is held at a time. docs/decisions/footprint.md,
    docs/decisions/engine.md.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        with open(self.path, "rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            header = json.loads(fh.read(size))
        self.entries: dict[str, tuple[np.dtype, tuple[int, ...], int]] = {}
        for name, info in header.items():
            if name == "__metadata__" or info["dtype"] == "I64":   # position ids: not weights
                continue
            dtype = _DTYPES.get(info["dtype"])
            if dtype is None:
                raise BertUnsupported(f"{path}: tensor {name} has dtype {info['dtype']}")
            self.entries[name.removeprefix("bert.")] = (np.dtype(dtype), tuple(info["shape"]),
                                                        8 + size + info["data_offsets"][0])
        self.mapped: dict[str, np.ndarray] | None = None
        self._buffer: np.ndarray | None = None

    def map(self) -> None:
        """Keep the weights for every later call (see the class): dense weights as C-ordered
        copies, other tensors mapped, the word-embedding table left to ``rows``."""
        raw = np.memmap(self.path, dtype=np.uint8, mode="r")
        mapped = {}
        for name, (dtype, shape, start) in self.entries.items():
            if name == WORD_EMBEDDINGS:
                continue
            if _is_dense(name, len(shape)):
                mapped[name] = np.ascontiguousarray(self.get(name))
                continue
            count = int(np.prod(shape)) * dtype.itemsize
            mapped[name] = _as_weight(name, raw[start:start + count].view(dtype).reshape(shape))
        self.mapped = mapped

    def get(self, name: str) -> np.ndarray:
        """One tensor as float32 (dense layers' weights transposed, as used): read, or mapped."""
        if self.mapped is not None:
            return self.mapped[name]
        dtype, shape, start = self.entries[name]
        buf = np.empty(shape, dtype=dtype)
        with open(self.path, "rb") as fh:
            fh.seek(start)
            fh.readinto(memoryview(buf).cast("B"))
        return _as_weight(name, buf)

    def dense(self, name: str) -> np.ndarray:
        """A float32 dense weight (transposed, as used), read into the shared buffer: valid until
        the next ``dense`` call, so the caller uses it in one product and drops it."""
        dtype, shape, start = self.entries[name]
        if self.mapped is not None or dtype != np.float32:
            return self.get(name)
        count = int(np.prod(shape))
        if self._buffer is None or len(self._buffer) < count:
            self._buffer = np.empty(count, dtype=np.float32)
        buf = self._buffer[:count].reshape(shape)
        with open(self.path, "rb") as fh:
            fh.seek(start)
            fh.readinto(memoryview(buf).cast("B"))
        return _as_weight(name, buf)

    def rows(self, name: str, ids: np.ndarray) -> np.ndarray:
        """``tensor[ids]`` as float32, reading only those rows."""
        if self.mapped is not None and name in self.mapped:
            return self.mapped[name][ids]
        from loci.kernel.filerows import read_rows

        dtype, shape, start = self.entries[name]
        return read_rows(self.path, start, shape[1:], dtype, ids).astype(np.float32, copy=False)


WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"


def _is_dense(name: str, ndim: int) -> bool:
    """A dense layer's weight matrix, which is used transposed."""
    return name.startswith("encoder.") and name.endswith(".weight") and ndim == 2


def _as_weight(name: str, tensor: np.ndarray) -> np.ndarray:
    # dense layers' weights are used transposed (BLAS takes the transposed layout as it is)
    tensor = tensor if tensor.dtype == np.float32 else tensor.astype(np.float32)
    return tensor.T if _is_dense(name, tensor.ndim) else tensor


class BertUnsupported(ValueError):
    """The folder is not a mean-pooled BERT sentence-transformers model."""


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def bert_config_supported(cfg: dict) -> bool:
    """A ``config.json`` of the BERT this module (and ``loci_pipeline.torch_bert``) runs: absolute
    positions, GELU."""
    return (cfg.get("model_type") == "bert" and cfg.get("hidden_act") == "gelu"
            and cfg.get("position_embedding_type", "absolute") == "absolute")


def is_supported(path: Path) -> bool:
    """True when ``path`` holds a BERT model with mean pooling that this module can run."""
    path = Path(path)
    cfg = _read_json(path / "config.json")
    pooling = _read_json(path / "1_Pooling" / "config.json")
    return (bert_config_supported(cfg)
            and (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file()
            and pooling.get("pooling_mode_mean_tokens") is True
            and not any(pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                                  "pooling_mode_mean_sqrt_len_tokens")))


class NumpyBert:
    """``encode(texts)`` -> (n, hidden) float32, unit rows; the weights are read once."""

    def __init__(self, path: Path, max_length: int | None = None, vocab_agrees: bool = False):
        """``max_length``: word pieces a text is cut to (default: the model's ``max_seq_length``);
        ``vocab_agrees``: the folder's vocab.txt is known to describe its tokenizer.json (read
        the small one)."""
        from loci.query import wordpiece

        path = Path(path)
        if not is_supported(path):
            raise BertUnsupported(f"{path} is not a mean-pooled BERT sentence-transformers model")
        cfg = _read_json(path / "config.json")
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.dim = int(cfg["hidden_size"])
        st = _read_json(path / "sentence_bert_config.json")
        self.max_length = int(max_length or st.get("max_seq_length") or cfg.get("max_position_embeddings", 512))
        self.tensors = _Tensors(path / "model.safetensors")
        self.calls = 0
        self.tokenizer_path = path / "tokenizer.json"
        self.wordpiece = ((vocab_agrees and wordpiece.load_from_vocab(path, self.max_length))
                          or wordpiece.load(self.tokenizer_path, self.max_length))
        self._library = None if self.wordpiece is not None else self._library_tokenizer()

    def _library_tokenizer(self):
        if self._library is None:
            from tokenizers import Tokenizer

            self._library = Tokenizer.from_file(str(self.tokenizer_path))
            self._library.no_padding()
            self._library.enable_truncation(self.max_length)
        return self._library

    def _ids(self, texts: list[str], resident: bool) -> list[list[int]]:
        """Token ids: pure Python for a one-shot call and for one question (~0.1 ms, where the
        library's tokenizer holds ~13 MB for the life of an engine), the library for a resident
        batch (it is faster) and for what ``wordpiece`` does not cover."""
        python = self.wordpiece is not None and (not resident or len(texts) == 1)
        ids = [self.wordpiece.encode(t) if python else None for t in texts]
        rest = [i for i, x in enumerate(ids) if x is None]
        if rest:
            for i, enc in zip(rest, self._library_tokenizer().encode_batch([texts[i] for i in rest])):
                ids[i] = enc.ids
        return ids

    def _layer(self, i: int, h: np.ndarray, bias: np.ndarray) -> np.ndarray:
        p = f"encoder.layer.{i}."
        w, dense = self.tensors.get, self.tensors.dense   # each dense weight is used in one product
        n, t, d = h.shape
        hd = d // self.heads
        flat = h.reshape(n * t, d)   # products on 2-D rows: a stacked product with a transposed
        #                              weight leaves BLAS for numpy's own loop (60x slower at n=64)

        def proj(name: str) -> np.ndarray:
            out = flat @ dense(p + f"attention.self.{name}.weight") + w(p + f"attention.self.{name}.bias")
            return out.reshape(n, t, self.heads, hd).transpose(0, 2, 1, 3)

        q, k, v = proj("query"), proj("key"), proj("value")
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd)) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(n * t, d)
        attn = ctx @ dense(p + "attention.output.dense.weight") + w(p + "attention.output.dense.bias")
        flat = _layer_norm(attn + flat, w(p + "attention.output.LayerNorm.weight"),
                           w(p + "attention.output.LayerNorm.bias"), self.eps)
        mid = _gelu(flat @ dense(p + "intermediate.dense.weight") + w(p + "intermediate.dense.bias"))
        out = mid @ dense(p + "output.dense.weight") + w(p + "output.dense.bias")
        out = _layer_norm(out + flat, w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias"), self.eps)
        return out.reshape(n, t, d)

    def _batch(self, ids: list[list[int]]) -> np.ndarray:
        t = max(len(x) for x in ids)
        tok = np.zeros((len(ids), t), dtype=np.int64)
        mask = np.zeros((len(ids), t), dtype=np.float32)
        for row, x in enumerate(ids):
            tok[row, :len(x)] = x
            mask[row, :len(x)] = 1.0
        w = self.tensors.get
        h = (self.tensors.rows(WORD_EMBEDDINGS, tok)
             + w("embeddings.position_embeddings.weight")[:t] + w("embeddings.token_type_embeddings.weight")[0])
        h = _layer_norm(h, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"), self.eps)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for i in range(self.layers):
            h = self._layer(i, h, bias)
        pooled = (h * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def encode(self, texts: list[str], batch_size: int = 16) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.calls += 1
        resident = self.calls > 1 or len(texts) > batch_size
        if resident and self.tensors.mapped is None:
            self.tensors.map()   # a second call, or several batches: keep the weights
        ids = self._ids(list(texts), resident)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            out[rows] = self._batch([ids[i] for i in rows])
        return out
