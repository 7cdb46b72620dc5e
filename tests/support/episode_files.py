"""Support for the import tests: a valid episode as our JSONL writes it, and a copy of a JSON
document with one field set to another value (or deleted)."""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import envs
from data.datasets import DatasetQuery
from data.io.formats import export_episodes
from data.store import EpisodeRecord, StepRecord, Store, Who

DELETE = object()
"""As the value of :func:`with_field`: delete the field."""


def maze_episode(seed: int = 0) -> dict[str, Any]:
    """One finished maze-fo episode (the optimal policy, a step label) as ``lmrl export`` writes it."""
    ep = envs.run_episode(envs.make("maze-fo"), envs.make_policy("maze-fo", "optimal"), seed)
    steps = [
        StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, t.info)
        for t in ep.transitions
    ]
    rec = EpisodeRecord(
        "maze-fo",
        1,
        seed,
        ep.first_observation,
        steps,
        Who("scripted", "optimal"),
        success=True,
        labels=[
            {"step_idx": 0, "label": "good", "value": None, "author": "ann", "created_at": None}
        ],
    )
    store = Store(":memory:")
    try:
        store.write_episodes([rec])
        out = io.StringIO()
        export_episodes(store, out, "jsonl", DatasetQuery(task="maze-fo"))
    finally:
        store.close()
    return json.loads(out.getvalue())


def with_field(doc: Any, path: str, value: Any) -> Any:
    """A deep copy of ``doc`` with the field at ``path`` (``seed``, ``steps.0.reward``, ``0.done``;
    ``""`` is the whole document) set to ``value``, or deleted when ``value`` is :data:`DELETE`
    (the whole document then reads null)."""
    if not path:
        return None if value is DELETE else copy.deepcopy(value)
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node = doc
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    key: Any = int(last) if isinstance(node, list) else last
    if value is DELETE:
        if isinstance(node, list) or key in node:
            del node[key]
    else:
        node[key] = value
    return doc
