"""The SQLite store: schema by migrations, pragmas, recording, and clear errors for bad files."""

from __future__ import annotations

import sqlite3

import pytest

from data.migrations import migrations
from data.stats import source_counts
from data.store import EpisodeRecord, StepRecord, Store, StoreError, Who

EXPECTED_TABLES = {
    "_sqlite_migrations",
    "players",
    "runs",
    "episodes",
    "steps",
    "checkpoints",
    "evaluations",
    "labels",
    "store_info",
    "episode_holds",
    "campaigns",
    "pairings",
    "pair_turns",
}
EXPECTED_STEP_COLUMNS = [
    "episode_id",
    "idx",
    "role",
    "action",
    "typed",
    "observation",
    "reward",
    "terminated",
    "truncated",
    "info",
    "think_ms",
    "created_at",
]


def test_blank_database_migrates_to_the_expected_schema(store):
    assert set(store.db.table_names()) == EXPECTED_TABLES
    assert [c.name for c in store.db["steps"].columns] == EXPECTED_STEP_COLUMNS
    assert "return" in store.db["episodes"].columns_dict
    assert {"uid", "origin"} <= set(store.db["episodes"].columns_dict)  # m002, for lmrl merge
    assert {"campaign", "assignment"} <= set(store.db["episodes"].columns_dict)  # m003
    assert store.schema_version() == [m.name for m in migrations._migrations]
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_reopening_applies_nothing_new(db_path):
    Store(db_path).close()
    s = Store(db_path)
    assert len(s.schema_version()) == len(migrations._migrations)
    s.close()


def test_record_steps_one_by_one(store):
    eid = store.start_episode(
        "maze-fo", 1, 5, "o0\n", Who("human", "human"), player="ann", source="human"
    )
    assert store.episode(eid)["status"] == "in_progress"
    store.add_step(eid, 0, "move up\n", "o1\n", -1.0, typed="w", think_ms=250)
    store.add_step(eid, 1, "move up\n", "Success\n", 0.0, terminated=True, info={"success": True})
    store.finish_episode(eid, success=True)
    ep = store.episode(eid)
    assert ep["status"] == "finished" and ep["return"] == -1.0 and ep["n_steps"] == 2
    assert ep["terminated"] == 1 and ep["success"] == 1 and ep["player"] == "ann"
    steps = store.steps(eid)
    assert steps[0]["typed"] == "w" and steps[0]["think_ms"] == 250
    assert steps[1]["info"] == {"success": True}
    with pytest.raises(sqlite3.IntegrityError):  # a step index is written once
        store.add_step(eid, 1, "x\n", "y\n", 0.0)
    with pytest.raises(sqlite3.IntegrityError):  # steps need an episode
        store.add_step(9999, 0, "x\n", "y\n", 0.0)


def test_bulk_write_is_one_transaction(store):
    recs = [
        EpisodeRecord(
            "maze-fo",
            1,
            i,
            "o\n",
            [StepRecord("a\n", "b\n", -1.0), StepRecord("a\n", "Success\n", 0.0, True)],
            Who("scripted", "behaviour"),
            success=True,
        )
        for i in range(3)
    ]
    ids = store.write_episodes(recs)
    assert ids == [1, 2, 3]
    assert store.count() == 3 and store.db["steps"].count == 6
    bad = [
        recs[0],
        EpisodeRecord("maze-fo", 1, 9, "o\n", [], Who("scripted", "x"), status="nonsense"),
    ]
    with pytest.raises(sqlite3.IntegrityError):
        store.write_episodes(bad)
    assert store.count() == 3  # nothing of the failed batch landed


def test_stats(store):
    store.write_episodes(
        [
            EpisodeRecord(
                "maze-fo",
                1,
                i,
                "o\n",
                [StepRecord("a\n", "b\n", float(-i), True)],
                Who("scripted", "b"),
                success=i == 0,
            )
            for i in range(4)
        ]
    )
    (row,) = source_counts(store)
    assert row["episodes"] == 4 and row["mean_return"] == -1.5 and row["success_rate"] == 0.25


def test_not_a_database(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello, this is not sqlite")
    with pytest.raises(StoreError, match="not an SQLite database"):
        Store(p)


def test_a_directory(tmp_path):
    with pytest.raises(StoreError, match="is a directory"):
        Store(tmp_path)


def test_uncreatable_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder"):
        Store(f / "sub" / "e.db")


def test_foreign_sqlite_database(tmp_path):
    p = tmp_path / "other.db"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="not an lmrl-tui one"):
        Store(p)


def test_newer_schema_is_refused(db_path):
    s = Store(db_path)
    s.db["_sqlite_migrations"].insert(
        {"migration_set": "lmrl-tui", "name": "m999_from_the_future", "applied_at": "2099-01-01"}
    )
    s.close()
    with pytest.raises(StoreError, match="newer lmrl-tui"):
        Store(db_path)


def test_a_store_of_a_newer_schema_version_is_refused_and_left_alone(db_path, capsys):
    import sqlite3

    from lmrl_tui.cli import main

    Store(db_path).close()
    with sqlite3.connect(db_path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] >= 1  # what this version wrote
        con.execute("PRAGMA user_version = 99")  # as a newer lmrl-tui would
    before = db_path.read_bytes()
    with pytest.raises(StoreError, match="newer lmrl-tui .*version 99"):
        Store(db_path)
    for command in (
        ["stats"],
        ["export", "--task", "maze-fo"],
        ["generate", "maze-fo", "--episodes", "1"],
    ):
        assert main(["--db", str(db_path), *command]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "newer lmrl-tui" in err[0]
    assert db_path.read_bytes() == before


def test_corrupt_file(tmp_path):
    p = tmp_path / "bad.db"
    p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    with pytest.raises(StoreError):
        Store(p)


def test_missing_database_without_create(tmp_path):
    with pytest.raises(StoreError, match="no database"):
        Store(tmp_path / "missing.db", create=False)


def test_concurrent_writers_wait_instead_of_failing(db_path):
    import threading
    import time

    a, b = Store(db_path), Store(db_path)
    rec = EpisodeRecord(
        "maze-fo", 1, 0, "o\n", [StepRecord("a\n", "Success\n", 0.0, True)], Who("scripted", "x")
    )
    holder = b.db.conn  # this thread's connection: another thread's would be a different one
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock for a moment
    holder.execute("INSERT INTO players(name, kind, created_at) VALUES ('p', 'human', 'now')")
    released = threading.Event()

    def release() -> None:
        time.sleep(0.5)
        holder.commit()
        released.set()

    threading.Thread(target=release).start()
    ids = a.write_episodes([rec])  # reads MAX(id) first: must wait for the lock, not fail
    assert released.is_set() and ids == [1]
    eid = a.start_episode("maze-fo", 1, 2, "o\n", Who("human", "human"))
    a.add_step(eid, 0, "a\n", "b\n", -1.0)
    a.finish_episode(eid)
    assert a.count() == 2
    a.close()
    b.close()


def test_migration_names_match_the_migration_steps():
    from data.store import MIGRATION_NAMES, MIGRATION_SET

    assert migrations.name == MIGRATION_SET
    assert MIGRATION_NAMES == tuple(m.name for m in migrations._migrations)
