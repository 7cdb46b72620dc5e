"""SQLite connections for the store: one per thread, each opened with the same pragmas.

A connection is never shared between threads (the app's workers, training's loops): each thread
gets its own on first use, with ``busy_timeout``, foreign keys, WAL and ``synchronous=NORMAL``,
and the sqlite-utils view of it is made only when first asked for (sqlite-utils takes a moment
to import, and opening an up-to-date database does not need it). A thread's connection is closed
when the thread ends; :meth:`ThreadConnections.close` closes every one still open.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from data.checks import StoreError

if TYPE_CHECKING:
    from sqlite_utils import Database

BUSY_TIMEOUT_MS = 10_000
MEMORY = ":memory:"


LOCK_PATIENCE_S = 300.0
"""How long a writer waits in all for another process's write lock before it gives up."""


def begin_immediate(
    conn: sqlite3.Connection, path: object, on_wait: Callable[[float], None] | None = None
) -> None:
    """``BEGIN IMMEDIATE``, waiting for another process's write lock: each try waits up to the
    busy timeout (10 s); past that the wait is reported to ``on_wait`` (the CLI prints one line)
    and tried again, up to :data:`LOCK_PATIENCE_S` in all, then :class:`StoreError`."""
    waited = 0.0
    while True:
        started = time.monotonic()
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise
            waited += time.monotonic() - started
            if waited >= LOCK_PATIENCE_S:
                raise StoreError(
                    f"{path} stayed locked by another writer for {waited:.0f} s; try again later"
                ) from None
            if on_wait is not None:
                on_wait(waited)


class WalError(sqlite3.DatabaseError):
    """The database could not be switched to WAL mode."""


def open_connection(path: str) -> sqlite3.Connection:
    """A connection to ``path`` with the store's pragmas (raises sqlite3 errors as they come)."""
    # check_same_thread=False only so that close() may close it from another thread; the store
    # never hands one thread's connection to another.
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal" and path != MEMORY:
            raise WalError("could not switch the database to WAL mode")
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


class _Holder:
    """One thread's connection and (made on first use) its sqlite-utils view."""

    __slots__ = ("__weakref__", "conn", "_db")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._db: Database | None = None

    @property
    def db(self) -> Database:
        if self._db is None:
            from data._sqlite_utils import Database

            self._db = Database(self.conn)
        return self._db

    def close(self) -> None:
        self._db = None
        self.conn.close()

    def __del__(self) -> None:  # the thread that held it has ended
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - closing at interpreter exit may fail; nothing to do
            pass


class ThreadConnections:
    """Hands each thread its own connection to ``path`` (an in-memory database is one
    connection for all threads: a second connection would see a different, empty database)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()
        self._open: weakref.WeakSet[_Holder] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._closed = False
        self._shared: _Holder | None = None

    def _holder(self) -> _Holder:
        holder = self._shared if self.path == MEMORY else getattr(self._local, "holder", None)
        if holder is not None:
            return holder
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        holder = _Holder(open_connection(self.path))
        with self._lock:
            self._open.add(holder)
        if self.path == MEMORY:
            self._shared = holder
        else:
            self._local.holder = holder  # dropped, and so closed, when this thread ends
        return holder

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (opened now if it has none)."""
        return self._holder().conn

    @property
    def db(self) -> Database:
        """This thread's sqlite-utils view of its connection."""
        return self._holder().db

    def close(self) -> None:
        """Close every open connection; later use raises ``sqlite3.ProgrammingError``."""
        self._closed = True
        with self._lock:
            holders = list(self._open)
            self._open.clear()
        for holder in holders:
            holder.close()
