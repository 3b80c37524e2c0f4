"""The one build API: ``scan``, ``setup``, ``update``, ``graphs``, ``index``, ``embed``, ``calibrate``
(and ``reset_calibration``).

Each takes a BuildContext (layout, parameters, model, progress reporter), runs
the doit tasks of loci_pipeline.tasks through loci_pipeline.runner, and returns a report
value; the CLI, the MCP server, the demo and `python -m loci.dodo` only display
it. Expected failures raise loci.kernel.errors.LociError subclasses (one line,
with the fix); a scope that fails to build is a ``failed`` entry, not an
exception, so the other scopes' results still come back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from loci.kernel.errors import BuildError, UsageError
from loci_pipeline import buildlock
from loci_pipeline.runner import RunReport, run, run_update
from loci_pipeline.tasks import BuildContext


@dataclass
class ScanReport:
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)
    scopes: int = 0
    moved: dict[str, str] = field(default_factory=dict)     # a scope whose repository moved -> its new path


@dataclass
class GraphsReport:
    results: dict[str, dict] = field(default_factory=dict)   # scope -> {"status", "message"}
    failed: dict[str, str] = field(default_factory=dict)     # scope or task -> message

    @property
    def code(self) -> int:
        return 1 if self.failed else 0


@dataclass
class IndexReport:
    rebuilt: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)     # scope (or a step) -> message with the fix
    metas: dict[str, dict] = field(default_factory=dict)     # rebuilt scope -> its meta
    routed: bool = False                                      # routing.sqlite was rewritten

    @property
    def code(self) -> int:
        return 1 if self.failed else 0


@dataclass
class EmbedReport:
    model_id: str = ""
    embedded: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    encoded: int = 0
    reused: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    multilingual: list[str] = field(default_factory=list)   # scopes whose multilingual store was rechecked
    multilingual_encoded: int = 0
    multilingual_reused: int = 0

    @property
    def code(self) -> int:
        return 1 if self.failed else 0


@dataclass
class CalibrateReport:
    data: dict
    fitted: bool            # False: calibration.json was already fitted to this index


@dataclass
class UpdateReport:
    scan: ScanReport | None
    graphs: GraphsReport
    index: IndexReport
    embed: EmbedReport | None
    calibrate: CalibrateReport | None
    failed: dict[str, str] = field(default_factory=dict)     # steps after index that failed
    tasks: list[str] = field(default_factory=list)            # every doit task that ran, in order
    moved: dict[str, str] = field(default_factory=dict)      # a scope the rescan followed to its new folder
    problems: list[str] = field(default_factory=list)        # what the rescan inside the run could not register
    pulls: list = field(default_factory=list)                 # a PullReport (share.pull) per source pulled again
    pull_failed: dict[str, str] = field(default_factory=dict)  # a source that could not be pulled -> why

    @property
    def code(self) -> int:
        return 1 if (self.index.failed or self.failed or (self.embed and self.embed.failed) or self.pull_failed
                     or any(p.refused for p in self.pulls)) else 0


# ---------------------------------------------------------------------------- reports from a run

def graphs_report(run_report: RunReport) -> GraphsReport:
    out = GraphsReport()
    for task, values in run_report.values.items():
        if task.startswith("graphs:"):
            out.results[task[7:]] = dict(values)
            if values.get("status") == "failed":
                out.failed[task[7:]] = values.get("message", "failed")
    for task in run_report.failed:
        if task.startswith("graphs"):
            out.failed[task.split(":", 1)[-1]] = run_report.failure(task)
    return out


def index_report(ctx: BuildContext, run_report: RunReport) -> IndexReport:
    out = IndexReport(rebuilt=run_report.scopes("index"), unchanged=run_report.scopes("index", "uptodate"),
                      routed="routing" in run_report.executed)
    for name in run_report.scopes("index", "failed"):
        out.failed[name] = run_report.failure(f"index:{name}").removeprefix(f"{name}: ")
    for task in run_report.failed:
        if task in ("routing", "scan", "runtime", "update", "doit"):
            out.failed[task] = run_report.failure(task)
    from loci.kernel.state import read_meta

    for name in out.rebuilt:
        meta = read_meta(ctx.layout, name)
        if meta is not None:
            out.metas[name] = meta
    return out


def _encoded(run_report: RunReport, step: str) -> tuple[int, int]:
    """Chunks encoded and vectors kept by the ``step:S`` tasks (vectors, multilingual) that ran."""
    encoded = reused = 0
    for task, values in run_report.values.items():
        if task.startswith(f"{step}:") and task in run_report.executed:
            encoded += int(values.get("encoded", 0))
            reused += int(values.get("reused", 0))
    return encoded, reused


def embed_report(ctx: BuildContext, run_report: RunReport) -> EmbedReport:
    out = EmbedReport(model_id=ctx.model_id(), embedded=run_report.scopes("vectors"),
                      unchanged=run_report.scopes("vectors", "uptodate"),
                      multilingual=run_report.scopes("multilingual"))
    out.encoded, out.reused = _encoded(run_report, "vectors")
    out.multilingual_encoded, out.multilingual_reused = _encoded(run_report, "multilingual")
    for task in run_report.failed:
        if task.startswith("vectors") or task == "embed":
            out.failed[task.split(":", 1)[-1]] = run_report.failure(task)
    return out


def calibrate_report(ctx: BuildContext, run_report: RunReport) -> CalibrateReport | None:
    from loci.query.calibration import read_calibration

    if "calibrate" in run_report.failed:
        return None
    data = read_calibration(ctx.layout)
    return CalibrateReport(data or {}, fitted="calibrate" in run_report.executed)


# ---------------------------------------------------------------------------- the steps

def scan(ctx: BuildContext, dirs: Sequence[Path], split: bool | None = None) -> ScanReport:
    """Register the git repositories under ``dirs`` (and remember the roots); scopes.json is rewritten whole."""
    from loci.kernel.registry import editing_registry
    from loci_pipeline.scan import scan as walk

    buildlock.hold(ctx.layout)
    try:  # a damaged scopes.json is read as far as it is sound and rewritten whole
        with editing_registry(ctx.layout) as edit:
            result = walk(list(dirs), split=split, prior=edit.registry)
            edit.registry = result.registry
    finally:
        buildlock.release(ctx.layout)
    return ScanReport(list(result.found), list(result.missing), list(result.problems), dict(result.owners),
                      len(result.registry.scopes), dict(result.moved))


def _known(ctx: BuildContext, names: Sequence[str]) -> None:
    reg = ctx.registry()
    unknown = [n for n in names if reg.get(n) is None]
    if unknown:
        raise UsageError(f"unknown scope {unknown[0]!r}; known scopes: {', '.join(reg.names()) or 'none'}")


def graphs(ctx: BuildContext, names: Sequence[str] = (), *, force: bool = False) -> GraphsReport:
    """Extract code graphs (every scope, or ``names``); unchanged code is skipped."""
    _known(ctx, names)
    ctx.scan = False  # only `update` rescans the roots
    targets = [f"graphs:{n}" for n in names] or ["graphs"]
    return graphs_report(run(ctx, targets, force=force))


def index(ctx: BuildContext, *, force: bool = False) -> IndexReport:
    """Index every scope whose fingerprint moved, then merge routing."""
    if not ctx.registry().scopes:
        raise BuildError("no scopes registered yet: run `loci scan DIR` (or `loci setup DIR`) first")
    ctx.scan = False  # only `update` rescans the roots
    return index_report(ctx, run(ctx, ["index", "routing"], force=force))


def _require_index(ctx: BuildContext, step: str) -> None:
    if not ctx.layout.manifest.exists():
        raise BuildError(f"nothing indexed yet: run `loci setup DIR` (or `loci index`) before `loci {step}`")


def open_encoder_first(ctx: BuildContext) -> None:
    """Load (and on first use distil) the model before any work: a clear error, not a failed task."""
    from loci.query.semantic import EncoderUnavailable
    from loci_pipeline.embed import EmbedError

    try:
        ctx.encoder()
    except (EncoderUnavailable, EmbedError) as exc:
        raise BuildError(str(exc)) from None


def embed(ctx: BuildContext) -> EmbedReport:
    """Encode every indexed scope's new or changed chunks; embed.json names the model once all are done."""
    _require_index(ctx, "embed")
    ctx.scan = False  # only `update` rescans the roots
    open_encoder_first(ctx)
    return embed_report(ctx, run(ctx, ["embed"], jobs=1))


