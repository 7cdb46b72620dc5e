"""LMRL-Gym's Wordle format (``wordle/train_data.jsonl``, ``misc/data_gen.py``), one object per line:

``{"sequence": [["Wordle:\\n", 0.0], ["c l o w n\\n", 1.0], ["b y g b y\\n", 0.0], ...],
"reward": [r_1, 0.0, r_2, 0.0, ...], "done": true}``

``sequence`` is the LMRL text history (the second item is 1.0 for actions); every action is
re-rendered as LMRL does (its characters spaced, then ``"\\n"``). ``reward`` is aligned with
``sequence[1:]``: the reward of each action, then 0.0 for the observation that follows. As in
LMRL's data, a valid guess's reward is an integer (-1, or 0 for the solving guess) and an invalid
guess's a float. Import marks the last step terminated when ``done`` (a Wordle game has no time
limit to truncate it) and the episode successful when its last feedback is ``"g g g g g\\n"``.
"""

from __future__ import annotations

from typing import Any

import envs
from data.datasets import StoredEpisode
from data.io import validation as check
from data.io.formats import Codec, register_codec
from data.store import EpisodeRecord, StepRecord, Who
from envs.wordle.task import FIRST_OBSERVATION, INVALID_OBSERVATION, render_action

SOLVED_TEXT = "g g g g g\n"


def _reward(value: float, invalid: bool) -> float | int:
    value = float(value)
    if not invalid and value.is_integer():
        return int(value)
    return value


def export_episode(ep: StoredEpisode) -> dict[str, Any]:
    sequence: list[list[Any]] = [[ep.episode["first_observation"], 0.0]]
    rewards: list[float | int] = []
    for s in ep.steps:
        sequence.append([render_action(s["action"]), 1.0])
        sequence.append([s["observation"], 0.0])
        rewards += [_reward(s["reward"], s["observation"] == INVALID_OBSERVATION), 0.0]
    last = ep.steps[-1] if ep.steps else None
    done = bool(last and (last["terminated"] or last["truncated"]))
    return {"sequence": sequence, "reward": rewards, "done": done}


def import_item(item: Any, task: str) -> EpisodeRecord:
    seq, rewards, done = check.fields(item, "the item", ("sequence", "reward", "done"))
    done = check.flag(done, "done")
    if type(seq) is not list or not seq:
        check.fail("sequence", "a non-empty list of [text, is_action] pairs", seq)
    if type(rewards) is not list:
        check.fail("reward", "a list", rewards)
    texts, flags = [], []
    for i, pair in enumerate(seq):
        if type(pair) is not list or len(pair) != 2:
            check.fail(f"sequence[{i}]", "a [text, is_action] pair", pair)
        texts.append(check.text(pair[0], f"sequence[{i}][0]"))
        flags.append(check.number(pair[1], f"sequence[{i}][1]") != 0.0)
    if flags[0] or any(flags[i] != (i % 2 == 1) for i in range(len(flags))):
        raise check.FieldError("sequence must alternate observation, action, observation, ...")
    if len(rewards) < len(seq) - 1:
        raise check.FieldError("reward must have one entry per sequence item after the first")
    steps: list[StepRecord] = []
    n_actions = len(range(1, len(texts), 2))
    for k, i in enumerate(range(1, len(texts), 2)):
        obs = texts[i + 1] if i + 1 < len(texts) else ""
        is_last = k == n_actions - 1
        info: dict[str, Any] = {}
        if obs == INVALID_OBSERVATION:
            info["invalid"] = True
        if is_last and done:
            info["success"] = obs == SOLVED_TEXT
        reward = check.number(rewards[i - 1], f"reward[{i - 1}]")
        steps.append(
            StepRecord(
                texts[i], obs, reward, terminated=is_last and done, truncated=False, info=info
            )
        )
    return EpisodeRecord(
        task=task,
        task_version=envs.spec(task).version,
        seed=None,
        first_observation=texts[0] if texts[0] else FIRST_OBSERVATION,
        steps=steps,
        agent=Who("import", "lmrl"),
        source="import",
        success=bool(steps) and steps[-1].observation == SOLVED_TEXT,
    )


register_codec("wordle", Codec(export_episode, import_item))
register_codec("wordle-lmrl", Codec(export_episode, import_item))
