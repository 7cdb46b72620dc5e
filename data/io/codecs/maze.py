"""LMRL-Gym's maze formats.

* maze-fo: one JSON list per line, a step each: ``{"state", "action", "reward", "done"}``, where
  ``state`` is the observation before the action (``bc/fully_observed_bc.py``, ``ilql/train_ilql.py``).
* maze-po: one object per line, ``{"text_history": [obs0, act0, obs1, ...], "rewards", "dones"}``,
  rewards and dones aligned with ``text_history`` (``ilql/partially_observed_ilql.py``).
"""

from __future__ import annotations

from typing import Any

import envs
from data.datasets import StoredEpisode
from data.io import validation as check
from data.io.formats import Codec, register_codec, state_action_steps
from data.store import EpisodeRecord, StepRecord, Who

TERMINAL_OBS = {"Success\n", "Failure\n"}


def _terminal_observation(reward: float) -> str:
    return "Success\n" if reward == 0.0 else "Failure\n"


def _record(task: str, first: str, steps: list[StepRecord]) -> EpisodeRecord:
    last = steps[-1] if steps else None
    return EpisodeRecord(
        task=task,
        task_version=envs.spec(task).version,
        seed=None,
        first_observation=first,
        steps=steps,
        agent=Who("import", "lmrl"),
        source="import",
        success=bool(last and last.terminated),
    )


def export_fo(ep: StoredEpisode) -> list[dict[str, Any]]:
    return state_action_steps(ep)


_FO_FIELDS = ("state", "action", "reward", "done")


def import_fo(item: Any, task: str) -> EpisodeRecord:
    if type(item) is not list or not item:
        check.fail("the item", "a non-empty list of {state, action, reward, done} steps", item)
    try:  # the checks are written out for speed: LMRL's maze files hold millions of steps
        rows = [(st["state"], st["action"], st["reward"], st["done"]) for st in item]
    except (KeyError, TypeError):
        rows = [check.fields(st, f"[{i}]", _FO_FIELDS) for i, st in enumerate(item)]
    steps = []
    for i, (state, action, reward, done) in enumerate(rows):
        if type(state) is not str or not state.isascii():
            check.text(state, f"[{i}].state")
        if type(action) is not str or not action.isascii():
            check.text(action, f"[{i}].action")
        if type(reward) is not float or reward - reward != 0.0:
            reward = check.number(reward, f"[{i}].reward")
        if done is not True and done is not False:
            done = check.flag(done, f"[{i}].done")
        if i + 1 < len(rows):
            obs = rows[i + 1][0]  # checked as the next step's state
        else:
            obs = _terminal_observation(reward) if done else ""
        success = done and obs == "Success\n"
        steps.append(
            StepRecord(action, obs, reward, terminated=success, truncated=done and not success)
        )
    return _record(task, rows[0][0], steps)


def export_po(ep: StoredEpisode) -> dict[str, Any]:
    texts = [ep.episode["first_observation"]]
    rewards = [0.0]
    dones = [False]
    for s in ep.steps:
        done = bool(s["terminated"] or s["truncated"])
        texts += [s["action"], s["observation"]]
        rewards += [s["reward"], 0.0]
        dones += [done, done]
    return {"text_history": texts, "rewards": rewards, "dones": dones}


def import_po(item: Any, task: str) -> EpisodeRecord:
    texts, rewards, dones = check.fields(item, "the item", ("text_history", "rewards", "dones"))
    for name, value in (("text_history", texts), ("rewards", rewards), ("dones", dones)):
        if type(value) is not list:
            check.fail(name, "a list", value)
    if not texts or len(texts) != len(rewards) or len(texts) != len(dones):
        raise check.FieldError(
            "text_history, rewards and dones must have the same, non-zero length"
        )
    texts = [check.text(t, f"text_history[{i}]") for i, t in enumerate(texts)]
    steps = []
    for i in range(1, len(texts), 2):
        obs = texts[i + 1] if i + 1 < len(texts) else ""
        done = check.flag(dones[i], f"dones[{i}]")
        success = done and obs == "Success\n"
        reward = check.number(rewards[i], f"rewards[{i}]")
        steps.append(
            StepRecord(texts[i], obs, reward, terminated=success, truncated=done and not success)
        )
    return _record(task, texts[0], steps)


register_codec("maze-fo", Codec(export_fo, import_fo))
register_codec("maze-po", Codec(export_po, import_po))
