"""What a scope's artifacts were built from, as one comparable string.

Git HEAD, the working tree (an edited tracked file counts, by mtime and size),
every file below the scope's added globs (by mtime and size), the code
graph (loci_pipeline.staleness.graph_identity), the tokenizer's and parameters' signatures and the schema version. One
``git status`` call per scope keeps this cheap enough for a no-change rebuild
to finish in well under a second. Git runs without the repository-locating
variables a hook inherits (loci_pipeline.gitenv).
"""
from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Sequence

from loci.kernel import tokens
from loci.kernel.config import SCHEMA_VERSION, Params


def git_state(root: Path, status: bytes | None = None) -> str:
    """HEAD plus a digest of every changed or untracked file's path, mtime and size (but for
    submodules and nested repositories, scopes of their own), and of the release tags (their
    names and targets: identical clones still fingerprint alike).
    ``status``: ``read_status(root)`` when the caller already has it."""
    from loci_pipeline.gitread import read_status, status_entries

    status = read_status(root) if status is None else status
    if status is None:
        return "nogit:" + _tree_digest(root)
    head = "none"
    for rec in status.split(b"\0"):
        if rec.startswith(b"# branch.oid "):
            head = rec.split()[-1].decode()
            break
    top = repository_top(root)
    digest = hashlib.sha1()
    digest.update(_tags(top))   # the release tags: a passage of their own (collect.release_tag_chunk)
    for rec, path, submodule in status_entries(status):
        if submodule or path.endswith(b"/"):
            continue   # a submodule or a repository nested in the tree: its own scope, never read here
        digest.update(rec)
        try:
            st = os.stat(top / path.decode("utf-8", "replace"))
            digest.update(f"{st.st_mtime_ns}:{st.st_size}".encode())
        except OSError:
            digest.update(b"gone")
    return f"{head}:{digest.hexdigest()[:16]}"


def _tags(top: Path) -> bytes:
    """The repository's tags and what they point at, as written (loose files and packed-refs' lines),
    in a stable order: two clones with the same tags read alike, a new tag reads otherwise. They
    live in the common git folder, which a ``.git`` file (a worktree, a submodule) points to."""
    from loci.kernel.checkout import git_dirs

    dirs = git_dirs(top)
    git_dir = dirs[1] if dirs else top / ".git"
    found: list[bytes] = []
    tags = git_dir / "refs" / "tags"
    if tags.is_dir():
        for path in sorted(tags.rglob("*")):
            try:
                found.append(path.relative_to(tags).as_posix().encode() + b" " + path.read_bytes().strip())
            except OSError:   # a folder, or a ref gone meanwhile
                continue
    try:
        found += sorted(line for line in (git_dir / "packed-refs").read_bytes().splitlines() if b"refs/tags/" in line)
    except OSError:
        pass
    return b"\n".join(found)


def repository_top(root: Path) -> Path:
    """The repository's top directory (status paths are relative to it), found without git."""
    here = Path(root).resolve()
    for parent in (here, *here.parents):
        if (parent / ".git").exists():
            return parent
    return here


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha1()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            try:
                st = os.stat(os.path.join(dirpath, name))
            except OSError:
                continue
            digest.update(f"{dirpath}/{name}:{st.st_mtime_ns}:{st.st_size}".encode())
    return digest.hexdigest()[:16]


def globs_state(root: Path, patterns: Sequence[str]) -> str:
    """A digest of every file the globs collect (a directory stands for all files below it)."""
    from loci_pipeline.collect import glob_files  # the very files collect reads

    digest = hashlib.sha1()
    for pattern in patterns:
        digest.update(pattern.encode() + b"\0")
        for hit in glob_files(Path(root), pattern):
            try:
                st = os.stat(hit)
            except OSError:
                continue
            digest.update(f"{hit}:{st.st_mtime_ns}:{st.st_size}".encode())
    return digest.hexdigest()[:16]


# every build module a listed one imports is listed too (tests/test_index.py checks)
_BUILD_MODULES = ("collect", "comments", "help_text", "gitread", "gitenv", "prose", "definitions", "chunks", "redact",
                  "keyblocks", "paths", "facts", "dependencies", "index", "lexical_fit", "query_store",
                  "structure_tables", "table_schemas", "graph_file", "references", "uses", "manifests")


# kernel modules whose rules shape what the build writes (tokens has its own signature)
_KERNEL_MODULES = ("language", "tooling_files")


def build_sources() -> list[Path]:
    """The source files whose contents decide what a scope's artifacts hold."""
    here = Path(__file__).parent
    kernel = here.parent / "loci" / "kernel"
    return [here / f"{n}.py" for n in _BUILD_MODULES] + [kernel / f"{n}.py" for n in _KERNEL_MODULES]


@functools.lru_cache(maxsize=1)
def build_signature() -> str:
    """Changes whenever the code that turns a repository into artifacts changes (read once a process)."""
    digest = hashlib.sha1()
    for path in build_sources():
        try:
            digest.update(path.read_bytes())
        except OSError:
            pass
    return digest.hexdigest()[:12]


def scope_fingerprint(root: Path, *, excludes: Sequence[str] = (), globs: Sequence[str] = (),
                      graph: str | None = None, params: Params, git: str | None = None) -> str:
    """``git``: the scope's git_state when the caller already has it (one `git status` per run);
    ``graph``: what names the code graph (loci_pipeline.staleness.graph_identity), None for none."""
    parts = [
        f"schema={SCHEMA_VERSION}", f"tok={tokens.signature()}", f"params={params.index_signature()}",
        f"build={build_signature()}",
        f"git={git if git is not None else git_state(root)}", f"excl={','.join(sorted(excludes))}",
        f"globs={globs_state(root, globs) if globs else ''}",
        f"graph={graph or f'{0:.6f}'}", "extra=",  # kept: existing homes keep their fingerprints
    ]
    return hashlib.sha1("|".join(parts).encode()).hexdigest()
