"""Read calibration.json (written by ``loci calibrate``) and apply it to Params.

A missing or damaged file changes nothing: the shipped defaults stand, and
``loci doctor`` names the damage. Only the fitted thresholds listed in
``FITTED`` are ever taken from the file, each checked to be a positive number.
"""
from __future__ import annotations

import json
import math
from dataclasses import replace

from loci.kernel.errors import LociError
from loci.kernel.config import Layout, Params

FITTED = ("evidence_floor", "concentrated_min_evidence", "multilingual_route_floor")
CALIBRATION_SCHEMA = 1


class CalibrationError(LociError, ValueError):
    """calibration.json exists but cannot be used; the message names the file and the fix."""


def read_calibration(layout: Layout) -> dict | None:
    """The file's contents; None when there is none; CalibrationError when it is damaged."""
    path = layout.calibration
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CalibrationError(f"{path} is unreadable ({exc}); run `loci calibrate`") from None
    from loci.kernel.schemas import CALIBRATION, problem

    if not isinstance(data, dict) or not isinstance(data.get("params"), dict):
        raise CalibrationError(f"{path} holds no fitted parameters; run `loci calibrate`")
    found = problem(data, CALIBRATION)
    if found:
        raise CalibrationError(f"{path} is damaged ({found}); run `loci calibrate` to rebuild it")
    if data.get("schema_version") != CALIBRATION_SCHEMA:
        raise CalibrationError(f"{path} was written by another version of loci; run `loci calibrate`")
    for name in FITTED:
        value = data["params"].get(name)
        if value is not None and not _positive(value):
            raise CalibrationError(f"{path}: {name} = {value!r} is not a positive number; run `loci calibrate`")
    return data


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def calibrated_params(layout: Layout, base: Params) -> Params:
    """``base`` with the fitted thresholds applied; ``base`` itself when there is no usable file."""
    try:
        data = read_calibration(layout)
    except CalibrationError:
        return base
    if data is None:
        return base
    fitted = {k: float(v) for k, v in data["params"].items() if k in FITTED and v is not None}
    return replace(base, **fitted) if fitted else base


def _model_entry(layout: Layout, model_id: str) -> dict:
    try:
        data = read_calibration(layout)
    except CalibrationError:
        return {}
    entry = (data or {}).get("semantic", {}).get("models", {}).get(model_id, {})
    return entry if isinstance(entry, dict) else {}


def _numbers(values: object) -> dict[str, float]:
    if not isinstance(values, dict):
        return {}
    return {k: float(v) for k, v in values.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def semantic_floors(layout: Layout, model_id: str) -> dict[str, float]:
    """Per-scope semantic floors fitted for ``model_id``; empty when none were fitted."""
    return _numbers(_model_entry(layout, model_id).get("floors"))


ROUTE_FLOORS = ("semantic_add_floor", "semantic_rescue_floor", "semantic_veto_floor", "semantic_z_floor",
                "semantic_z_veto")


def route_floors(layout: Layout, model_id: str) -> dict[str, float]:
    """The second opinion's floors fitted for ``model_id`` (Params field -> cosine); empty when none."""
    fitted = _numbers(_model_entry(layout, model_id).get("route"))
    return {k: v for k, v in fitted.items() if k in ROUTE_FLOORS}


def route_background(layout: Layout, model_id: str) -> dict[str, tuple[float, float]]:
    """Per scope, the off-topic questions' mean affinity and its spread, fitted for ``model_id``
    (``{scope: (mean, sd)}``); a damaged or missing entry is left out, never trusted."""
    raw = _model_entry(layout, model_id).get("background")
    out: dict[str, tuple[float, float]] = {}
    for scope, pair in (raw.items() if isinstance(raw, dict) else ()):
        if (isinstance(pair, list) and len(pair) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in pair)
                and pair[1] > 0):
            out[scope] = (float(pair[0]), float(pair[1]))
    return out


def window_chance(layout: Layout, model_id: str) -> tuple[float, ...]:
    """What a passage's windows win by chance (``Params.semantic_window_chance``) as `loci calibrate`
    fitted it for ``model_id``; empty when not fitted or damaged."""
    raw = _model_entry(layout, model_id).get("window_chance")
    if not isinstance(raw, list) or not raw or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v < 1 for v in raw):
        return ()
    return tuple(float(v) for v in raw)
