"""A checkpoint trained into a relative ``--out`` is stored under its absolute path (and so is the
run's folder), so that the app's run page and ``lmrl eval`` find it from any working directory,
and an evaluation is linked to its checkpoint however the path was written (stores of older
versions kept relative paths)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from support.checkpoint_support import tiny_checkpoint  # noqa: E402

from data import runs  # noqa: E402
from data.store import Store  # noqa: E402
from lmrl_tui.cli import main as lmrl  # noqa: E402
from training.offline.toy import maze_store  # noqa: E402


def _linked(db: Path) -> list[int | None]:
    store = Store(db)
    try:
        return [r[0] for r in store.db.execute("SELECT checkpoint_id FROM evaluations ORDER BY id")]
    finally:
        store.close()


def test_a_relative_out_is_stored_absolute_and_evaluations_link_to_it(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "maze.db"
    store = maze_store(db, episodes=12)
    try:
        ckpt = tiny_checkpoint(Path("runs"), algo="bc", store=store)
        assert not ckpt.is_absolute()
        row = store.db.execute("SELECT id, path FROM checkpoints ORDER BY id DESC").fetchone()
        out_dir = store.db.execute("SELECT out_dir FROM runs").fetchone()[0]
    finally:
        store.close()
    cid, stored = row
    assert stored == str((tmp_path / ckpt).resolve())
    assert out_dir == str(
        (tmp_path / "runs" / "bc").resolve()
    )  # the run page reads its launch.json
    # the path as written here, and the absolute one from another folder
    assert lmrl(["--db", str(db), "eval", str(ckpt), "--episodes", "2", "--no-progress"]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert lmrl(["--db", str(db), "eval", stored, "--episodes", "2", "--no-progress"]) == 0
    results = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")
    ]
    assert len(results) == 2
    assert _linked(db) == [cid, cid]


def test_a_path_stored_relative_by_an_older_version_is_still_found(store):
    old = runs.add_checkpoint(store, None, "runs/bc/checkpoint", 10, {})
    assert runs.checkpoint_id_for(store, "runs/bc/checkpoint") == old
    assert runs.checkpoint_id_for(store, "runs/other/checkpoint") is None
