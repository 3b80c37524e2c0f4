"""What a home's own records say it has done: doit's record of its steps, the embedding model
its vectors were made with when the file that named it is lost, and which thresholds it routes
with (a fit, or the shipped ones the user chose back with `loci calibrate --reset`). Read by the task graph, by
calibration and by doctor (a module below all three: ``tasks`` imports calibration through the
bundles)."""
from __future__ import annotations

from loci.kernel.config import Layout, read_embed_config


def lost_embed_model(layout: Layout) -> str | None:
    """The model a missing (or unreadable) embed.json named, when the embed step ran here and its
    vectors are still here: the one their stores name (``stored_model``). None otherwise."""
    from loci.kernel.vectorstore import stored_model

    if read_embed_config(layout) is not None or not step_recorded(layout, "embed"):
        return None
    return stored_model(layout)


def step_recorded(layout: Layout, task: str) -> bool:
    """doit's record in the home holds a successful run of ``task``: the home has the step even
    when the file it wrote was lost (a damaged or missing record: it has not)."""
    import sqlite3

    from loci.kernel.integrity import connect

    if not layout.doit_db.is_file():
        return False
    try:
        con = connect(layout.doit_db)
        try:
            return con.execute("SELECT 1 FROM doit WHERE task_id = ?", (task,)).fetchone() is not None
        finally:
            con.close()
    except sqlite3.Error:
        return False


SHIPPED = "shipped"


def shipped_thresholds_chosen(layout: Layout) -> bool:
    """The user chose the shipped thresholds (`loci calibrate --reset`) and has not fitted since:
    no step fits them again until `loci calibrate` does (a damaged record: not chosen)."""
    from loci.kernel.jsonfile import read_state_or_none
    from loci.kernel.schemas import THRESHOLDS_FILE

    record = read_state_or_none(layout.thresholds_choice, THRESHOLDS_FILE)
    return bool(record) and record.get("thresholds") == SHIPPED


def calibrates(layout: Layout, asked: bool = True) -> bool:
    """A build (`loci setup`, `loci pull`, the home's own steps) fits the thresholds when it is
    ``asked`` to and the user has not chosen the shipped ones (``shipped_thresholds_chosen``)."""
    return asked and not shipped_thresholds_chosen(layout)


def calibration_kept(layout: Layout) -> bool:
    """The home keeps a calibration the build refreshes: it has calibration.json, or had one (the
    calibrate step ran here and the file was lost: it is fitted again), unless the user chose the
    shipped thresholds (``calibrates``)."""
    return calibrates(layout) and (layout.calibration.exists() or step_recorded(layout, "calibrate"))


def steps_had(layout: Layout) -> dict[str, bool]:
    """The steps the home already has, which `loci update` refreshes (``home_context``): embed when
    embed.json exists or the embed step ran here and left its vectors (``lost_embed_model``),
    calibrate when ``calibration_kept``."""
    return dict(embed=layout.embed_config.exists() or lost_embed_model(layout) is not None,
                calibrate=calibration_kept(layout))


def thresholds_in_force(layout: Layout, data: dict | None) -> dict:
    """Which thresholds route, as `loci calibrate --show --json` prints it: the fit ``data``
    (calibration.json) marked ``"thresholds": "fitted"``, or ``{"thresholds": "shipped",
    "chosen": ...}``, chosen True when `loci calibrate --reset` chose them."""
    if data is not None:
        return {**data, "thresholds": "fitted"}
    return {"thresholds": SHIPPED, "chosen": shipped_thresholds_chosen(layout)}
