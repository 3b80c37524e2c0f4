"""How the build side runs the transformer over chunks (numpy-free: a no-change build reads it)."""
from __future__ import annotations

from dataclasses import dataclass

from loci.kernel.config import DEFAULT_PARAMS, Params


@dataclass(frozen=True)
class EncodeSetting:
    """How the build side runs the transformer over chunks: every field changes the vectors or
    the speed, and the ones that change the vectors name them (``tag``) in each vector manifest,
    so vectors encoded one way are never silently kept beside vectors encoded another way.
    Chosen by measurement: docs/decisions/embedding-model.md, ``bench/embed_speed.py``."""

    max_tokens: int = 256       # word pieces a text is cut to (the model's own limit is 256)
    int8: str = ""              # torch dynamic int8 quantisation of Linear layers ("": none; see _quantised)
    batch_tokens: int = 0       # a batch holds about this many padded tokens (0: fixed batches of 32)
    threads: int = 0            # torch threads (0: torch's default)

    @classmethod
    def from_params(cls, params: Params) -> EncodeSetting:
        return cls(params.embed_max_tokens, params.embed_int8, params.embed_batch_tokens, params.embed_threads)

    @property
    def tag(self) -> str:
        """What changes the vectors (not the speed-only fields): part of every vector store's manifest."""
        return f"t{self.max_tokens}" + (f"-q8{self.int8}" if self.int8 else "")


BUILD_SETTING = EncodeSetting.from_params(DEFAULT_PARAMS)
"""The setting ``loci embed`` encodes the transformer's chunks and labels with."""