def calibrate(ctx: BuildContext) -> CalibrateReport:
    """Fit the thresholds to this corpus (nothing is refitted while the index and vectors are unchanged)."""
    _require_index(ctx, "calibrate")
    ctx.scan = False  # only `update` rescans the roots
    r = run(ctx, ["calibrate"], jobs=1)
    if ctx.calibrate_full and "calibrate" not in r.executed and not r.failed and not r.blocked:
        r = run(ctx, ["calibrate"], force=True, single=True)   # up to date, but asked to fit whole
    report = calibrate_report(ctx, r)
    if report is None:
        raise BuildError(f"calibration failed: {r.failure('calibrate')}")
    if "calibrate" in r.blocked:
        failed = ", ".join(sorted(r.failed)) or r.blocked["calibrate"]
        raise BuildError(f"not calibrated: the index must build first ({failed} failed; `loci index` says why)")
    return report


def reset_calibration(ctx: BuildContext) -> dict:
    """Route with the shipped thresholds again: record the choice, then remove calibration.json.
    `loci update`, a pull and the commit hooks keep the choice (``calibration_kept``); `loci
    calibrate` fits again and clears it. Returns ``thresholds_in_force``."""
    import time

    from loci.kernel.atomic import build_lock, write_json
    from loci_pipeline.home_steps import SHIPPED, thresholds_in_force

    layout = ctx.layout
    with build_lock(layout.lock, "calibrate --reset"):
        write_json(layout.thresholds_choice, {"thresholds": SHIPPED, "chosen_at": time.time()})
        layout.calibration.unlink(missing_ok=True)
    return thresholds_in_force(layout, None)


