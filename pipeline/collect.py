"""Collect one scope: list its files, read the ones worth reading, and return episode chunks
plus the raw vocabulary for routing (definitions and file paths).

Listing prunes dependency, build and dot directories instead of filtering after a full
walk, never follows symlinks, and never opens a file that exists to hold secrets.
Files that are not valid UTF-8 are not skipped: a byte order mark decodes UTF-16 and UTF-32, a
legacy 8-bit file (more invalid UTF-8 than valid) reads as Windows-1252 (``non_utf8_legacy``), and
the rest as UTF-8 with replacement characters (``non_utf8_replaced``). CRLF line endings are
read as LF, so no chunk carries a carriage return and line numbers are the editor's. A Git LFS
pointer (the file's content never fetched) is skipped and counted. A leading license header
comment is skipped.
Every text is redacted whole (a file, a commit message) before it is cut into chunks,
so a secret that spans a chunk boundary is still caught.
"""
from __future__ import annotations

import codecs
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from loci.kernel.config import DEFAULT_PARAMS, Params
from loci.kernel.tooling_files import TOOLING_NOTES
from loci_pipeline import comments, references
from loci_pipeline.chunks import Chunk, make_chunk
from loci_pipeline.definitions import language
from loci_pipeline.gitread import git_out
from loci_pipeline.help_text import help_strings
from loci_pipeline.paths import path_kind
from loci_pipeline.prose import sections
from loci_pipeline.redact import is_secret_file, redact


COLLECTOR_VERSION = 5   # bump when what is collected changes, so fingerprints move (2: guides read whole;
                        # 3: legacy and wide encodings, CRLF, LFS pointers; 4: a top-level VERSION file,
                        # docs sources in doc/build/; 5: noxfile, mkdocs, Read the Docs, Sphinx files as notes)

PRUNED_DIRS = frozenset({"node_modules", "bower_components", "Pods", "site-packages", "vendor",
                         "dist", "build", "target", "_build", "_site", "out", "__pycache__",
                         ".venv", "venv"})
KEPT_DOT_DIR = ".github"          # top-level only, its files only: SECURITY.md and friends
PROSE_EXTS = {"md": "md", "markdown": "md", "mdx": "md", "rst": "rst", "adoc": "adoc",
              "asciidoc": "adoc"}
MANIFESTS = frozenset({"pyproject.toml", "setup.py", "setup.cfg", "package.json", "cargo.toml",
                       "go.mod", "tox.ini", "makefile"})
