"""The episode store: one SQLite file (WAL, busy_timeout, foreign keys) opened through sqlite-utils.

Interactive play commits each step as it happens (:meth:`Store.add_step`), so a crash loses
nothing that was played; bulk generation writes whole episodes in one transaction
(:meth:`Store.write_episodes`). Episodes that were never finished keep ``status='in_progress'``
(or ``'abandoned'``) and are excluded from datasets by default.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlite_utils import Database

APP_NAME = "lmrl-tui"
DB_ENV = "LMRL_DB"
SQLITE_MAGIC = b"SQLite format 3\x00"
MIGRATION_SET = "lmrl-tui"
MIGRATION_NAMES = ("m001_initial",)
"""The schema steps in data/migrations.py, by name (a test keeps the two in step). Opening an
up-to-date database needs only these names, so sqlite-utils is imported when first used."""


class StoreError(Exception):
    """A database problem explained in one line for the user."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_db_path() -> Path:
    """``$LMRL_DB`` if set, else ``episodes.db`` in the user data directory."""
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False)) / "episodes.db"


def _dumps(obj: Any) -> str:
    if not obj:
        return "{}"
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Who:
    """One side of an episode: ``kind`` (human, scripted, random, checkpoint, hf, http) and name."""

    kind: str
    name: str


