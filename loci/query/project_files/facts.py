"""Which passages hold the fact a question about the project asks for (its topics: ``topics``)."""
from __future__ import annotations

import re
from typing import Mapping

from loci.query.project_files.file_kinds import README, is_tooling
from loci.query.project_files.headings import only_includes, sections_saying
from loci.query.project_files.topics import asked_sections, raised


def fact_rows(question: str, prose: Mapping[int, str], read, *, named: bool = False) -> tuple[set[int], set[int]]:
    """The rows of ``prose`` (row -> path) that hold the fact the question asks for: the rows of
    the files named for it (``is_fact_file``), and of a README the sections its topic names (of
    both, for a keyed topic, only the passages saying its key words; ``TOPICS``; ``read``: rows ->
    their chunks, for their headings and text); a README without such a section counts whole when
    it is one of the topic's files ("how do I install it?"), not otherwise ("how do I
    contribute?"). Only the project's own README counts (not one of a subfolder: an example's, an
    algorithm's "Primality Test"), or one the topic names by its path (the docs folder's, on
    building the docs). A manifest's or runner's passage counts only when it says one of the
    topic's key words; a passage that only includes another file (``only_includes``) never: it
    says nothing of its own. Also which of them are such sections when no file is given to the
    topic (a CONTRIBUTING, an INSTALL; a manifest or a runner is no such file): then the README's
    own heading says where the answer is (``search.rank`` opens with the best of them)."""
    out: set[int] = set()
    headed: set[int] = set()
    asked = asked_sections(question)
    read = _read_once(read)
    for topic in raised(question, named):
        files, sections = topic.files, topic.sections
        held = {i for i, path in prose.items() if is_fact_file(path, [files])
                and not (sections is not None and _nested_readme(path) and not files.match(path))}
        held -= _saying_nothing(held, prose, read, topic.keys, keyed=topic.keyed)
        readmes = {i for i, path in prose.items() if sections is not None and README.match(path)}
        out.update(held - readmes)
        own = {i for i in held - readmes if not is_tooling(prose[i])}
        if asked is not None:   # in the files given to the topic, the section headed for what is asked
            for rows in _by_file(own, prose).values():
                headed.update(sections_saying(asked, read(rows)))
        for rows in _by_file(readmes, prose).values():
            said = sections_saying(sections, read(rows))
            if topic.keyed:
                said = sorted(set(said) - _saying_nothing(set(said), prose, read, topic.keys, keyed=True))
            headed.update(() if own else said)
            out.update(said or [i for i in rows if i in held])
    return out, headed


def _read_once(read):
    """``read`` remembering what it gave: each row is read once, a row it does not hold left out as it
    left it out."""
    held: dict[int, dict | None] = {}

    def once(ids) -> dict[int, dict]:
        missing = [i for i in ids if i not in held]
        if missing:
            got = read(missing)
            held.update({i: got.get(i) for i in missing})
        return {i: held[i] for i in ids if held[i] is not None}
    return once


def _saying_nothing(rows: set[int], prose: Mapping[int, str], read, keys: re.Pattern | None, *,
                    keyed: bool = False) -> set[int]:
    """Of ``rows``, those that hold no fact of their own: a passage that only includes another file,
    a manifest's or runner's passage (any passage, for a ``keyed`` topic) without the topic's ``keys``."""
    if not rows:
        return set()
    chunks = read(sorted(rows))
    out = set()
    for i in rows:
        row = chunks.get(i) or {}
        text = str(row.get("heading") or "") + "\n" + str(row.get("text") or "")
        tooling = is_tooling(prose[i])
        if only_includes(str(row.get("text") or "")) or ((tooling or keyed) and not (keys and keys.search(text))):
            out.add(i)
    return out


def _by_file(rows, prose: Mapping[int, str]) -> dict[str, list[int]]:
    """``rows`` grouped by their file, each file's in row order."""
    out: dict[str, list[int]] = {}
    for i in sorted(rows):
        out.setdefault(prose[i], []).append(i)
    return out


def _nested_readme(path: str) -> bool:
    """A README in a subfolder: an example's, an algorithm's ("Primality Test"), not the project's."""
    return "/" in path and bool(README.match(path.rsplit("/", 1)[-1]))


def is_fact_file(path: str, patterns: list[re.Pattern]) -> bool:
    """Does the file, or a folder it sits in (``docs/contributing/the_basics.md``), hold the fact? A
    pattern that names a folder's file (``docs/readme.md``) matches the whole path."""
    return any(p.match(part) for part in (path, *path.split("/")) for p in patterns)
