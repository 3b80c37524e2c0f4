"""Keep readings in a SQLite file."""
import sqlite3


def save_reading(db_path, temperature, humidity):
    """Append one reading with the current timestamp."""
    with sqlite3.connect(db_path) as db:
        db.execute("create table if not exists readings (ts, temperature, humidity)")
        db.execute("insert into readings values (datetime('now'), ?, ?)", (temperature, humidity))