class Store:
    """Open (creating and migrating if needed) the episode database at ``path``."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, create: bool = True) -> None:
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self._check_file(create)
        self._db: Database | None = None
        self._db_lock = threading.Lock()
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=10.0, check_same_thread=False)
            self.conn.execute("PRAGMA busy_timeout = 10000")
            self.conn.execute("PRAGMA foreign_keys = ON")
            mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() != "wal" and str(self.path) != ":memory:":
                raise StoreError(f"{self.path}: could not switch the database to WAL mode")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path} is not a usable lmrl-tui database ({e})") from None

    @property
    def db(self) -> Database:
        """The sqlite-utils view of the connection (created on first use)."""
        if self._db is None:
            with self._db_lock:
                if self._db is None:
                    from data._sqlite_utils import Database

                    self._db = Database(self.conn)
        return self._db

    # -- opening -----------------------------------------------------------------------------
    def _check_file(self, create: bool) -> None:
        p = self.path
        if p.exists():
            if p.is_dir():
                raise StoreError(f"{p} is a directory, not a database file")
            if not os.access(p, os.R_OK | os.W_OK):
                raise StoreError(f"{p} is not readable and writable by you")
            if p.stat().st_size > 0:
                with p.open("rb") as f:
                    if f.read(16) != SQLITE_MAGIC:
                        raise StoreError(f"{p} is not an SQLite database")
            return
        if not create:
            raise StoreError(f"no database at {p}")
        parent = p.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create the folder {parent} for the database ({e.strerror})") from None
        if not os.access(parent, os.W_OK):
            raise StoreError(f"cannot create a database in {parent}: the folder is not writable")

    def _applied_migrations(self) -> list[str]:
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "_sqlite_migrations" not in tables:
            return []
        rows = self.conn.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid", [MIGRATION_SET]
        )
        return [r[0] for r in rows]

    def _migrate(self) -> None:
        known = set(MIGRATION_NAMES)
        applied = set(self._applied_migrations())
        newer = sorted(applied - known)
        if newer:
            raise StoreError(
                f"{self.path} was written by a newer lmrl-tui (schema steps {', '.join(newer)}); "
                "upgrade lmrl-tui to open it"
            )
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not applied and tables - {"_sqlite_migrations"}:
            raise StoreError(f"{self.path} is an SQLite database, but not an lmrl-tui one")
        if known <= applied:
            return
        from data.migrations import migrations

        try:
            migrations.apply(self.db)
        except sqlite3.OperationalError as e:
            raise StoreError(f"cannot write to {self.path} ({e})") from None

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction that takes the write lock at once (``BEGIN IMMEDIATE``).

        A deferred transaction that reads before it writes can fail with "database is locked"
        (no busy wait) when another process writes meanwhile; an immediate one waits for the lock
        up to ``busy_timeout`` instead. Nested use joins the outer transaction.
        """
        conn = self.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- interactive recording ---------------------------------------------------------------
    def ensure_player(self, name: str, kind: str = "human") -> None:
        with self._writing():
            self.db.execute(
                "INSERT OR IGNORE INTO players(name, kind, created_at) VALUES (?, ?, ?)",
                [name, kind, now()],
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
    ) -> int:
        """Insert an ``in_progress`` episode and commit; returns its id."""
        if player:
            self.ensure_player(player)
        with self._writing():
            cur = self.db.execute(
                """INSERT INTO episodes(task, task_version, seed, options, agent_kind, agent_name,
                   partner_kind, partner_name, player, source, run_id, status, first_observation,
                   started_at, meta) VALUES (?,?,?,?,?,?,?,?,?,?,?,'in_progress',?,?,?)""",
                [
                    task, task_version, seed, _dumps(options), agent.kind, agent.name,
                    partner.kind if partner else None, partner.name if partner else None,
                    player, source, run_id, first_observation, now(), _dumps(meta),
                ],
            )  # fmt: skip
        return int(cur.lastrowid)

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
                    episode_id, idx, role, action, typed, observation, float(reward),
                    int(terminated), int(truncated), _dumps(dict(info or {})), think_ms, now(),
                ],
            )  # fmt: skip
            self.db.execute(
                "UPDATE episodes SET n_steps = n_steps + 1, return = return + ? WHERE id = ?",
                [float(reward), episode_id],
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
            args: list[Any] = [status, len(rows), ret, int(term), int(trunc),
                               None if success is None else int(success), now()]  # fmt: skip
            if meta is not None:
                sets += ", meta=?"
                args.append(_dumps(meta))
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
            self.db["episodes"].insert_all(ep_rows, batch_size=500)
            # Steps are the bulk of the rows: a prepared executemany is ~3x faster than building
            # an INSERT per chunk (and inspecting every value) as insert_all does.
            self.db.conn.executemany(_STEP_INSERT, step_rows)
            label_rows = [
                (eid, lab.get("step_idx"), lab["label"], lab.get("value"), lab.get("author"),
                 lab.get("created_at") or stamp)  # fmt: skip
                for eid, ep in zip(ids, eps, strict=True)
                for lab in ep.labels or ()
            ]
            if label_rows:
                self.db.conn.executemany(
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
        label = label.strip()
        if not label:
            raise ValueError("a label needs some text")
        with self._writing():
            cur = self.db.execute(
                "INSERT INTO labels(episode_id, step_idx, label, value, author, created_at) VALUES (?,?,?,?,?,?)",
                [episode_id, step_idx, label[:200], value, author, now()],
            )
        return int(cur.lastrowid)

    def labels(self, episode_id: int) -> list[dict[str, Any]]:
        return list(self.db["labels"].rows_where("episode_id = ?", [episode_id], order_by="id"))

    # -- reading ------------------------------------------------------------------------------
    def episode(self, episode_id: int) -> dict[str, Any] | None:
        rows = list(self.db["episodes"].rows_where("id = ?", [episode_id]))
        return _decode(rows[0]) if rows else None

    def steps(self, episode_id: int) -> list[dict[str, Any]]:
        return [
            _decode(r)
            for r in self.db["steps"].rows_where("episode_id = ?", [episode_id], order_by="idx")
        ]

    def count(self, where: str = "", args: Sequence[Any] = ()) -> int:
        sql = "SELECT COUNT(*) FROM episodes" + (f" WHERE {where}" if where else "")
        return int(self.db.execute(sql, list(args)).fetchone()[0])

    def stats(self) -> list[dict[str, Any]]:
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
        cur = self.db.execute(sql)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]

    def recent_episodes(self, limit: int = 50, task: str | None = None) -> list[dict[str, Any]]:
        where, args = ("task = ?", [task]) if task else (None, [])
        return [
            _decode(r)
            for r in self.db["episodes"].rows_where(where, args, order_by="id DESC", limit=limit)
        ]

    def schema_version(self) -> list[str]:
        return self._applied_migrations()


_JSON_COLS = ("options", "meta", "info", "config", "metrics", "dataset_query", "episode_ids")


def _decode(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    for k in _JSON_COLS:
        if isinstance(out.get(k), str):
            try:
                out[k] = json.loads(out[k])
            except ValueError:
                pass
    return out


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
            "id": eid, "task": self.task, "task_version": self.task_version, "seed": self.seed,
            "options": _dumps(self.options), "agent_kind": self.agent.kind,
            "agent_name": self.agent.name,
            "partner_kind": self.partner.kind if self.partner else None,
            "partner_name": self.partner.name if self.partner else None,
            "player": self.player, "source": self.source, "run_id": self.run_id,
            "status": self.status, "first_observation": self.first_observation,
            "n_steps": len(self.steps), "return": math.fsum(s.reward for s in self.steps),
            "success": None if self.success is None else int(self.success),
            "terminated": int(bool(last and last.terminated)),
            "truncated": int(bool(last and last.truncated)),
            "started_at": self.started_at or stamp, "ended_at": self.ended_at or stamp,
            "meta": _dumps(self.meta),
        }  # fmt: skip

    def step_rows(self, eid: int, stamp: str) -> list[tuple[Any, ...]]:
        """Rows in the order of :data:`STEP_COLUMNS`."""
        return [
            (eid, i, s.role, s.action, s.typed, s.observation, float(s.reward), int(s.terminated),
             int(s.truncated), _dumps(s.info), s.think_ms, stamp)  # fmt: skip
            for i, s in enumerate(self.steps)
        ]


STEP_COLUMNS = (
    "episode_id", "idx", "role", "action", "typed", "observation", "reward", "terminated",
    "truncated", "info", "think_ms", "created_at",
)  # fmt: skip
_STEP_INSERT = (
    f"INSERT INTO steps({', '.join(STEP_COLUMNS)}) VALUES ({', '.join('?' * len(STEP_COLUMNS))})"
)
