"""The graphify adapter: build one scope's code graph under $LOCI_HOME, never inside the repository.

graphify (extra ``graph``) runs as ``python -m graphify extract ROOT --code-only
--no-cluster --out DIR``: AST only, no LLM, offline. A scope is up to date when
the fingerprint of its code files (index hashes at HEAD plus the working tree)
matches the one recorded at the last build; then nothing runs and graph.json
keeps its mtime, so the index step downstream sees no change either.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Sequence

from loci.kernel.config import Layout
from loci.kernel.atomic import write_bytes, write_json, write_with
from loci.kernel.dist import install_hint
from loci_pipeline.gitenv import git_env
from loci_pipeline.graph_file import read_graph_bytes

STATUSES = ("built", "uptodate", "user_graph", "no_extra", "unsupported", "failed")
INSTALL_HINT = install_hint("graph")
RECIPE = "extract --code-only --no-cluster v1"  # bump to force every graph to rebuild
TIMEOUT_SECONDS = 1800
USER_GRAPH = PurePosixPath("graphify-out") / "graph.json"

# files whose edits cannot change a code graph; everything else tracked counts as code
_NOT_CODE = {".md", ".mdx", ".rst", ".txt", ".adoc", ".html", ".htm", ".pdf", ".png", ".jpg",
             ".jpeg", ".gif", ".webp", ".svg", ".ico", ".mp4", ".mov", ".mp3", ".wav", ".docx",
             ".xlsx", ".csv", ".tsv", ".lock", ".zip", ".gz", ".tar", ".whl", ".woff", ".woff2",
             ".ttf", ".eot", ".bin", ".pyc", ".so", ".dll", ".exe", ".jar", ".class", ".o", ".a"}
_SKIP_DIRS = {".git", "graphify-out", "node_modules", ".venv", "venv", "__pycache__", "target",
              "dist", "build", ".tox", ".mypy_cache", ".pytest_cache"}


@dataclass(frozen=True)
class GraphResult:
    name: str
    status: str           # one of STATUSES
    graph: Path | None    # the graph a reader should use, if any
    message: str
    seconds: float


def graph_path(name: str, layout: Layout) -> Path:
    """loci's graph of the scope, gzip-compressed (``read_graph_bytes`` reads it)."""
    return layout.graph_dir(name) / "graph.json.gz"


def _legacy_graph(name: str, layout: Layout) -> Path:
    return layout.graph_dir(name) / "graph.json"


def _compressed(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, compresslevel=6, mtime=0)  # same graph, same bytes


def migrate_graph(name: str, layout: Layout) -> None:
    """A plain graph.json from before graphs were kept compressed becomes graph.json.gz with the
    same mtime (what the scope's index fingerprint records), so nothing is rebuilt for it."""
    legacy, ours = _legacy_graph(name, layout), graph_path(name, layout)
    if not legacy.is_file() or ours.exists():
        return
    st = legacy.stat()
    data = legacy.read_bytes()
    write_bytes(ours, _compressed(data))
    os.utime(ours, ns=(st.st_atime_ns, st.st_mtime_ns))
    record = read_record(name, layout)
    if record.get("fingerprint"):
        write_json(fingerprint_path(name, layout), {**record, "sha1": _digest(data),
                                                    "stat": _stat_key(ours).decode()})
    legacy.unlink()


def fingerprint_path(name: str, layout: Layout) -> Path:
    return layout.graph_dir(name) / "fingerprint.json"


def graph_source(name: str, root: Path, layout: Layout) -> Path | None:
    """The graph to read: the user's ``<root>/graphify-out/graph.json`` if newer than loci's, else loci's."""
    ours, theirs = graph_path(name, layout), Path(root) / USER_GRAPH
    if not ours.exists() and _legacy_graph(name, layout).exists():
        ours = _legacy_graph(name, layout)  # not migrated yet (the next graphs step does it)
    ours_m, theirs_m = _mtime(ours), _mtime(theirs)
    if theirs_m is not None and (ours_m is None or theirs_m > ours_m):
        return theirs
    return ours if ours_m is not None else None


