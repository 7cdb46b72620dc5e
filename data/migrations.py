"""The store's schema, as append-only ``sqlite_utils.Migrations`` steps.

Never edit a step that has shipped: add ``m00N_...`` after the last one.
"""

from __future__ import annotations

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
