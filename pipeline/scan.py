"""Discover git repositories under some roots and turn them into a scope registry.

Decisions (tested in tests/test_scan.py):

- The walk prunes dot-folders, ``node_modules``, virtualenvs (``venv``, any
  directory holding ``pyvenv.cfg``), ``vendor``/``third_party`` and build output,
  and never follows a symlinked directory, so a link loop cannot hang it.
- A bare repository (no working tree) and a repository whose path is not valid UTF-8 (the
  home stores names and paths as text) are reported in ``problems``, not registered (a bare
  one inside a repository's tree, its test data, silently); the walk does not enter a bare one.
- It keeps walking inside a repository: a nested repository (a submodule, a
  clone kept inside another checkout) is registered as a scope of its own, and
  its parent excludes that subtree.
- Owner and provenance group come from git (see loci_pipeline.provenance); a
  repository's aliases from its manifests (see loci_pipeline.manifests).
- ``--split`` takes each immediate child directory carrying a package manifest,
  and the children of ``packages/ apps/ libs/ crates/`` (the usual monorepo
  layout), as sub-scopes. ``.loci.json`` is honoured on every scan. A rescan
  that does not say (``split=None``, as ``loci update`` does) keeps a
  repository split if it was split before.
- Names: a repository is called by its directory name; a clash gets
  ``<parent dir>-<name>``, then ``-2``, ``-3``... A path keeps the name the
  prior registry gave it, so names are stable across rescans.
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from loci.kernel.errors import UsageError
from loci.kernel.groups import provenance_group
from loci.kernel.registry import Registry, Scope
from loci_pipeline.manifests import manifest_names
from loci_pipeline.provenance import Identity, owner_and_head, owner_of, read_identity

PRUNED_DIRS = frozenset({"node_modules", "venv", "vendor", "third_party", "build", "dist",
                         "target", "_build", "_site", "out", "__pycache__"})
MANIFESTS = ("package.json", "pyproject.toml", "Cargo.toml", "go.mod")
SPLIT_CONTAINERS = ("packages", "apps", "libs", "crates")


class ScanError(UsageError):
    """A path given to ``loci add`` that cannot be registered: bad input, exit 2."""


@dataclass
class ScanResult:
    registry: Registry
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)   # a scope whose repository moved -> its new path


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for item in items:
        if item and item.lower() not in seen:
            seen[item.lower()] = item
    return tuple(seen.values())


# ---- the walk

def _walk(root: Path, problems: list[str]) -> list[Path]:
    """Every repository under ``root`` (a directory with a ``.git`` dir or file), pruned."""
    repos = []

    def unreadable(err: OSError) -> None:
        problems.append(f"cannot read {_shown(str(err.filename))}: {err.strerror}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        if ".git" in dirnames or ".git" in filenames:
            if _storable(dirpath, problems):
                repos.append(Path(dirpath))
        elif "HEAD" in filenames and {"objects", "refs"} <= set(dirnames):
            if not any(_inside(Path(dirpath), r) for r in repos):   # not a project's test data
                problems.append(f"{_shown(dirpath)}: a bare repository (no working tree to read): "
                                "not registered; a clone of it is")
            dirnames[:] = []
            continue
        if "pyvenv.cfg" in filenames:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in PRUNED_DIRS)
    return repos


def _shown(path: str) -> str:
    """A path as it can be printed, bytes that are not UTF-8 as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _storable(path: str, problems: list[str]) -> bool:
    """The path is valid UTF-8, as every name and path the home stores is (JSON, SQLite, Parquet);
    else it is reported."""
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        problems.append(f"{_shown(path)}: the folder's path is not valid UTF-8: not registered; "
                        "rename the folder to register it")
        return False


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def declared_subscopes(repo: Path, problems: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """(subpath, aliases) pairs from ``<repo>/.loci.json``; bad entries are reported and skipped."""
    file = repo / ".loci.json"
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{file}: cannot read it ({exc}); file ignored")
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{file}: not valid JSON ({exc.msg}, line {exc.lineno}); file ignored")
        return []
    if not isinstance(data, dict) or not isinstance(data.get("scopes"), list):
        problems.append(f'{file}: expected {{"scopes": [{{"path": "..."}}]}}; file ignored')
        return []
    out = []
    for i, entry in enumerate(data["scopes"]):
        where = f"{file}: scopes[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry["path"]:
            problems.append(f'{where} needs a "path" string; entry ignored')
            continue
        alias = entry.get("alias", [])
        alias = [alias] if isinstance(alias, str) else alias
        if not isinstance(alias, list) or not all(isinstance(a, str) for a in alias):
            problems.append(f'{where}: "alias" must be a string or a list of strings; entry ignored')
            continue
        raw = entry["path"]
        target = (repo / raw).resolve()
        if Path(raw).is_absolute() or raw.startswith("~") or not _inside(target, repo) or target == repo:
            problems.append(f"{where}: path {raw!r} is not inside the repository; entry ignored")
        elif not target.is_dir():
            problems.append(f"{where}: path {raw!r} is not a directory; entry ignored")
        else:
            out.append((target.relative_to(repo).as_posix(), tuple(alias)))
    return out


def split_subscopes(repo: Path) -> list[str]:
    """Subpaths ``--split`` makes scopes of: manifest-carrying children (and grandchildren
    under the usual monorepo containers)."""
    def children(directory: Path) -> list[Path]:
        try:
            return sorted(c for c in directory.iterdir() if c.is_dir() and not c.is_symlink()
                          and not c.name.startswith(".") and c.name not in PRUNED_DIRS)
        except OSError:
            return []

    def has_manifest(directory: Path) -> bool:
        return any((directory / m).is_file() for m in MANIFESTS)

    out = []
    for child in children(repo):
        if has_manifest(child):
            out.append(child.name)
        elif child.name in SPLIT_CONTAINERS:
            out.extend(f"{child.name}/{g.name}" for g in children(child) if has_manifest(g))
    return out


# ---- assembly

class _Names:
    """Hands out unique scope names; a path keeps the name it had, and no other path takes it."""

    def __init__(self, taken: Iterable[str], prior_by_path: dict[str, Scope]):
        self.taken = set(taken)
        self.prior = prior_by_path
        self.owner_of_name = {s.name: p for p, s in prior_by_path.items()}

    def _free(self, name: str, path: Path) -> bool:
        return name not in self.taken and self.owner_of_name.get(name, str(path)) == str(path)

    def claim(self, path: Path, base: str, fallback: str | None = None) -> str:
        before = self.prior.get(str(path))
        candidates = ([before.name] if before else []) + [base] + ([fallback] if fallback else [])
        candidates += (f"{base}-{n}" for n in range(2, len(self.taken) + len(self.prior) + 3))
        name = next(c for c in candidates if self._free(c, path))
        self.taken.add(name)
        return name


def with_excludes(scopes: list[Scope]) -> list[Scope]:
    """Each scope excludes the subtrees of the scopes directly inside it; sorted by name."""
    by_path = {s.path: s for s in scopes}
    children: dict[str, list[str]] = {}
    for scope in scopes:
        for up in Path(scope.path).parents:
            if str(up) in by_path:
                children.setdefault(str(up), []).append(
                    Path(scope.path).relative_to(up).as_posix())
                break
    return sorted((replace(s, excludes=tuple(sorted(children.get(s.path, ())))) for s in scopes),
                  key=lambda s: s.name)


def _carried(prior: Scope | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (prior.user_aliases, prior.globs) if prior else ((), ())


def _repo_scopes(repo: Path, names: _Names, owner: str, prior: dict[str, Scope],
                 subs: list[tuple[str, tuple[str, ...]]], head: str = "") -> list[Scope]:
    """The repository's scope and its sub-scopes, all carrying the monorepo id when split."""
    name = names.claim(repo, repo.name, f"{repo.parent.name}-{repo.name}")
    provenance = tuple(g for g in [provenance_group(owner)] if g)
    monorepo = (name,) if subs else ()
    user_aliases, globs = _carried(prior.get(str(repo)))
    scopes = [Scope(name=name, path=str(repo), kind="repo", owner=owner,
                    aliases=_unique([repo.name, *manifest_names(repo), *user_aliases]),
                    groups=provenance + monorepo, globs=globs, user_aliases=user_aliases, head=head)]
    for subpath, declared in subs:
        path = repo / subpath
        user_aliases, globs = _carried(prior.get(str(path)))
        scopes.append(Scope(
            name=names.claim(path, f"{name}/{subpath}"), path=str(path), kind="subscope",
            parent=name, owner=owner, groups=provenance + monorepo, globs=globs,
            aliases=_unique([path.name, *declared, *manifest_names(path), *user_aliases]),
            user_aliases=user_aliases, head=head))
    return scopes


def _subscopes(repo: Path, split: bool | None, nested: set[Path], problems: list[str],
               prior: Registry) -> list[tuple[str, tuple[str, ...]]]:
    """Declared sub-scopes, plus split ones; ``split=None`` re-splits a repository
    the prior registry held split-made sub-scopes of."""
    merged: dict[str, list[str]] = {}
    for subpath, aliases in declared_subscopes(repo, problems):
        merged.setdefault(subpath, []).extend(aliases)
    splittable = split_subscopes(repo) if split is not False else []
    if split is None:
        before = {Path(s.path).relative_to(repo).as_posix() for s in prior.scopes
                  if s.kind == "subscope" and _inside(Path(s.path), repo)}
        splittable = splittable if before & set(splittable) else []
    for subpath in splittable:
        merged.setdefault(subpath, [])
    return [(p, tuple(a)) for p, a in merged.items() if repo / p not in nested]


def _reach(scope: Scope, prior: Registry) -> Path:
    parent = prior.get(scope.parent) if scope.parent else None
    return Path(parent.path if parent else scope.path)


def scan(roots: Sequence[Path], *, split: bool | None = None, prior: Registry | None = None,
         identity: Identity | None = None, memo: dict | None = None) -> ScanResult:
    """Walk ``roots`` and return the new registry (to save whole) and what was seen.

    ``split``: True splits every repository, False none, None (``loci update``)
    keeps each repository split the way the prior registry had it.

    Prior scopes are kept unchanged when they were added by hand, when their
    directory is gone (reported in ``missing``), or when they lie outside the
    roots scanned now; hand-set aliases and globs carry over by path. ``memo``: owners found
    by earlier scans (see ``owner_of``), updated in place.
    """
    prior = prior or Registry()
    problems: list[str] = []
    good_roots: list[Path] = []
    repos: list[Path] = []
    for raw in roots:
        root = Path(raw).expanduser()
        if not root.exists():
            problems.append(f"{raw}: no such directory")
            continue
        if not root.is_dir():
            problems.append(f"{raw}: not a directory")
            continue
        root = root.resolve()
        good_roots.append(root)
        found = _walk(root, problems)
        if not found:
            problems.append(f"no git repositories found under {root}")
        repos.extend(found)
    repos = sorted(set(repos))
    prior, moved = _follow_moves(prior, repos)

    missing = [s.name for s in prior.scopes if s.kind != "pulled" and not Path(s.path).exists()]
    kept = [s for s in prior.scopes
            if s.kind == "added" or s.name in missing
            or not any(_inside(_reach(s, prior), r) for r in good_roots)]
    kept_paths = {s.path for s in kept}
    prior_by_path = {s.path: s for s in prior.scopes}
    names = _Names((s.name for s in kept), prior_by_path)
    identity = identity if identity is not None else read_identity()

    new: list[Scope] = []
    owners: dict[str, str] = {}
    nested = set(repos)
    todo = [repo for repo in repos if str(repo) not in kept_paths]
    with ThreadPoolExecutor(max_workers=8) as pool:  # waiting on git, not computing
        found_owners = dict(zip(todo, pool.map(lambda r: owner_and_head(r, identity, problems, memo), todo)))
    for repo in todo:
        owner, head = found_owners[repo]
        subs = [(p, a) for p, a in _subscopes(repo, split, nested, problems, prior)
                if str(repo / p) not in kept_paths]
        for scope in _repo_scopes(repo, names, owner, prior_by_path, subs, head):
            new.append(scope)
            owners[scope.name] = owner
    all_roots = list(dict.fromkeys([*prior.roots, *map(str, good_roots)]))
    registry = Registry(scopes=with_excludes(kept + new), roots=all_roots)
    return ScanResult(registry=registry, found=sorted(owners), missing=sorted(missing),
                      problems=problems, owners=owners, moved=moved)


def _follow_moves(prior: Registry, repos: Sequence[Path]) -> tuple[Registry, dict[str, str]]:
    """``prior`` with each scanned repository whose folder is gone moved to the one newly found
    folder at the commit its entry recorded (``Scope.head``), its sub-scopes with it: it keeps
    its name, hand-set aliases, globs and group edits instead of a second scope answering
    beside a stale one. A HEAD names the whole history behind it (the root commit included,
    whatever the remote), so one HEAD is one repository at one point of it. A folder with no
    commit, or a HEAD that two new folders or two gone scopes share, moves nothing (the folder
    is a new scope; `loci doctor` names the gone one). Returns (the registry, name -> new path)."""
    gone = [s for s in prior.scopes if s.kind == "repo" and s.head and not Path(s.path).exists()]
    known = {s.path for s in prior.scopes}
    fresh = [r for r in repos if str(r) not in known] if gone else []
    if not fresh:
        return prior, {}
    from loci_pipeline.provenance import head_of

    with ThreadPoolExecutor(max_workers=8) as pool:  # waiting on git, not computing
        heads = dict(zip(fresh, pool.map(head_of, fresh)))
    found: dict[str, list[Path]] = {}
    for repo, head in heads.items():
        if head:
            found.setdefault(head, []).append(repo)
    wanted: dict[str, list[Scope]] = {}
    for scope in gone:
        wanted.setdefault(scope.head, []).append(scope)
    moves = {ss[0].name: found[head][0] for head, ss in wanted.items()
             if len(ss) == 1 and len(found.get(head, ())) == 1}
    if not moves:
        return prior, {}

    def moved(scope: Scope) -> Scope:
        root = scope.name if scope.name in moves else scope.parent if scope.kind == "subscope" else None
        if root not in moves:
            return scope
        old = Path(prior.get(root).path)
        return replace(scope, path=str(moves[root] / Path(scope.path).relative_to(old)))

    return (Registry(scopes=[moved(s) for s in prior.scopes], roots=list(prior.roots)),
            {name: str(path) for name, path in moves.items()})


def add_scope(registry: Registry, path: str | Path, *, alias: Sequence[str] = (),
              glob: Sequence[str] = (), identity: Identity | None = None) -> Registry:
    """Register one directory explicitly (``loci add``), or add aliases/globs to the scope
    already registered there. Globs may be absolute paths outside the directory."""
    target = Path(path).expanduser()
    if not target.exists():
        raise ScanError(f"{path} does not exist; `loci add` registers an existing directory")
    if not target.is_dir():
        raise ScanError(f"{path} is not a directory; `loci add` registers a directory")
    target = target.resolve()
    bad = [a for a in alias if not a.strip()]
    if bad:
        raise ScanError("an alias cannot be empty")
    globs = [str(Path(g).expanduser()) if g.startswith("~") else g for g in glob]
    existing = registry.at_path(target)
    if existing:
        user_aliases = _unique([*existing.user_aliases, *alias])
        updated = replace(existing, user_aliases=user_aliases,
                          aliases=_unique([*existing.aliases, *alias]),
                          globs=_unique([*existing.globs, *globs]))
        scopes = [updated if s is existing else s for s in registry.scopes]
    else:
        problems: list[str] = []
        owner, head = "unknown", ""
        if (target / ".git").exists():
            owner, head = owner_and_head(target, identity if identity is not None else read_identity(), problems)
        name = _Names(registry.names(), {}).claim(target, target.name, f"{target.parent.name}-{target.name}")
        scope = Scope(name=name, path=str(target), kind="added", owner=owner,
                      aliases=_unique([target.name, *manifest_names(target), *alias]),
                      groups=tuple(g for g in [provenance_group(owner)] if g),
                      globs=_unique(globs), user_aliases=_unique(alias), head=head)
        scopes = [*registry.scopes, scope]
    return Registry(scopes=with_excludes(scopes), roots=list(registry.roots))


def relabel(registry: Registry, identity: Identity | None = None) -> ScanResult:
    """Recompute every scope's owner and provenance group from git (``loci groups infer``).
    Sub-scopes take their parent's owner; scopes whose directory is gone keep theirs."""
    identity = identity if identity is not None else read_identity()
    problems: list[str] = []
    owners: dict[str, str] = {}
    for scope in registry.scopes:
        if scope.kind != "subscope" and Path(scope.path).exists():
            owners[scope.name] = owner_of(Path(scope.path), identity, problems)
    for scope in registry.scopes:
        if scope.kind == "subscope" and scope.parent in owners:
            owners[scope.name] = owners[scope.parent]  # type: ignore[index]
    scopes = []
    for scope in registry.scopes:
        owner = owners.get(scope.name, scope.owner)
        kept = tuple(g for g in scope.groups if provenance_group(g) is None)
        new_group = tuple(g for g in [provenance_group(owner)] if g)
        scopes.append(replace(scope, owner=owner, groups=new_group + kept))
    return ScanResult(registry=Registry(scopes=scopes, roots=list(registry.roots)),
                      found=sorted(owners), problems=problems, owners=owners)
