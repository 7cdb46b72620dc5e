"""One episode of a task as a chat exchange from one side: the engine behind the trainers'
adapters (the verifiers environment, TRL's environment class, the OpenEnv server).

:class:`ChatEpisode` hands out what the environment says (``reset`` -> the first user message,
``step(reply)`` -> the next one, the reward of the turn and whether the episode is over) and keeps
the whole conversation (:attr:`ChatEpisode.conversation`, :mod:`envs.adapters.chat`), the per-turn
rewards and the return. On the acting side the task's rewards are the turn's; on the partner's
side (:mod:`envs.adapters.seat`) ``partner_reward`` says what they are.

``partner`` is who plays the other side: for the acting side, ``None`` or ``"builtin"`` (the
task's own partner: the oracle, the car buyer, Stockfish) or any agent choice of the app
(``http:MODEL@BASE_URL``, ``hf:MODEL``, a checkpoint folder); for the partner's side, the scripted
policy of the acting side (``strong`` by default).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from envs.adapters.chat import Conversation, action_text, is_partner, resolve_side, system_prompt
from envs.adapters.seat import PartnerSeat
from envs.adapters.seat import partner_reward as seat_reward
from envs.core import Task, Text, clean_text, history_to_str, make, spec
from envs.core.episode import episode_success

BUILT_IN = (None, "", "builtin", "built-in", "embedded")


class ChatEpisode:
    """Episodes of ``task_id`` from ``side`` (``agent``, ``partner`` or a role name)."""

    def __init__(
        self,
        task_id: str,
        side: str = "agent",
        partner: str | None = None,
        partner_reward: str = "none",
        options: Mapping[str, Any] | None = None,
    ) -> None:
        opts = dict(options or {})
        task_spec = spec(task_id, **opts)
        self.task_id = task_id
        self.role = resolve_side(task_spec, side)
        self.partner_reward = partner_reward
        seat_reward(partner_reward, [])  # a bad kind fails here
        self.seat: PartnerSeat | None = None
        if is_partner(task_spec, self.role):
            self.seat = PartnerSeat(task_id, agent=partner or "strong", **opts)
            self.task: Task = self.seat.task
        elif partner in BUILT_IN:
            self.task = make(task_id, **opts)
        else:
            from envs.players.agents import make_agent

            other = make_agent(task_id, str(partner), role=task_spec.roles[-1])
            self.task = make(task_id, partner=other, **opts)
        self.system = system_prompt(self.task, self.role)
        self.conversation = Conversation(self.system)
        self.rewards: list[float] = []
        self.done = True
        self.last_info: Mapping[str, Any] = {}

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str:
        """Start episode ``seed``; returns what the environment says first."""
        self.conversation = Conversation(self.system)
        self.rewards, self.done, self.last_info = [], False, {}
        if self.seat is not None:
            asked = self.seat.reset(seed, options)
            if asked is None:  # over before the partner was asked anything
                self.done = True
                return ""
            return self._heard(asked)
        first = self.task.reset(seed, dict(options) if options else None)
        return self._said(first)

    def step(self, reply: str) -> tuple[str, float, bool]:
        """Play ``reply`` (a chat reply: its first line is the move); returns what the
        environment says next as a user message ("" once over), the turn's reward and whether it is over."""
        if self.done:
            raise RuntimeError("the episode is over; call reset()")
        action = action_text(clean_text(reply))
        self.conversation.add("assistant", action)
        if self.seat is not None:
            asked = self.seat.reply(action)
            reward = seat_reward(self.partner_reward, self.seat.new_agent_rewards())
            self.rewards.append(reward)
            if asked is None:
                self.done = True
                last = self.seat.transitions[-1] if self.seat.transitions else None
                self.last_info = dict(last.info) if last is not None else {}
                return "", reward, True
            return self._heard(asked), reward, False
        st = self.task.step(action)
        self.rewards.append(float(st.reward))
        self.last_info = st.info
        self.done = bool(st.terminated or st.truncated)
        return self._said(st.observation), float(st.reward), self.done

    @property
    def total_return(self) -> float:
        """This side's return so far."""
        return math.fsum(self.rewards)

    @property
    def agent_return(self) -> float:
        """The acting side's return so far (the task's own rewards, whichever side is played)."""
        return self.seat.total_return() if self.seat is not None else self.total_return

    def success(self) -> bool | None:
        """Whether the acting side succeeded (the task's own test; None where it has none)."""
        return episode_success(self.task.spec, self.last_info, self.agent_return)

    def close(self) -> None:
        if self.seat is not None:
            self.seat.close()
        else:
            self.task.close()

    def _said(self, text: str) -> str:
        """Add what the environment said; returns it as the user message's text."""
        before = len(self.conversation.messages)
        self.conversation.add("user", text)
        return _new_user_text(self.conversation.messages[before:])

    def _heard(self, asked: tuple[Text, ...]) -> str:
        """Add what the task asked its partner (the new part of a history that carries on)."""
        before = len(self.conversation.messages)
        self.conversation.heard(asked)
        return _new_user_text(self.conversation.messages[before:]) or history_to_str(asked)


def _new_user_text(messages: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in messages if m["role"] == "user")
