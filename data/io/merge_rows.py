"""The row work of :mod:`data.io.merge`: reading a store's rows with their uids, comparing two
versions of a row by content (ids expressed as uids, so the comparison is the same in every
store), and writing the winner into the target with its ids remapped."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.migrations import backfill_uid
from data.records import inserted_id

REFS = {
    "episodes": {"run_id": "runs"},
    "checkpoints": {"run_id": "runs"},
    "evaluations": {"checkpoint_id": "checkpoints"},
    "labels": {"episode_id": "episodes"},
}
"""The columns that hold another table's integer id, by table."""
ORDER = ("runs", "checkpoints", "evaluations", "episodes", "labels")
"""Parents before the rows that point at them (a run's ``episode_ids`` are set at the end)."""

Row = dict[str, Any]


def _dicts(cur: sqlite3.Cursor) -> list[Row]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur]


@dataclass
class MergeReport:
    """What a merge did: rows ``added``, ``updated`` (a more advanced version) and ``unchanged``
    per table, and the inputs skipped (the target itself)."""

    added: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [
            f"{self.added[t]} {t}"
            for t in ("episodes", *sorted(set(self.added) - {"episodes"}))
            if self.added[t]
        ]
        line = "added " + (", ".join(parts) if parts else "nothing")
        if self.updated:
            line += "; updated " + ", ".join(f"{n} {t}" for t, n in sorted(self.updated.items()))
        if self.skipped:
            line += "; skipped " + ", ".join(self.skipped) + " (the target itself)"
        return line


def digest(content: Any) -> str:
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Side:
    """One store as a merge reads it: rows with their uids, and its integer ids as uids."""

    def __init__(self, conn: sqlite3.Connection, origin: str, has_uid: bool) -> None:
        self.conn = conn
        self.origin = origin
        self.has_uid = has_uid
        self._uids: dict[str, dict[int, str]] = {}

    @classmethod
    def of_source(cls, conn: sqlite3.Connection, path: Path, has_uid: bool) -> Side:
        """An input store; one older than m002 is labelled by its file name."""
        origin = path.name
        if has_uid:
            row = conn.execute("SELECT value FROM store_info WHERE key = 'origin'").fetchone()
            origin = row[0] if row else origin
        return cls(conn, origin, has_uid)

    def _complete(self, table: str, row: Row) -> Row:
        if not self.has_uid or row.get("uid") is None:
            row["uid"] = backfill_uid(table, row)
        if table == "episodes" and not row.get("origin"):
            row["origin"] = self.origin
        return row

    def rows(self, table: str) -> Iterator[Row]:
        """Every row of ``table`` in id order, with its uid (and an episode's origin)."""
        cur = self.conn.execute(f"SELECT * FROM {table} ORDER BY id")
        names = [d[0] for d in cur.description]
        for r in cur:
            yield self._complete(table, dict(zip(names, r, strict=True)))

    def uid_of(self, table: str, row_id: int) -> str | None:
        if table not in self._uids:
            self._uids[table] = {r["id"]: r["uid"] for r in self.rows(table)}
        return self._uids[table].get(row_id)

    def steps(self, episode_id: int) -> list[Row]:
        return _dicts(
            self.conn.execute("SELECT * FROM steps WHERE episode_id = ? ORDER BY idx", [episode_id])
        )

    def canonical(self, table: str, row: Row) -> Row:
        """The row's content with its ids as uids (the same in every store that holds it)."""
        c = {k: v for k, v in row.items() if k != "id"}
        for col, ref in REFS.get(table, {}).items():
            if c.get(col) is not None:
                c[col] = self.uid_of(ref, c[col])
        if table == "runs" and c.get("episode_ids") is not None:
            c["episode_ids"] = self.episode_uids(c["episode_ids"])
        if table == "episodes":
            c["steps"] = [
                {k: v for k, v in s.items() if k != "episode_id"} for s in self.steps(row["id"])
            ]
        return c

    def episode_uids(self, text: str) -> list[str] | str:
        """A run's ``episode_ids`` as uids (ids of episodes no longer stored are left out)."""
        try:
            ids = json.loads(text)
        except ValueError:
            return text
        if not isinstance(ids, list):
            return text
        uids = (self.uid_of("episodes", i) for i in ids if isinstance(i, int))
        return [u for u in uids if u is not None]