@dataclass
class CalibratedPull:
    bundles: object                         # loci_pipeline.share.pull.PullReport
    calibrate: CalibrateReport | None       # None: nothing was merged, or calibration was left out
    failed: str = ""                        # why calibration failed (the pull itself landed)


def pull(ctx: BuildContext, source: str, *, no_vectors: bool = False, calibrate: bool = True,
         full: bool = False, scopes: Sequence[str] | None = None) -> CalibratedPull:
    """Pull ``source``'s changed bundles (only ``scopes``' when named), then run the calibrate
    step, which fits again only when what the pull merged moved what it reads (the manifest, the
    vectors): a pulled home answers with thresholds fitted to the scopes it now holds, as a home
    built here does (unless the user chose the shipped thresholds: `loci calibrate --reset`)."""
    from loci_pipeline.home_steps import calibrates
    from loci_pipeline.share.pull import pull as pull_bundles

    bundles = pull_bundles(ctx.layout, source, no_vectors=no_vectors, full=full,
                           scopes=list(scopes) if scopes is not None else None)
    if not bundles.imported or not calibrates(ctx.layout, calibrate):
        return CalibratedPull(bundles, None)
    r = run(ctx, ["calibrate"], jobs=1)
    report = calibrate_report(ctx, r)
    return CalibratedPull(bundles, report, "" if report is not None else r.failure("calibrate"))


def _after_index(ctx: BuildContext, r: RunReport, *, embed_step: bool, calibrate_step: bool, scan_report=None):
    failed = {t: r.failure(t) for t in r.failed if t in ("embed", "calibrate")}
    return UpdateReport(scan=scan_report, graphs=graphs_report(r), index=index_report(ctx, r),
                        embed=embed_report(ctx, r) if embed_step else None,
                        calibrate=calibrate_report(ctx, r) if calibrate_step else None, failed=failed,
                        tasks=list(r.executed),
                        moved={**(scan_report.moved if scan_report else {}),
                               **((r.values.get("scan") or {}).get("moved") or {})},
                        problems=[p for p in (r.values.get("scan") or {}).get("problems") or ()
                                  if not scan_report or p not in scan_report.problems])


def update(ctx: BuildContext, dirs: Sequence[Path] = (), *, force: bool = False, pull: bool = True) -> UpdateReport:
    """What `doit` alone does: pull again every source the home pulled from (unless not ``pull``:
    `loci setup` goes to no store), rescan the remembered roots (plus ``dirs``), then rebuild
    whatever changed, refreshing the steps the home already has (``home_context``), in one doit
    run. The pulls come first so that the run's embed and calibrate steps see what they brought
    (a bundle taken whole leaves its vectors to check, its multilingual store to build; a pull
    that brought the home's first vectors adds the embed step: loci_pipeline.tasks,
    ``take_up_steps``): one update settles the home. A busy home is refused first (LockHeld),
    before anything is read."""
    buildlock.hold(ctx.layout)
    try:
        scanned = scan(ctx, dirs) if dirs else None
        if not ctx.registry().scopes:
            raise BuildError("nothing registered: run `loci setup DIR` first")
        ctx.pull = pull
        r = run_update(ctx, force=force)
    finally:
        buildlock.release(ctx.layout)
    report = _after_index(ctx, r, embed_step=ctx.embed, calibrate_step=ctx.calibrate, scan_report=scanned)
    report.pulls, report.pull_failed = pull_reports(r)
    return report


