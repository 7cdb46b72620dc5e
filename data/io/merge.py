"""Merging stores from several hosts into one (``lmrl merge A.db B.db --into C.db``).

Rows are matched by their ``uid`` (migration m002: random for new rows, a hash of the columns
that never change for rows written before it), players by name, so a row is never copied twice:
merging twice changes nothing, and merging a store into itself is a no-op. Integer ids are each
store's own: ``run_id``, ``checkpoint_id``, ``episode_id`` and a run's ``episode_ids`` are
remapped to the target's. Each episode keeps its ``origin`` (the ``host:file`` label of the store
that recorded it; a store older than m002 is labelled by its file name).

When two stores hold different versions of one row (an episode merged while it was still being
played, a run merged before it finished), the more advanced version wins: an ended episode over
an ``in_progress`` one, then more steps, then the later end; an ended run over a running one, then
the later end; last, for any table, the larger digest of the content (ids expressed as uids). So
the result does not depend on the order of the stores.

Every input is checked (an lmrl-tui store, no schema step newer than ours, every page readable)
before anything is written, and the whole merge is one transaction of the target.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from data.checks import (
    SQLITE_MAGIC,
    StoreError,
    applied_migrations,
    refuse_newer,
    table_names,
    tables_of,
    verify,
)
from data.io.merge_rows import MergeReport, Side, TargetSide, merge_source
from data.migrations import UID_TABLES
from data.store import Store


def _read_only(p: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{p} cannot be read as a database ({e})") from None
    return conn


def open_input(path: str | os.PathLike[str]) -> tuple[sqlite3.Connection, list[str]]:
    """A read-only connection to the store at ``path`` and its applied schema steps, after
    checking it: another program's file, a newer schema, a damaged or missing file raise
    :class:`StoreError` (one line). Nothing is written to the file."""
    p = Path(path).expanduser()
    if not p.exists():
        raise StoreError(f"no database at {p}")
    if p.is_dir():
        raise StoreError(f"{p} is a directory, not a database file")
    try:
        with p.open("rb") as f:
            head = f.read(16)
    except OSError as e:
        raise StoreError(f"cannot read {p} ({e.strerror})") from None
    if head != SQLITE_MAGIC:
        raise StoreError(f"{p} is not an SQLite database")
    conn = _read_only(p)
    try:
        try:
            tables = table_names(conn)
            applied = applied_migrations(conn, tables)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{p} is damaged ({e}); restore a backup") from None
        if not applied:
            raise StoreError(f"{p} is an SQLite database, but not an lmrl-tui one")
        refuse_newer(conn, p, applied)
        verify(conn, p)
        missing = sorted(tables_of(applied) - tables)
        if missing:
            raise StoreError(f"{p} is damaged: the table(s) {', '.join(missing)} are missing")
    except BaseException:
        conn.close()
        raise
    return conn, applied


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def merge_stores(
    inputs: list[str | os.PathLike[str]], into: str | os.PathLike[str], *, on_lock_wait=None
) -> MergeReport:
    """Merge the stores ``inputs`` into the store ``into`` (created if missing) in one transaction;
    every input and an existing target are checked first, so a bad one writes nothing."""
    target = Path(into).expanduser()
    report = MergeReport()
    opened: list[tuple[Path, sqlite3.Connection, list[str]]] = []
    try:
        for raw in inputs:
            p = Path(raw).expanduser()
            conn, applied = open_input(p)
            if _same_file(p, target):
                conn.close()
                report.skipped.append(str(p))
                continue
            opened.append((p, conn, applied))
        existed = target.exists() and not (
            target.is_file() and target.stat().st_size == 0
        )  # `touch`ed: new
        if existed:
            open_input(target)[0].close()  # refuse a foreign, newer or damaged target untouched
        store = Store(target, verify=existed)
        store.on_lock_wait = on_lock_wait
        try:
            with store.transaction():
                dest = TargetSide(store._conn)
                for p, conn, applied in opened:
                    conn.execute("BEGIN")  # one snapshot of a store that may be in use meanwhile
                    merge_source(
                        Side.of_source(conn, p, "m002_merge_identity" in applied), dest, report
                    )
                    conn.rollback()
        except BaseException:
            store.close()
            if not existed:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{target}{suffix}").unlink(missing_ok=True)
            raise
        store.close()
    finally:
        for _, conn, _ in opened:
            conn.close()
    return report


__all__ = ["UID_TABLES", "MergeReport", "merge_stores", "open_input"]
