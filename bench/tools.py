"""The two command-line tools under measurement, described alike: how to build
their stores, rebuild them, and ask them a question as one-shot commands."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.measure import Measured, run_measured
from bench.reference import LineFinder, to_contract

BUILD_ORDER = ("scan", "graphs", "index", "embed", "calibrate")
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# every command a bench times runs in its own process, as a one-shot does: no warm engine is
# started in a bench home (bench/oneshot.py --mode warm measures the engine on purpose)
IN_PROCESS = {"LOCI_SERVER": "off"}


@dataclass(frozen=True)
class Step:
    name: str
    args: tuple[str, ...]


@dataclass
class Tool:
    """One implementation: its ``loci`` program, its home and its corpus copy."""

    key: str                       # "loci" | "reference"
    label: str
    bin_dir: Path
    home: Path
    corpus: Path
    build: list[Step]
    rebuild: list[Step]
    skipped: dict[str, str] = field(default_factory=dict)   # build step -> why not run
    # (label, flags) of each way `ask` is run; the first one's answers are scored
    ask_modes: tuple[tuple[str, tuple[str, ...]], ...] = (("ask", ()),)
    driver_impl: str = "loci"
    timeout: float = 900.0
    source: Path | None = None     # a checkout whose sources run instead of the installed package

    @property
    def exe(self) -> Path:
        return self.bin_dir / "loci"

    @property
    def python(self) -> Path:
        return self.bin_dir / "python"

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env.update(OFFLINE, **IN_PROCESS, LOCI_HOME=str(self.home), PATH=f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}")
        if self.source is not None:
            env["PYTHONPATH"] = str(self.source)
        return env

    def run(self, args, cwd: Path, timeout: float | None = None) -> Measured:
        return run_measured([str(self.exe), *args], env=self.env(), cwd=cwd,
                            timeout=timeout or self.timeout)

    def query_args(self, kind: str, question: str, cwd_dir: Path | None,
                   flags: tuple[str, ...] = ()) -> list[str]:
        where = ["--cwd", str(cwd_dir)] if cwd_dir is not None else ["--no-cwd"]
        return [kind, "--json", *flags, *where, "--", question]

    def translate(self, obj: dict) -> dict:
        """The tool's JSON in loci's contract (the reference's needs translating)."""
        if self.key != "reference":
            return obj
        roots = {p.name: p for p in self.corpus.iterdir() if p.is_dir()} if self.corpus.exists() else {}
        return to_contract(obj, self._lines(roots))

    def _lines(self, roots):
        if getattr(self, "_finder", None) is None or self._finder.roots != roots:
            self._finder = LineFinder(roots)
        return self._finder

    def elsewhere(self, home: Path, corpus: Path) -> "Tool":
        """The same tool pointed at another home and corpus (the synthetic beds)."""
        return replace(self, home=home, corpus=corpus)


def help_commands(text: str) -> set[str]:
    """Subcommand names listed in a ``--help`` text."""
    # a command line of the listing: optional indent or box edge, the name, then 2+ spaces or the end
    return set(re.findall(r"^[\s│|]*([a-z][a-z0-9_-]*)(?=\s{2,}|\s*[│|]?$)", text, re.M))


def loci_tool(bin_dir: Path, home: Path, corpus: Path, source: Path | None = None) -> Tool:
    """The project's ``loci`` (from ``source`` when given): every build step its --help lists,
    in pipeline order."""
    probe = Tool("loci", "loci", bin_dir, home, corpus, [], [], source=source)
    m = run_measured([str(probe.exe), "--help"], env=probe.env(), timeout=60)
    have = (help_commands(m.stdout) if m.ok else None) or {"scan", "index"}
    build = [Step("scan", ("scan", str(corpus)))]
    build += [Step(s, (s,)) for s in BUILD_ORDER[1:] if s in have]
    skipped = {s: "no such command" for s in BUILD_ORDER if s not in have and s != "scan"}
    rebuild = [Step("index", ("index",))]
    if "embed" in have:  # nothing changed: no model load; one file changed: only its chunks re-encoded
        rebuild.append(Step("embed", ("embed",)))
    if "update" in have:
        rebuild.append(Step("update", ("update", "--no-scan")))
    return Tool("loci", "loci", bin_dir, home, corpus, build, rebuild, skipped,
                ask_modes=(("ask", ("--k", "5")), ("ask --fast", ("--k", "5", "--fast"))),
                driver_impl="loci", source=source)


def reference_tool(bin_dir: Path, home: Path, corpus: Path, version: str) -> Tool:
    """loci-mem: scan, graphs, index, calibrate; its embeddings need a model-hub download."""
    build = [Step("scan", ("scan", str(corpus))), Step("graphs", ("graphs",)),
             Step("index", ("index",)), Step("calibrate", ("calibrate",))]
    rebuild = [Step("index", ("index",)), Step("update", ("update", "-y", "--no-scan", "--no-embed"))]
    skipped = {"embed": "downloads bge-small from the model hub (offline here)"}
    return Tool("reference", f"loci-mem {version}", bin_dir, home, corpus, build, rebuild, skipped,
                ask_modes=(("ask --fast", ("--fast", "-k", "5")),), driver_impl="ref")


def parse_json(text: str) -> dict | None:
    """The first JSON object in a command's stdout, or None."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None
