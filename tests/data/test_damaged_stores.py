"""Damaged, foreign and empty-path stores are refused with one line, before anything is written."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

import envs
from data.generate import generate
from data.store import Store, StoreError
from lmrl_tui.cli import main


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _filled_store(p: Path) -> None:
    s = Store(p)
    generate(s, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 300, seed=0)
    s.close()
    conn = sqlite3.connect(p)  # fold the WAL into the main file so the bytes below are the data
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()


def _damage_pages(p: Path) -> None:
    data = bytearray(p.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for k in range(3, min(len(data) // page, 12)):  # leave the header page alone
        data[k * page + 8 : k * page + 64] = b"\x5a" * 56
    p.write_bytes(bytes(data))


def test_a_damaged_store_is_refused_by_writers_and_explained_to_readers(tmp_path, capsys) -> None:
    p = tmp_path / "damaged.db"
    _filled_store(p)
    _damage_pages(p)
    before = _digest(p)
    assert main(["--db", str(p), "generate", "maze-fo", "--episodes", "5", "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "damaged" in err[0]
    assert _digest(p) == before  # nothing was written into it
    for command in (["stats"], ["export", "--task", "maze-fo", "-o", str(tmp_path / "x.jsonl")]):
        status = main(["--db", str(p), *command])
        out = capsys.readouterr().err.strip().splitlines()
        assert status in (0, 1) and len(out) <= 1 and "Traceback" not in "\n".join(out)


def test_a_foreign_database_is_left_untouched(tmp_path) -> None:
    p = tmp_path / "other.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE notes(x)")
    conn.commit()
    conn.close()
    before = _digest(p)
    with pytest.raises(StoreError, match="not an lmrl-tui one"):
        Store(p)
    assert _digest(p) == before
    conn = sqlite3.connect(p)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_a_store_missing_a_table_is_damaged(tmp_path) -> None:
    p = tmp_path / "partial.db"
    Store(p).close()
    conn = sqlite3.connect(p)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DROP TABLE labels")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="labels are missing"):
        Store(p)


def test_an_empty_path_is_not_the_default_store(capsys) -> None:
    with pytest.raises(StoreError, match="path is empty"):
        Store("")
    assert main(["--db", "", "stats"]) == 1
    assert "path is empty" in capsys.readouterr().err
