"""A BERT encoder in torch, built from a model folder's ``config.json`` and ``model.safetensors``.

``loci embed`` used transformers' ``AutoModel`` for this: importing transformers and building the
model through it cost 4 s of every embed process (1.5 s import, 2.5 s ``from_pretrained``) against
0.1 s here, on top of torch's own 1.5 s; a CI job that builds one bundle per repository pays it
once per repository. The modules carry BertModel's names (``encoder.layer.N.attention.self.query``
...), so the int8 rules that name layers (``loci_pipeline.embed._quantised``) read the same, and the
forward pass is BertModel's: ``tests/test_torch_bert.py`` holds the two to the same hidden states.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


class _SelfAttention(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)


class _Projection(nn.Module):
    """A dense layer, then the residual sum's layer norm (BertSelfOutput, BertOutput)."""

    def __init__(self, d_in: int, d: int, eps: float):
        super().__init__()
        self.dense = nn.Linear(d_in, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(x) + residual)


class _Attention(nn.Module):
    def __init__(self, d: int, eps: float):
        super().__init__()
        self.self = _SelfAttention(d)
        self.output = _Projection(d, d, eps)


class _Intermediate(nn.Module):
    def __init__(self, d: int, width: int):
        super().__init__()
        self.dense = nn.Linear(d, width)


class _Layer(nn.Module):
    def __init__(self, d: int, width: int, heads: int, eps: float):
        super().__init__()
        self.heads = heads
        self.attention = _Attention(d, eps)
        self.intermediate = _Intermediate(d, width)
        self.output = _Projection(width, d, eps)

    def forward(self, h: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        n, t, d = h.shape
        att = self.attention

        def split(x: torch.Tensor) -> torch.Tensor:
            return x.view(n, t, self.heads, d // self.heads).transpose(1, 2)

        ctx = F.scaled_dot_product_attention(split(att.self.query(h)), split(att.self.key(h)),
                                             split(att.self.value(h)), attn_mask=bias)
        h = att.output(ctx.transpose(1, 2).reshape(n, t, d), h)
        return self.output(F.gelu(self.intermediate.dense(h)), h)


class _Encoder(nn.Module):
    def __init__(self, layers: int, d: int, width: int, heads: int, eps: float):
        super().__init__()
        self.layer = nn.ModuleList(_Layer(d, width, heads, eps) for _ in range(layers))


class _Embeddings(nn.Module):
    def __init__(self, vocab: int, positions: int, types: int, d: int, eps: float):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(positions, d)
        self.token_type_embeddings = nn.Embedding(types, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)


class Bert(nn.Module):
    """``forward(ids, mask)`` -> the last hidden states, (batch, tokens, hidden)."""

    def __init__(self, cfg: dict):
        super().__init__()
        d, eps = int(cfg["hidden_size"]), float(cfg.get("layer_norm_eps", 1e-12))
        self.hidden_size = d
        self.embeddings = _Embeddings(int(cfg["vocab_size"]), int(cfg["max_position_embeddings"]),
                                      int(cfg.get("type_vocab_size", 2)), d, eps)
        self.encoder = _Encoder(int(cfg["num_hidden_layers"]), d, int(cfg["intermediate_size"]),
                                int(cfg["num_attention_heads"]), eps)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        emb = self.embeddings
        t = ids.shape[1]
        h = emb.LayerNorm(emb.word_embeddings(ids) + emb.position_embeddings.weight[:t]
                          + emb.token_type_embeddings.weight[0])
        # padded keys get the lowest float added: softmax gives them no weight (BertModel's mask)
        bias = (1.0 - mask[:, None, None, :].to(h.dtype)) * torch.finfo(h.dtype).min
        for layer in self.encoder.layer:
            h = layer(h, bias)
        return h


def load(path: Path) -> Bert:
    """The model in folder ``path`` (a BERT ``config.json`` and ``model.safetensors``), in eval mode.

    Raises ValueError when the folder holds something else or its weights do not fit the config."""
    from safetensors.torch import load_file

    from loci.query.bert_numpy import bert_config_supported

    path = Path(path)
    cfg = json.loads((path / "config.json").read_text())
    if not bert_config_supported(cfg):
        raise ValueError(f"{path} is not an absolute-position BERT with GELU")
    model = Bert(cfg)
    weights = {k.removeprefix("bert."): v for k, v in load_file(str(path / "model.safetensors")).items()}
    wanted = model.state_dict()
    missing = [k for k in wanted if k not in weights]
    if missing:
        raise ValueError(f"{path}: model.safetensors lacks {missing[0]} (and {len(missing) - 1} more)")
    model.load_state_dict({k: weights[k].to(wanted[k].dtype) for k in wanted})
    return model.eval()