# a project's notes: its legal texts, and its guides, which are read whole (how to run its tests
# is often a contributing guide's fifth section); a licence's legal text and a manifest's tables
# say what their first pieces say (NOTE_MAX_PIECES)
_GUIDES = r"contributing|security|support"
_NOTE_NAME = re.compile(r"(?i)(licen[sc]e|copying|unlicense|code_of_conduct|" + _GUIDES + r")([.\-_].*)?")
_GUIDE_NAME = re.compile(r"(?i)(" + _GUIDES + r")([.\-_].*)?")
# a top-level file that holds the project's version alone (a manifest may read it: setuptools'
# ``version = {file = "VERSION"}``, a Makefile's ``$(shell cat VERSION)``)
_VERSION_FILE = re.compile(r"(?i)version(?:\.txt)?")
_CHANGELOG = re.compile(r"(?i)(changes|changelog|history|news|release[-_]?notes)([.\-_].*)?")
NOTE_MAX_PIECES = 3               # a licence or a manifest contributes at most this many chunks
SNIFF_BYTES = 8192
# UTF-32 before UTF-16: a UTF-32 little-endian mark starts with UTF-16's
WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
             (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
LFS_POINTER_MAX = 1024            # git-lfs writes pointers far smaller than this
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
GIT_TIMEOUT = 60


@dataclass
class Collected:
    chunks: list[Chunk] = field(default_factory=list)
    definitions: list[tuple[str, str, str, int]] = field(default_factory=list)
    paths: list[tuple[str, str]] = field(default_factory=list)
    imports: list[tuple[str, str, int]] = field(default_factory=list)   # (module, path, line)
    stats: Counter = field(default_factory=Counter)
    redactions: Counter = field(default_factory=Counter)


# --- listing --------------------------------------------------------------------------


def _git(root: Path, *args: str) -> bytes | None:
    """stdout of a read-only git command run in root, or None if git is missing or fails."""
    return git_out(root, *args, timeout=GIT_TIMEOUT)


def _pruned(name: str, top_level: bool) -> bool:
    if name in PRUNED_DIRS:
        return True
    return name.startswith(".") and not (top_level and name == KEPT_DOT_DIR)


def _docs_source(parts: list[str], k: int) -> bool:
    """Is the file ``parts`` a docs source kept in a docs folder's ``build`` (``parts[k]``)? Mako,
    SQLAlchemy and Alembic keep their Sphinx sources in ``doc/build/``; what a docs build writes
    there is HTML, and its copies of the sources end in ``.txt``."""
    return (parts[k] == "build" and k > 0 and parts[k - 1] in ("doc", "docs")
            and _ext(parts[-1]) in PROSE_EXTS)


def _norm_excludes(root: Path, exclude: Sequence[str]) -> tuple[str, ...]:
    out = []
    for e in exclude:
        e = str(e).replace("\\", "/")
        if os.path.isabs(e):
            e = os.path.relpath(e, root).replace("\\", "/")
            if e.startswith(".."):
                continue
        e = e.strip("/")
        while e.startswith("./"):
            e = e[2:]
        if e and e != ".":
            out.append(e)
    return tuple(out)


def _excluded(rel: str, exclude: tuple[str, ...]) -> bool:
    return any(rel == e or rel.startswith(e + "/") for e in exclude)


def _git_candidates(root: Path, exclude: tuple[str, ...]) -> list[str] | None:
    out = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if out is None:
        return None
    names = [n for n in dict.fromkeys(out.decode("utf-8", "replace").split("\0")) if n]
    venvs = {n[: -len("pyvenv.cfg")] for n in names if n.endswith("/pyvenv.cfg")}
    keep = []
    for rel in names:
        parts = rel.split("/")
        if rel.endswith("/") or _excluded(rel, exclude):
            continue                                   # a nested repository, or a sub-scope
        if any(_pruned(d, k == 0) and not _docs_source(parts, k) for k, d in enumerate(parts[:-1])):
            continue
        if parts[0] == KEPT_DOT_DIR and len(parts) > 2:
            continue
        if venvs and any(rel.startswith(v) for v in venvs):
            continue
        keep.append(rel)
    return keep


def _walk_candidates(root: Path, exclude: tuple[str, ...]) -> tuple[list[str], int]:
    """os.walk that removes pruned directories from dirnames before descending."""
    out: list[str] = []
    links = 0
    for dirpath, dirnames, filenames in os.walk(root, topdown=True, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        kept = []
        for d in dirnames:
            rel = f"{rel_dir}/{d}" if rel_dir else d
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                links += 1
            elif not (_pruned(d, not rel_dir) or _excluded(rel, exclude)
                      or rel_dir == KEPT_DOT_DIR
                      or os.path.exists(os.path.join(full, "pyvenv.cfg"))     # a virtualenv
                      or os.path.exists(os.path.join(full, ".git"))):         # its own scope
                kept.append(d)
        dirnames[:] = sorted(kept)
        out.extend(f"{rel_dir}/{f}" if rel_dir else f for f in filenames)
    return [r for r in out if not _excluded(r, exclude)], links


@dataclass
class _Listing:
    files: list[str]
    sizes: dict[str, int]
    symlinks: int
    in_git: bool


def _list(root: Path, exclude: tuple[str, ...]) -> _Listing:
    candidates = _git_candidates(root, exclude)
    in_git = candidates is not None
    links = 0
    if not candidates:                          # not a work tree, git failed, or nothing listed
        candidates, links = _walk_candidates(root, exclude)
    sizes: dict[str, int] = {}
    for rel in candidates:
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            continue                            # an undecodable file name cannot be stored
        try:
            st = os.lstat(root / rel)
        except OSError:
            continue                            # listed by git but deleted from the tree
        if stat.S_ISLNK(st.st_mode):
            links += 1
        elif stat.S_ISREG(st.st_mode):
            sizes[rel] = st.st_size
    return _Listing(sorted(sizes), sizes, links, in_git)


def list_files(root: Path, exclude: Sequence[str] = ()) -> list[str]:
    """Regular files of a scope as sorted '/'-separated relpaths, pruned and without symlinks."""
    root = Path(root)
    return _list(root, _norm_excludes(root, exclude)).files


# --- reading --------------------------------------------------------------------------


def _read_bytes(path: str | Path, limit: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read(limit + 1)


def _redacted(text: str | None, out: Collected) -> str | None:
    """The whole text with its secrets masked, counted in ``out.redactions``."""
    if not text:
        return text
    clean, found = redact(text)
    out.redactions.update(found)
    return clean


def read_text(path: str | Path, size: int, params: Params, stats: Counter) -> str | None:
    """The file's text, or None (counted in stats) when too large, binary or unreadable."""
    if size > params.max_file_bytes:
        stats["skipped_large"] += 1
        return None
    try:
        data = _read_bytes(path, params.max_file_bytes)
    except OSError:
        stats["skipped_unreadable"] += 1
        return None
    if len(data) > params.max_file_bytes:
        stats["skipped_large"] += 1
        return None
    if data.startswith(LFS_POINTER) and len(data) < LFS_POINTER_MAX:
        stats["skipped_lfs_pointer"] += 1         # the file's content was never fetched
        return None
    wide = next((codec for bom, codec in WIDE_BOMS if data.startswith(bom)), None)
    if wide is None and b"\0" in data[:SNIFF_BYTES]:
        stats["skipped_binary"] += 1
        return None
    stats["files_read"] += 1
    return _decode(data, wide, stats).replace("\r\n", "\n")


def _decode(data: bytes, wide: str | None, stats: Counter) -> str:
    """``data`` as text: UTF-16 or UTF-32 when a byte order mark says so, else UTF-8; a file that
    is not UTF-8 reads as Windows-1252 (Latin-1) when its bytes hold more invalid UTF-8 than valid
    multi-byte sequences (a legacy 8-bit file), else as UTF-8 with replacement characters."""
    if wide is not None:
        return data.decode(wide, "replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", "replace")
    if text.count("\ufffd") > len(_UTF8_SEQUENCE.findall(data)):
        stats["non_utf8_legacy"] += 1
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:                # one of the five bytes cp1252 leaves undefined
            return data.decode("latin-1")
    stats["non_utf8_replaced"] += 1
    return text


# --- what each file is read for -------------------------------------------------------


def _ext(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""


def _is_note_name(name: str) -> bool:
    return _NOTE_NAME.fullmatch(name) is not None and language(name) is None


def prose_role(rel: str) -> tuple[str, str] | None:
    """(chunk kind, prose format) when the file is read as prose, else None."""
    parts = rel.split("/")
    name, low, ext = parts[-1], parts[-1].lower(), _ext(parts[-1])
    fmt = PROSE_EXTS.get(ext, "plain" if ext and ext != "txt" else "md")
    top = len(parts) == 1 or (len(parts) == 2 and parts[0] == KEPT_DOT_DIR)
    if parts[0] == KEPT_DOT_DIR:
        return ("note", fmt) if top and _is_note_name(name) else None
    if low.startswith("readme") and fmt != "plain":
        return "readme", fmt
    if TOOLING_NOTES.match(rel) or (top and (low in MANIFESTS or _is_note_name(name)
                                             or _VERSION_FILE.fullmatch(name))):
        return "note", fmt if ext in PROSE_EXTS else "plain"
    if _CHANGELOG.fullmatch(name) and fmt != "plain":
        return "doc", fmt
    if ext in PROSE_EXTS or (ext == "txt" and parts[0] in ("docs", "doc")):
        return "doc", fmt
    return None


def _prose_chunks(scope: str, rel: str, text: str, role: tuple[str, str], params: Params,
                  limit: int | None = None) -> list[Chunk]:
    kind, fmt = role
    pieces = sections(text, fmt, params.chunk_max_chars, rel.rsplit("/", 1)[-1])
    return [make_chunk(scope, kind, rel, line, piece, heading=heading)
            for line, heading, piece in pieces[:limit]]


def _source(scope: str, rel: str, text: str, ext: str, params: Params, out: Collected) -> None:
    where = path_kind(rel)
    cheap = where in ("test", "fixture", "generated", "vendored")
    episodes, defs = comments.source_episodes(text, rel, ext, params.chunk_max_chars, cheap=cheap)
    if where == "source":   # the project's own flags' --help text, in the user's words
        # (an example's or a test's flags document a demo: "add extra cheese")
        episodes = episodes + [("comment", line, flags, body) for line, flags, body in help_strings(text)]
    out.chunks.extend(make_chunk(scope, kind, rel, line, piece, heading=heading)
                      for kind, line, heading, piece in episodes)
    out.definitions.extend((name, kind, rel, line) for name, kind, line in defs)
    if where not in ("vendored", "generated", "fixture"):
        out.imports.extend((module, rel, line) for module, line in references.imports(text, ext))


# --- commits --------------------------------------------------------------------------

_LOG_FORMAT = "%H%x1f%an%x1f%aI%x1f%s%x1f%b%x1e"
_TREES_FORMAT = "%H %T %P"
HISTORY_DEPTH = 10   # how far back, in multiples of max_commits, older commits with a body are sought
EMPTY_TREES = {"4b825dc642cb6eb9a060e54bf8d69288fbee4904",                          # sha1
               "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}  # sha256


def _recent_commits(root: Path, max_commits: int) -> tuple[list[str], list[str]]:
    """The repository's last ``max_commits`` commits, newest first, and those of them that change
    no file (``git commit --allow-empty``): a path filter never lists these, though their message
    is often the why. A merge is never counted as one."""
    out = _git(root, "log", f"-n{max_commits + 1}", f"--format={_TREES_FORMAT}", "--no-color")
    rows = [row for row in (line.split() for line in (out or b"").decode("ascii", "replace").splitlines()) if row]
    tree_of = {row[0]: row[1] for row in rows if len(row) >= 2}   # one more: the last one's parent
    rows = rows[:max_commits]
    empty = [row[0] for row in rows if (len(row) == 2 and row[1] in EMPTY_TREES)
             or (len(row) == 3 and tree_of.get(row[2]) == row[1])]
    return [row[0] for row in rows], empty


def commit_chunks(scope: str, root: Path, exclude: tuple[str, ...], max_commits: int
                  ) -> list[Chunk]:
    """One chunk per recent commit touching root (minus excluded sub-paths), and, for a scope
    at the top of its repository, per recent commit touching nothing; [] without history.

    "Recent" is the last ``max_commits`` commits, whatever they say. Older than those, a commit
    whose message has a body (the why of a change, which a why-question asks for whatever its
    age) is collected too, newest first, at most ``max_commits`` of them, looking back at most
    ``HISTORY_DEPTH`` times ``max_commits`` commits; a subject alone ("Bump version") is not."""
    if max_commits <= 0:
        return []
    fmt = (f"--format={_LOG_FORMAT}", "--no-color", "--encoding=UTF-8")
    out = _git(root, "log", f"-n{max_commits * HISTORY_DEPTH}", *fmt,
               "--", ".", *(f":(exclude){e}" for e in exclude)) or b""
    rows = _log_records(out)
    order, empty = _recent_commits(root, max_commits) if (root / ".git").exists() else ([], [])
    if empty:   # the same records for those commits alone, in the repository's log order
        rank = {sha: i for i, sha in enumerate(order)}
        known = {f[0] for f in rows}
        extra = [f for f in _log_records(_git(root, "log", f"-n{max_commits}", *fmt, "--no-walk", *empty) or b"")
                 if f[0] not in known]
        rows = sorted(rows + extra, key=lambda f: rank.get(f[0], len(order)))
    rows = rows[:max_commits] + [f for f in rows[max_commits:] if f[4].strip()][:max_commits]
    chunks = []
    for sha, author, date, subject, body in rows:
        text, found = redact(subject + ("\n\n" + body.strip() if body.strip() else ""))
        chunks.append(make_chunk(scope, "commit", f"commit:{sha}", 0, text, heading=text.split("\n", 1)[0],
                                 author=author, date=date, found=found))
    return chunks


def release_tag_chunk(scope: str, root: Path) -> list[Chunk]:
    """The newest release tag the checkout descends from (``git describe``), as a passage: which
    version this is, for a project whose version lives in its tags (Go modules, setuptools-scm);
    [] without tags."""
    tag = (_git(root, "describe", "--tags", "--abbrev=0", "HEAD") or b"").decode("utf-8", "replace").strip()
    if not tag:
        return []
    info = (_git(root, "log", "-1", "--format=%H%x1f%ad%x1f%s", "--date=short", f"{tag}^{{commit}}", "--")
            or b"").decode("utf-8", "replace").strip().split("\x1f")
    since = (_git(root, "rev-list", "--count", f"{tag}..HEAD") or b"").decode().strip()
    sha, date, subject = (info + ["", "", ""])[:3]
    after = f"; {since} commit{'' if since == '1' else 's'} since" if since.isdigit() else ""
    text = (f"{tag}\n\nRelease {tag}, the newest tag of this checkout: commit {sha[:12]} of {date}, "
            f'"{subject}"{after}.')
    return [make_chunk(scope, "note", f"tag:{tag}", 0, text, heading=tag)]


def _log_records(out: bytes) -> list[list[str]]:
    """``git log --format=_LOG_FORMAT`` output as [sha, author, date, subject, body] rows, in
    order, each commit once."""
    records: dict[str, list[str]] = {}
    for record in out.decode("utf-8", "replace").split("\x1e"):
        fields = record.lstrip("\n").split("\x1f", 4)
        if len(fields) == 5 and re.fullmatch(r"[0-9a-f]{40,64}", fields[0]):
            records.setdefault(fields[0], fields)
    return list(records.values())


# --- extra globs ----------------------------------------------------------------------


def _glob_regex(parts: list[str]) -> re.Pattern[str]:
    rx = ""
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            rx += ".*" if last else "(?:[^/]+/)*"
            continue
        i = 0
        while i < len(part):
            c = part[i]
            if c == "*":
                rx += "[^/]*"
            elif c == "?":
                rx += "[^/]"
            elif c == "[" and "]" in part[i + 2:]:
                j = part.index("]", i + 2)
                inner = part[i + 1:j].replace("\\", "\\\\")
                if inner[:1] in "!^":
                    inner = "^" + inner[1:] if inner[0] == "!" else "\\" + inner
                rx += f"[{inner}]"
                i = j
            else:
                rx += re.escape(c)
            i += 1
        rx += "" if last else "/"
    return re.compile(rx)


def glob_files(root: Path, pattern: str) -> list[str]:
    """Absolute paths of files matching pattern (relative to root, or absolute; a directory
    means every file below it).

    ``**`` spans directories; the walk below the pattern's literal prefix is pruned like
    a scope's and never follows a symlinked directory."""
    full = os.path.abspath(os.path.join(root, os.path.expanduser(pattern)))
    parts = full.replace(os.sep, "/").split("/")
    if os.path.isdir(full):
        parts.append("**")                      # a directory stands for everything below it
    magic = next((k for k, p in enumerate(parts) if any(c in p for c in "*?[")), None)
    if magic is None:
        return [full] if os.path.isfile(full) else []
    base = "/".join(parts[:magic]) or "/"
    rx = _glob_regex(parts[magic:])
    hits = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not _pruned(d, False)
                             and not os.path.islink(os.path.join(dirpath, d)))
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        for f in filenames:
            rel = f if rel_dir == "." else f"{rel_dir}/{f}"
            if rx.fullmatch(rel):
                hits.append(os.path.join(dirpath, f))
    return sorted(hits)


def _glob_notes(name: str, root: Path, globs: Sequence[str], seen: set[str], params: Params,
                out: Collected) -> None:
    root_abs = os.path.abspath(root)
    for pattern in globs:
        for hit in glob_files(root, pattern):
            rel = os.path.relpath(hit, root_abs).replace(os.sep, "/")
            shown = hit if rel.startswith("../") or rel == ".." else rel
            if shown in seen:
                continue
            seen.add(shown)
            if is_secret_file(shown):
                out.stats["secret_files"] += 1
                continue
            try:
                st = os.lstat(hit)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                out.stats["symlinks_skipped"] += stat.S_ISLNK(st.st_mode)
                continue
            out.paths.append((shown, path_kind(shown)))
            text = _redacted(read_text(hit, st.st_size, params, out.stats), out)
            if text is not None:
                fmt = PROSE_EXTS.get(_ext(hit), "md" if _ext(hit) in ("", "txt") else "plain")
                out.chunks.extend(_prose_chunks(name, shown, text, ("note", fmt), params))


# --- the entry point ------------------------------------------------------------------


def collect_scope(name: str, root: Path, *, exclude: Sequence[str] = (),
                  globs: Sequence[str] = (), params: Params = DEFAULT_PARAMS) -> Collected:
    """Chunks, definitions, paths and counts for the scope rooted at root.

    Raises NotADirectoryError with a readable message when root is not a directory."""
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"scope {name!r}: {root} is not a directory")
    ex = _norm_excludes(root, exclude)
    listing = _list(root, ex)
    out = Collected()
    out.stats.update(files_listed=len(listing.files), files_read=0, commits=0,
                     symlinks_skipped=listing.symlinks)
    seen: set[str] = set()
    for rel in listing.files:
        if is_secret_file(rel):
            out.stats["secret_files"] += 1
            continue
        out.paths.append((rel, path_kind(rel)))
        prose = prose_role(rel)
        ext = language(rel)
        if prose is None and ext is None:
            continue
        seen.add(rel)
        text = _redacted(read_text(root / rel, listing.sizes[rel], params, out.stats), out)
        if text is None:
            continue
        if prose is not None:
            capped = prose[0] == "note" and not _GUIDE_NAME.fullmatch(rel.rsplit("/", 1)[-1])
            limit = NOTE_MAX_PIECES if capped else None
            out.chunks.extend(_prose_chunks(name, rel, text, prose, params, limit))
            if ext is not None:                    # setup.py: a manifest that also defines
                _, defs = comments.source_episodes(text, rel, ext, params.chunk_max_chars)
                out.definitions.extend((n, k, rel, line) for n, k, line in defs)
        else:
            _source(name, rel, text, ext, params, out)
    if listing.in_git:
        commits = commit_chunks(name, root, ex, params.max_commits)
        out.stats["commits"] = len(commits)
        out.chunks.extend(commits)
        if (root / ".git").exists():     # tags name the whole repository's releases, not a sub-scope's
            out.chunks.extend(release_tag_chunk(name, root))
    _glob_notes(name, root, globs, seen, params, out)
    for chunk in out.chunks:
        out.redactions.update(chunk.redactions)
    _mask_paths(out)
    return out


def _mask_paths(out: Collected) -> None:
    """The listed and importing files' paths with any secret in a file or folder name masked
    (they become routing tokens and references; the files were read by their real names)."""
    shown: dict[str, str] = {}

    def mask(rel: str) -> str:
        if rel not in shown:
            shown[rel], found = redact(rel)
            out.redactions.update(found)
        return shown[rel]
    out.paths = [(mask(rel), kind) for rel, kind in out.paths]
    out.imports = [(module, mask(rel), line) for module, rel, line in out.imports]
