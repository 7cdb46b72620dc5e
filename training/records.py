"""Small helpers over the store's ``runs`` and ``checkpoints`` tables (data/migrations.py)."""

from __future__ import annotations

import json
from typing import Any

from data.store import now


def start_run(store, *, kind: str, algo: str | None, task: str | None, config: dict[str, Any],
              dataset_query: str | None, episode_ids: list[int] | None, out_dir: str | None) -> int:
    with store.db.atomic():
        cur = store.db.execute(
            """INSERT INTO runs(kind, algo, task, status, config, dataset_query, episode_ids, out_dir,
               metrics, started_at) VALUES (?,?,?,'running',?,?,?,?,'{}',?)""",
            [kind, algo, task, json.dumps(config), dataset_query,
             json.dumps(episode_ids) if episode_ids is not None else None, out_dir, now()],
        )  # fmt: skip
    return int(cur.lastrowid)


def finish_run(store, run_id: int, status: str, metrics: dict[str, Any]) -> None:
    with store.db.atomic():
        store.db.execute(
            "UPDATE runs SET status = ?, metrics = ?, ended_at = ? WHERE id = ?",
            [status, json.dumps(metrics, default=str), now(), run_id],
        )


def add_checkpoint(store, run_id: int | None, path: str, step: int, meta: dict[str, Any]) -> int:
    with store.db.atomic():
        cur = store.db.execute(
            "INSERT INTO checkpoints(run_id, path, step, created_at, meta) VALUES (?,?,?,?,?)",
            [run_id, path, step, now(), json.dumps(meta, default=str)],
        )
    return int(cur.lastrowid)


def checkpoint_id_for(store, path: str) -> int | None:
    row = store.db.execute(
        "SELECT id FROM checkpoints WHERE path = ? ORDER BY id DESC LIMIT 1", [path]
    ).fetchone()
    return int(row[0]) if row else None
