"""The task API every lmrl-tui task implements.

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

Agents and partners share one interface, :class:`Agent` (``act(history) -> text``), so a scripted
policy, a human, or a model can sit on either side of a task.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable


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


@runtime_checkable
class Task(Protocol):
    spec: TaskSpec

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str: ...

    def step(self, action: str) -> Step: ...

    def state(self) -> dict[str, Any]: ...

    def history(self) -> TextHistory: ...

    def parse_input(self, typed: str) -> str: ...

    def legal_actions(self) -> list[str] | None: ...


@runtime_checkable
class Agent(Protocol):
    """Anything that produces the next utterance: scripted policy, human, model, endpoint."""

    kind: str
    name: str

    def reset(self, task: Task, seed: int | None = None) -> None: ...

    def act(self, history: Sequence[Text]) -> str: ...


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


# --------------------------------------------------------------------------------------------
# Registry


TaskFactory = Callable[..., Task]
AgentFactory = Callable[..., Agent]


@dataclass
class _Entry:
    factory: TaskFactory
    policies: dict[str, AgentFactory]
    spec: TaskSpec


_REGISTRY: dict[str, _Entry] = {}
POLICY_ALIASES = {"optimal": "strong", "expert": "strong"}


class UnknownTask(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


class UnknownPolicy(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def register(
    task_id: str,
    factory: TaskFactory,
    *,
    policies: Mapping[str, AgentFactory] | None = None,
) -> None:
    """Register a task factory and its scripted policies (``behaviour``, ``strong``, ...).

    ``random`` is added for every task that lists its legal actions.
    """
    spec = factory().spec
    pols = dict(policies or {})
    pols.setdefault("random", RandomAgent)
    _REGISTRY[task_id] = _Entry(factory, pols, spec)


def ids() -> list[str]:
    """Every registered task id: the built-in ones in a fixed order, then any others."""
    _load_builtin()
    order = {task_id: i for i, task_id in enumerate(_BUILTIN)}
    return sorted(_REGISTRY, key=lambda t: (order.get(t, len(order)), t))


def spec(task_id: str, **options: Any) -> TaskSpec:
    """The task's spec; with ``options``, that of the task built with them (options can change
    its constants; a bad option raises ValueError)."""
    if not options:
        return _entry(task_id).spec
    task = make(task_id, **options)
    try:
        return task.spec
    finally:
        close = getattr(task, "close", None)
        if callable(close):
            close()


def make(task_id: str, **options: Any) -> Task:
    """Build a task by id; ``options`` are task-specific (see each task's docstring).

    An option the task does not take raises :class:`ValueError` naming it (not a TypeError).
    """
    entry = _entry(task_id)
    try:
        return entry.factory(**options)
    except TypeError as e:
        m = re.search(r"unexpected keyword argument '([^']+)'", str(e))
        if m is None:
            raise
        raise ValueError(f"{task_id} has no option {m.group(1)!r}") from None


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


def policies(task_id: str) -> list[str]:
    return list(_entry(task_id).policies)


def make_policy(task_id: str, name: str, **kwargs: Any) -> Agent:
    entry = _entry(task_id)
    key = POLICY_ALIASES.get(name, name)
    if key not in entry.policies:
        raise UnknownPolicy(
            f"unknown policy {name!r} for {task_id}; choose one of: {', '.join(entry.policies)}"
        )
    return entry.policies[key](**kwargs)


def _entry(task_id: str) -> _Entry:
    _load_builtin(task_id)
    if task_id not in _REGISTRY:
        _load_builtin()
    try:
        return _REGISTRY[task_id]
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise UnknownTask(f"unknown task {task_id!r}; known tasks: {known}") from None


_BUILTIN: dict[str, str] = {
    "maze-fo": "envs.maze",
    "maze-po": "envs.maze",
    "textnav-fo": "envs.textnav",
    "textnav-po": "envs.textnav",
    "wordle": "envs.wordle",
    "wordle-lmrl": "envs.wordle",
    "chess": "envs.chess",
    "endgames": "envs.chess",
    "twenty-questions": "envs.twenty_questions",
    "guess-city": "envs.guess_city",
    "car-dealer": "envs.car_dealer",
}
"""Built-in task ids and the module that registers each (imported on first use)."""
_loaded = False


def _load_builtin(task_id: str | None = None) -> None:
    """Import the module of ``task_id`` (or of every built-in task); absent modules are skipped."""
    global _loaded
    import importlib
    import importlib.util

    if task_id is not None:
        if task_id in _REGISTRY:
            return
        mod = _BUILTIN.get(task_id)
        if mod is not None and importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)
        return
    if _loaded:
        return
    _loaded = True
    for mod in dict.fromkeys(_BUILTIN.values()):
        if importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)


def episode_success(spec: TaskSpec, last_info: Mapping[str, Any] | None, total_return: float) -> bool | None:
    """Whether an episode succeeded: the last step's ``info["success"]`` when the task says so,
    else ``total_return >= spec.success_return``, else None (the task does not define success)."""
    if last_info is not None and last_info.get("success") is not None:
        return bool(last_info["success"])
    if spec.success_return is not None:
        return total_return >= spec.success_return
    return None


# --------------------------------------------------------------------------------------------
# Running episodes without the app (generation, tests, evaluation)


@dataclass
class Transition:
    action: str
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: Mapping[str, Any]


@dataclass
class Episode:
    """A finished (or cut) episode in memory: the first observation plus its transitions."""

    task_id: str
    seed: int | None
    first_observation: str
    transitions: list[Transition] = field(default_factory=list)

    @property
    def total_return(self) -> float:
        return math.fsum(t.reward for t in self.transitions)

    @property
    def done(self) -> bool:
        return bool(self.transitions) and (
            self.transitions[-1].terminated or self.transitions[-1].truncated
        )

    def text_history(self) -> TextHistory:
        """The whole episode as LMRL segments (observation, action, observation, ...)."""
        return episode_text_history(
            self.first_observation, [(t.action, t.observation) for t in self.transitions]
        )


def episode_text_history(
    first_observation: str, pairs: Sequence[tuple[str, str]]
) -> TextHistory:
    out = [Text(first_observation, False)]
    for action, observation in pairs:
        out.append(Text(action, True))
        if observation:
            out.append(Text(observation, False))
    return tuple(out)


def run_episode(
    task: Task,
    agent: Agent,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    max_steps: int | None = None,
) -> Episode:
    """Play one episode of ``agent`` in ``task`` from ``seed``."""
    first = task.reset(seed, options)
    agent.reset(task, seed)
    ep = Episode(task.spec.id, seed, first)
    limit = max_steps if max_steps is not None else 10 * task.spec.max_turns + 10
    for _ in range(limit):
        action = agent.act(task.history())
        st = task.step(action)
        ep.transitions.append(Transition(action, *st))
        if st.terminated or st.truncated:
            break
    return ep


def replay(task: Task, seed: int | None, actions: Sequence[str], options=None) -> Episode:
    """Re-run recorded actions from the recorded seed (the episode must reproduce exactly)."""
    first = task.reset(seed, options)
    ep = Episode(task.spec.id, seed, first)
    for action in actions:
        st = task.step(action)
        ep.transitions.append(Transition(action, *st))
        if st.terminated or st.truncated:
            break
    return ep