def last_status(name: str, layout: Layout) -> str | None:
    """What the last build of this scope's graph found ("built" or "unsupported"), None if never built."""
    return read_record(name, layout).get("status")


def graphify_available() -> bool:
    """True when the ``graph`` extra (graphify) is installed for this interpreter."""
    try:
        return importlib.util.find_spec("graphify") is not None
    except (ImportError, ValueError):
        return False


def build_graph(name: str, root: Path, layout: Layout, *, excludes: Sequence[str] = (),
                force: bool = False) -> GraphResult:
    """Extract (or skip, when nothing changed) the code graph of one scope; never raises."""
    start = time.perf_counter()

    def done(status: str, message: str, graph: Path | None = None) -> GraphResult:
        return GraphResult(name, status, graph, message, round(time.perf_counter() - start, 3))

    root = Path(root)
    if not root.is_dir():
        return done("failed", f"{name}: {root} is not a directory; re-register the scope or remove it")
    if not graphify_available():
        return done("no_extra", f"code graphs need graphify: {INSTALL_HINT}")
    if not force:
        user = Path(root) / USER_GRAPH
        if graph_source(name, root, layout) == user:
            return done("user_graph", f"{name}: reading your own {USER_GRAPH} (newer than loci's)", user)
    try:
        fingerprint, code_files = code_fingerprint(root, excludes)
    except OSError as exc:
        return done("failed", f"{name}: cannot read {root}: {exc}")
    migrate_graph(name, layout)
    ours, record = graph_path(name, layout), read_record(name, layout)
    if not force and record.get("fingerprint") == fingerprint:
        if record.get("status") == "unsupported":
            shutil.rmtree(layout.graph_dir(name) / "work", ignore_errors=True)  # nothing to cache for no code
            return done("unsupported", _unsupported(name))
        if _whole(ours, record):
            if (layout.graph_dir(name) / "work").is_dir():  # a home from before the cache was packed
                _pack_cache(name, layout, layout.graph_dir(name) / "work")
            return done("uptodate", f"{name}: code unchanged since the last graph", ours)
    # a new recipe, graphify version or exclude list: graphify's own incremental cache cannot know
    # ... nor can it mend a torn graph.json it would start from
    full = force or record.get("setup") != _setup(excludes) or (ours.exists() and not _whole(ours, record))
    try:
        if code_files == 0:
            return _finish_unsupported(name, layout, fingerprint, done, excludes)
        return _extract(name, root, layout, excludes, fingerprint, full, done)
    except OSError as exc:
        return done("failed", f"{name}: cannot write under {layout.graph_dir(name)}: {exc}")


def cache_archive(name: str, layout: Layout) -> Path:
    """graphify's incremental cache of one scope, packed between builds (JSON: ~16x smaller)."""
    return layout.graph_dir(name) / "graphify-cache.tar.gz"


def _unpack_cache(name: str, layout: Layout, work: Path) -> None:
    """Lay graphify's cache and last graph back out in ``work`` so it re-reads only changed files."""
    import tarfile

    archive, ours = cache_archive(name, layout), graph_path(name, layout)
    if archive.is_file():
        try:
            with tarfile.open(archive, "r:gz") as tar:
                tar.extractall(work, filter="data")
        except (tarfile.TarError, OSError, EOFError):  # a damaged cache only costs a full extract
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            return
    if ours.is_file() and (work / "graphify-out").is_dir():
        try:
            (work / "graphify-out" / "graph.json").write_bytes(read_graph_bytes(ours))
        except (OSError, EOFError):  # a damaged graph: graphify starts from its cache alone
            pass


