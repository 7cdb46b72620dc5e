"""Requests that screens post up to the app ("attributes down, messages up").

A screen never calls the app's own methods: it posts one of these and :class:`~lmrl_tui.app.LmrlApp`
handles it. They bubble from a screen to the app; a screen that is going away (a dismissed dialog)
posts to ``self.app`` directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from data.session import PlaySession


class NewEpisodeRequested(Message):
    """Open the new-episode dialog for ``task_id`` (a checkpoint pre-filled to watch it play)."""

    def __init__(
        self,
        task_id: str,
        *,
        seed: int | None = None,
        checkpoint: str | None = None,
        player: str | None = None,
    ) -> None:
        super().__init__()
        self.task_id = task_id
        self.seed = seed
        self.checkpoint = checkpoint
        self.player = player
        """The name to pre-fill; None: the app's current player."""


class PlayAgainRequested(Message):
    """Replace the finished episode's screen by a new episode with the same sides."""

    def __init__(self, session: PlaySession, seed: int | None) -> None:
        super().__init__()
        self.session = session
        self.seed = seed
        """None: a new random seed; the old one replays the same start."""


class BrowseRequested(Message):
    """Show the stored episodes."""


class RunsRequested(Message):
    """Show the training runs."""


class AboutRequested(Message):
    """Show the help about the app (keys, the database in use)."""


class AnnotatorsRequested(Message):
    """Show the per-annotator figures (who played and labelled what)."""


class SessionNoteRequested(Message):
    """Let the person write a note about this session (kept with the episodes played in it)."""
