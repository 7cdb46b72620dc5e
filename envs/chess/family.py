"""Chess and its endgames: the task ids, the module that registers them and the options they take, declared to
the task core (read by :mod:`envs.discovery` from this file alone, without importing the package)."""

from __future__ import annotations

from envs.core.options import OptionSpec, int_option

_CHESS = (
    OptionSpec("opponent", "choice", "stockfish", ("stockfish", "random"), "who plays Black"),
    int_option("elo", 1200, "Stockfish's strength (clamped to what the engine allows)", minimum=0),
    OptionSpec(
        "skill_level",
        "float",
        None,
        help="Stockfish's skill level, 0-20, instead of elo",
        minimum=0,
    ),
    int_option("depth", None, "Stockfish's search depth"),
    int_option("movetime", None, "Stockfish's time per move, in ms"),
    int_option("nodes", None, "Stockfish's nodes per move"),
    int_option("threads", 1, "Stockfish's threads"),
    int_option("max_moves", 400, "White's moves before the game is cut"),
    OptionSpec("fen", "text", None, help="start from this position (FEN)"),
)
_SETUPS = ("kQK", "kRK", "kQRK", "kRRK")
_ENDGAMES = (
    *_CHESS,
    OptionSpec(
        "positions",
        "text",
        "test",
        ("test", "random"),
        "test (LMRL's test positions), random (fresh random ones) or a positions file "
        "(JSON lines of FENs, e.g. from scripts/make_endgames.py)",
    ),
    OptionSpec("setups", "choices", list(_SETUPS), _SETUPS, "which endgames (e.g. kQK or kQK,kRK)"),
)

DECLARED = (
    (40, "envs.chess", ("chess",), _CHESS),
    (50, "envs.chess", ("endgames",), _ENDGAMES),
)
"""(place in the task list, registering module, task ids, options)."""
