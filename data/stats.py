"""Aggregates over the store: per-task summaries (the app's home screen, ``lmrl stats``), the
returns of the logged data (evaluation's store-normalised score) and of chosen episodes.

(:meth:`data.store.Store.stats` is the per task and source table of ``lmrl stats``.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from data.datasets import LOGGED_SOURCES

if TYPE_CHECKING:
    from data.store import Store


def not_understood_rates(store: Store) -> dict[tuple[str, str], float]:
    """Per (task, source): the share of the steps that say whether their input was understood
    (``info["understood"]``, the partner tasks) where it was not."""
    rows = store.db.execute(
        """SELECT e.task, e.source, AVG(json_extract(s.info, '$.understood') = 0)
           FROM steps s JOIN episodes e ON e.id = s.episode_id
           WHERE json_extract(s.info, '$.understood') IS NOT NULL GROUP BY e.task, e.source"""
    ).fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


BREAKDOWN_KEYS = ("task", "source", "agent_kind", "partner_kind", "player")
"""The columns :func:`breakdown` can group by."""


def breakdown(
    store: Store, by: Sequence[str] = ("task", "source"), task: str | None = None
) -> list[dict[str, Any]]:
    """Episodes grouped by ``by`` (some of :data:`BREAKDOWN_KEYS`, e.g. the sides: agent and
    partner kinds): ``episodes``, ``finished``, ``in_progress``, ``abandoned``, and over the
    finished ones ``mean_return``, ``success_rate``, ``steps``; ``not_understood`` is the share
    of the steps that say whether their input was understood where it was not (None if none do).
    Ordered by the keys; ``task`` keeps one task's rows."""
    keys = [k for k in by if k in BREAKDOWN_KEYS]
    if len(keys) != len(by) or not keys:
        raise ValueError(f"breakdown groups by some of {', '.join(BREAKDOWN_KEYS)}")
    cols = ", ".join(f"e.{k}" for k in keys)
    where, args = ("WHERE e.task = ?", [task]) if task else ("", [])
    cur = store.db.execute(
        f"""SELECT {cols}, COUNT(*) AS episodes, SUM(status = 'finished') AS finished,
               SUM(status = 'in_progress') AS in_progress, SUM(status = 'abandoned') AS abandoned,
               AVG(CASE WHEN status = 'finished' THEN return END) AS mean_return,
               AVG(CASE WHEN status = 'finished' THEN success END) AS success_rate,
               SUM(CASE WHEN status = 'finished' THEN n_steps ELSE 0 END) AS steps
            FROM episodes e {where} GROUP BY {cols} ORDER BY {cols}""",
        args,
    )
    names = [c[0] for c in cur.description]
    rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    rates = {
        tuple(r[:-1]): r[-1]
        for r in store.db.execute(
            f"""SELECT {cols}, AVG(json_extract(s.info, '$.understood') = 0)
            FROM steps s JOIN episodes e ON e.id = s.episode_id
            {where + (" AND" if where else "WHERE")} json_extract(s.info, '$.understood') IS NOT NULL
            GROUP BY {cols}""",
            args,
        ).fetchall()
    }
    for r in rows:
        r["not_understood"] = rates.get(tuple(r[k] for k in keys))
    return rows


_LOGGED = " AND status = 'finished' AND source IN ({})".format(
    ",".join(f"'{s}'" for s in LOGGED_SOURCES)
)
_AGGREGATES = {"avg": "AVG(return)", "min": "MIN(return)"}


def logged_return(
    store: Store,
    task: str,
    aggregate: Literal["avg", "min"],
    options: Mapping[str, Any] | None = None,
) -> float | None:
    """The mean (``avg``) or lowest (``min``) return of the task's logged data: its finished
    episodes of :data:`data.datasets.LOGGED_SOURCES` (a dataset's default), not agents' rollouts
    (online runs store theirs, possibly under training-only options such as a harsher penalty),
    logged with ``options`` when given.
    None when there is no such episode."""
    from data.datasets import DatasetQuery, select_episode_ids

    what = _AGGREGATES[aggregate]
    if options:  # the options filter is the dataset query's
        ids = select_episode_ids(
            store, DatasetQuery(task=task, status="any", options=dict(options))
        )
        if not ids:
            return None
        sql = f"SELECT {what} FROM episodes WHERE id IN (SELECT value FROM json_each(?)){_LOGGED}"
        row = store.db.execute(sql, [json.dumps(ids)]).fetchone()
    else:
        row = store.db.execute(
            f"SELECT {what} FROM episodes WHERE task = ?{_LOGGED}", [task]
        ).fetchone()
    return None if row is None or row[0] is None else float(row[0])


def episode_returns(store: Store, ids: Sequence[int], chunk: int = 500) -> list[float]:
    """The returns of the episodes ``ids``, in that order (KeyError for an id not stored)."""
    out: dict[int, float] = {}
    for start in range(0, len(ids), chunk):
        part = list(ids[start : start + chunk])
        marks = ",".join("?" * len(part))
        for i, r in store.db.execute(
            f"SELECT id, return FROM episodes WHERE id IN ({marks})", part
        ).fetchall():
            out[int(i)] = float(r)
    return [out[i] for i in ids]


def source_counts(store: Store) -> list[dict[str, Any]]:
    """Per task and source: episodes (finished / in progress), mean return, success rate."""
    sql = """
            SELECT task, source,
                   COUNT(*) AS episodes,
                   SUM(status = 'finished') AS finished,
                   SUM(status = 'in_progress') AS in_progress,
                   SUM(status = 'abandoned') AS abandoned,
                   AVG(CASE WHEN status = 'finished' THEN return END) AS mean_return,
                   AVG(CASE WHEN status = 'finished' THEN success END) AS success_rate,
                   SUM(CASE WHEN status = 'finished' THEN n_steps ELSE 0 END) AS steps
            FROM episodes GROUP BY task, source ORDER BY task, source"""
    cur = store.execute(sql)
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
