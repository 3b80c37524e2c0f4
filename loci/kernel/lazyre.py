"""Regular expressions compiled on first use.

A one-shot command pays for every pattern its modules compile at import, and most
questions exercise a few of them: the question-analysis tables compile about 40
patterns (10 to 20 ms), of which a typical route uses under half.
"""
from __future__ import annotations

import re


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled the first time one of its methods is used."""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags, self._compiled = pattern, flags, None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def __getattr__(self, name: str):
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
