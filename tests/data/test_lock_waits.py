"""A writer waits for another process's write lock with a bounded, reported back-off instead of
dying with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

import data.connection as connection
from data.records import Who
from data.store import Store, StoreError


def _hold_lock(path, seconds: float, ready: threading.Event) -> None:
    other = sqlite3.connect(path)
    other.execute("BEGIN IMMEDIATE")
    ready.set()
    time.sleep(seconds)
    other.rollback()
    other.close()


def test_a_writer_waits_reports_and_then_writes(db_path) -> None:
    store = Store(db_path)
    store._conn.execute("PRAGMA busy_timeout = 100")  # so the test waits 0.1 s a try, not 10 s
    waits: list[float] = []
    store.on_lock_wait = waits.append
    ready = threading.Event()
    t = threading.Thread(target=_hold_lock, args=(db_path, 0.8, ready))
    t.start()
    ready.wait()
    eid = store.start_episode("maze-fo", 1, 0, "obs\n", Who("human", "human"))
    t.join()
    assert waits and waits == sorted(waits)
    assert store.episode(eid) is not None
    store.close()


def test_a_writer_gives_up_after_its_patience_with_one_line(db_path, monkeypatch) -> None:
    monkeypatch.setattr(connection, "LOCK_PATIENCE_S", 0.3)
    store = Store(db_path)
    store._conn.execute("PRAGMA busy_timeout = 100")
    ready = threading.Event()
    t = threading.Thread(target=_hold_lock, args=(db_path, 1.0, ready))
    t.start()
    ready.wait()
    with pytest.raises(StoreError, match="stayed locked by another writer"):
        store.start_episode("maze-fo", 1, 0, "obs\n", Who("human", "human"))
    t.join()
    store.close()