class TargetSide(Side):
    """The store being merged into: rows are looked up by uid and written with its own ids."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn, "", True)
        self._columns: dict[str, list[str]] = {}

    def uid_of(self, table: str, row_id: int) -> str | None:
        row = self.conn.execute(f"SELECT uid FROM {table} WHERE id = ?", [row_id]).fetchone()
        return row[0] if row else None

    def id_of(self, table: str, uid: str | None) -> int | None:
        if uid is None:
            return None
        row = self.conn.execute(f"SELECT id FROM {table} WHERE uid = ?", [uid]).fetchone()
        return row[0] if row else None

    def find(self, table: str, uid: str) -> Row | None:
        rows = _dicts(self.conn.execute(f"SELECT * FROM {table} WHERE uid = ?", [uid]))
        return rows[0] if rows else None

    def columns(self, table: str) -> list[str]:
        if table not in self._columns:
            self._columns[table] = [r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")]
        return self._columns[table]

    def write(self, table: str, c: Row, row_id: int | None) -> int:
        """Insert (``row_id`` None) or overwrite the row of content ``c``; returns its id. Refs
        are mapped from uids to this store's ids; a run's ``episode_ids`` are set later."""
        values = dict(c)
        for col, ref in REFS.get(table, {}).items():
            values[col] = self.id_of(ref, values.get(col))
        if table == "runs" and values.get("episode_ids") is not None:
            values["episode_ids"] = "[]"  # set by fix_episode_ids once the episodes are in
        cols = [k for k in self.columns(table) if k != "id"]
        args = [values.get(k) for k in cols]
        if row_id is None:
            marks = ",".join("?" * len(cols))
            row_id = inserted_id(
                self.conn.execute(f"INSERT INTO {table}({','.join(cols)}) VALUES ({marks})", args)
            )
        else:
            sets = ", ".join(f"{k} = ?" for k in cols)
            self.conn.execute(f"UPDATE {table} SET {sets} WHERE id = ?", [*args, row_id])
        if table == "episodes":
            self.conn.execute("DELETE FROM steps WHERE episode_id = ?", [row_id])
            step_cols = [k for k in self.columns("steps")]
            steps = [
                [row_id if k == "episode_id" else s.get(k) for k in step_cols] for s in c["steps"]
            ]
            self.conn.executemany(
                f"INSERT INTO steps({','.join(step_cols)}) VALUES ({','.join('?' * len(step_cols))})",
                steps,
            )
        return row_id

    def fix_episode_ids(self, run_id: int, uids: list[str] | str | None) -> None:
        if isinstance(uids, list):
            ids = [i for i in (self.id_of("episodes", u) for u in uids) if i is not None]
            text: str | None = json.dumps(ids)
        else:
            text = uids
        self.conn.execute("UPDATE runs SET episode_ids = ? WHERE id = ?", [text, run_id])


def rank(table: str, c: Row) -> tuple[Any, ...]:
    """Which of two versions of a row wins: the larger rank (see :mod:`data.io.merge`)."""
    if table == "episodes":
        return (c["status"] != "in_progress", len(c["steps"]), c.get("ended_at") or "", digest(c))
    if table == "runs":
        return (c["status"] != "running", c.get("ended_at") or "", digest(c))
    return (digest(c),)


def merge_players(src: Side, dst: TargetSide, report: MergeReport) -> None:
    """Players are matched by name; of two versions the one created first wins."""
    for p in _dicts(src.conn.execute("SELECT * FROM players ORDER BY name")):
        old = _dicts(dst.conn.execute("SELECT * FROM players WHERE name = ?", [p["name"]]))
        if not old:
            cols = list(p)
            dst.conn.execute(
                f"INSERT INTO players({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                [p[k] for k in cols],
            )
            report.added["players"] += 1
        elif old[0] != p and (p["created_at"], digest(p)) < (old[0]["created_at"], digest(old[0])):
            sets = ", ".join(f"{k} = ?" for k in p if k != "name")
            dst.conn.execute(
                f"UPDATE players SET {sets} WHERE name = ?",
                [*(v for k, v in p.items() if k != "name"), p["name"]],
            )
            report.updated["players"] += 1
        else:
            report.unchanged["players"] += 1


def merge_source(src: Side, dst: TargetSide, report: MergeReport) -> None:
    """Merge every row of ``src`` into ``dst`` (inside the caller's transaction)."""
    merge_players(src, dst, report)
    runs_to_fix: list[tuple[int, Any]] = []
    for table in ORDER:
        for row in src.rows(table):
            new = src.canonical(table, row)
            old_row = dst.find(table, row["uid"])
            if old_row is None:
                row_id = dst.write(table, new, None)
                report.added[table] += 1
            else:
                old = dst.canonical(table, old_row)
                if new == old or rank(table, new) < rank(table, old):
                    report.unchanged[table] += 1
                    continue
                row_id = dst.write(table, new, old_row["id"])
                report.updated[table] += 1
            if table == "runs":
                runs_to_fix.append((row_id, new.get("episode_ids")))
    for run_id, uids in runs_to_fix:
        dst.fix_episode_ids(run_id, uids)
    merge_campaigns(src, dst, report)


def merge_campaigns(src: Side, dst: TargetSide, report: MergeReport) -> None:
    """The campaigns ``src`` keeps (by name; of two versions of a name the later one wins), so
    ``lmrl stats --campaign NAME`` works on the merged store (stores before m003 have none)."""
    if not src.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'campaigns'"
    ).fetchone():
        return
    rows = _dicts(src.conn.execute("SELECT name, spec, created_at, updated_at FROM campaigns"))
    for row in rows:
        old = _dicts(dst.conn.execute("SELECT * FROM campaigns WHERE name = ?", [row["name"]]))
        if not old:
            report.added["campaigns"] += 1
        elif (old[0]["updated_at"], old[0]["spec"]) >= (row["updated_at"], row["spec"]):
            report.unchanged["campaigns"] += 1
            continue
        else:
            report.updated["campaigns"] += 1
        dst.conn.execute(
            "INSERT OR REPLACE INTO campaigns(name, spec, created_at, updated_at) VALUES (?,?,?,?)",
            [row["name"], row["spec"], row["created_at"], row["updated_at"]],
        )
