"""Goals of an episode, and goal-relabelled training windows for a goal-conditioned value function
(the value model a ``guided:`` agent asks, :mod:`training.agents.guided`). No torch at import.

A *goal* is an outcome of a whole episode that an agent may want more or less of: the secret is
found, the buyer buys, the car sells above its list price. :func:`goals_for` lists a task's goals
and :func:`achieved` reads from a stored episode (its ``success`` and its last step's ``info``)
which of them it reached.

:func:`relabel` turns an episode's ``history`` (or ``step``) windows into one copy per goal: every
prompt ends with :func:`goal_line` (``"Goal: the secret is found\n"``), right before the action
(so a prompt cut from the left keeps it), and every reward is 0 except the last action's, which is
1 when the episode reached that goal. An MC Returns run on these windows (``lmrl train mc
--goals``, γ = 1) learns ``Q(history, goal, action)`` = the probability, under the data's
behaviour, that the episode ends with the goal reached after that action: how the task will unfold
after each candidate, goal by goal. :func:`goal_prompt` is the same prompt at play time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from training.datasets.windows import Window


@dataclass(frozen=True)
class Goal:
    name: str
    """Short key (``found``), used in info records and tables."""
    text: str
    """What the value function is conditioned on (``the secret is found``)."""
    positive: bool
    """Whether an agent of this task wants it (the critique names both kinds)."""


_SUCCESS = Goal("success", "the episode is won", True)
_FAILURE = Goal("failure", "the episode is not won", False)
_QUESTIONS = (
    Goal("found", "the secret is found", True),
    Goal("not found", "the questions run out before the secret is found", False),
)
GOALS: dict[str, tuple[Goal, ...]] = {
    "twenty-questions": _QUESTIONS,
    "guess-city": _QUESTIONS,
    "car-dealer": (
        Goal("deal", "the buyer buys a car", True),
        Goal("above list", "the car sells above its list price", True),
        Goal("no deal", "the buyer leaves without buying", False),
    ),
}


def goals_for(task_id: str) -> tuple[Goal, ...]:
    """The task's goals (any task without its own: won / not won)."""
    return GOALS.get(task_id, (_SUCCESS, _FAILURE))


def goal_line(goal: Goal) -> str:
    return f"Goal: {goal.text}\n"


def goal_prompt(history_text: str, goal: Goal) -> str:
    """The value function's input for ``goal`` after ``history_text`` (as :func:`relabel` trains it)."""
    return history_text + goal_line(goal)


def achieved(
    task_id: str, success: bool | None, last_info: Mapping[str, Any] | None
) -> dict[str, bool]:
    """Which of the task's goals an episode reached, from its success flag and last step's info."""
    won = bool(success)
    out: dict[str, bool] = {}
    decision = (last_info or {}).get("decision") or {}
    for g in goals_for(task_id):
        if g.name in ("success", "found", "deal"):
            out[g.name] = won
        elif g.name == "above list":
            price, msrp = decision.get("buy_price"), decision.get("msrp")
            out[g.name] = bool(
                decision.get("car_bought") and price is not None and msrp and price > msrp
            )
        else:  # the negative twins
            out[g.name] = not won
    return out


def relabel(
    windows: Sequence[Window], reached: Mapping[str, bool], goals: Sequence[Goal]
) -> list[Window]:
    """One copy of an episode's one-action windows per goal: each prompt followed by the goal's
    line, reward 1 on the episode's last action when the goal was reached, else 0 everywhere. An
    episode that did not end (cut by the data, not by the task) keeps its bootstrap and gets no
    goal reward."""
    from training.datasets.windows import Window

    out: list[Window] = []
    if not windows:
        return out
    if not all(w.keep_end and len(w.segments) == 2 for w in windows):
        raise ValueError("goal relabelling needs one window per step (--windows history or step)")
    ended = windows[-1].done
    for gi, g in enumerate(goals):
        r = 1.0 if ended and reached.get(g.name) else 0.0
        chain = windows[0].episode * len(goals) + gi  # each copy its own chain of returns
        for k, w in enumerate(windows):
            (prompt, _, _), (action, _, _) = w.segments
            last = k == len(windows) - 1  # the reward sits on the episode's last action
            segs = [(goal_prompt(prompt, g), False, 0.0), (action, True, r if last else 0.0)]
            nxt = None if w.next_prompt is None else goal_prompt(w.next_prompt, g)
            out.append(Window(segs, w.done, nxt, chain, keep_end=w.keep_end))
    return out
