"""Opening a store safely: the path is usable, another program's SQLite file is refused before
anything touches it, and a damaged file is found before anything is written to it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"
MIGRATION_SET = "lmrl-tui"
MIGRATION_NAMES = (
    "m001_initial",
    "m002_merge_identity",
    "m003_people_and_campaigns",
    "m004_pairing",
)
"""The schema steps in data/migrations.py, by name (a test keeps the two in step). Opening an
up-to-date database needs only these names, so sqlite-utils is imported when first used."""
TABLES = frozenset(
    {
        "episodes",
        "steps",
        "players",
        "runs",
        "checkpoints",
        "evaluations",
        "labels",
        "store_info",
        "episode_holds",
        "campaigns",
        "pairings",
        "pair_turns",
    }
)
"""The tables an up-to-date store has; a store that lacks one is refused as damaged."""
TABLE_SINCE = {
    "store_info": "m002_merge_identity",
    "episode_holds": "m003_people_and_campaigns",
    "campaigns": "m003_people_and_campaigns",
    "pairings": "m004_pairing",
    "pair_turns": "m004_pairing",
}
"""The schema step that made a table (the others: m001), so an older store is not called
damaged for lacking a table it never had."""


def tables_of(applied: list[str] | set[str]) -> frozenset[str]:
    """The tables a store with the schema steps ``applied`` has."""
    return frozenset(t for t in TABLES if TABLE_SINCE.get(t, "m001_initial") in applied)


class StoreError(Exception):
    """A database problem explained in one line for the user."""


def check_path(p: Path, create: bool) -> None:
    """The file is a readable and writable SQLite file, or can be created."""
    if p.exists():
        if p.is_dir():
            raise StoreError(f"{p} is a directory, not a database file")
        if not os.access(p, os.R_OK | os.W_OK):
            raise StoreError(f"{p} is not readable and writable by you")
        if p.stat().st_size > 0:
            with p.open("rb") as f:
                if f.read(16) != SQLITE_MAGIC:
                    raise StoreError(f"{p} is not an SQLite database")
        return
    if not create:
        raise StoreError(f"no database at {p}")
    parent = p.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(
            f"cannot create the folder {parent} for the database ({e.strerror})"
        ) from None
    if not os.access(parent, os.W_OK):
        raise StoreError(f"cannot create a database in {parent}: the folder is not writable")


def inspect_existing(p: Path, *, pages: bool = False) -> None:
    """Look at an existing file through a read-only connection, before the store's own connection
    would change it (switch its journal to WAL, migrate): refuse another program's SQLite file and,
    with ``pages``, a damaged one (:func:`verify`)."""
    if not p.exists() or p.stat().st_size == 0:
        return
    try:
        conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{p} cannot be read as a database ({e})") from None
    try:
        try:
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{p} cannot be read as a database ({e})") from None
        if tables and "_sqlite_migrations" not in tables:
            raise StoreError(f"{p} is an SQLite database, but not an lmrl-tui one (left untouched)")
        if pages:
            verify(conn, p)
    finally:
        conn.close()


def verify(conn: sqlite3.Connection, p: Path) -> None:
    """``PRAGMA quick_check`` over the whole file (it reads every page, so the app does not run it
    at start); a damaged file raises :class:`StoreError`."""
    try:
        problems = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{p} is damaged ({e}); restore a backup") from None
    if problems != ["ok"]:
        first = " ".join(problems[0].split())[:160]  # quick_check's report can span lines
        raise StoreError(f"{p} is damaged ({first}); restore a backup")


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def applied_migrations(conn: sqlite3.Connection, tables: set[str] | None = None) -> list[str]:
    """The schema steps applied to the file, in order (none: not an lmrl-tui store yet)."""
    if "_sqlite_migrations" not in (table_names(conn) if tables is None else tables):
        return []
    sql = "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid"
    return [r[0] for r in conn.execute(sql, [MIGRATION_SET])]


def refuse_newer(conn: sqlite3.Connection, p: Path, applied: list[str]) -> None:
    """A file written by a newer lmrl-tui (schema steps or ``PRAGMA user_version`` this code does
    not know) is refused before anything reads or writes it."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])  # set by each migration run
    newer = sorted(set(applied) - set(MIGRATION_NAMES)) + (
        [f"version {version}"] if version > len(MIGRATION_NAMES) else []
    )
    if newer:
        raise StoreError(
            f"{p} was written by a newer lmrl-tui (schema steps {', '.join(newer)}); "
            "upgrade lmrl-tui to open it"
        )