def pull_reports(r: RunReport) -> tuple[list, dict[str, str]]:
    """The ``pull:SOURCE`` tasks of a run: a PullReport (share.pull) per source pulled again, in
    the order of their addresses, and each source that could not be pulled with why."""
    from loci_pipeline.share.pull import PullReport

    pulled = sorted(t for t in r.executed if t.startswith("pull:"))
    return ([PullReport(**r.values[t]) for t in pulled if t in r.values],
            {t.split(":", 1)[1]: r.failure(t) for t in sorted(r.failed) if t.startswith("pull:")})


def setup(ctx: BuildContext, dirs: Sequence[Path], *, split: bool = False) -> UpdateReport:
    """First run: scan ``dirs``, then graphs/index/routing and the embed and calibrate steps ``ctx`` asks for."""
    scanned = scan(ctx, dirs, split=split)
    ctx.scan = False  # just done
    if not ctx.registry().scopes:
        raise BuildError("nothing to index: no git repositories were found under "
                         + ", ".join(str(d) for d in dirs))
    r = run_update(ctx)
    return _after_index(ctx, r, embed_step=ctx.embed, calibrate_step=ctx.calibrate, scan_report=scanned)


# ---------------------------------------------------------------------------- the registry, by hand

@dataclass
class AddReport:
    name: str
    registered: bool        # False: the directory was a scope already (aliases or globs were added)
    indexed: bool           # the scope has an index, so a new alias answers at once


def add(ctx: BuildContext, path: Path, *, alias: Sequence[str] = (), glob: Sequence[str] = ()) -> AddReport:
    """Register one directory as a scope, or add aliases and globs to the scope registered there
    (holding the registry's lock: a scan running meanwhile keeps the edit)."""
    from loci.kernel.registry import editing_registry
    from loci_pipeline.scan import add_scope

    with editing_registry(ctx.layout) as edit:
        known = edit.registry.at_path(path) is not None
        edit.registry = reg = add_scope(edit.registry, path, alias=list(alias), glob=list(glob))
    scope = reg.at_path(path)
    name = scope.name if scope else str(path)
    return AddReport(name, registered=not known, indexed=ctx.layout.meta(name).is_file())


@dataclass
class OwnersReport:
    owners: dict[str, str] = field(default_factory=dict)   # scope -> "me", "vendor:<org>" or "unknown"
    why: dict[str, str] = field(default_factory=dict)      # scope whose owner is unknown -> why


def infer_groups(ctx: BuildContext) -> OwnersReport:
    """Label every scope ``me`` or ``vendor:<org>`` from git provenance (scopes.json rewritten)."""
    from loci.kernel.registry import editing_registry
    from loci_pipeline.provenance import read_identity, unknown_owner_reason
    from loci_pipeline.scan import relabel

    identity = read_identity()
    with editing_registry(ctx.layout) as edit:
        result = relabel(edit.registry, identity)
        edit.registry = result.registry
    report = OwnersReport(dict(result.owners))
    for name, owner in result.owners.items():
        if owner == "unknown":
            scope = result.registry.get(name)
            repo = Path(scope.path) if scope and scope.kind != "subscope" else None   # a sub-scope: its parent's
            report.why[name] = unknown_owner_reason(identity, repo)
    return report


# ---------------------------------------------------------------------------- forgetting scopes

@dataclass
class ForgetReport:
    forgotten: list[str] = field(default_factory=list)      # every scope dropped, sub-scopes included
    pulled: dict[str, str] = field(default_factory=dict)    # a pulled one -> the source a pull brings it back from
    registers_again: list[str] = field(default_factory=list)  # its folder is under a scanned root still
    failed: dict[str, str] = field(default_factory=dict)    # a step that failed -> why


