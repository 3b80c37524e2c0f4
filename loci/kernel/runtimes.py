"""The runtime versions a project declares it runs on, as fact tokens, and those a question asks for.

A manifest declares a range: ``requires-python`` / ``python_requires`` (">=3.9", ">=2.7, !=3.0.*"),
else the "Programming Language :: Python :: 3.9" classifiers; package.json's ``engines.node``
("^20.19.0 || ^22.12.0 || >=23"). The build turns a range into two kinds of fact token
(``runtime_tokens``): each version line it admits within a fixed window (``python-3.9``,
``node-20``: "which of my projects still support Python 3.9?") and its lowest one
(``python-min-3.9``, ``node-min-20``: "which need Node 20 or newer?"). A question asks
(``asked_tokens``) for the line it names, or for every lowest line from it on when it says "or
newer", "at least", "20+". Pure: the build reads the files, the router matches the tokens.
"""
from __future__ import annotations

import re

from loci.kernel.lazyre import LazyPattern

Line = tuple[int, ...]   # (3, 9) for Python, (20,) for Node

WINDOWS: dict[str, tuple[Line, ...]] = {
    "python": tuple([(2, m) for m in range(8)] + [(3, m) for m in range(21)]),
    "node": tuple((m,) for m in range(41)),
}
_OP = LazyPattern(r"^\s*(~=|===|==|!=|<=|>=|<|>|\^|~|=)?\s*v?([\d*xX]+(?:\.[\d*xX]+)*)\s*$")


def _parts(version: str) -> list[int | None]:
    """"3.9" -> [3, 9]; "3.*" / "20.x" -> [3, None]."""
    return [None if p in ("*", "x", "X") else int(p) for p in version.split(".")]


def _admits_python(clause: str, line: Line) -> bool | None:
    """Whether some release of ``line`` (3, 9) satisfies one PEP 440 clause; None when unreadable."""
    m = _OP.match(clause)
    if not m:
        return None
    op, parts = m.group(1) or "==", _parts(m.group(2))
    if parts[0] is None:
        return None
    wild = None in parts
    parts = [p for p in parts if p is not None]
    want = tuple(parts[:2])
    have = line[:len(want)]
    patch = len(parts) > 2 and parts[2] > 0   # ">3.8.1": 3.8.2 exists; ">3.8": 3.8.x does not count
    if op in ("==", "==="):
        return have == want
    if op == "!=":
        return have != want if wild or len(parts) <= 2 else True
    if op == ">=":
        return have >= want
    if op == ">":
        return have >= want if patch else have > want
    if op == "<":
        return have < want or (patch and have == want)
    if op == "<=":
        return have <= want
    if op == "~=":
        return have >= want and line[0] == parts[0] and (len(parts) < 3 or have == want)
    return None


def _admits_node(clause: str, line: Line) -> bool | None:
    """Whether some release of Node ``line`` (20,) satisfies one npm range (space-separated
    comparators, ``a - b``); None when unreadable."""
    clause = re.sub(r"(>=|<=|>|<|=|\^|~)\s+", r"\1", clause.strip())
    if clause in ("", "*", "x", "X"):
        return True
    if " - " in clause:
        low, _, high = clause.partition(" - ")
        return _admits_node(">=" + low.strip(), line) and _admits_node("<=" + high.strip(), line)
    verdicts = []
    for comparator in clause.split():
        m = _OP.match(comparator)
        if not m:
            return None
        op, parts = m.group(1) or "=", _parts(m.group(2))
        major, rest = parts[0], [p or 0 for p in parts[1:]]
        if major is None:
            verdicts.append(True)
            continue
        n = line[0]
        if op in ("=", "==", "^", "~"):
            verdicts.append(n == major)
        elif op == ">=":
            verdicts.append(n >= major)
        elif op == ">":
            verdicts.append(n > major or (n == major and any(rest)))
        elif op == "<":
            verdicts.append(n < major or (n == major and any(rest)))
        elif op == "<=":
            verdicts.append(n <= major)
        else:
            return None
    return all(verdicts)


def admitted(runtime: str, spec: str) -> list[Line]:
    """The lines of ``runtime``'s window that ``spec`` admits ([] when it reads none of it): an npm
    range admits a line one of its ``||`` alternatives does, a PEP 440 one where all its clauses do."""
    if runtime == "node":
        parts, check, combine = spec.split("||"), _admits_node, any
    else:
        parts, check, combine = [c for c in spec.split(",") if c.strip()], _admits_python, all
    out = []
    for line in WINDOWS[runtime]:
        verdicts = [check(part, line) for part in parts]
        if not verdicts or any(v is None for v in verdicts):
            return []
        if combine(verdicts):
            out.append(line)
    return out


def _name(runtime: str, line: Line) -> str:
    return runtime + "-" + ".".join(map(str, line))


def runtime_tokens(runtime: str, lines: list[Line]) -> list[str]:
    """A declared range's fact tokens: each admitted line, then ``<runtime>-min-<lowest>``."""
    if not lines:
        return []
    return [_name(runtime, line) for line in lines] + [_name(runtime + "-min", min(lines))]


_ASKED = LazyPattern(r"\b(python|py|node(?:\.?js)?)\s*v?(\d+)(?:\.(\d+))?(?:\.\d+)?(\+)?", re.I)
_OR_NEWER = LazyPattern(r"^\s*(?:or|and)\s+(?:newer|later|higher|above|up|greater)\b", re.I)
_AT_LEAST = LazyPattern(r"\b(?:at\s+least|minimum(?:\s+of)?|>=)\s*$", re.I)


def asked_tokens(question: str) -> list[str]:
    """The fact tokens of each runtime version ``question`` names: "supports Python 3.9" ->
    python-3.9; "Node 20 or newer" (or "at least", "20+") -> node-min-20 ... node-min-40."""
    out: list[str] = []
    low = question.lower()
    if not any(c.isdigit() for c in low) or ("py" not in low and "node" not in low):
        return out   # most questions name no version: a one-shot process compiles nothing here
    for m in _ASKED.finditer(question):
        runtime = "python" if m.group(1).lower().startswith("py") else "node"
        major, minor = int(m.group(2)), m.group(3)
        if runtime == "python" and minor is None:
            continue   # "Python 3" names no line
        line: Line = (major, int(minor)) if runtime == "python" else (major,)
        if line not in WINDOWS[runtime]:
            continue
        upward = bool(m.group(4) or _OR_NEWER.match(question[m.end():]) or _AT_LEAST.search(question[:m.start()]))
        if upward:
            out += [_name(runtime + "-min", ln) for ln in WINDOWS[runtime] if ln >= line]
        else:
            out.append(_name(runtime, line))
    return out
