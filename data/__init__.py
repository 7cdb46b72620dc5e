"""The episode store (SQLite via sqlite-utils) and every SQL statement of the project.

``store`` (opening, migrations, episodes and steps), ``connection`` (one connection per thread),
``records`` (what is written), ``recorder`` (sessions step by step, batches), ``generate`` (bulk
play), ``runs`` (training runs, checkpoints, evaluations), ``stats`` (aggregates), ``datasets``
(dataset queries), ``composition`` (what a dataset holds), ``formats`` and ``codecs``
(import/export), ``hf_export`` and ``minari_export`` (dataset folders), ``merge`` (stores from
several hosts into one). Other packages call these; they never run SQL themselves. This package
never imports textual or torch.
"""

from data.store import EpisodeRecord, StepRecord, Store, StoreError, Who, default_db_path

__all__ = ["EpisodeRecord", "StepRecord", "Store", "StoreError", "Who", "default_db_path"]
