"""LMRL-Gym's Text-Nav format (``text_nav/dataset/collect_data.py``; trainers read JSONL):

``{"text_history": [obs_0, cmd_1, obs_1, cmd_2, ...], "rewards": [r_1, r_2, ...],
"dones": [d_1, d_2, ...]}``

Texts are stripped (commands without their ``"\\n"``); ``rewards`` and ``dones`` have one entry
per command (LMRL's trainers interleave them with zeros themselves), rewards are TextWorld's
integer score, and the last ``done`` is forced to true, as LMRL's collector does. Import adds the
``"\\n"`` back to every text; the last step is terminated when it won (reward > 0) or lost (the
observation says "You lost"), else truncated (the step limit).
"""

from __future__ import annotations

from typing import Any

import envs
from data.datasets import StoredEpisode
from data.io import validation as check
from data.io.formats import Codec, register_codec
from data.store import EpisodeRecord, StepRecord, Who


def _score(value: float) -> float | int:
    value = float(value)
    return int(value) if value.is_integer() else value


def export_episode(ep: StoredEpisode) -> dict[str, Any]:
    texts = [ep.episode["first_observation"].strip()]
    rewards: list[float | int] = []
    dones: list[bool] = []
    for s in ep.steps:
        texts += [s["action"].strip(), s["observation"].strip()]
        rewards.append(_score(s["reward"]))
        dones.append(bool(s["terminated"] or s["truncated"]))
    if dones:
        dones[-1] = True
    return {"text_history": texts, "rewards": rewards, "dones": dones}


def import_item(item: Any, task: str) -> EpisodeRecord:
    texts, rewards, dones = check.fields(item, "the item", ("text_history", "rewards", "dones"))
    for name, value in (("text_history", texts), ("rewards", rewards), ("dones", dones)):
        if type(value) is not list:
            check.fail(name, "a list", value)
    if not texts:
        raise check.FieldError("text_history must be a non-empty list")
    texts = [check.text(t, f"text_history[{i}]") for i, t in enumerate(texts)]
    n = len(texts) // 2
    if len(rewards) != n or len(dones) != n:
        raise check.FieldError(f"{n} commands but {len(rewards)} rewards and {len(dones)} dones")
    steps: list[StepRecord] = []
    for k in range(n):
        action = texts[2 * k + 1].strip() + "\n"
        obs = texts[2 * k + 2].strip() + "\n" if 2 * k + 2 < len(texts) else ""
        reward = check.number(rewards[k], f"rewards[{k}]")
        done = check.flag(dones[k], f"dones[{k}]")
        ended = done and (reward > 0 or "You lost" in obs)
        info: dict[str, Any] = {}
        if done:
            info["success"] = reward > 0
        steps.append(
            StepRecord(
                action, obs, reward, terminated=ended, truncated=done and not ended, info=info
            )
        )
    return EpisodeRecord(
        task=task,
        task_version=envs.spec(task).version,
        seed=None,
        first_observation=texts[0].strip() + "\n",
        steps=steps,
        agent=Who("import", "lmrl"),
        source="import",
        success=any(s.reward > 0 for s in steps),
    )


register_codec("textnav-fo", Codec(export_episode, import_item))
register_codec("textnav-po", Codec(export_episode, import_item))
