"""One connection per thread: threads write through one Store without sharing a connection, each
with the store's pragmas, and a thread's connection is closed when the thread ends."""

from __future__ import annotations

import gc
import sqlite3
import threading

import pytest

from data import runs
from data.store import Store, Who


def _in_thread(fn):
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_two_threads_write_through_one_store_on_their_own_connections(store):
    barrier = threading.Barrier(2)
    conns: dict[int, sqlite3.Connection] = {}
    errors: list[BaseException] = []

    def play(k: int) -> None:
        try:
            conns[k] = store.db.conn
            barrier.wait()  # both threads hold a connection at the same time
            for n in range(20):
                eid = store.start_episode(
                    "maze-fo", 1, k * 100 + n, "o\n", Who("scripted", f"t{k}")
                )
                store.add_step(eid, 0, "move left\n", "o\n", -1.0)
                store.add_step(eid, 1, "move up\n", "Success\n", 0.0, terminated=True)
                store.finish_episode(eid, success=True)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=play, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    mine = store.db.conn
    assert len({id(conns[1]), id(conns[2]), id(mine)}) == 3
    assert store.count("status = 'finished' AND n_steps = 2") == 40
    assert {e["agent_name"] for e in store.recent_episodes(100)} == {"t1", "t2"}


def test_every_thread_connection_has_the_pragmas(store):
    def pragmas():
        c = store.db.conn
        return [
            c.execute(f"PRAGMA {p}").fetchone()[0]
            for p in ("journal_mode", "foreign_keys", "busy_timeout")
        ]

    assert _in_thread(pragmas) == pragmas() == ["wal", 1, 10000]


def test_a_finished_thread_connection_is_closed_and_close_closes_all(db_path):
    s = Store(db_path)
    conn = _in_thread(
        lambda: (
            runs.start_run(
                s,
                kind="train",
                algo="bc",
                task="maze-fo",
                config={},
                dataset_query=None,
                episode_ids=None,
                out_dir=None,
            ),
            s.db.conn,
        )[1]
    )
    gc.collect()
    with pytest.raises(sqlite3.ProgrammingError):  # released with its thread
        conn.execute("SELECT 1")
    assert runs.recent_runs(s)[0]["algo"] == "bc"  # the write was committed
    mine = s.db.conn
    s.close()
    with pytest.raises(sqlite3.ProgrammingError):
        mine.execute("SELECT 1")
    with pytest.raises(sqlite3.ProgrammingError):
        _in_thread(lambda: s.count())  # a closed store opens no new connection


def test_writes_wait_for_another_thread_holding_the_write_lock(store):
    """Every writer takes the lock at once (BEGIN IMMEDIATE) and waits up to the busy timeout."""
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store._writing():
            store.ensure_player("first")
            holding.set()
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    holding.wait(5)
    timer = threading.Timer(0.3, release.set)
    timer.start()
    run_id = runs.start_run(
        store,
        kind="train",
        algo="bc",
        task=None,
        config={},
        dataset_query=None,
        episode_ids=None,
        out_dir=None,
    )
    t.join()
    assert release.is_set() and run_id == 1
