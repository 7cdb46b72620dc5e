"""The store's file: where it lives, opening it (path checks, migrations), one connection per
thread, and write transactions; :class:`data.store.Store` builds on :class:`StoreFile`."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data.checks import (
    MIGRATION_NAMES,
    TABLES,
    StoreError,
    applied_migrations,
    check_path,
    inspect_existing,
    refuse_newer,
    table_names,
    verify,
)
from data.connection import ThreadConnections, WalError, begin_immediate

if TYPE_CHECKING:
    from sqlite_utils import Database

APP_NAME = "lmrl-tui"
DB_ENV = "LMRL_DB"
DATABASE_ERRORS: tuple[type[BaseException], ...] = (sqlite3.DatabaseError,)
"""What reading a damaged database raises (for callers that must not import sqlite3)."""


def store_in(folder: str | os.PathLike[str]) -> Path:
    """The store a results folder keeps for itself (``lmrl reproduce``'s ``OUT/store.db``)."""
    return Path(folder) / "store.db"


def default_db_path() -> Path:
    """``$LMRL_DB`` if set, else ``episodes.db`` in the user data directory."""
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False)) / "episodes.db"


class StoreFile:
    """An open store file (see :class:`data.store.Store`, which adds the episodes' reads and writes)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        verify: bool = False,
    ) -> None:
        """Open (or create) the store at ``path`` (default: :func:`default_db_path`). ``verify``
        checks every page first (commands that write), so nothing is written into a damaged file."""
        if path is not None and not str(path).strip():
            raise StoreError("the database path is empty; give a file (--db PATH) or leave it out")
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.on_lock_wait: Callable[[float], None] | None = None
        """Called with the seconds waited so far each time a write still waits for another
        process's lock (every busy timeout, 10 s)."""
        check_path(self.path, create)
        inspect_existing(self.path, pages=verify)
        self._connections = ThreadConnections(str(self.path))
        try:
            self._migrate()
        except WalError as e:
            self._connections.close()
            raise StoreError(f"{self.path}: {e}") from None
        except sqlite3.DatabaseError as e:
            self._connections.close()
            raise StoreError(f"{self.path} is not a usable lmrl-tui database ({e})") from None
        except BaseException:
            self._connections.close()
            raise

    @property
    def _conn(self) -> sqlite3.Connection:
        """This thread's connection."""
        return self._connections.conn

    @property
    def db(self) -> Database:
        """This thread's sqlite-utils view of its connection (made on first use).

        For ``data/`` and tests only: other packages never run SQL themselves.
        """
        return self._connections.db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """``sql`` on this thread's connection without importing sqlite-utils (~0.1 s at the app's
        start). For ``data/`` only, as :attr:`db`."""
        return self._conn.execute(sql, params)

    # -- opening -----------------------------------------------------------------------------
    def verify(self) -> None:
        """Check the file's pages and that every table is there (:func:`data.checks.verify`);
        commands that write call it before writing, so nothing is added to a damaged file."""
        verify(self._conn, self.path)

    def _migrate(self) -> None:
        known = set(MIGRATION_NAMES)
        tables = table_names(self._conn)
        applied = set(applied_migrations(self._conn, tables))
        refuse_newer(self._conn, self.path, sorted(applied))
        if not applied and tables - {"_sqlite_migrations"}:
            raise StoreError(f"{self.path} is an SQLite database, but not an lmrl-tui one")
        if known <= applied:
            missing = sorted(TABLES - tables)
            if missing:
                raise StoreError(
                    f"{self.path} is damaged: the table(s) {', '.join(missing)} are missing"
                )
            return
        from data.migrations import migrations

        try:
            with self._writing():  # a second process opening a new file waits, then finds it done
                migrations.apply(self.db)
                self._conn.execute(f"PRAGMA user_version = {len(MIGRATION_NAMES)}")
        except sqlite3.OperationalError as e:
            raise StoreError(f"cannot write to {self.path} ({e})") from None

    def close(self) -> None:
        """Close the connections of every thread."""
        self._connections.close()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction that takes the write lock at once (``BEGIN IMMEDIATE``).

        A deferred transaction that reads before it writes can fail with "database is locked"
        (no busy wait) when another process writes meanwhile; an immediate one waits for the lock
        up to ``busy_timeout`` instead. Nested use joins the outer transaction. Every write of
        the store goes through here, on the calling thread's connection.
        """
        conn = self._conn
        if conn.in_transaction:
            yield
            return
        begin_immediate(conn, self.path, self.on_lock_wait)
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction around several writes (those inside join it): all are
        committed when the block ends, none if it raises (``lmrl import``'s all or nothing)."""
        return self._writing()
