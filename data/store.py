"""The episode store: one SQLite file (WAL, busy_timeout, foreign keys) opened through sqlite-utils.

Interactive play commits each step as it happens (:meth:`Store.add_step`), so a crash loses
nothing that was played; bulk generation writes whole episodes in one transaction
(:meth:`Store.write_episodes`). Episodes that were never finished keep ``status='in_progress'``
(or ``'abandoned'``) and are excluded from datasets by default.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from data.checks import (  # noqa: F401 - the schema's names are importable from here too
    MIGRATION_NAMES,
    MIGRATION_SET,
    TABLES,
    StoreError,
    applied_migrations,
    check_path,
    inspect_existing,
    refuse_newer,
    table_names,
    verify,
)
from data.records import (  # noqa: F401 - the record types are importable from here too
    STEP_COLUMNS,
    STEP_INSERT,
    EpisodeRecord,
    StepRecord,
    Who,
    decode_row,
    dumps,
    finite,
    inserted_id,
    now,
    opt_clean,
    sql_int,
)
from data.store_file import (  # noqa: F401 - where the store lives is importable from here too
    APP_NAME,
    DATABASE_ERRORS,
    DB_ENV,
    StoreFile,
    default_db_path,
    store_in,
)
from envs.core.api import clean_text


class Store(StoreFile):
    """Open (creating and migrating if needed) the episode database at ``path``.

    Each thread that uses the store gets its own connection (see :mod:`data.connection`); every
    write is a ``BEGIN IMMEDIATE`` transaction (:meth:`_writing`) that waits for the write lock
    up to the busy timeout. Only ``data/`` touches the connections: other packages call the
    store's methods and the query functions of ``data.runs``, ``data.stats`` and
    ``data.datasets`` (a test scans their sources for SQL).
    """

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- interactive recording ---------------------------------------------------------------
    def ensure_player(self, name: str, kind: str = "human") -> None:
        with self._writing():
            self.db.execute(
                "INSERT OR IGNORE INTO players(name, kind, created_at) VALUES (?, ?, ?)",
                [clean_text(name), clean_text(kind), now()],
            )

    def start_episode(
        self,
        task: str,
        task_version: int,
        seed: int | None,
        first_observation: str,
        agent: Who,
        *,
        partner: Who | None = None,
        player: str | None = None,
        source: str = "human",
        options: Mapping[str, Any] | None = None,
        run_id: int | None = None,
        meta: Mapping[str, Any] | None = None,
        campaign: tuple[str, str] | None = None,
    ) -> int:
        """Insert an ``in_progress`` episode and commit; returns its id (text is stored after
        :func:`clean_text`; a number SQLite cannot hold raises ValueError). ``campaign``: the
        campaign and assignment it is played for."""
        with self._writing():
            if player is not None:
                self.ensure_player(player)  # joins this transaction
            cur = self.db.execute(
                """INSERT INTO episodes(task, task_version, seed, options, agent_kind, agent_name,
                   partner_kind, partner_name, player, source, run_id, status, first_observation,
                   started_at, meta, campaign, assignment)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,'in_progress',?,?,?,?,?)""",
                [
                    clean_text(task),
                    sql_int(task_version, "task_version"),
                    sql_int(seed, "seed"),
                    dumps(options),
                    clean_text(agent.kind),
                    clean_text(agent.name),
                    opt_clean(partner.kind if partner else None),
                    opt_clean(partner.name if partner else None),
                    opt_clean(player),
                    clean_text(source),
                    run_id,
                    clean_text(first_observation),
                    now(),
                    dumps(meta),
                    *(campaign or (None, None)),
                ],
            )
        return inserted_id(cur)

    def add_step(
        self,
        episode_id: int,
        idx: int,
        action: str,
        observation: str,
        reward: float,
        terminated: bool = False,
        truncated: bool = False,
        info: Mapping[str, Any] | None = None,
        *,
        typed: str | None = None,
        think_ms: int | None = None,
        role: str = "agent",
    ) -> None:
        """Record one step and commit it at once (nothing played is lost on a crash)."""
        with self._writing():
            self.db.execute(
                """INSERT INTO steps(episode_id, idx, role, action, typed, observation, reward,
                   terminated, truncated, info, think_ms, created_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?)""",
                [
                    episode_id,
                    sql_int(idx, "idx"),
                    clean_text(role),
                    clean_text(action),
                    opt_clean(typed),
                    clean_text(observation),
                    finite(reward, "reward"),
                    int(terminated),
                    int(truncated),
                    dumps(dict(info or {})),
                    sql_int(think_ms, "think_ms"),
                    now(),
                ],
            )
            self.db.execute(
                "UPDATE episodes SET n_steps = n_steps + 1, return = return + ? WHERE id = ?",
                [finite(reward, "reward"), episode_id],
            )

    def set_episode_meta(self, episode_id: int, meta: Mapping[str, Any] | None) -> None:
        """Replace an episode's ``meta`` (committed at once)."""
        with self._writing():
            self.db.execute(
                "UPDATE episodes SET meta = ? WHERE id = ?",
                [None if meta is None else dumps(meta), episode_id],
            )

    def finish_episode(
        self,
        episode_id: int,
        *,
        status: str = "finished",
        success: bool | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Close an episode: recompute its return from its steps and set its status."""
        if status not in ("finished", "abandoned"):
            raise ValueError("status must be 'finished' or 'abandoned'")
        with self._writing():
            rows = self.db.execute(
                "SELECT reward, terminated, truncated FROM steps WHERE episode_id = ? ORDER BY idx",
                [episode_id],
            ).fetchall()
            ret = math.fsum(r[0] for r in rows)
            term = bool(rows and rows[-1][1])
            trunc = bool(rows and rows[-1][2])
            sets = "status=?, n_steps=?, return=?, terminated=?, truncated=?, success=?, ended_at=?"
            args: list[Any] = [
                status,
                len(rows),
                ret,
                int(term),
                int(trunc),
                None if success is None else int(success),
                now(),
            ]
            if meta is not None:
                sets += ", meta=?"
                args.append(dumps(meta))
            self.db.execute(f"UPDATE episodes SET {sets} WHERE id = ?", [*args, episode_id])

    # -- bulk recording ------------------------------------------------------------------------
    def write_episodes(self, episodes: Iterable[EpisodeRecord]) -> list[int]:
        """Write finished episodes in one transaction (ids assigned here); returns their ids."""
        eps = list(episodes)
        if not eps:
            return []
        stamp = now()
        ids: list[int] = []
        with self._writing():
            start = (self.db.execute("SELECT COALESCE(MAX(id), 0) FROM episodes").fetchone()[0]) + 1
            ep_rows = []
            step_rows = []
            for i, ep in enumerate(eps):
                eid = start + i
                ids.append(eid)
                ep_rows.append(ep.episode_row(eid, stamp))
                step_rows.extend(ep.step_rows(eid, stamp))
            players = {(ep.player, "human") for ep in eps if ep.player}
            for name, kind in players:
                self.db.execute(
                    "INSERT OR IGNORE INTO players(name, kind, created_at) VALUES (?,?,?)",
                    [name, kind, stamp],
                )
            self.db.table("episodes").insert_all(ep_rows, batch_size=500)
            # Steps are the bulk of the rows: a prepared executemany is ~3x faster than building
            # an INSERT per chunk (and inspecting every value) as insert_all does.
            self._conn.executemany(STEP_INSERT, step_rows)
            label_rows = [
                (
                    eid,
                    sql_int(lab.get("step_idx"), "step_idx"),
                    clean_text(lab["label"]),
                    opt_clean(lab.get("value")),
                    opt_clean(lab.get("author")),
                    lab.get("created_at") or stamp,
                )
                for eid, ep in zip(ids, eps, strict=True)
                for lab in ep.labels or ()
            ]
            if label_rows:
                self._conn.executemany(
                    "INSERT INTO labels(episode_id, step_idx, label, value, author, created_at) "
                    "VALUES (?,?,?,?,?,?)",
                    label_rows,
                )
        return ids

    # -- labels -------------------------------------------------------------------------------
    def add_label(
        self,
        episode_id: int,
        label: str,
        value: str | None = None,
        *,
        step_idx: int | None = None,
        author: str | None = None,
    ) -> int:
        """Attach a human label to an episode or one of its steps (e.g. ``good``, ``bad``, a note)."""
        label = clean_text(label.strip())
        if not label:
            raise ValueError("a label needs some text")
        with self._writing():
            cur = self.db.execute(
                "INSERT INTO labels(episode_id, step_idx, label, value, author, created_at) VALUES (?,?,?,?,?,?)",
                [
                    episode_id,
                    sql_int(step_idx, "step_idx"),
                    label[:200],
                    opt_clean(value),
                    opt_clean(author),
                    now(),
                ],
            )
        return inserted_id(cur)

    def labels(self, episode_id: int) -> list[dict[str, Any]]:
        return list(self.db["labels"].rows_where("episode_id = ?", [episode_id], order_by="id"))

    # -- reading ------------------------------------------------------------------------------
    def episode(self, episode_id: int) -> dict[str, Any] | None:
        rows = list(self.db["episodes"].rows_where("id = ?", [episode_id]))
        return decode_row(rows[0]) if rows else None

    def steps(self, episode_id: int) -> list[dict[str, Any]]:
        return [
            decode_row(r)
            for r in self.db["steps"].rows_where("episode_id = ?", [episode_id], order_by="idx")
        ]

    def count(self, where: str = "", args: Sequence[Any] = (), *, task: str | None = None) -> int:
        """How many episodes (of ``task``, if given) match the SQL condition ``where`` (for
        data/ and tests; other packages pass ``task`` only)."""
        conds, params = ([f"({where})"], list(args)) if where else ([], [])
        if task is not None:
            conds.append("task = ?")
            params.append(task)
        sql = "SELECT COUNT(*) FROM episodes" + (f" WHERE {' AND '.join(conds)}" if conds else "")
        return int(self.execute(sql, params).fetchone()[0])

    def recent_episodes(self, limit: int = 50, task: str | None = None) -> list[dict[str, Any]]:
        return self._newest_episodes("task = ?" if task else None, [task] if task else [], limit)

    def _newest_episodes(
        self, where: str | None, args: list[Any], limit: int
    ) -> list[dict[str, Any]]:
        """Episode rows, newest first, without sqlite-utils (the app's start reads them)."""
        sql = (
            "SELECT * FROM episodes"
            + (f" WHERE {where}" if where else "")
            + " ORDER BY id DESC LIMIT ?"
        )
        cur = self.execute(sql, [*args, limit])
        cols = [d[0] for d in cur.description]
        return [decode_row(dict(zip(cols, row, strict=True))) for row in cur]

    def last_episode_id(self) -> int:
        """The newest episode's id (0 in an empty store)."""
        return int(self.execute("SELECT COALESCE(MAX(id), 0) FROM episodes").fetchone()[0])

    def unfinished_episodes(
        self, limit: int = 50, *, up_to_id: int | None = None
    ) -> list[dict[str, Any]]:
        """Episodes still ``in_progress`` (played in an app that stopped meanwhile), newest first;
        ``up_to_id`` leaves out the episodes begun after that one."""
        bound = up_to_id is not None
        return self._newest_episodes(
            "status = 'in_progress'" + (" AND id <= ?" if bound else ""),
            [up_to_id] if bound else [],
            limit,
        )

    def schema_version(self) -> list[str]:
        return applied_migrations(self._conn)
