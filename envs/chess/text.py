"""Chess notation for the chess tasks: LMRL-Gym's model texts and a forgiving reader for people.

* Model texts: the observation is the FEN with every character separated by a space
  (:func:`observation_text`); an action is the spaced SAN plus a newline (:func:`action_text`).
  :func:`parse_model_action` reads an action exactly as LMRL-Gym does (drop spaces, strip,
  python-chess's lenient SAN parser; null moves are not moves).
* People: :func:`parse_human_move` accepts plain or spaced SAN and UCI, forgiving case, ``0-0``
  and ``!?`` marks, and explains what is wrong otherwise (:class:`envs.InvalidInput`).
"""

from __future__ import annotations

import chess

from envs.core import InvalidInput

__all__ = [
    "CHESS_HELP",
    "TERMINATIONS",
    "action_text",
    "observation_text",
    "parse_human_move",
    "parse_model_action",
    "spaced",
]

TERMINATIONS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.SEVENTYFIVE_MOVES: "75-move rule",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
}
"""How the task names a game's end (``state()["termination"]``)."""


def spaced(text: str) -> str:
    """LMRL's ``" ".join(text)``: every character separated by a space."""
    return " ".join(text)


def observation_text(board: chess.Board) -> str:
    return spaced(board.fen())


def action_text(san: str) -> str:
    return spaced(san) + "\n"


def parse_model_action(board: chess.Board, action: str) -> chess.Move | None:
    """LMRL's reading of a model action: drop spaces, strip, lenient SAN; None if not a legal move."""
    text = action.replace(" ", "").strip()
    try:
        move = board.parse_san(text)
    except ValueError:
        return None
    return move if move else None  # a null move is not a move


_PIECE_LETTERS = "nbrqk"


def parse_human_move(board: chess.Board, typed: str) -> chess.Move:
    """A legal move from plain SAN, spaced SAN or UCI, forgiving case, ``0-0`` and ``!?`` marks."""
    text = "".join(typed.split()).rstrip("!?")
    if not text or len(text) > 12:
        raise InvalidInput("Type a move such as e4, Nf3, O-O or g1f3.")
    castle = text.upper().replace("0", "O").rstrip("+#")
    if castle in ("O-O", "OO", "O-O-O", "OOO"):
        text = "O-O-O" if castle.count("O") == 3 else "O-O"
    low = text.lower()
    if (
        len(low) in (4, 5)
        and low[0] in "abcdefgh"
        and low[1] in "12345678"
        and low[2] in "abcdefgh"
        and low[3] in "12345678"
    ):
        try:
            move = chess.Move.from_uci(low)
        except ValueError:
            move = None
        if move is not None and move in board.legal_moves:
            return move
        if (
            move is not None
            and move.promotion is None
            and chess.Move(move.from_square, move.to_square, chess.QUEEN) in board.legal_moves
        ):
            raise InvalidInput(f"{typed.strip()}: say which piece to promote to, e.g. {low}q.")
        raise InvalidInput(f"{typed.strip()} is not a legal move here.")
    candidates = [text]
    if "=" in text:
        head, _, tail = text.partition("=")
        candidates.append(f"{head}={tail[:1].upper()}{tail[1:]}")
    if text[0] in _PIECE_LETTERS and len(text) >= 3:
        candidates += [c[0].upper() + c[1:] for c in list(candidates)]
    error: ValueError | None = None
    for cand in candidates:
        try:
            move = board.parse_san(cand)
        except chess.AmbiguousMoveError:
            raise InvalidInput(
                f"{typed.strip()} is ambiguous: name the piece's file or rank (e.g. Nbd2)."
            ) from None
        except ValueError as e:
            error = error if isinstance(error, chess.IllegalMoveError) else e
            continue
        if move:
            return move
    if isinstance(error, chess.IllegalMoveError):
        raise InvalidInput(f"{typed.strip()} is not a legal move here.")
    raise InvalidInput("Type a move such as e4, Nf3, O-O or g1f3 (SAN or UCI).")


CHESS_HELP = """\
## Chess / Endgames

You play **White** against Stockfish. Type a move in SAN (`e4`, `Nf3`, `exd5`, `O-O`, `e8=Q`)
or UCI (`e2e4`, `g1f3`) and press Enter.

* **+1** for checkmating, **-1** for being mated, **0** for a draw.
* A move the task cannot read or that is illegal costs **-1** (the model's rule); in the app you
  can simply retry.
* After 400 moves an unfinished game ends without a result.
* **F2** lists the legal moves, **F3** turns the board around. The last move is highlighted and a
  king in check is shown in red.
* In hot-seat play a second person types Black's replies into the same line when asked.
* The panel on the right shows the exact text a language model would see: the FEN with spaces.
"""
