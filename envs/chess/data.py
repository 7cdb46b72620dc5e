"""Chess start positions: LMRL's random endgame generator and the shipped endgames test set
(``assets/endgames/positions.jsonl``, made by ``scripts/make_endgames.py``)."""

from __future__ import annotations

import json
import random
from functools import lru_cache
from importlib.resources import files
from typing import Any

import chess

SETUPS = ("kQK", "kRK", "kQRK", "kRRK")
POSITIONS_FILE = "assets/endgames/positions.jsonl"


def random_endgame(setup: str, rng: random.Random) -> str:
    """LMRL's ``large_piece_random_endgame``: pieces on random squares until the position is valid
    with White to move and not in check."""
    board = chess.Board(None)
    while True:
        board.clear()
        squares = list(range(64))
        for symbol in setup:
            sq = squares.pop(rng.randrange(len(squares)))
            board.set_piece_at(sq, chess.Piece.from_symbol(symbol))
        if board.is_valid() and not board.is_check():
            return board.fen()


@lru_cache(maxsize=1)
def endgame_positions() -> tuple[dict[str, Any], ...]:
    """The shipped endgames test set: ``{"fen", "setup", ...}`` per position."""
    text = files("envs.chess").joinpath(POSITIONS_FILE).read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


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
