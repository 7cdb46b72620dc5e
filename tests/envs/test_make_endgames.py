"""scripts/make_endgames.py: the test set's filter, and other sets that never repeat a position."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import chess
import pytest

from envs.chess.data import endgame_positions, load_positions
from envs.chess.stockfish import find_stockfish

try:
    find_stockfish()
except Exception:  # noqa: BLE001 - whatever the reason, no engine: no filter to run
    pytest.skip("needs Stockfish (apt-get install stockfish)", allow_module_level=True)

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_endgames.py"
_spec = importlib.util.spec_from_file_location("make_endgames", _SCRIPT)
make_endgames = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_endgames)


def test_excluded_positions_are_never_kept():
    first = make_endgames.generate(seed=3, depth=6, per_setup=2, attempts=40)
    assert first and all(
        not (p["stockfish"].startswith("mate ") and 0 < int(p["stockfish"].split()[1]) < 15)
        for p in first
    )
    again = make_endgames.generate(seed=3, depth=6, per_setup=2, attempts=40)
    assert again == first  # reproducible
    fens = {p["fen"] for p in first}
    other = make_endgames.generate(seed=3, depth=6, per_setup=2, attempts=40, exclude=fens)
    assert other and not fens & {p["fen"] for p in other}


def test_a_training_set_leaves_out_the_test_set_and_the_exclude_files(tmp_path):
    val = tmp_path / "val.jsonl"
    assert (
        make_endgames.main(
            [
                "--seed",
                "5",
                "--depth",
                "6",
                "--per-setup",
                "2",
                "--attempts",
                "30",
                "--out",
                str(val),
            ]
        )
        == 0
    )
    out = tmp_path / "train.jsonl"
    assert (
        make_endgames.main(
            [
                "--seed",
                "5",
                "--depth",
                "6",
                "--per-setup",
                "2",
                "--attempts",
                "30",
                "--exclude",
                str(val),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    train = load_positions(out)
    assert train and not {p["fen"] for p in train} & {p["fen"] for p in load_positions(val)}
    assert not {p["fen"] for p in train} & {p["fen"] for p in endgame_positions()}
    for row in map(json.loads, out.read_text().splitlines()):
        board = chess.Board(row["fen"])
        assert (
            board.turn == chess.WHITE
            and not board.is_check()
            and row["setup"] in make_endgames.SETUPS
        )
