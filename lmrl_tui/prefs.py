"""What the new-episode dialog remembers: the last choices made for each task, kept for the app's
lifetime and in a small JSON file in the user's config folder (``$LMRL_CONFIG_DIR`` if set), so a
restart offers them again. The file is a convenience: one that cannot be read or written is
ignored (the choices then last as long as the app).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CONFIG_ENV = "LMRL_CONFIG_DIR"
FILE_NAME = "last-choices.json"
REMEMBERED = ("agent", "checkpoint", "partner", "partner_model", "options", "strict")
"""The dialog's fields kept per task (not the seed: a blank seed, a new random start, each time)."""


def default_prefs_path() -> Path:
    """``$LMRL_CONFIG_DIR/last-choices.json``, else the file in the user config directory."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser() / FILE_NAME
    from platformdirs import user_config_dir

    return Path(user_config_dir("lmrl-tui", appauthor=False)) / FILE_NAME


class LastChoices:
    """The last dialog choices per task, and the last player name (see the module docstring)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_prefs_path()
        self._data: dict[str, Any] = self._load()

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def for_task(self, task_id: str) -> dict[str, Any]:
        """The remembered fields of ``task_id`` (empty when it was never played)."""
        tasks = self._data.get("tasks")
        got = tasks.get(task_id) if isinstance(tasks, dict) else None
        return {k: v for k, v in got.items() if k in REMEMBERED} if isinstance(got, dict) else {}

    @property
    def player(self) -> str | None:
        player = self._data.get("player")
        return player if isinstance(player, str) and player.strip() else None

    def remember_player(self, player: str) -> None:
        """Keep ``player`` as the name the app starts with next time, then save it."""
        self._data["player"] = player
        self._save()

    def remember(self, task_id: str, fields: dict[str, Any], player: str | None = None) -> None:
        """Keep ``fields`` as the choices of ``task_id`` (and ``player``), then save them."""
        tasks = self._data.get("tasks")
        if not isinstance(tasks, dict):
            tasks = self._data["tasks"] = {}
        tasks[task_id] = {k: v for k, v in fields.items() if k in REMEMBERED}
        if player:
            self._data["player"] = player
        self._save()

    def _save(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._data, indent=1, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # a read-only home: remembered for this run only
