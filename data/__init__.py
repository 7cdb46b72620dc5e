"""The episode store (SQLite via sqlite-utils): schema, recording, dataset queries, import/export.

This package never imports textual or torch.
"""

from data.store import EpisodeRecord, StepRecord, Store, StoreError, Who, default_db_path

__all__ = ["EpisodeRecord", "StepRecord", "Store", "StoreError", "Who", "default_db_path"]
