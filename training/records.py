"""Moved to :mod:`data.runs` (data/ owns every SQL statement).

Kept only so that ``from training.records import checkpoint_id_for`` in
``training/offline/cli.py`` keeps working while that file is rewritten on another branch; import
from ``data.runs`` instead. Remove this module once nothing imports it.
"""

from data.runs import add_checkpoint, checkpoint_id_for, finish_run, start_run

__all__ = ["add_checkpoint", "checkpoint_id_for", "finish_run", "start_run"]
