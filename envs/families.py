"""The task families this package ships, declared to the task core (which names none): each
task id, the module that registers it (imported the first time one of its ids is used, so listing
the tasks loads none of them) and the options it takes. A new family adds its lines here (see
CONTRIBUTING.md: adding a task)."""

from __future__ import annotations

from envs.core.options import OptionSpec, declare_options, int_option
from envs.core.registry import declare_builtin

_MAZE = (
    OptionSpec(
        "layout",
        "choice",
        "double_t",
        ("double_t", "umaze", "medium", "random"),
        "the maze: LMRL's double-T, two smaller ones, or a random one",
    ),
    int_option("max_steps", 100, "moves before the episode is cut"),
    int_option("size", 6, "the random maze's size (layout=random)", minimum=3),
    int_option("layout_seed", 0, "the random maze's seed (layout=random)", minimum=0),
)
_TEXTNAV = (int_option("max_steps", 20, "actions before the episode is cut"),)
_WORDLE = (
    OptionSpec(
        "words",
        "choice",
        "standard",
        ("standard", "small"),
        "the word list: the real game's, or a closed 400-word game",
    ),
    int_option("max_guesses", 6, "guesses allowed"),
    OptionSpec("bad_word_reward", "float", -1.0, help="reward of a guess that is not a word"),
    OptionSpec("vocab_file", "text", None, help="a file of answer words (one a line)"),
    OptionSpec("guess_file", "text", None, help="a file of extra allowed guesses"),
)
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
_QUESTIONS = (
    int_option("max_questions", 20, "questions allowed"),
    OptionSpec("secret", "text", None, help="the hidden answer (else drawn from the seed)"),
    OptionSpec(
        "deterministic", "bool", False, help="the answer is seed modulo the number of answers"
    ),
)
_CAR_DEALER = (
    OptionSpec(
        "reward_mode", "choice", "fancy", ("fancy", "revenue"), "LMRL's reward: fancy or revenue"
    ),
    int_option("max_texts", 50, "utterances of both sides before the talk is cut", minimum=2),
    OptionSpec(
        "buyer_bias",
        "choice",
        "none",
        ("none", "anchoring", "feature", "mixed"),
        "a biased embedded buyer a seller can steer (mixed: drawn per episode)",
    ),
)

FAMILIES: tuple[tuple[str, tuple[str, ...], tuple[OptionSpec, ...]], ...] = (
    ("envs.maze", ("maze-fo", "maze-po"), _MAZE),
    ("envs.textnav", ("textnav-fo", "textnav-po"), _TEXTNAV),
    ("envs.wordle", ("wordle", "wordle-lmrl"), _WORDLE),
    ("envs.chess", ("chess",), _CHESS),
    ("envs.chess", ("endgames",), _ENDGAMES),
    ("envs.questions.twenty_questions", ("twenty-questions",), _QUESTIONS),
    ("envs.questions.guess_city", ("guess-city",), _QUESTIONS),
    ("envs.car_dealer", ("car-dealer",), _CAR_DEALER),
)
"""(module, task ids, options) in the order the tasks are listed."""

for _module, _ids, _options in FAMILIES:
    for _task_id in _ids:
        declare_builtin(_task_id, _module)
    declare_options(_ids, _options)
