"""A home built by an older loci, read and updated by this one: the old artifacts are written here
as the older code wrote them (no older code runs)."""
import json

from typer.testing import CliRunner

from conftest import GIZMO, WEBBY, setup_home
from loci.front.cli import app
from loci.front.doctor import diagnose
from loci.kernel.config import layout

runner = CliRunner()


def by_problem(findings, problem):
    return {f.scope: f for f in findings if f.problem == problem}


def _as_an_older_loci_wrote_it(lay, name: str, **fields) -> None:
    """The scope's meta (its file, and the manifest listing every scope's) as a loci of early December
    2026 wrote it: no record of the build rules, a fingerprint made by other rules."""
    from loci.query.store import indexed_metas

    meta = json.loads(lay.meta(name).read_text())
    meta.pop("build", None)
    meta["fingerprint"] = "0" * 40
    meta.update(fields)
    lay.meta(name).write_text(json.dumps(meta))
    manifest = json.loads(lay.manifest.read_text())
    manifest["scopes"] = {n: json.loads(lay.meta(n).read_text()) for n in indexed_metas(lay)}
    lay.manifest.write_text(json.dumps(manifest))


def test_doctor_names_an_index_from_a_loci_that_recorded_no_build_rules_as_an_upgrade(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    lay = layout()
    _as_an_older_loci_wrote_it(lay, "gizmo")
    found = diagnose(lay)
    assert not by_problem(found, "index_stale"), [f.message for f in found]
    upgraded = by_problem(found, "index_built_by_other_rules")
    assert set(upgraded) == {"gizmo"} and upgraded["gizmo"].fix == "loci update"


def _written_by_a_newer_loci(lay) -> dict:
    """scopes.json as a later loci may write it: a higher schema, a field this one does not know."""
    data = json.loads(lay.scopes.read_text())
    data["schema_version"] += 1
    data["scopes"][0]["pinned_commit"] = "abc123"
    lay.scopes.write_text(json.dumps(data))
    return data


def test_a_scan_by_an_older_loci_leaves_a_newer_registry_as_it_was(tmp_path, loci_home):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY})
    lay = layout()
    newer = _written_by_a_newer_loci(lay)
    res = runner.invoke(app, ["scan", str(code)])
    assert res.exit_code != 0 and "newer loci" in res.output, res.output
    assert json.loads(lay.scopes.read_text()) == newer     # not rewritten down to this loci's schema


def test_doctor_says_to_upgrade_loci_for_a_registry_written_by_a_newer_one(tmp_path, loci_home):
    setup_home(tmp_path / "code", {"gizmo": GIZMO})
    lay = layout()
    _written_by_a_newer_loci(lay)
    [found] = diagnose(lay)
    assert found.problem == "registry_newer" and found.fix == "pip install -U loci-scopes"
    assert "loci scan" not in found.message


def test_ask_on_a_newer_registry_says_so_not_that_the_cwd_is_unusable(tmp_path, loci_home, monkeypatch):
    code = setup_home(tmp_path / "code", {"gizmo": GIZMO})
    _written_by_a_newer_loci(layout())
    monkeypatch.chdir(code / "gizmo")
    res = runner.invoke(app, ["ask", "how is a sprocket calibrated?"])
    assert res.exit_code != 0 and "newer loci" in res.output and "cwd" not in res.output, res.output


def test_doctor_names_one_update_for_an_upgraded_home_not_calibrate_first(tmp_path, loci_home, monkeypatch):
    """The calibration an older loci fitted is stale too, but `loci calibrate` before the rebuild
    would fit what the rebuild changes again: `loci update` rebuilds, then calibrates."""
    import loci_pipeline.calibrate

    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY}, "--no-graphs", "--no-embed")
    lay = layout()
    _as_an_older_loci_wrote_it(lay, "gizmo")
    monkeypatch.setattr(loci_pipeline.calibrate, "calibration_stale",
                        lambda *a: "this loci fits another way than the one that made it")
    found = diagnose(lay)
    assert set(by_problem(found, "index_built_by_other_rules")) == {"gizmo"}
    assert by_problem(found, "calibration_stale")[None].fix == "loci update"
    assert "loci calibrate" not in {f.fix for f in found}


def test_doctor_still_says_calibrate_for_a_stale_calibration_of_a_current_home(tmp_path, loci_home, monkeypatch):
    import loci_pipeline.calibrate

    setup_home(tmp_path / "code", {"gizmo": GIZMO, "webby": WEBBY}, "--no-graphs", "--no-embed")
    monkeypatch.setattr(loci_pipeline.calibrate, "calibration_stale", lambda *a: "the index changed")
    assert by_problem(diagnose(layout()), "calibration_stale")[None].fix == "loci calibrate"