def _pack_cache(name: str, layout: Layout, work: Path) -> None:
    """Keep graphify's cache as one archive and drop the work folder: the home holds one graph.

    Measured on black (the largest scope here): one changed file re-extracts in 3.1 s with
    the cache and 8.2 s without; the archive is 0.4 MB where the folder was 8.4 MB.
    """
    import tarfile

    out = work / "graphify-out"
    members = [p for p in sorted(out.iterdir()) if p.name != "graph.json"] if out.is_dir() else []

    def writer(tmp: Path) -> None:
        with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
            for path in members:
                tar.add(path, arcname=f"graphify-out/{path.name}")

    if members:
        write_with(cache_archive(name, layout), writer)
    shutil.rmtree(work, ignore_errors=True)


def _extract(name, root, layout, excludes, fingerprint, full, done) -> GraphResult:
    work = layout.graph_dir(name) / "work"
    shutil.rmtree(work, ignore_errors=True)   # a folder left by an interrupted build
    work.mkdir(parents=True, exist_ok=True)
    if not full:
        _unpack_cache(name, layout, work)
    try:
        return _run_graphify(name, root, layout, excludes, fingerprint, full, done, work)
    finally:
        _pack_cache(name, layout, work)


def _run_graphify(name, root, layout, excludes, fingerprint, full, done, work) -> GraphResult:
    from loci.kernel.config import DEFAULT_PARAMS

    listed = _listed(root)
    unnamed = undecodable_paths(root, listed)  # graphify fails on a whole repository for one such name
    big = [p for p in oversized_paths(root, DEFAULT_PARAMS.max_file_bytes, listed) if p not in unnamed]
    cmd = graphify_command(root, work, [*excludes, *map(_literal_pattern, unnamed + big)], full)
    env = git_env(PYTHONHASHSEED="0")  # graphify re-execs itself without it
    try:
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return done("failed", f"{name}: graphify ran over {TIMEOUT_SECONDS} s; exclude generated "
                              f"or vendored code, then run `loci graphs --scope {shlex.quote(name)}`")
    except OSError as exc:
        return done("failed", f"{name}: could not start graphify: {exc}")
    produced = work / "graphify-out" / "graph.json"
    if proc.returncode != 0 or not produced.exists():
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-1:] or ["no output"]
        return done("failed", f"{name}: graphify failed (exit {proc.returncode}): {tail[0][:200]}; "
                              f"run `loci graphs --scope {shlex.quote(name)}` to retry")
    _mask_secrets(work / "graphify-out")
    if _symbol_count(produced, root) == 0:
        return _finish_unsupported(name, layout, fingerprint, done, excludes)
    ours = graph_path(name, layout)
    data = produced.read_bytes()
    changed = not _whole(ours, {"sha1": _digest(data)})
    if changed:
        write_bytes(ours, _compressed(data))  # identical output keeps the old mtime: no reindex downstream
    _write_record(name, layout, fingerprint, "built", excludes, _digest(data))
    message = f"{name}: graph built" if changed else f"{name}: graph re-extracted, unchanged"
    if unnamed:
        shown = ", ".join(ascii(p)[1:-1] for p in unnamed[:3]) + (" ..." if len(unnamed) > 3 else "")
        message += f" (left out {len(unnamed)} file(s) whose name is not UTF-8: {shown})"
    if big:
        shown = ", ".join(big[:3]) + (" ..." if len(big) > 3 else "")
        message += (f" (left out {len(big)} code file(s) over the {DEFAULT_PARAMS.max_file_bytes // 1_000_000} MB "
                    f"read limit: {shown})")
    return done("built", message, ours)


def _listed(root: Path) -> list[bytes]:
    """Files under ``root``, tracked or not ignored, as git names them (relative bytes)."""
    listed = _git(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]) or b""
    return [raw for raw in listed.split(b"\0") if raw]


def undecodable_paths(root: Path, listed: list[bytes] | None = None) -> list[str]:
    """Files under ``root`` (tracked or not ignored) whose names are not valid UTF-8, as
    surrogate-escaped strings relative to ``root``."""
    out = []
    for raw in _listed(root) if listed is None else listed:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            out.append(os.fsdecode(raw))
    return sorted(set(out))


