"""`lmrl merge`: ids remapped, origins kept, versions resolved, stores older than m002 matched
by their backfilled uids, and every bad input refused in one line with nothing written."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from data._sqlite_utils import Database
from data.io.merge import merge_stores
from data.migrations import migrations
from data.runs import add_checkpoint, add_evaluation, finish_run, start_run
from data.store import EpisodeRecord, StepRecord, Store, StoreError, Who
from lmrl_tui.cli import main


def _record(seed: int, run_id: int | None = None) -> EpisodeRecord:
    return EpisodeRecord(
        "maze-fo",
        1,
        seed,
        "start\n",
        [StepRecord("up\n", "wall\n", -1.0), StepRecord("down\n", "Success\n", 0.0, True)],
        Who("scripted", "behaviour"),
        run_id=run_id,
        labels=[{"label": "good", "step_idx": 1}],
    )


def host(path: Path, seed: int) -> Path:
    """A store as one host leaves it: a run with its rollouts, checkpoint and evaluation, a
    labelled episode, and an episode a person is still playing."""
    s = Store(path)
    run = start_run(
        s,
        kind="train",
        algo="ppo",
        task="maze-fo",
        config={"seed": seed},
        dataset_query=None,
        episode_ids=None,
        out_dir=f"runs/{seed}",
    )
    ids = s.write_episodes([_record(seed, run), _record(seed + 1, run)])
    ck = add_checkpoint(s, run, f"runs/{seed}/ckpt", 5, {})
    add_evaluation(s, "maze-fo", "ckpt", {"episodes": 2, "mean_return": -1.0}, ck)
    live = s.start_episode("maze-fo", 1, seed, "start\n", Who("human", "human"), player=f"p{seed}")
    s.add_step(live, 0, "up\n", "wall\n", -1.0, think_ms=900, typed="u")
    s.add_label(ids[0], "note", "clever", author="ann")
    s.close()
    return path


def test_two_hosts_merge_with_ids_remapped_and_origins_kept(tmp_path: Path) -> None:
    a, b = host(tmp_path / "a.db", 0), host(tmp_path / "b.db", 10)
    report = merge_stores([a, b], tmp_path / "c.db")
    assert (
        report.added["episodes"] == 6 and report.added["runs"] == 2 and report.added["labels"] == 6
    )
    c = Store(tmp_path / "c.db")
    assert (
        c.count() == 6 and c.count("status = 'in_progress'") == 2
    )  # in-progress episodes kept as they are
    origins = sorted(r[0] for r in c.db.execute("SELECT DISTINCT origin FROM episodes"))
    assert [o.rsplit(":", 1)[1] for o in origins] == ["a.db", "b.db"]
    # b's rows now point at b's rows in c, not at c's first rows
    for run in c.db.query("SELECT id, config, episode_ids FROM runs"):
        seed = int(run["config"].split(":")[1].rstrip("}"))
        eps = list(
            c.db.query("SELECT id, seed FROM episodes WHERE run_id = ? ORDER BY id", [run["id"]])
        )
        assert [e["seed"] for e in eps] == [seed, seed + 1]
        ck = c.db.execute(
            "SELECT id, path FROM checkpoints WHERE run_id = ?", [run["id"]]
        ).fetchall()
        assert ck[0][1] == f"runs/{seed}/ckpt"
        assert (
            c.db.execute(
                "SELECT COUNT(*) FROM evaluations WHERE checkpoint_id = ?", [ck[0][0]]
            ).fetchone()[0]
            == 1
        )
    live = c.unfinished_episodes()
    assert sorted(e["player"] for e in live) == ["p0", "p10"]
    assert all(c.steps(e["id"])[0]["think_ms"] == 900 for e in live)
    notes = list(
        c.db.query(
            "SELECT e.seed FROM labels l JOIN episodes e ON e.id = l.episode_id WHERE l.label = 'note'"
        )
    )
    assert sorted(n["seed"] for n in notes) == [0, 10]
    c.close()
    again = merge_stores([b, a, tmp_path / "c.db"], tmp_path / "c.db")
    assert not again.added and not again.updated and again.skipped


def test_a_copy_that_went_on_wins_in_either_order(tmp_path: Path) -> None:
    a = host(tmp_path / "a.db", 0)
    shutil.copy(a, tmp_path / "a2.db")
    s = Store(tmp_path / "a2.db")  # the copy: the person finished the game, the run ended
    live = s.unfinished_episodes()[0]["id"]
    s.add_step(live, 1, "down\n", "Success\n", 0.0, terminated=True)
    s.finish_episode(live, success=True)
    finish_run(s, 1, "finished", {"loss": 0.1})
    s.close()
    for order, name in (([a, tmp_path / "a2.db"], "x.db"), ([tmp_path / "a2.db", a], "y.db")):
        merge_stores(order, tmp_path / name)
        m = Store(tmp_path / name)
        assert m.count() == 3 and m.count("status = 'in_progress'") == 0
        assert m.db.execute("SELECT status FROM runs").fetchall() == [("finished",)]
        m.close()
    merge_stores([a], tmp_path / "x.db")  # the older version again: nothing goes back
    m = Store(tmp_path / "x.db")
    assert m.count("status = 'in_progress'") == 0
    m.close()


def old_store(path: Path) -> Path:
    """A store written before m002 (no uids, no origin)."""
    db = Database(str(path))
    migrations.apply(db, stop_before="m002_merge_identity")
    db.execute(
        "INSERT INTO episodes(task, task_version, seed, agent_kind, agent_name, source, status, "
        "first_observation, n_steps, return, started_at) VALUES ('maze-fo', 1, 7, 'human', 'human', "
        "'human', 'finished', 'start', 1, -1, '2024-01-01T00:00:00.000+00:00')"
    )
    db.execute(
        "INSERT INTO steps(episode_id, idx, action, observation, reward, created_at) "
        "VALUES (1, 0, 'up', 'wall', -1, '2024-01-01T00:00:01.000+00:00')"
    )
    db.execute(
        "INSERT INTO labels(episode_id, step_idx, label, created_at) VALUES (1, 0, 'good', 'x')"
    )
    db.conn.commit()
    db.conn.close()
    return path


def test_old_stores_merge_read_only_and_agree_with_their_migrated_copies(tmp_path: Path) -> None:
    old = old_store(tmp_path / "old.db")
    shutil.copy(old, tmp_path / "migrated.db")
    Store(
        tmp_path / "migrated.db"
    ).close()  # opened by a newer lmrl on another host: m002 ran there
    before = old.read_bytes()
    report = merge_stores(
        [old, tmp_path / "migrated.db", host(tmp_path / "new.db", 0)], tmp_path / "c.db"
    )
    assert old.read_bytes() == before  # an input is never migrated or written
    assert report.added["episodes"] == 4 and report.added["labels"] == 4
    c = Store(tmp_path / "c.db")
    assert (
        c.count("seed = 7") == 1 and c.db.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 6
    )
    c.close()


def _foreign(p: Path) -> Path:
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE notes(x)")
    conn.commit()
    conn.close()
    return p


def _newer(p: Path) -> Path:
    s = Store(p)
    s.db["_sqlite_migrations"].insert(
        {"migration_set": "lmrl-tui", "name": "m900_future", "applied_at": "x"}
    )
    s.close()
    return p


def _newer_version(p: Path) -> Path:
    Store(p).close()
    conn = sqlite3.connect(p)
    conn.execute("PRAGMA user_version = 99")  # as a newer lmrl-tui would
    conn.close()
    return p


def _corrupt(p: Path) -> Path:
    host(p, 50)
    conn = sqlite3.connect(p)  # fold the WAL into the main file so the bytes below are the data
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    data = bytearray(p.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for k in range(3, len(data) // page):  # damaged page headers past the schema page
        data[k * page + 8 : k * page + 64] = b"\x5a" * 56
    p.write_bytes(bytes(data))
    return p


def _not_sqlite(p: Path) -> Path:
    p.write_text("hello")
    return p


def _files(folder: Path) -> dict[Path, bytes]:
    """The database files in ``folder`` and their bytes (a reader of a WAL store may leave the
    shared-memory index beside it, as SQLite does for any reader; that holds no data)."""
    return {p: p.read_bytes() for p in folder.iterdir() if not p.name.endswith(("-shm", "-wal"))}


BAD = {
    "foreign": (_foreign, "not an lmrl-tui one"),
    "newer": (_newer, "newer lmrl-tui"),
    "newer version": (_newer_version, "newer lmrl-tui .*version 99"),
    "corrupt": (_corrupt, "damaged"),
    "not sqlite": (_not_sqlite, "not an SQLite database"),
    "missing": (lambda p: p, "no database at"),
}


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("hosts")
    return host(folder / "good.db", 0), host(folder / "existing.db", 20)


CASES = [(kind, "input") for kind in BAD] + [(kind, "target") for kind in BAD if kind != "missing"]
"""A missing target is not an error: it is created."""


@pytest.mark.parametrize(("kind", "where"), CASES)
def test_a_bad_store_is_refused_and_nothing_is_written(
    tmp_path: Path, two_hosts: tuple[Path, Path], kind: str, where: str
) -> None:
    make, message = BAD[kind]
    good, existing = (Path(shutil.copy(p, tmp_path / p.name)) for p in two_hosts)
    bad = make(tmp_path / "bad.db")
    before = _files(tmp_path)
    targets = (
        [(tmp_path / "new.db", [good, bad]), (existing, [bad, good])]
        if where == "input"
        else [(bad, [good])]
    )
    for into, inputs in targets:
        with pytest.raises(StoreError, match=message):
            merge_stores(inputs, into)
    assert _files(tmp_path) == before  # nothing created or changed


def test_cli_merge_and_its_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = host(tmp_path / "a.db", 0), host(tmp_path / "b.db", 10)
    into = tmp_path / "sub" / "all.db"
    assert main(["merge", str(a), str(b), "--into", str(into)]) == 0
    assert "added 6 episodes" in capsys.readouterr().out
    assert main(["--db", str(a), "merge", str(b), "--into", str(into)]) == 0
    assert "added nothing" in capsys.readouterr().out
    _foreign(tmp_path / "other.db")
    assert (
        main(["merge", str(a), str(tmp_path / "other.db"), "--into", str(tmp_path / "x.db")]) == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an lmrl-tui one" in err and "Traceback" not in err
    assert not (tmp_path / "x.db").exists()
    (tmp_path / "touched.db").touch()  # an empty file is a new store, not a foreign one
    assert main(["merge", str(a), "--into", str(tmp_path / "touched.db")]) == 0
    assert "added 3 episodes" in capsys.readouterr().out
