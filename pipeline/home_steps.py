"""What a home's own records say it has done: doit's record of its steps, and the embedding model
its vectors were made with when the file that named it is lost. Read by the task graph, by
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
