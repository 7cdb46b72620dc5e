"""The store's schema, as append-only ``sqlite_utils.Migrations`` steps.

Never edit a step that has shipped: add ``m00N_...`` after the last one.
"""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

from data._sqlite_utils import Database, Migrations

migrations = Migrations("lmrl-tui")


@migrations()
def m001_initial(db: Database) -> None:
    db.execute(
        """
        CREATE TABLE players (
            name TEXT PRIMARY KEY,
            kind TEXT NOT NULL DEFAULT 'human',
            created_at TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        )"""
    )
    db.execute(
        """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,                -- train | generate | eval
            algo TEXT,
            task TEXT,
            status TEXT NOT NULL DEFAULT 'running',  -- running | finished | failed
            config TEXT NOT NULL DEFAULT '{}',
            dataset_query TEXT,
            episode_ids TEXT,
            out_dir TEXT,
            metrics TEXT NOT NULL DEFAULT '{}',
            started_at TEXT NOT NULL,
            ended_at TEXT
        )"""
    )
    db.execute(
        """
        CREATE TABLE episodes (
            id INTEGER PRIMARY KEY,
            task TEXT NOT NULL,
            task_version INTEGER NOT NULL,
            seed INTEGER,
            options TEXT NOT NULL DEFAULT '{}',
            agent_kind TEXT NOT NULL,
            agent_name TEXT NOT NULL,
            partner_kind TEXT,
            partner_name TEXT,
            player TEXT REFERENCES players(name),
            source TEXT NOT NULL,              -- human | scripted | agent | import
            run_id INTEGER REFERENCES runs(id),
            status TEXT NOT NULL DEFAULT 'in_progress'
                CHECK (status IN ('in_progress', 'finished', 'abandoned')),
            first_observation TEXT NOT NULL,
            n_steps INTEGER NOT NULL DEFAULT 0,
            return REAL NOT NULL DEFAULT 0,
            success INTEGER,
            terminated INTEGER NOT NULL DEFAULT 0,
            truncated INTEGER NOT NULL DEFAULT 0,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            meta TEXT NOT NULL DEFAULT '{}'
        )"""
    )
    db.execute("CREATE INDEX episodes_task ON episodes(task, status, source)")
    db.execute(
        """
        CREATE TABLE steps (
            episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            role TEXT NOT NULL DEFAULT 'agent',
            action TEXT NOT NULL,
            typed TEXT,
            observation TEXT NOT NULL,
            reward REAL NOT NULL,
            terminated INTEGER NOT NULL DEFAULT 0,
            truncated INTEGER NOT NULL DEFAULT 0,
            info TEXT NOT NULL DEFAULT '{}',
            think_ms INTEGER,
            created_at TEXT NOT NULL,
            PRIMARY KEY (episode_id, idx)
        ) WITHOUT ROWID"""
    )
    db.execute(
        """
        CREATE TABLE checkpoints (
            id INTEGER PRIMARY KEY,
            run_id INTEGER REFERENCES runs(id),
            path TEXT NOT NULL,
            step INTEGER,
            created_at TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        )"""
    )
    db.execute(
        """
        CREATE TABLE evaluations (
            id INTEGER PRIMARY KEY,
            task TEXT NOT NULL,
            policy TEXT NOT NULL,
            checkpoint_id INTEGER REFERENCES checkpoints(id),
            episodes INTEGER NOT NULL,
            mean_return REAL NOT NULL,
            ci_low REAL,
            ci_high REAL,
            success_rate REAL,
            normalised_lmrl REAL,
            normalised_store REAL,
            created_at TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        )"""
    )
    db.execute(
        """
        CREATE TABLE labels (
            id INTEGER PRIMARY KEY,
            episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
            step_idx INTEGER,
            label TEXT NOT NULL,
            value TEXT,
            author TEXT,
            created_at TEXT NOT NULL
        )"""
    )


# -- m002: where rows came from, for `lmrl merge` ---------------------------------------------
UID_TABLES = ("episodes", "runs", "checkpoints", "evaluations", "labels")
"""The tables whose rows get a ``uid``: a stable id that a merge keys on (their integer ids are
only this store's)."""
IDENTITY_COLUMNS = {
    "episodes": (
        "id",
        "task",
        "seed",
        "started_at",
        "first_observation",
        "agent_kind",
        "agent_name",
    ),
    "runs": ("id", "kind", "algo", "task", "started_at"),
    "checkpoints": ("id", "path", "step", "created_at"),
    "evaluations": ("id", "task", "policy", "created_at"),
    "labels": ("id", "episode_id", "step_idx", "label", "created_at"),
}
"""The columns that never change after a row is written: a row written before m002 gets its uid
from them (:func:`backfill_uid`), so two copies of one old store migrated apart agree."""
NEW_UID = "lower(hex(randomblob(16)))"