def oversized_paths(root: Path, limit: int, listed: list[bytes] | None = None) -> list[str]:
    """Code files under ``root`` bigger than ``limit`` bytes (the per-file read limit the
    collector applies): left out of graphify, which would parse a generated 50 MB file for minutes."""
    out = []
    for raw in _listed(root) if listed is None else listed:
        rel = os.fsdecode(raw)
        if not _is_code(rel):
            continue
        try:
            if os.stat(Path(root) / rel).st_size > limit:
                out.append(rel)
        except OSError:
            continue
    return sorted(out)


def _literal_pattern(relpath: str) -> str:
    """An ignore pattern matching exactly this path from the root (wildcards escaped)."""
    escaped = "".join("\\" + c if c in "\\*?[]!#" else c for c in relpath)
    return "/" + escaped


def _mask_secrets(out: Path) -> None:
    """graphify keeps docstrings in node labels, in its graph and its cache: mask the secrets
    there before anything reads them (an unreadable cache file is removed)."""
    from loci_pipeline.redact import redact_strings

    for path in sorted(out.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        clean, found = redact_strings(data)
        if found:
            write_bytes(path, json.dumps(clean, ensure_ascii=False).encode("utf-8"))


def graphify_command(root: Path, out: Path, excludes: Sequence[str] = (), full: bool = False) -> list[str]:
    """graphify's AST-only extraction of ``root`` into ``out``/graphify-out (``full``: skip its cache)."""
    cmd = [sys.executable, "-m", "graphify", "extract", str(Path(root).resolve()), "--code-only",
           "--no-cluster", "--out", str(out)]
    for pattern in excludes:
        cmd += ["--exclude", pattern]
    return cmd + ["--force"] if full else cmd


def _finish_unsupported(name, layout, fingerprint, done, excludes=()) -> GraphResult:
    for stale in (graph_path(name, layout), _legacy_graph(name, layout)):
        stale.unlink(missing_ok=True)
    _write_record(name, layout, fingerprint, "unsupported", excludes)
    return done("unsupported", _unsupported(name))


def _unsupported(name: str) -> str:
    return f"{name}: no language graphify knows; the scope stays indexed from its prose"


def _symbol_count(graph: Path, root: Path) -> int:
    from loci_pipeline.structure_tables import graph_tables

    kinds = graph_tables(graph, root).symbols.column("kind").to_pylist()
    return sum(k in ("class", "function", "method") for k in kinds)


def code_fingerprint(root: Path, excludes: Sequence[str] = (), status: bytes | None = None) -> tuple[str, int]:
    """A digest of the code files' content at HEAD and in the working tree, and how many there are.
    ``status``: ``read_status(root)`` when the caller already has it (one `git status` per run)."""
    from loci_pipeline.gitread import read_status, status_entries

    digest = hashlib.sha1(_setup(excludes).encode())
    listed = _git(root, ["ls-files", "-s", "-z"])
    if listed is None:
        return _walk_fingerprint(root, digest)
    count = 0
    for rec in listed.split(b"\0"):
        if rec and _is_code(rec.split(b"\t", 1)[-1].decode("utf-8", "replace")):
            digest.update(rec + b"\n")
            count += 1
    # status paths are relative to the repository's top, whatever directory the scope is
    prefix = _repository_prefix(root)
    status = read_status(root) if status is None else status
    for rec, raw, submodule in status_entries(status or b""):
        path = raw.decode("utf-8", "replace")
        path = path[len(prefix):] if path.startswith(prefix) else path
        if not submodule and _is_code(path):
            digest.update(rec + b"|" + _stat_key(root / path) + b"\n")
            count += rec[:1] == b"?"
    return digest.hexdigest(), count


def _repository_prefix(root: Path) -> str:
    """``root`` relative to its repository's top, as git prints a prefix ("" at the top, else "a/b/")."""
    from loci_pipeline.fingerprint import repository_top

    here = Path(root).resolve()
    rel = here.relative_to(repository_top(here)).as_posix()
    return "" if rel == "." else rel + "/"


def _walk_fingerprint(root: Path, digest) -> tuple[str, int]:
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for fname in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, fname), root).replace(os.sep, "/")
            if _is_code(rel):
                digest.update(rel.encode() + b"|" + _stat_key(Path(dirpath) / fname) + b"\n")
                count += 1
    return digest.hexdigest(), count


