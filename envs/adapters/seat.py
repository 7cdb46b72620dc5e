"""The partner's seat of a two-sided task, played turn by turn from outside.

A task calls its partner (``partner.act(history)``) from inside its own ``step``; a trainer wants
the opposite: to be handed what the partner is asked and to answer it. :class:`PartnerSeat`
turns the one into the other. It plays the episode in a thread of its own, with a scripted policy
of the task on the acting side (``strong`` by default, as ``lmrl play --as <partner>`` does), and
stops each time the task asks its partner: :meth:`PartnerSeat.reset` and :meth:`PartnerSeat.reply`
return what the partner is asked (a text history), or None once the episode has ended.

The tasks define no reward for their partner (``TaskSpec.reward_range`` is the acting side's).
``partner_reward`` says what the seat reports for each reply, from the acting side's rewards that
followed it: ``none`` (0), ``zero-sum`` (their negation: chess) or ``shared`` (the same: a
cooperative oracle).
"""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from envs.core import Task, TaskSpec, Text, Transition, clean_text, make, make_policy
from envs.core.api import step_notes

PARTNER_REWARDS = ("none", "zero-sum", "shared")


class SeatClosed(RuntimeError):
    """The seat was reset or closed while the task waited for the partner."""


class _SeatPartner:
    """The agent the task talks to: it hands each question to the seat and waits for the reply."""

    kind = "seat"
    name = "seat"

    def __init__(self, asks: queue.Queue[Any], replies: queue.Queue[str | None]) -> None:
        self._asks, self._replies = asks, replies

    def reset(self, task: Task, seed: int | None = None) -> None:
        pass

    def act(self, history: Sequence[Text]) -> str:
        self._asks.put(("ask", tuple(history)))
        reply = self._replies.get()
        if reply is None:
            raise SeatClosed("the seat was closed")
        return reply


def partner_reward(kind: str, agent_rewards: Sequence[float]) -> float:
    """The partner's reward for one reply, from the acting side's rewards that followed it."""
    if kind not in PARTNER_REWARDS:
        raise ValueError(
            f"partner_reward must be one of {', '.join(PARTNER_REWARDS)}, not {kind!r}"
        )
    total = math.fsum(agent_rewards)
    return 0.0 if kind == "none" else (-total if kind == "zero-sum" else total)


class PartnerSeat:
    """One two-sided task with its partner's side open (see the module docstring)."""

    def __init__(self, task_id: str, agent: str = "strong", **options: Any) -> None:
        self.task_id = task_id
        self._options = options
        self._agent_policy = agent
        self._asks: queue.Queue[Any] = queue.Queue()
        self._replies: queue.Queue[str | None] = queue.Queue()
        self.task: Task = make(task_id, partner=_SeatPartner(self._asks, self._replies), **options)
        if len(self.task.spec.roles) < 2:
            self.task.close()
            raise ValueError(f"{task_id} has one side: it has no partner's seat")
        make_policy(task_id, agent)  # an unknown policy fails here, in the caller's thread
        self._thread: threading.Thread | None = None
        self.seed: int | None = None
        self.first_observation = ""
        self.transitions: list[Transition] = []
        """The acting side's steps so far."""
        self.done = True
        self._counted = 0

    @property
    def spec(self) -> TaskSpec:
        return self.task.spec

    def reset(
        self, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Text, ...] | None:
        """Start episode ``seed``; returns what the partner is asked first (None: the episode
        ended before the partner was asked anything)."""
        self._stop()
        self.seed, self.first_observation, self.transitions = seed, "", []
        self.done, self._counted = False, 0
        self._thread = threading.Thread(
            target=self._play, args=(seed, dict(options or {})), daemon=True, name="partner-seat"
        )
        self._thread.start()
        return self._next()

    def reply(self, text: str) -> tuple[Text, ...] | None:
        """Answer the question; returns the next one (None: the episode has ended)."""
        if self.done or self._thread is None:
            raise RuntimeError("the episode is over; call reset()")
        self._replies.put(clean_text(text))
        return self._next()

    def new_agent_rewards(self) -> list[float]:
        """The acting side's rewards since the last call (those that followed the last reply)."""
        got = [t.reward for t in self.transitions[self._counted :]]
        self._counted = len(self.transitions)
        return got

    def total_return(self) -> float:
        """The acting side's return so far."""
        return math.fsum(t.reward for t in self.transitions)

    def close(self) -> None:
        self._stop()
        self.task.close()

    def _next(self) -> tuple[Text, ...] | None:
        kind, value = self._asks.get()
        if kind == "ask":
            return value
        self.done = True
        self._thread = None
        if kind == "error":
            raise value
        return None

    def _play(self, seed: int | None, options: dict[str, Any]) -> None:
        try:
            agent = make_policy(self.task_id, self._agent_policy)
            self.first_observation = self.task.reset(seed, options or None)
            agent.reset(self.task, seed)
            for _ in range(10 * self.task.spec.max_turns + 10):
                action = clean_text(agent.act(self.task.history()))
                notes = step_notes(agent)
                st = self.task.step(action)
                info = st.info if notes is None else {**st.info, **notes}
                self.transitions.append(Transition(action, *st[:4], info))
                if st.terminated or st.truncated:
                    break
            self._asks.put(("end", None))
        except SeatClosed:
            self._asks.put(("closed", None))
        except BaseException as e:  # the caller's thread raises it
            self._asks.put(("error", e))

    def _stop(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._replies.put(None)
            while True:  # until the episode's thread has given up (each new question: refused)
                kind, _ = self._asks.get()
                if kind != "ask":
                    break
                self._replies.put(None)
            self._thread.join()
        self._thread = None
        # The partner keeps the queues it was given: empty them rather than replace them.
        for q in (self._asks, self._replies):
            while not q.empty():
                q.get_nowait()