def forget(ctx: BuildContext, names: Sequence[str], *, calibrate: bool = True) -> ForgetReport:
    """Drop ``names`` (and the sub-scopes of a repository among them) from the home: the registry
    first, then the routing step merges what stays (``routing_action``, the step `loci update`
    drops a scope the registry no longer holds with), then the scopes' own files go, then the
    merged vector summaries and the calibration are made again from what stays. Each step
    leaves a home that answers: a stop between two leaves files no step reads, or a routing
    index the next `loci update` merges again; nothing is half written (each file is replaced
    whole). An unknown name is a UsageError and changes nothing."""
    from loci.kernel.errors import unknown_name
    from loci.kernel.registry import Registry, editing_registry, load_registry
    from loci_pipeline.scan import _inside, with_excludes

    buildlock.hold(ctx.layout)
    try:
        registry = load_registry(ctx.layout)
        for name in names:
            if registry.get(name) is None:
                raise UsageError(unknown_name("scope", name, registry.names(), listing="loci scopes"))
        drop = set(names) | {s.name for s in registry.scopes if s.kind == "subscope" and s.parent in names}
        with editing_registry(ctx.layout) as edit:
            dropped = [s for s in edit.registry.scopes if s.name in drop]
            edit.registry = Registry(scopes=with_excludes([s for s in edit.registry.scopes if s.name not in drop]),
                                     roots=list(edit.registry.roots))
        roots = [Path(r) for r in edit.registry.roots]
        report = ForgetReport(forgotten=sorted(s.name for s in dropped))
        report.registers_again = sorted(s.name for s in dropped if s.kind in ("repo", "subscope")
                                        and Path(s.path).is_dir()
                                        and any(_inside(Path(s.path), r) for r in roots))
        report.pulled = {s.name: s.path.rsplit("/", 1)[0] for s in dropped if s.kind == "pulled"}
        ctx.scan = False
        later = ["embed"] if ctx.embed and ctx.layout.embed_config.exists() else []   # the merged summaries
        later += ["calibrate"] if calibrate and ctx.layout.calibration.exists() else []
        merged = run(ctx, ["routing"], single=True)
        if "routing" in merged.failed:   # the scopes' files stay: the routing still in place reads them
            report.failed["routing"] = merged.failure("routing")
            return report
        _forget_pulled(ctx.layout, report.forgotten)
        for name in report.forgotten:
            _remove_scope_files(ctx.layout, name)
        for step in later:
            r = run(ctx, [step], single=True)
            if step in r.failed:
                report.failed[step] = r.failure(step)
        return report
    finally:
        buildlock.release(ctx.layout)


def _forget_pulled(layout, names: Sequence[str]) -> None:
    """pulled.json without ``names``: `loci update` pulls again only the sources that scopes still
    here came from (a later pull of the same source brings a forgotten one back as new)."""
    from loci.kernel.atomic import write_json
    from loci_pipeline.share.pull import pulled_path, read_pulled

    records = read_pulled(layout)
    if any(n in records for n in names):
        write_json(pulled_path(layout), {"scopes": {k: v for k, v in records.items() if k not in names}},
                   compact=True)


def scope_files(layout, name: str) -> list[Path]:
    """Every file and folder the home keeps for one scope (whichever step or pull wrote it)."""
    from loci.kernel import territory
    from loci.kernel.config import safe_name
    from loci.kernel.vectorstore import MULTILINGUAL_ID, summary_dir, vector_files
    from loci_pipeline.calibration_pieces import piece_path

    safe = safe_name(name)
    out = [layout.chunks(name), layout.vocab(name), layout.query_db(name), layout.symbols(name),
           layout.calls(name), layout.refs(name), layout.error(name), layout.graph_dir(name),
           layout.bundle(name), piece_path(layout, name), territory.record_path(layout, name),
           territory.vocab_db(layout, name), layout.map_used(name),
           *vector_files(layout.multilingual(name)), summary_dir(layout, MULTILINGUAL_ID) / f"{safe}.npy"]
    root = layout.vectors_root
    for model_dir in sorted(root.iterdir()) if root.is_dir() else ():
        out += [*vector_files(model_dir / f"{safe}.parquet"), *vector_files(model_dir / "symbols" / f"{safe}.parquet"),
                model_dir / "summary" / f"{safe}.npy"]
    return out + [layout.meta(name)]    # the meta last: while it is there, the scope reads as indexed


def _remove_scope_files(layout, name: str) -> None:
    import shutil

    for path in scope_files(layout, name):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
