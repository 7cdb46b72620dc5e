"""The store's records: who played a side, and episodes as written in bulk.

:func:`episode_record` is the one place that turns a played episode (the first observation and
its transitions) into an :class:`EpisodeRecord`; ``data.generate`` and training's online
rollouts both build theirs with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from envs.core.api import clean_text

if TYPE_CHECKING:
    import sqlite3

    from envs.core import Agent, TaskSpec, Transition


def now() -> str:
    """The current UTC time as the store writes it (ISO 8601, milliseconds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid of the row the INSERT just run on ``cur`` added."""
    rowid = cur.lastrowid
    assert rowid is not None  # sqlite3 sets it after every INSERT
    return rowid


def dumps(obj: Any) -> str:
    """A JSON column's text: ``"{}"`` for nothing, else compact JSON (non-ASCII kept, a lone
    surrogate in its text made U+FFFD as :func:`clean_text` does)."""
    if not obj:
        return "{}"
    return clean_text(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


INT64 = range(-(2**63), 2**63)
"""SQLite's INTEGER range."""


def sql_int(v: int | None, field: str) -> int | None:
    """``v`` as SQLite can store it (None stays None); ValueError outside its 64-bit range."""
    if v is None:
        return None
    n = int(v)
    if n not in INT64:
        raise ValueError(
            f"{field} must be a whole number from -2**63 to 2**63-1, not one of {n.bit_length()} bits"
        )
    return n


def finite(v: float, field: str) -> float:
    """``v`` as a float; ValueError for NaN and the infinities (SQLite would store NULL)."""
    try:
        x = float(v)
    except OverflowError:  # an int past the largest float
        x = math.inf
    if not math.isfinite(x):
        raise ValueError(f"{field} must be a finite number, not {x}")
    return x


def opt_clean(text: str | None) -> str | None:
    return None if text is None else clean_text(text)


@dataclass(frozen=True)
class Who:
    """One side of an episode: ``kind`` (human, scripted, random, checkpoint, hf, http) and name."""

    kind: str
    name: str


def agent_identity(agent: Agent | None) -> Who:
    """How an agent is recorded; ``None`` stands for a person at the keyboard."""
    if agent is None:
        from envs.players.agents import HUMAN

        return Who(HUMAN, HUMAN)
    return Who(agent.kind, agent.name)


def partner_identity(partner: Agent | None, spec: TaskSpec) -> Who | None:
    """How the other side is recorded: the given partner agent, else the task's built-in partner
    (``scripted``, named by the spec), else None (a task without a partner)."""
    if partner is not None:
        return agent_identity(partner)
    return Who("scripted", spec.partner) if spec.partner else None


@dataclass
class StepRecord:
    action: str
    observation: str
    reward: float
    terminated: bool = False
    truncated: bool = False
    info: Mapping[str, Any] | None = None
    typed: str | None = None
    think_ms: int | None = None
    role: str = "agent"


@dataclass
class EpisodeRecord:
    """An episode as written in bulk (generation, import)."""

    task: str
    task_version: int
    seed: int | None
    first_observation: str
    steps: list[StepRecord]
    agent: Who
    partner: Who | None = None
    player: str | None = None
    source: str = "scripted"
    options: Mapping[str, Any] | None = None
    run_id: int | None = None
    status: str = "finished"
    success: bool | None = None
    meta: Mapping[str, Any] | None = None
    started_at: str | None = None
    ended_at: str | None = None
    labels: list[Mapping[str, Any]] | None = None
    """Human labels: ``{"step_idx", "label", "value", "author", "created_at"}``."""

    def episode_row(self, eid: int, stamp: str) -> dict[str, Any]:
        last = self.steps[-1] if self.steps else None
        return {
            "id": eid,
            "task": clean_text(self.task),
            "task_version": sql_int(self.task_version, "task_version"),
            "seed": sql_int(self.seed, "seed"),
            "options": dumps(self.options),
            "agent_kind": clean_text(self.agent.kind),
            "agent_name": clean_text(self.agent.name),
            "partner_kind": opt_clean(self.partner.kind) if self.partner else None,
            "partner_name": opt_clean(self.partner.name) if self.partner else None,
            "player": opt_clean(self.player),
            "source": clean_text(self.source),
            "run_id": self.run_id,
            "status": self.status,
            "first_observation": clean_text(self.first_observation),
            "n_steps": len(self.steps),
            "return": math.fsum(
                finite(s.reward, f"steps[{i}].reward") for i, s in enumerate(self.steps)
            ),
            "success": None if self.success is None else int(self.success),
            "terminated": int(bool(last and last.terminated)),
            "truncated": int(bool(last and last.truncated)),
            "started_at": self.started_at or stamp,
            "ended_at": self.ended_at or stamp,
            "meta": dumps(self.meta),
        }

    def step_rows(self, eid: int, stamp: str) -> list[tuple[Any, ...]]:
        """Rows in the order of :data:`STEP_COLUMNS`."""
        return [
            (
                eid,
                i,
                clean_text(s.role),
                clean_text(s.action),
                opt_clean(s.typed),
                clean_text(s.observation),
                finite(s.reward, f"steps[{i}].reward"),
                int(s.terminated),
                int(s.truncated),
                dumps(s.info),
                sql_int(s.think_ms, f"steps[{i}].think_ms"),
                stamp,
            )
            for i, s in enumerate(self.steps)
        ]


def episode_record(
    task: str,
    task_version: int,
    seed: int | None,
    first_observation: str,
    transitions: Iterable[Transition],
    agent: Who,
    *,
    partner: Who | None,
    source: str,
    options: Mapping[str, Any] | None = None,
    success: bool | None = None,
    run_id: int | None = None,
    meta: Mapping[str, Any] | None = None,
) -> EpisodeRecord:
    """A finished episode's record from its transitions (agent steps, infos copied)."""
    steps = [
        StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, dict(t.info))
        for t in transitions
    ]
    return EpisodeRecord(
        task,
        task_version,
        seed,
        first_observation,
        steps,
        agent,
        partner=partner,
        source=source,
        options=options,
        run_id=run_id,
        success=success,
        meta=meta,
    )


_JSON_COLS = ("options", "meta", "info", "config", "metrics", "dataset_query", "episode_ids")


def decode_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of the store as a dict, its JSON columns decoded (text that is not JSON is kept)."""
    out = dict(row)
    for k in _JSON_COLS:
        if isinstance(out.get(k), str):
            try:
                out[k] = json.loads(out[k])
            except ValueError:
                pass
    return out


STEP_COLUMNS = (
    "episode_id",
    "idx",
    "role",
    "action",
    "typed",
    "observation",
    "reward",
    "terminated",
    "truncated",
    "info",
    "think_ms",
    "created_at",
)
STEP_INSERT = (
    f"INSERT INTO steps({', '.join(STEP_COLUMNS)}) VALUES ({', '.join('?' * len(STEP_COLUMNS))})"
)
