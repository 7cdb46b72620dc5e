"""Every lmrl-tui task as a Gymnasium environment: ``gymnasium.make("lmrl/maze-fo-v0", **options)``.

Importing this module registers one Gymnasium id per task, ``lmrl/<task-id>-v0`` (see
:func:`gym_id`); without importing it first, ``gymnasium.make("envs.gym:lmrl/maze-fo-v0")`` imports
it for you (Gymnasium 1.x has no plugin entry points any more; the ``module:id`` form is its way).
Keyword arguments of ``gymnasium.make`` are the task's options (``words="small"``, ``elo=1500``),
checked by ``envs.make``; a bad one raises ValueError.

* Spaces: ``observation_space`` and ``action_space`` are ``gymnasium.spaces.Text`` over
  :data:`CHARSET` (printable ASCII, the newline, and the Latin-1 letters of city names such as
  ``São Paulo``), lengths 0 to :data:`OBSERVATION_MAX_LENGTH` / :data:`ACTION_MAX_LENGTH`.
* ``reset(seed=s)`` plays the task's episode ``s`` (the same seed as ``envs.make(id).reset(s)``,
  the store and ``lmrl generate``); ``reset()`` without a seed draws one from the env's
  ``np_random``, so a seeded reset followed by unseeded ones is reproducible. ``options`` go to the
  task's ``reset`` (``{"answer": "crane"}`` for Wordle, ``{"fen": ...}`` for chess, ...). The info
  is ``{"seed": s}``.
* ``step(text)`` is the task's ``step``: the observation is the text that follows the action (not
  the whole history; ``env.unwrapped.task.history()`` is the model's context under the task's
  window), and the info is a fresh copy of the task's. Any string is a valid call: text the task
  cannot read is its own invalid action (its penalty, or its partner's "I don't understand"),
  never an exception.
* Partners are the task's defaults (the Twenty Questions / Guess My City oracle, the car buyer,
  Stockfish); ``close()`` closes them (the Stockfish process) and may be called twice.
* ``render_mode="ansi"``: ``render()`` returns the model's current context as text.
* ``observation_format="messages"``: each observation is the whole conversation so far as chat
  messages (a list of ``{"role", "content"}``: the side's rules as ``system``, what the environment
  said as ``user``, the actions as ``assistant``; :mod:`envs.adapters.chat`), ready for a chat
  template; an action is then a chat reply, of which the first line is played (``"\\n"`` added).
  The default, ``"text"``, is unchanged.
* ``side="partner"`` (two-sided tasks: chess, Twenty Questions, Guess My City, Car Dealer) seats the
  caller in the partner's chair (the opponent, the oracle, the buyer; a role name works too): the
  task's scripted ``agent_policy`` (``strong``) plays the acting side, an observation is what the
  task asks the partner, an action is the partner's reply, and the reward is
  ``partner_reward`` (``none``, ``zero-sum`` or ``shared``: the tasks define none; see
  :mod:`envs.adapters.seat`).
* ``env.unwrapped.legal_actions()`` lists the actions where the task can (maze, Text-Nav, chess).

This module imports gymnasium (the optional extra ``pip install lmrl-tui[gym]``); ``envs`` itself
never imports it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import gymnasium
from gymnasium import spaces

import envs
from envs.adapters.chat import Conversation, action_text, is_partner, resolve_side, system_prompt
from envs.adapters.seat import PartnerSeat
from envs.adapters.seat import partner_reward as seat_reward
from envs.core import Task, TaskSpec, history_to_str

NAMESPACE = "lmrl"
VERSION = 0
"""The version of this wrapper's interface (``-v0``); the task's own rules version is
``env.unwrapped.task_spec.version`` and is recorded with every stored episode."""

ASCII_PRINTABLE = "".join(chr(c) for c in range(32, 127))
LATIN1_LETTERS = "".join(chr(c) for c in range(0xC0, 0x100) if chr(c) not in "×÷")
CHARSET = "\n" + ASCII_PRINTABLE + LATIN1_LETTERS
"""Every character a built-in task writes (its observations are ASCII plus the newline; the
Latin-1 letters cover the cities' local names). Both spaces use it."""
OBSERVATION_MAX_LENGTH = 4096
"""Above the longest observation (a Text-Nav room with its command list is ~450 characters, a
car buyer's reply at most 2,000)."""
ACTION_MAX_LENGTH = 1024
"""Ample for a move, a guess, a question or a seller's line; longer text is still accepted."""
_SEED_BOUND = 2**31 - 1
OBSERVATION_FORMATS = ("text", "messages")


class Messages(spaces.Sequence):
    """A conversation: a list (or tuple) of ``{"role", "content"}`` messages."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, list | tuple) and all(self.feature_space.contains(m) for m in x)


def messages_space() -> Messages:
    roles = spaces.Text(16, min_length=4, charset="abcdefghijklmnopqrstuvwxyz")
    content = spaces.Text(16 * OBSERVATION_MAX_LENGTH, min_length=0, charset=CHARSET)
    return Messages(spaces.Dict({"role": roles, "content": content}))


_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def gym_id(task_id: str) -> str:
    """The Gymnasium id of a task: ``lmrl/<task-id>-v0``. Characters Gymnasium's id pattern
    rejects or misreads (anything but ASCII letters, digits, ``_``, ``.`` and ``-``: a ``/``
    would be a namespace, a ``:`` a module) become ``_``, so ``"my task"`` is ``lmrl/my_task-v0``."""
    return f"{NAMESPACE}/{_BAD_ID_CHARS.sub('_', task_id)}-v{VERSION}"


class TextTaskEnv(gymnasium.Env[Any, str]):
    """One lmrl-tui task (``envs.make(task_id, **options)``) behind Gymnasium's API."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        task_id: str,
        render_mode: str | None = None,
        observation_format: str = "text",
        side: str = "agent",
        agent_policy: str = "strong",
        partner_reward: str = "none",
        **options: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"not {render_mode!r}"
            )
        if observation_format not in OBSERVATION_FORMATS:
            raise ValueError(
                f"observation_format must be one of {', '.join(OBSERVATION_FORMATS)}, "
                f"not {observation_format!r}"
            )
        self.task_id = task_id
        self.observation_format = observation_format
        self.role = resolve_side(envs.spec(task_id), side)
        self.partner_reward = partner_reward
        seat_reward(partner_reward, [])  # a bad kind fails here
        self.seat: PartnerSeat | None = None
        """The partner's seat (``side="partner"``), which holds the task."""
        if is_partner(envs.spec(task_id), self.role):
            self.seat = PartnerSeat(task_id, agent=agent_policy, **options)
            self.task: Task = self.seat.task
        else:
            self.task = envs.make(task_id, **options)
        self.render_mode = render_mode
        self.conversation = Conversation(system_prompt(self.task, self.role))
        self.observation_space = (
            spaces.Text(OBSERVATION_MAX_LENGTH, min_length=0, charset=CHARSET)
            if observation_format == "text"
            else messages_space()
        )
        self.action_space = spaces.Text(ACTION_MAX_LENGTH, min_length=0, charset=CHARSET)
        self.episode_seed: int | None = None
        """The task seed of the current episode (what ``reset`` drew or was given)."""

    @property
    def task_spec(self) -> TaskSpec:
        """The task's own spec: title, horizon, reward range, options, partner kind."""
        return self.task.spec

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        task_seed = seed if seed is not None else int(self.np_random.integers(_SEED_BOUND))
        given = dict(options) if options else None
        self.conversation = Conversation(self.conversation.system)
        if self.seat is not None:
            asked = self.seat.reset(task_seed, given)
            observation = self._heard(asked)
        else:
            observation = self.task.reset(task_seed, given)
            self.conversation.add("user", observation)
        self.episode_seed = task_seed
        return self._shown(observation), {"seed": task_seed}

    def step(self, action: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not isinstance(action, str):
            raise TypeError(
                f"{gym_id(self.task_id)} takes text actions, not {type(action).__name__}"
            )
        if self.observation_format == "messages":
            action = action_text(action)
        self.conversation.add("assistant", action)
        if self.seat is not None:
            return self._partner_step(action)
        observation, reward, terminated, truncated, info = self.task.step(action)
        self.conversation.add("user", observation)
        return (
            self._shown(observation),
            float(reward),
            bool(terminated),
            bool(truncated),
            _fresh(info),
        )

    def _partner_step(self, reply: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        assert self.seat is not None
        asked = self.seat.reply(reply)
        rewards = self.seat.new_agent_rewards()
        last = self.seat.transitions[-1] if self.seat.transitions else None
        info: dict[str, Any] = {"agent_rewards": rewards}
        if asked is None and last is not None:
            info.update(_fresh(last.info), agent_return=self.seat.total_return())
        observation = self._heard(asked)
        terminated = asked is None and last is not None and last.terminated
        truncated = asked is None and not terminated
        reward = seat_reward(self.partner_reward, rewards)
        return self._shown(observation), reward, terminated, truncated, info

    def _heard(self, asked: tuple[Any, ...] | None) -> str:
        if asked is None:
            return ""
        self.conversation.heard(asked)
        return history_to_str(asked)

    def _shown(self, observation: str) -> Any:
        return observation if self.observation_format == "text" else self.conversation.copy()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return history_to_str(self.task.history())
        return None

    def legal_actions(self) -> list[str] | None:
        """The task's legal actions now, or None where it cannot list them (free text)."""
        return self.task.legal_actions()

    def close(self) -> None:
        if self.seat is not None:
            self.seat.close()
        else:
            self.task.close()
        super().close()


_ATOMS = frozenset({str, int, float, bool, type(None)})


def _fresh(data: Any) -> Any:
    """A copy of a task's info that shares no mutable part with it (Gymnasium's checker asks for
    new data on every call; infos are JSON-like, so this is faster than ``copy.deepcopy``)."""
    kind = type(data)
    if kind is dict:
        return {k: _fresh(v) for k, v in data.items()} if data else {}
    if kind in _ATOMS:
        return data
    if isinstance(data, Mapping):
        return {k: _fresh(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_fresh(v) for v in data]
    if isinstance(data, tuple):
        return tuple(_fresh(v) for v in data)
    if isinstance(data, set):
        return set(data)
    return data


def register(task_id: str) -> str:
    """Register ``task_id`` (a task id ``envs.make`` knows) with Gymnasium; returns its id. Two task
    ids that map to the same Gymnasium id raise ValueError."""
    env_id = gym_id(task_id)
    known = gymnasium.registry.get(env_id)
    if known is not None:
        if known.kwargs.get("task_id") != task_id:
            raise ValueError(f"{env_id} is already the id of task {known.kwargs.get('task_id')!r}")
        return env_id
    gymnasium.register(
        id=env_id, entry_point=f"{__name__}:TextTaskEnv", kwargs={"task_id": task_id}
    )
    return env_id


def register_all() -> list[str]:
    """Register every built-in task and every task registered with ``envs`` so far (call it again
    after registering tasks of your own); returns the Gymnasium ids."""
    return [register(t) for t in dict.fromkeys([*envs.builtin_ids(), *envs.registered_ids()])]


register_all()
