"""Our lossless JSONL: an episode with every column of the episode and its steps as one JSON
object (:func:`episode_to_json`), and back, every field checked (:func:`episode_from_json`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from data.datasets import StoredEpisode
from data.io.validation import LABEL_KEYS, FieldError, check_record, fail, number, unknown_fields
from data.store import EpisodeRecord, StepRecord, Who

# fmt: off
_EPISODE_KEYS = (
    "task", "task_version", "seed", "options", "agent_kind", "agent_name", "partner_kind",
    "partner_name", "player", "source", "status", "first_observation", "success",
    "started_at", "ended_at", "meta",
)
_STEP_KEYS = ("role", "action", "typed", "observation", "reward", "terminated", "truncated", "info", "think_ms")
# fmt: on


_EPISODE_FIELDS = frozenset((*_EPISODE_KEYS, "return", "steps", "labels"))
_STEP_FIELDS = frozenset(_STEP_KEYS)


def episode_to_json(
    ep: StoredEpisode, labels: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    out = {k: ep.episode[k] for k in _EPISODE_KEYS}
    out["return"] = ep.episode["return"]
    out["steps"] = [{k: s[k] for k in _STEP_KEYS} for s in ep.steps]
    for s in out["steps"]:
        s["terminated"] = bool(s["terminated"])
        s["truncated"] = bool(s["truncated"])
    if labels:
        out["labels"] = [{k: lab[k] for k in LABEL_KEYS} for lab in labels]
    return out


def episode_from_json(obj: Any, tasks: Collection[str] | None = None) -> EpisodeRecord:
    """An episode of our JSONL, every field checked (:func:`data.io.validation.check_record`;
    ``tasks``: the known task ids, default all); raises :class:`FieldError` naming the field."""
    if type(obj) is not dict:
        fail("the episode", "a JSON object with task, first_observation and steps", obj)
    unknown_fields(obj, "the episode", _EPISODE_FIELDS)
    for key in ("task", "first_observation", "steps"):
        if key not in obj:
            raise FieldError(f"the episode has no {key!r}")
    raw = obj["steps"]
    if type(raw) is not list:
        fail("steps", "a list", raw)
    steps = []
    for i, s in enumerate(raw):
        if type(s) is not dict:
            fail(f"steps[{i}]", "an object", s)
        if not s.keys() <= _STEP_FIELDS:
            unknown_fields(s, f"steps[{i}]", _STEP_FIELDS)
        try:
            action, observation, reward = s["action"], s["observation"], s["reward"]
        except KeyError as e:
            raise FieldError(f"steps[{i}] has no {e.args[0]!r}") from None
        steps.append(
            StepRecord(
                action,
                observation,
                reward,
                s.get("terminated", False),
                s.get("truncated", False),
                s.get("info"),
                s.get("typed"),
                s.get("think_ms"),
                s.get("role", "agent"),
            )
        )
    if "return" in obj:
        number(obj["return"], "return")  # derived from the rewards: checked, not kept
    partner_kind, partner_name = obj.get("partner_kind"), obj.get("partner_name")
    if partner_kind is None and partner_name is not None:
        raise FieldError("partner_name is given without partner_kind")
    rec = EpisodeRecord(
        task=obj["task"],
        task_version=obj.get("task_version", 1),
        seed=obj.get("seed"),
        first_observation=obj["first_observation"],
        steps=steps,
        agent=Who(obj.get("agent_kind", "import"), obj.get("agent_name", "import")),
        partner=None if partner_kind is None else Who(partner_kind, partner_name or partner_kind),
        player=obj.get("player"),
        source=obj.get("source", "import"),
        options=obj.get("options"),
        status=obj.get("status", "finished"),
        success=obj.get("success"),
        meta=obj.get("meta"),
        started_at=obj.get("started_at"),
        ended_at=obj.get("ended_at"),
        labels=obj.get("labels"),
    )
    if tasks is None:
        import envs

        tasks = envs.ids()
    return check_record(rec, tasks)
