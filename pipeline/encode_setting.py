"""How the build side runs the transformer over chunks (numpy-free: a no-change build reads it)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from loci.kernel.config import DEFAULT_PARAMS, Params

_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def native_bf16(cpuinfo: str | None = None) -> bool:
    """True when the CPU multiplies bfloat16 in hardware (AMX or AVX512-BF16 among the flags of
    /proc/cpuinfo, or of ``cpuinfo``). Read from the file, not from torch: a no-change build
    decides whether stored vectors are current without importing torch. False where unknown."""
    if cpuinfo is None:
        return _cpu_has_bf16()
    flags = {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.split(":", 1)[-1].split()}
    return any(f in flags for f in _BF16_FLAGS)


@functools.lru_cache(maxsize=1)
def _cpu_has_bf16() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            return native_bf16(fh.read())
    except OSError:
        return False


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
    bf16: bool = False          # the whole network in bfloat16 (only where the CPU has it natively)

    @classmethod
    def from_params(cls, params: Params, bf16_native: bool | None = None) -> EncodeSetting:
        """The setting ``params`` ask for on this CPU (``bf16_native``: whether it multiplies
        bfloat16 natively, read from the machine when None): bf16 where it can, else int8."""
        bf16 = params.embed_bf16 and (native_bf16() if bf16_native is None else bf16_native)
        return cls(params.embed_max_tokens, "" if bf16 else params.embed_int8, params.embed_batch_tokens,
                   params.embed_threads, bf16)

    @property
    def tag(self) -> str:
        """What changes the vectors (not the speed-only fields): part of every vector store's manifest.
        bf16 names nothing: its vectors stay within cosine 0.9998 of float32's (mean 0.99995), about
        the precision of the int8 rows they are stored as, so a home encoded in float32 elsewhere
        (the query side's numpy encoder, a CPU without bf16 and int8 off) stays current."""
        return f"t{self.max_tokens}" + (f"-q8{self.int8}" if self.int8 else "")


BUILD_SETTING = EncodeSetting.from_params(DEFAULT_PARAMS)
"""The setting ``loci embed`` encodes the transformer's chunks and labels with."""