def backfill_uid(table: str, row: dict[str, object]) -> str:
    """The uid of a row written before m002: a hash of its table and identity columns."""
    key = json.dumps(
        [table, *(row[c] for c in IDENTITY_COLUMNS[table])], ensure_ascii=False, default=str
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def store_label(file: str) -> str:
    """How a store is named in its episodes' ``origin``: this host and the file's name."""
    return f"{socket.gethostname()}:{Path(file).name if file else 'memory'}"


@migrations()
def m002_merge_identity(db: Database) -> None:
    """``uid`` on every row a merge copies (random for new rows, from the identity columns for
    old ones), ``origin`` on episodes (the store that recorded it: ``store_info.origin``, host and
    file name), and the ``store_info`` table that holds that label."""
    file = next((r[2] for r in db.execute("PRAGMA database_list") if r[1] == "main"), "")
    db.execute("CREATE TABLE store_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO store_info(key, value) VALUES ('origin', ?)", [store_label(file)])
    db.execute("ALTER TABLE episodes ADD COLUMN origin TEXT")
    for table in UID_TABLES:
        db.execute(f"ALTER TABLE {table} ADD COLUMN uid TEXT")
        cols = ", ".join(IDENTITY_COLUMNS[table])
        rows = db.execute(f"SELECT {cols} FROM {table}").fetchall()
        names = IDENTITY_COLUMNS[table]
        db.conn.executemany(
            f"UPDATE {table} SET uid = ? WHERE id = ?",
            [(backfill_uid(table, dict(zip(names, r, strict=True))), r[0]) for r in rows],
        )
        db.execute(f"CREATE UNIQUE INDEX {table}_uid ON {table}(uid)")
        origin = (
            ", origin = COALESCE(NEW.origin, (SELECT value FROM store_info WHERE key = 'origin'))"
        )
        db.execute(
            f"""CREATE TRIGGER {table}_new_uid AFTER INSERT ON {table}
                WHEN NEW.uid IS NULL{" OR NEW.origin IS NULL" if table == "episodes" else ""}
                BEGIN UPDATE {table} SET uid = COALESCE(NEW.uid, {NEW_UID}){origin if table == "episodes" else ""}
                WHERE id = NEW.id; END"""
        )
    db.execute("UPDATE episodes SET origin = (SELECT value FROM store_info WHERE key = 'origin')")


@migrations()
def m003_people_and_campaigns(db: Database) -> None:
    """Who holds an episode now (``episode_holds``: an app process playing it, so no other app
    offers it to resume or abandon), the campaigns served (``campaigns``: the file's assignments,
    as JSON), and each episode's ``campaign`` and ``assignment``."""
    db.execute(
        """
        CREATE TABLE episode_holds (
            episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
            holder TEXT NOT NULL,              -- host:pid:token of the app process
            player TEXT,
            held_at TEXT NOT NULL,
            PRIMARY KEY (episode_id, holder)
        )"""
    )
    db.execute(
        """
        CREATE TABLE campaigns (
            name TEXT PRIMARY KEY,
            spec TEXT NOT NULL,                -- the campaign file, checked, as JSON
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )"""
    )
    db.execute("ALTER TABLE episodes ADD COLUMN campaign TEXT")
    db.execute("ALTER TABLE episodes ADD COLUMN assignment TEXT")
    db.execute("CREATE INDEX episodes_campaign ON episodes(campaign, assignment, player)")


@migrations()
def m004_pairing(db: Database) -> None:
    """Two people in one episode: the lobby (``pairings``: who asked to play which side of which
    task, and whom they were paired with) and the turns the two apps hand each other through the
    store (``pair_turns``); the recorded steps stay in ``steps``, written by one app."""
    db.execute(
        """
        CREATE TABLE pairings (
            id INTEGER PRIMARY KEY,
            task TEXT NOT NULL,
            options TEXT NOT NULL DEFAULT '{}',
            seed INTEGER,
            side TEXT NOT NULL,                -- the side asked for first ('any': either)
            player TEXT NOT NULL,
            holder TEXT NOT NULL,
            partner_player TEXT,
            partner_holder TEXT,
            agent_player TEXT,                 -- first: the one who asked first plays the first side (and records); second: the other
            status TEXT NOT NULL DEFAULT 'waiting'
                CHECK (status IN ('waiting', 'paired', 'cancelled', 'ended')),
            ended_by TEXT,
            episode_id INTEGER REFERENCES episodes(id),
            campaign TEXT,
            assignment TEXT,
            created_at TEXT NOT NULL,
            paired_at TEXT,
            ended_at TEXT
        )"""
    )
    db.execute("CREATE INDEX pairings_waiting ON pairings(status, task)")
    db.execute(
        """
        CREATE TABLE pair_turns (
            pairing_id INTEGER NOT NULL REFERENCES pairings(id) ON DELETE CASCADE,
            side TEXT NOT NULL,                -- agent | partner
            n INTEGER NOT NULL,
            text TEXT NOT NULL,
            said TEXT NOT NULL DEFAULT '{}',   -- how the person gave it, and who
            created_at TEXT NOT NULL,
            PRIMARY KEY (pairing_id, side, n)
        ) WITHOUT ROWID"""
    )
