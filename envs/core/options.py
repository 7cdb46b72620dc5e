"""Task options as a command line or a form writes them (``key=value``), and what each built-in
task takes (:data:`DECLARED`: kinds, defaults and valid values)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


def parse_option(text: str) -> tuple[str, Any]:
    """A command line's task option ``key=value``; the value is read as JSON when it parses
    (``3``, ``-10.5``, ``true``), else kept as text (``words=small``)."""
    if "=" not in text:
        raise ValueError(f"task options look like key=value, not {text!r}")
    key, value = text.split("=", 1)
    if not key.strip():
        raise ValueError(f"task option {text!r} has no name")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value



@dataclass(frozen=True)
class OptionSpec:
    """One option a task takes: its kind, default and valid values, for ``lmrl tasks``, the
    ``--option`` help and the new-episode dialog (the task itself still checks what it is given).

    ``kind``: ``"int"``, ``"float"``, ``"text"`` (with ``choices``: one of them or a file's path),
    ``"choice"`` (one of ``choices``), ``"choices"`` (a comma-separated list of ``choices``) or
    ``"bool"``."""

    name: str
    kind: str
    default: Any = None
    choices: tuple[Any, ...] = ()
    help: str = ""
    minimum: float | None = None

    def values(self) -> str:
        """The valid values in a few words: ``standard|small``, ``a whole number ≥ 1``."""
        if self.kind in ("choice", "bool"):
            return "|".join(show_value(c) for c in (self.choices or (True, False)))
        if self.kind == "choices":
            return "any of " + ",".join(map(str, self.choices))
        if self.kind == "text" and self.choices:  # named values, or a file
            return "|".join(map(str, self.choices)) + "|a file"
        word = {"int": "a whole number", "float": "a number", "text": "text"}[self.kind]
        return word + (f" ≥ {self.minimum:g}" if self.minimum is not None else "")

    def describe(self) -> str:
        """``words=standard|small (default: standard)``"""
        return f"{self.name}={self.values()} (default: {show_value(self.default)})"

    def parse(self, text: str) -> Any:
        """The value typed in a form or on a command line, checked; blank is the default.
        Raises ValueError naming the valid values."""
        text = text.strip()
        if not text:
            return self.default
        bad = ValueError(f"{self.name} must be {self.values()}, not {text!r}")
        if self.kind == "bool":
            low = text.lower()
            if low not in ("true", "false", "yes", "no", "1", "0"):
                raise bad
            return low in ("true", "yes", "1")
        if self.kind == "choice":
            for c in self.choices:
                if text == show_value(c) or text.lower() == str(c).lower():
                    return c
            raise bad
        if self.kind == "choices":
            picked = [p.strip() for p in text.split(",") if p.strip()]
            if not picked or any(p not in self.choices for p in picked):
                raise bad
            return picked
        if self.kind == "text":
            return text
        if text.lower() in ("none", "null") and self.default is None:
            return None
        try:
            value: Any = int(text) if self.kind == "int" else float(text)
        except ValueError:
            raise bad from None
        if self.minimum is not None and value < self.minimum:
            raise bad
        return value


def show_value(value: Any) -> str:
    """An option's value as a person types it (``none``, ``true``, ``kQK,kRK``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def _int(name: str, default: Any, help: str = "", minimum: float | None = 1) -> OptionSpec:
    return OptionSpec(name, "int", default, help=help, minimum=minimum)


_MAZE = (
    OptionSpec("layout", "choice", "double_t", ("double_t", "umaze", "medium", "random"),
               "the maze: LMRL's double-T, two smaller ones, or a random one"),
    _int("max_steps", 100, "moves before the episode is cut"),
    _int("size", 6, "the random maze's size (layout=random)", minimum=3),
    _int("layout_seed", 0, "the random maze's seed (layout=random)", minimum=0),
)  # fmt: skip
_TEXTNAV = (_int("max_steps", 20, "actions before the episode is cut"),)
_WORDLE = (
    OptionSpec("words", "choice", "standard", ("standard", "small"),
               "the word list: the real game's, or a closed 400-word game"),
    _int("max_guesses", 6, "guesses allowed"),
    OptionSpec("bad_word_reward", "float", -1.0, help="reward of a guess that is not a word"),
    OptionSpec("vocab_file", "text", None, help="a file of answer words (one a line)"),
    OptionSpec("guess_file", "text", None, help="a file of extra allowed guesses"),
)  # fmt: skip
_CHESS = (
    OptionSpec("opponent", "choice", "stockfish", ("stockfish", "random"), "who plays Black"),
    _int("elo", 1200, "Stockfish's strength (clamped to what the engine allows)", minimum=0),
    OptionSpec("skill_level", "float", None, help="Stockfish's skill level, 0-20, instead of elo", minimum=0),
    _int("depth", None, "Stockfish's search depth"),
    _int("movetime", None, "Stockfish's time per move, in ms"),
    _int("nodes", None, "Stockfish's nodes per move"),
    _int("threads", 1, "Stockfish's threads"),
    _int("max_moves", 400, "White's moves before the game is cut"),
    OptionSpec("fen", "text", None, help="start from this position (FEN)"),
)  # fmt: skip
_SETUPS = ("kQK", "kRK", "kQRK", "kRRK")
_ENDGAMES = (
    *_CHESS,
    OptionSpec("positions", "text", "test", ("test", "random"),
               "test (LMRL's test positions), random (fresh random ones) or a positions file "
               "(JSON lines of FENs, e.g. from scripts/make_endgames.py)"),
    OptionSpec("setups", "choices", list(_SETUPS), _SETUPS, "which endgames (e.g. kQK or kQK,kRK)"),
)  # fmt: skip
_QUESTIONS = (
    _int("max_questions", 20, "questions allowed"),
    OptionSpec("secret", "text", None, help="the hidden answer (else drawn from the seed)"),
    OptionSpec("deterministic", "bool", False, help="the answer is seed modulo the number of answers"),
)  # fmt: skip
_CAR_DEALER = (
    OptionSpec("reward_mode", "choice", "fancy", ("fancy", "revenue"), "LMRL's reward: fancy or revenue"),
    _int("max_texts", 50, "utterances of both sides before the talk is cut", minimum=2),
    OptionSpec("buyer_bias", "choice", "none", ("none", "anchoring", "feature", "mixed"),
               "a biased embedded buyer a seller can steer (mixed: drawn per episode)"),
)  # fmt: skip

DECLARED: dict[str, tuple[OptionSpec, ...]] = {
    "maze-fo": _MAZE, "maze-po": _MAZE, "textnav-fo": _TEXTNAV, "textnav-po": _TEXTNAV,
    "wordle": _WORDLE, "wordle-lmrl": _WORDLE, "chess": _CHESS, "endgames": _ENDGAMES,
    "twenty-questions": _QUESTIONS, "guess-city": _QUESTIONS, "car-dealer": _CAR_DEALER,
}  # fmt: skip
"""The options each built-in task takes (``envs.option_specs(task_id)`` adds any a task's spec
shows that are not declared here)."""


def options_help() -> str:
    """Every built-in task's options in a few lines (the ``--option`` help)."""
    groups: dict[int, list[str]] = {}
    for task_id, specs in DECLARED.items():
        groups.setdefault(id(specs), []).append(task_id)
    return "\n".join(f"{', '.join(ids)}: " + "; ".join(s.describe() for s in DECLARED[ids[0]])
                     for ids in groups.values())  # fmt: skip
