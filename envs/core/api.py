"""The task API every lmrl-tui task implements, and the agent interface.

A task is a small, pure-Python, seeded simulator with LMRL-Gym's model-facing texts:

* ``reset(seed, options) -> str`` starts an episode and returns the first observation text.
* ``step(action_text) -> Step`` applies one action (canonical model text, e.g. ``"move up\\n"``) and
  returns the observation that follows, the reward, and the termination flags.
* ``state()`` returns JSON-serialisable structured data for the UI (grid, board, tiles, chat);
  the UI never parses the model text.
* ``history()`` returns the model's current context as LMRL ``Text`` segments (the task's window:
  maze-fo keeps only the current observation, maze-po the last 40 texts, ...).
* ``parse_input(typed)`` turns what a human typed into the canonical action text, or raises
  :class:`InvalidInput` with a message meant for a person.
* ``parse_reply(typed)`` does the same for what a person typed on the partner's side.
* ``close()`` releases what the task holds (an engine process); safe to call twice.

Tasks inherit :class:`TaskBase` for the defaults of the optional parts. Agents and partners share
one interface, :class:`Agent` (``act(history) -> text``), so a scripted policy, a human, or a
model can sit on either side of a task.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text as it may be stored: a lone UTF-16 surrogate (what a broken terminal or endpoint can
    send; it cannot be written as UTF-8) becomes U+FFFD. Everything else, control characters
    included, is kept as it is. Applied once where text enters: a person's input, an agent's
    action, a partner's reply."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


@dataclass(frozen=True, slots=True)
class Text:
    """One segment of an LMRL text history (``LLM_RL/environment.py``)."""

    text: str
    is_action: bool


TextHistory = tuple[Text, ...]


def history_to_str(history: Sequence[Text]) -> str:
    """The model input: LMRL joins segments with no separator (each ends in ``"\\n"``)."""
    return "".join(t.text for t in history)


class Step(NamedTuple):
    """The result of one ``Task.step``; ``observation`` is the text that follows the action."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: Mapping[str, Any]


EMPTY_INFO: Mapping[str, Any] = {}


class InvalidInput(ValueError):
    """A human's input could not be turned into an action; the message is shown to them."""


@dataclass(frozen=True)
class NormConstants:
    """LMRL's piecewise score normalisation: 0 = ``min``, 50 = dataset ``avg``, 100 = ``max``."""

    min: float
    avg: float
    max: float
    source: str = "LMRL-Gym"

    def normalise(self, score: float) -> float:
        return normalised_score(score, self.min, self.avg, self.max)


def normalised_score(score: float, lo: float, avg: float, hi: float) -> float:
    """LMRL-Gym ``compute_score_normalizations``: piecewise linear through (lo,0), (avg,50), (hi,100)."""
    if score < avg:
        if avg == lo:
            return 0.0
        return (score - lo) / (avg - lo) * 50.0
    if hi == avg:
        return 50.0
    return 50.0 + (score - avg) / (hi - avg) * 50.0


