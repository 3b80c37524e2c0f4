"""`loci calibrate --reset`: the way back to the shipped thresholds. Deleting calibration.json is
none (`loci update` fits a lost one again), so the choice is recorded, kept by update and pull,
and said by `calibrate --show` and doctor, until `loci calibrate` fits again."""
from __future__ import annotations

import json

from test_readme_commands import built, cli, code, home  # noqa: F401  (fixtures: one built home per module)


def test_calibrate_reset_keeps_the_shipped_thresholds_until_calibrate_runs_again(home):
    assert (home / "calibration.json").is_file()
    reset = json.loads(cli("calibrate", "--reset", "--json").stdout)
    assert reset == {"thresholds": "shipped", "chosen": True} and not (home / "calibration.json").exists()
    cli("update", "--no-scan", "--quiet")               # the home was calibrated: update would fit it again
    assert not (home / "calibration.json").exists()
    assert json.loads(cli("calibrate", "--show", "--json").stdout) == reset
    assert "shipped thresholds" in cli("calibrate", "--show").stdout and "--reset" in cli("calibrate", "--show").stdout
    findings = {f["problem"]: f for f in json.loads(cli("doctor", "--json", code=None).stdout)}
    assert "calibration_lost" not in findings and "calibration_missing" not in findings
    assert "loci calibrate --reset" in findings["thresholds_shipped"]["message"]
    cli("calibrate")
    assert (home / "calibration.json").is_file()
    assert json.loads(cli("calibrate", "--show", "--json").stdout)["thresholds"] == "fitted"
    (home / "calibration.json").unlink()               # lost, not chosen: update fits it again
    cli("update", "--no-scan", "--quiet")
    assert (home / "calibration.json").is_file()


def test_a_pull_keeps_the_shipped_thresholds_the_user_chose(home, tmp_path):
    cli("push", str(tmp_path / "store"), "--scope", "gizmo", "--quiet")
    cli("calibrate", "--reset")
    pulled = json.loads(cli("pull", str(tmp_path / "store"), "--json").stdout)
    assert pulled["imported"] and pulled["calibrated"] is False
    assert not (home / "calibration.json").exists()


def test_a_setup_keeps_the_shipped_thresholds_the_user_chose(home, code):
    cli("calibrate", "--reset")
    cli("setup", str(code), "-y", "--no-graphs", "--no-embed", "--quiet")
    assert not (home / "calibration.json").exists()
    assert json.loads(cli("calibrate", "--show", "--json").stdout) == {"thresholds": "shipped", "chosen": True}


def test_calibrate_reset_with_another_mode_is_refused_and_changes_nothing(home):
    before = (home / "calibration.json").read_bytes()
    for other in ("--show", "--full"):
        res = cli("calibrate", "--reset", other, code=2)
        assert "--reset" in res.output and other in res.output and "give one of them" in res.output
    assert (home / "calibration.json").read_bytes() == before and not (home / "thresholds.json").exists()
