"""What the new-episode dialog remembers: the last choices made for each task, per store and per
player (a choice made on one database, or by one person, is never offered on another or to
another), kept for the app's lifetime and in a small JSON file in the user's config folder
(``$LMRL_CONFIG_DIR`` if set), so a restart offers them again. The file is a convenience: one that
cannot be read or written is ignored (the choices then last as long as the app). A served browser
session keeps its choices in memory only (``persist=False``): it starts from the campaign's flags
or clean defaults, never from the terminal user's choices.
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

    def __init__(self, path: Path | None = None, *, persist: bool = True) -> None:
        self.path = path if path is not None else default_prefs_path()
        self.persist = persist
        self._data: dict[str, Any] = self._load() if persist else {}

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _tasks(self, scope: str | None, create: bool = False) -> dict[str, Any] | None:
        """The remembered tasks of ``scope`` (a store and a player, see :func:`choice_scope`)."""
        scopes = self._data.get("scopes")
        if not isinstance(scopes, dict):
            if not create:
                return None
            scopes = self._data["scopes"] = {}
        key = scope or ""
        if not isinstance(scopes.get(key), dict):
            if not create:
                return None
            scopes[key] = {}
        return scopes[key]

    def for_task(self, task_id: str, scope: str | None = None) -> dict[str, Any]:
        """The remembered fields of ``task_id`` in ``scope`` (empty when it was never played there)."""
        tasks = self._tasks(scope)
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

    def remember(
        self,
        task_id: str,
        fields: dict[str, Any],
        player: str | None = None,
        scope: str | None = None,
    ) -> None:
        """Keep ``fields`` as the choices of ``task_id`` in ``scope`` (and ``player`` as the name
        to start with), then save them."""
        tasks = self._tasks(scope, create=True)
        assert tasks is not None
        tasks[task_id] = {k: v for k, v in fields.items() if k in REMEMBERED}
        if player:
            self._data["player"] = player
        self._save()

    def _save(self) -> None:
        if not self.persist:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._data, indent=1, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # a read-only home: remembered for this run only


def choice_scope(db_path: Path | str, player: str | None) -> str:
    """The key of the choices remembered for one store and one player."""
    try:
        where = str(Path(db_path).expanduser().resolve())
    except OSError:
        where = str(db_path)
    return f"{where}\n{player or ''}"