@dataclass(frozen=True)
class TaskSpec:
    """Static facts about a task, shown in the app and used by the store and trainers."""

    id: str
    version: int
    title: str
    summary: str
    max_turns: int
    reward_range: tuple[float, float]
    roles: tuple[str, ...] = ("agent",)
    """Sides of the task. ``roles[0]`` is the acting (RL) agent; later roles are partners."""
    partner: str | None = None
    """Kind of the default embedded partner (``"stockfish"``, ``"oracle"``, ...), or None."""
    norm: NormConstants | None = None
    """LMRL's published normalisation constants, where they exist."""
    success_return: float | None = None
    """An episode counts as a success when its return is at least this (None: use ``info``)."""
    help: str = ""
    """Markdown help for the task's play screen."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The options ``make`` accepted for this instance (recorded with each episode)."""
    window: str = "episode"
    """What one training example holds: ``"episode"`` (the whole history, cut to the model's
    context from the right), ``"step"`` (one observation and its action: the task's observation
    already says all the model needs, as in maze-fo and chess) or ``"history"`` (one step's
    action after the whole history before it, cut from the left: exactly what the agent reads when
    it acts, for tasks whose episodes outgrow the model's context)."""
    decoding: str = "sample"
    """How a trained policy picks its action: ``"rerank"`` (score each of ``legal_actions()``) or
    ``"sample"`` (free text)."""
    reply_kind: str = "text"
    """What the partner replies: ``"yes-no"`` (a person on the partner's side answers with a yes/no
    choice) or ``"text"`` (free text)."""
    max_action_bytes: int | None = None
    """The longest action the task accepts, in UTF-8 bytes with its closing newline, where the task
    bounds it (a spaced SAN chess move: 14; a maze move: 11); a generating agent stops there. None: free
    text."""
    instructions: Mapping[str, str] = field(default_factory=dict)
    """What a language model that was not trained on the task is told before the dialogue (the
    system prompt of an ``hf:`` chat model or an ``http:`` endpoint), by role. A role without one
    is told its role's generic rules (the model players' ``role_prompt``)."""
    exact_evaluation: bool = False
    """Whether ``task.exact_evaluation(action_distribution)`` gives the exact expected return of a
    policy that depends only on the current observation (maze-fo's dynamic programme)."""


@runtime_checkable
class Task(Protocol):
    spec: TaskSpec

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str: ...

    def step(self, action: str) -> Step: ...

    def state(self) -> dict[str, Any]: ...

    def history(self) -> TextHistory: ...

    def parse_input(self, typed: str) -> str: ...

    def parse_reply(self, typed: str) -> str: ...

    def legal_actions(self) -> list[str] | None: ...

    def close(self) -> None: ...


class TaskBase:
    """Defaults for the optional parts of :class:`Task`; every built-in task inherits it."""

    spec: TaskSpec

    def parse_reply(self, typed: str) -> str:
        """What a person typed for the partner's side, as the partner's reply (as typed)."""
        return typed

    def legal_actions(self) -> list[str] | None:
        """The actions a random agent may pick, or None when they cannot be listed."""
        return None

    def close(self) -> None:
        """Release what the task holds (nothing by default)."""

    def exact_evaluation(self, action_distribution: Any) -> dict[str, Any]:
        """The exact expected return of a policy given as ``action_distribution(history,
        actions) -> probabilities``; only tasks whose spec says ``exact_evaluation`` have one."""
        raise NotImplementedError(f"{self.spec.id} has no exact evaluation")

    def optimal_mean_return(self) -> float | None:
        """The best achievable mean return over the task's starts, where it is known exactly."""
        return None


@runtime_checkable
class Agent(Protocol):
    """Anything that produces the next utterance: scripted policy, human, model, endpoint."""

    kind: str
    name: str

    def reset(self, task: Task, seed: int | None = None) -> None: ...

    def act(self, history: Sequence[Text]) -> str: ...


def step_notes(agent: Any) -> dict[str, Any] | None:
    """What ``agent`` says about its last action, for the step's info (an agent with a
    ``step_notes()`` method, e.g. a guided agent's candidates and their predicted outcomes)."""
    f = getattr(agent, "step_notes", None)
    notes = f() if callable(f) else None
    return dict(notes) if notes else None


class RandomAgent:
    """Uniform over the task's legal actions (or its action vocabulary)."""

    kind = "random"
    name = "random"

    def __init__(self) -> None:
        self._task: Task | None = None
        self._rng = random.Random()

    def reset(self, task: Task, seed: int | None = None) -> None:
        self._task = task
        # A stream of its own: tasks draw their hidden state from random.Random(seed), and the same
        # stream would pick the hidden answer itself when the action list is the answer list.
        self._rng = random.Random(None if seed is None else f"random-agent:{seed}")

    def act(self, history: Sequence[Text]) -> str:
        assert self._task is not None, "reset() the agent with its task first"
        actions = self._task.legal_actions()
        if not actions:
            raise RuntimeError(f"{self._task.spec.id} has no enumerable actions for a random agent")
        return self._rng.choice(actions)
