"""Chess start positions: LMRL's random endgame generator, the shipped endgames test set
(``assets/endgames/positions.jsonl``, made by ``scripts/make_endgames.py``) and positions files of
the same format (JSON lines, each ``{"fen": ..., "setup": ...}`` or, as LMRL's files, a JSON-quoted FEN)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import chess

SETUPS = ("kQK", "kRK", "kQRK", "kRRK")
POSITIONS_FILE = "assets/endgames/positions.jsonl"


def random_endgame(setup: str, rng: random.Random, *, fresh: bool = False) -> str:
    """LMRL's ``large_piece_random_endgame``: pieces on random squares until the position is valid
    with White to move and not in check (and, ``fresh``, not one of the test set, as LMRL's data)."""
    board = chess.Board(None)
    test = {p["fen"] for p in endgame_positions()} if fresh else ()
    while True:
        board.clear()
        squares = list(range(64))
        for symbol in setup:
            sq = squares.pop(rng.randrange(len(squares)))
            board.set_piece_at(sq, chess.Piece.from_symbol(symbol))
        if board.is_valid() and not board.is_check() and board.fen() not in test:
            return board.fen()


@lru_cache(maxsize=1)
def endgame_positions() -> tuple[dict[str, Any], ...]:
    """The shipped endgames test set: ``{"fen", "setup", ...}`` per position."""
    text = files("envs.chess").joinpath(POSITIONS_FILE).read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def setup_of(board: chess.Board) -> str:
    """The setup name of an endgame board (``kQK``, ...): Black's pieces, then White's, kings last."""
    order = "qrbnpk"
    black = sorted((p.symbol() for p in board.piece_map().values() if not p.color), key=order.index)
    white = sorted(
        (p.symbol() for p in board.piece_map().values() if p.color),
        key=lambda c: order.index(c.lower()),
    )
    return "".join(black) + "".join(white)


def positions_source(positions: str) -> str:
    """``"test"``, ``"random"`` or the absolute path of a valid positions file (so that an episode's
    stored options replay from any directory); ``ValueError`` for anything else."""
    if positions in ("test", "random"):
        return positions
    path = str(Path(positions).expanduser().resolve())
    position_table(path)
    return path


def pick_position(
    positions: str, setups: Sequence[str], rng: random.Random
) -> tuple[int, str, str]:
    """One position of ``setups`` from the test set (``"test"``) or a positions file: its index
    in the table, its FEN and its setup."""
    rows = position_table(positions)
    table = [i for i, p in enumerate(rows) if p["setup"] in setups]
    if not table:
        raise ValueError(f"no position of the setups {', '.join(setups)} in {positions}")
    i = table[rng.randrange(len(table))]
    return i, rows[i]["fen"], rows[i]["setup"]


def position_table(positions: str | Path) -> tuple[dict[str, Any], ...]:
    """``"test"``: the shipped test set; otherwise the positions file at that path."""
    if str(positions) == "test":
        return endgame_positions()
    try:
        return load_positions(positions)
    except ValueError as e:
        raise ValueError(
            f"positions must be 'test' (the shipped set), 'random' or a positions file: {e}"
        ) from None


def load_positions(path: str | Path) -> tuple[dict[str, Any], ...]:
    """A positions file: ``{"fen", "setup"}`` per line, each a legal start (White to move, not over).

    Raises ``ValueError`` with the file and line for a missing, empty or malformed file."""
    return _load_positions(str(Path(path).expanduser().resolve()))


@lru_cache(maxsize=8)
def _load_positions(path: str) -> tuple[dict[str, Any], ...]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ValueError(f"cannot read the positions file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ValueError(f"the positions file {path} is not UTF-8 text") from None
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            row = {"fen": row} if isinstance(row, str) else dict(row)
            board = start_board(str(row["fen"]))
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}, line {n}: not a position ({e})") from None
        rows.append({**row, "fen": board.fen(), "setup": row.get("setup") or setup_of(board)})
    if not rows:
        raise ValueError(f"the positions file {path} holds no position")
    return tuple(rows)


def start_board(fen: str) -> chess.Board:
    try:
        board = chess.Board(fen)
    except ValueError as e:
        raise ValueError(f"not a FEN: {fen!r} ({e})") from None
    if not board.is_valid() or board.turn != chess.WHITE or board.is_game_over():
        raise ValueError(
            f"the start position must be legal, with White to move and not over: {fen}"
        )
    return board
