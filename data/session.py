"""A recorded play session: an :class:`envs.core.session.EpisodeSession` recorded into the store
by a :class:`data.recorder.EpisodeRecorder`, every step committed as it happens (nothing played
is lost if the app dies). The game logic lives in ``envs``, the writing in the recorder; the app
and anything else that plays with people use this.
"""

from __future__ import annotations

from typing import Any

from data.recorder import EpisodeRecorder
from data.store import Store
from envs.core import Agent
from envs.core.session import EpisodeSession


class PlaySession(EpisodeSession):
    """One recorded episode of ``task_id`` (``agent`` None = a human at the keyboard)."""

    def __init__(
        self,
        store: Store,
        task_id: str,
        agent: Agent | None = None,
        partner: Agent | None = None,
        player: str | None = None,
        seed: int | None = None,
        options: dict[str, Any] | None = None,
        agent_choice: str | None = None,
        strict: bool = False,
    ) -> None:
        self.store = store
        self.recorder = EpisodeRecorder(store)
        super().__init__(
            task_id, agent=agent, partner=partner, player=player, seed=seed,
            options=dict(options or {}), agent_choice=agent_choice, strict=strict,
            listener=self.recorder,
        )  # fmt: skip

    @property
    def episode_id(self) -> int | None:
        """The store's id of this episode (None until :meth:`start`)."""
        return self.recorder.episode_id
