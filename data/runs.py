"""Training runs, their checkpoints and evaluations in the store (tables ``runs``,
``checkpoints``, ``evaluations``; see data/migrations.py).

Every write is one ``BEGIN IMMEDIATE`` transaction of the store (:meth:`Store._writing`), like the
store's own. Rows read back have their JSON columns decoded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data.records import decode_row, inserted_id, now

if TYPE_CHECKING:
    from data.store import Store


# -- runs -----------------------------------------------------------------------------------
def start_run(
    store: Store,
    *,
    kind: str,
    algo: str | None,
    task: str | None,
    config: Mapping[str, Any],
    dataset_query: str | None,
    episode_ids: Sequence[int] | None,
    out_dir: str | None,
) -> int:
    """Insert a ``running`` run; returns its id."""
    with store._writing():
        cur = store.db.execute(
            """INSERT INTO runs(kind, algo, task, status, config, dataset_query, episode_ids, out_dir,
               metrics, started_at) VALUES (?,?,?,'running',?,?,?,?,'{}',?)""",
            [
                kind,
                algo,
                task,
                json.dumps(config),
                dataset_query,
                json.dumps(episode_ids) if episode_ids is not None else None,
                out_dir,
                now(),
            ],
        )
    return inserted_id(cur)


def resume_run(store: Store, run_id: int) -> None:
    """Mark a run ``running`` again (``--resume``)."""
    with store._writing():
        store.db.execute("UPDATE runs SET status = 'running' WHERE id = ?", [run_id])


def finish_run(store: Store, run_id: int, status: str, metrics: Mapping[str, Any]) -> None:
    """Set a run's final status (``finished``, ``failed``) and metrics."""
    with store._writing():
        store.db.execute(
            "UPDATE runs SET status = ?, metrics = ?, ended_at = ? WHERE id = ?",
            [status, json.dumps(metrics, default=str), now(), run_id],
        )


def mark_stopped(store: Store, run_id: int, how: str) -> bool:
    """A run stopped on purpose: status ``stopped`` and ``metrics.stopped = how`` (e.g. "from the
    app with SIGINT"), unless it has finished meanwhile. Whether the row changed."""
    with store._writing():
        cur = store.db.execute(
            "UPDATE runs SET status = 'stopped', metrics = json_set(COALESCE(metrics, '{}'), '$.stopped', ?), "
            "ended_at = COALESCE(ended_at, ?) WHERE id = ? AND status IN ('running', 'failed')",
            [how, now(), run_id],
        )
    return cur.rowcount > 0


def get_run(store: Store, run_id: int) -> dict[str, Any] | None:
    """One run's row, or None."""
    rows = list(store.db.query("SELECT * FROM runs WHERE id = ?", [run_id]))
    return decode_row(rows[0]) if rows else None


def recent_runs(store: Store, limit: int = 200) -> list[dict[str, Any]]:
    """The newest runs first."""
    return [
        decode_row(r)
        for r in store.db.query("SELECT * FROM runs ORDER BY id DESC LIMIT ?", [limit])
    ]


def round_recorded(store: Store, run_id: int | None, rnd: int) -> bool:
    """Whether an online run already stored the rollouts of round ``rnd`` (a run killed after
    writing them, resumed)."""
    rows = store.db.execute(
        "SELECT COUNT(*) FROM episodes WHERE run_id = ? AND json_extract(meta, '$.round') = ?",
        [run_id, rnd],
    ).fetchall()  # fetchall: no read snapshot left open
    return bool(rows and rows[0][0])


def run_episode_ids(store: Store, run_id: int, max_round: int | None = None) -> list[int]:
    """Ids of the episodes a run wrote in rounds ``<= max_round`` (all rounds if None), in order."""
    rows = store.db.execute(
        "SELECT id FROM episodes WHERE run_id = ? AND COALESCE(json_extract(meta, '$.round'), 0) <= ? "
        "ORDER BY id",
        [run_id, 1 << 30 if max_round is None else max_round],
    ).fetchall()
    return [int(r[0]) for r in rows]


# -- checkpoints ----------------------------------------------------------------------------
def add_checkpoint(
    store: Store, run_id: int | None, path: str, step: int, meta: Mapping[str, Any]
) -> int:
    """Insert a checkpoint of a run; returns its id (the trainers give ``path`` absolute, so that
    the app and ``lmrl eval`` find it from any working directory)."""
    with store._writing():
        cur = store.db.execute(
            "INSERT INTO checkpoints(run_id, path, step, created_at, meta) VALUES (?,?,?,?,?)",
            [run_id, path, step, now(), json.dumps(meta, default=str)],
        )
    return inserted_id(cur)


def checkpoint_id_for(store: Store, path: str) -> int | None:
    """The newest checkpoint row stored under ``path`` (written relative or absolute, from here;
    stores of older versions kept the path as the trainer was given it), if any."""
    row = store.db.execute(
        "SELECT id FROM checkpoints WHERE path IN (?, ?) ORDER BY id DESC LIMIT 1",
        [str(Path(path).resolve()), path],
    ).fetchone()
    return int(row[0]) if row else None


def run_checkpoints(store: Store, run_id: int) -> list[dict[str, Any]]:
    """A run's checkpoints, newest first."""
    return [
        decode_row(r)
        for r in store.db.query(
            "SELECT * FROM checkpoints WHERE run_id = ? ORDER BY id DESC", [run_id]
        )
    ]


# -- evaluations ----------------------------------------------------------------------------
EVALUATION_COLUMNS = (
    "episodes",
    "mean_return",
    "ci_low",
    "ci_high",
    "success_rate",
    "normalised_lmrl",
    "normalised_store",
)
"""The result keys with a column of their own; the others go to ``meta``."""


def add_evaluation(
    store: Store,
    task: str,
    policy: str,
    result: Mapping[str, Any],
    checkpoint_id: int | None = None,
) -> int:
    """Insert an evaluation result (``episodes`` and ``mean_return`` required; the keys not in
    :data:`EVALUATION_COLUMNS` are kept in ``meta``); returns its id."""
    meta = {k: v for k, v in result.items() if k not in EVALUATION_COLUMNS}
    with store._writing():
        cur = store.db.execute(
            """INSERT INTO evaluations(task, policy, checkpoint_id, episodes, mean_return, ci_low,
               ci_high, success_rate, normalised_lmrl, normalised_store, created_at, meta)
               VALUES (?,?,?,?,?,?,?,?,?,?,?,?)""",
            [
                task,
                policy,
                checkpoint_id,
                int(result["episodes"]),
                float(result["mean_return"]),
                result.get("ci_low"),
                result.get("ci_high"),
                result.get("success_rate"),
                result.get("normalised_lmrl"),
                result.get("normalised_store"),
                now(),
                json.dumps(meta, default=str),
            ],
        )
    return inserted_id(cur)


def last_run_evaluation(store: Store, run_id: int) -> dict[str, Any] | None:
    """The newest evaluation of any of a run's checkpoints."""
    rows = list(
        store.db.query(
            "SELECT e.* FROM evaluations e JOIN checkpoints c ON c.id = e.checkpoint_id WHERE c.run_id = ? "
            "ORDER BY e.id DESC LIMIT 1",
            [run_id],
        )
    )
    return decode_row(rows[0]) if rows else None
