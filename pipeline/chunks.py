"""The one constructor every episode chunk goes through, so none escapes redaction."""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from loci_pipeline.paths import path_kind as classify
from loci_pipeline.redact import redact

CHUNK_KINDS = ("readme", "doc", "docstring", "comment", "commit", "note")


@dataclass(frozen=True)
class Chunk:
    scope: str
    kind: str          # one of CHUNK_KINDS
    path: str          # relative to the repository root, or "commit:<sha>"
    line: int          # 1-based line of the chunk's start (0 for commits)
    heading: str
    text: str          # verbatim, already redacted
    path_kind: str     # one of loci_pipeline.paths.PATH_KINDS
    hash: str          # sha1 of the text: the key vectors are stored under
    author: str = ""
    date: str = ""     # ISO date for commits, "" otherwise
    redactions: Counter = field(default_factory=Counter, compare=False, hash=False)


def make_chunk(scope: str, kind: str, path: str, line: int, text: str, *, heading: str = "",
               path_kind: str | None = None, author: str = "", date: str = "",
               found: Counter | None = None) -> Chunk:
    """Build a chunk; the text (heading and path) is redacted here even when the caller redacted
    the whole it was cut from (``found``: what that masked, counted with the chunk)."""
    if kind not in CHUNK_KINDS:
        raise ValueError(f"unknown chunk kind {kind!r}")
    clean, found_t = redact(text)
    clean_heading, found_h = redact(heading) if heading else (heading, Counter())
    clean_path, found_p = redact(path)     # a file, folder or tag name can hold one too
    found = Counter(found or ()) + Counter(found_t) + Counter(found_h) + Counter(found_p)
    if path_kind is None:
        path_kind = "docs" if kind == "commit" else classify(path)
    digest = hashlib.sha1(clean.encode("utf-8", "replace")).hexdigest()
    return Chunk(scope=scope, kind=kind, path=clean_path, line=int(line), heading=clean_heading,
                 text=clean, path_kind=path_kind, hash=digest, author=author, date=date,
                 redactions=found)