def _is_code(relpath: str) -> bool:
    pure = PurePosixPath(relpath)
    if not pure.suffix or pure.parts[:1] == ("graphify-out",):
        return False
    return pure.suffix.lower() not in _NOT_CODE


def _stat_key(path: Path) -> bytes:
    try:
        st = path.stat()
    except OSError:
        return b"gone"
    return f"{st.st_mtime_ns}:{st.st_size}".encode()


def _git(root: Path, args: list[str]) -> bytes | None:
    from loci_pipeline.gitread import git_out

    return git_out(root, *args, timeout=120)


@functools.lru_cache(maxsize=1)
def _graphify_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("graphifyy")
    except PackageNotFoundError:
        return "unknown"


def read_record(name: str, layout: Layout) -> dict:
    """The scope's graph fingerprint record ({} when absent or damaged)."""
    from loci.kernel.jsonfile import read_state_or_none
    from loci.kernel.schemas import GRAPH_RECORD_FILE

    return read_state_or_none(fingerprint_path(name, layout), GRAPH_RECORD_FILE) or {}


def same_setup(record: dict, excludes: Sequence[str]) -> bool:
    """The graph record was written by this graphify recipe, version and excludes."""
    return record.get("setup") == _setup(excludes)


def note_git_state(name: str, layout: Layout, git: str) -> None:
    """Remember in the graph record the repository state its code fingerprint was checked at
    (the next check with the same state needs no fingerprint)."""
    record = read_record(name, layout)
    if record.get("fingerprint") and record.get("git") != git:
        write_json(fingerprint_path(name, layout), {**record, "git": git})


def _setup(excludes: Sequence[str]) -> str:
    return f"{RECIPE}|graphify {_graphify_version()}|excludes {sorted(excludes)}"


def _write_record(name: str, layout: Layout, fingerprint: str, status: str, excludes: Sequence[str],
                  digest: str | None = None) -> None:
    write_json(fingerprint_path(name, layout), {"fingerprint": fingerprint, "status": status,
                                                "setup": _setup(excludes), "built_at": time.time(),
                                                "sha1": digest, "stat": _stat_key(graph_path(name, layout)).decode()})


def graph_problem(path: Path) -> str | None:
    """Why ``path`` is not a whole graphify graph (missing, truncated, not a node list), or None."""
    try:
        data = json.loads(read_graph_bytes(path))
    except FileNotFoundError:
        return "missing"
    except (OSError, EOFError, ValueError, RecursionError) as exc:
        return f"not readable JSON ({type(exc).__name__}; truncated?)"
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        return "not a graphify graph (no node list)"
    return None


def graph_intact(name: str, layout: Layout) -> bool:
    """loci's graph of ``name`` exists and is the one last written (a torn file is rebuilt).
    A record from before digests were kept gets its digest once the graph parses whole, so
    later checks need only a stat."""
    migrate_graph(name, layout)
    graph, record = graph_path(name, layout), read_record(name, layout)
    whole = _whole(graph, record)
    if whole and not record.get("sha1") and record.get("fingerprint"):
        write_json(fingerprint_path(name, layout), {**record, "sha1": _digest(read_graph_bytes(graph)),
                                                    "stat": _stat_key(graph).decode()})
    return whole


def _whole(graph: Path, record: dict) -> bool:
    """The graph loci wrote is still there and intact (its recorded digest, else a parse)."""
    if not graph.exists():
        return False
    if record.get("sha1") and record.get("stat") == _stat_key(graph).decode():
        return True  # untouched since written whole (what a no-change run sees): no need to read it
    if isinstance(record.get("sha1"), str):
        try:
            return _digest(read_graph_bytes(graph)) == record["sha1"]
        except (OSError, EOFError):
            return False
    return graph_problem(graph) is None


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None
