"""Find duplicate files by hashing their content."""
import hashlib
from pathlib import Path


def content_hash(path):
    """SHA-256 of a file's bytes, read in 64 KiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(65536), b""):
            h.update(block)
    return h.hexdigest()


def find_duplicates(folder):
    """Group files under folder that share a content hash."""
    seen = {}
    for p in Path(folder).rglob("*"):
        if p.is_file():
            seen.setdefault(content_hash(p), []).append(p)
    return [group for group in seen.values() if len(group) > 1]
