"""The reference implementation (``loci-mem==0.6.0`` from PyPI): its cached
venv, and the translation of its ``route/ask --json`` output into loci's JSON
contract so that one scorer reads both. Nothing here is copied from it; it is
only run as a program."""
from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

REF_VERSION = "0.6.0"
REF_PACKAGE = f"loci-mem=={REF_VERSION}"


def graphify_pin() -> str:
    """graphifyy at the version the project's venv has, so both tools parse alike."""
    try:
        return f"graphifyy=={metadata.version('graphifyy')}"
    except metadata.PackageNotFoundError:
        return "graphifyy"


def ensure_venv(venv: Path, log=print) -> Path:
    """Create ``venv`` with the reference and graphify once; return its bin folder.

    Reuses the venv when its ``loci --version`` already reports REF_VERSION.
    Raises ChildFailed with pip's last lines when the install fails.
    """
    bin_dir = venv / "bin"
    exe = bin_dir / "loci"
    if exe.exists():
        probe = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
        if REF_VERSION in probe.stdout + probe.stderr and (bin_dir / "graphify").exists():
            return bin_dir
    from bench.measure import run_checked

    log(f"installing {REF_PACKAGE} into {venv} (once)")
    run_checked([sys.executable, "-m", "venv", "--clear", str(venv)])
    run_checked([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 REF_PACKAGE, graphify_pin()])
    return bin_dir


def _source(raw: str) -> str:
    """``doc:README.md`` / ``code:a.py`` -> the path; ``git:<sha>`` -> ``commit:<sha>``."""
    kind, sep, rest = raw.partition(":")
    if not sep:
        return raw
    if kind == "git":
        return f"commit:{rest}"
    return rest if kind in ("doc", "code") else raw


class LineFinder:
    """Finds the line at which a chunk's text starts in its file (the reference
    reports no line numbers); caches file contents."""

    def __init__(self, roots: dict[str, Path]):
        self.roots = roots
        self._files: dict[Path, list[str] | None] = {}

    def _lines(self, path: Path) -> list[str] | None:
        if path not in self._files:
            try:
                self._files[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._files[path] = None
        return self._files[path]

    def line_of(self, scope: str, relpath: str, text: str) -> int | None:
        root = self.roots.get(scope)
        if root is None or relpath.startswith("commit:"):
            return None
        lines = self._lines(root / relpath)
        # (offset within the chunk, stripped text) of its first few substantial lines
        probes = [(i, l.strip()) for i, l in enumerate(text.splitlines()) if len(l.strip()) >= 8][:4]
        if not lines or not probes:
            return None
        best, best_score = None, 0
        for number, line in enumerate(lines, 1):
            if probes[0][1] not in line:
                continue
            # the start after which the chunk's next lines follow at their own spacing wins
            score, pos, prev = 1, number - 1, probes[0][0]
            for offset, probe in probes[1:]:
                reach = range(pos + 1, min(pos + (offset - prev) + 2, len(lines)))
                hit = next((j for j in reach if probe in lines[j]), None)
                if hit is None:
                    break
                score, pos, prev = score + 1, hit, offset
            if score > best_score:
                best, best_score = number, score
        return best


_NODE = re.compile(r"^NODE (?P<label>.+?) \[src=(?P<src>[^ \]]*) loc=L?(?P<line>\d*)")


def _structure(items: list[dict]) -> list[dict]:
    """The reference returns graph traversal text; its NODE lines become structure results."""
    out = []
    for item in items or []:
        for raw in str(item.get("text") or "").splitlines():
            m = _NODE.match(raw)
            if m and m.group("src"):
                out.append({"label": m.group("label"), "kind": "node",
                            "source_file": m.group("src"),
                            "line": int(m.group("line")) if m.group("line") else None,
                            "relation": None, "score": None})
    return out


def to_contract(obj: dict, lines: LineFinder | None = None) -> dict:
    """Translate the reference's route or ask JSON into loci's contract object."""
    routing = obj.get("routing", obj)
    names = {sid: (d or {}).get("name", sid) for sid, d in (routing.get("detail") or {}).items()}
    name = lambda sid: names.get(sid, sid)  # noqa: E731
    if routing.get("abstain"):
        outcome, scopes = "abstained", []
    else:
        outcome = "enumerated" if routing.get("enumerative") else "routed"
        scopes = [name(s) for s in routing.get("selected") or []]
    result = {
        "outcome": outcome,
        "scopes": scopes,
        "reason": routing.get("abstain_reason"),
        "candidates": [{"scope": name(s), "terms": []} for s in routing.get("candidates") or []],
        "scores": {name(s): (d or {}).get("score") for s, d in (routing.get("detail") or {}).items()},
    }
    if "scopes" in obj and "routing" in obj:
        blocks = []
        for sc in obj.get("scopes") or []:
            scope = sc.get("name") or name(sc.get("scope_id", ""))
            episodes = []
            for ep in sc.get("episodes") or []:
                source = _source(str(ep.get("source") or ""))
                line = lines.line_of(scope, source, str(ep.get("text") or "")) if lines else None
                episodes.append({"text": ep.get("text"), "source": source, "line": line,
                                 "kind": ep.get("kind"), "score": ep.get("score")})
            blocks.append({"scope": scope, "episodes": episodes,
                           "structure": _structure(sc.get("structure") or [])})
        result["blocks"] = blocks
    return result
