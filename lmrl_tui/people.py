"""The app's side of keeping people apart on one store: which unfinished episodes this app
offers (its person's own, none another app is playing: :mod:`data.holds`), and the holds it keeps
on the episodes it shows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message

from lmrl_tui.workers import ErrorToast, show_error

if TYPE_CHECKING:
    from data.campaigns import Campaign
    from data.session import PlaySession
    from data.store import Store
    from lmrl_tui.screens.leave import PairedComeBack
    from lmrl_tui.starting import PlayRequest


class UnfinishedEpisodes:
    """A mixin of :class:`lmrl_tui.app.LmrlApp` (a Textual App): the unfinished-episodes offer
    and the episode holds."""

    WORKER_ERRORS = {"unfinished": ErrorToast("Could not look for unfinished episodes", timeout=30)}

    store: Store
    db_path: Path
    player: str | None
    served: bool
    holder: str
    kept_here: set[int]
    start_request: PlayRequest | None
    campaign: Campaign | None
    campaign_line: str | None
    _last_id_at_start: int

    class UnfinishedFound(Message, bubble=False):
        """Episodes left ``in_progress`` by an app that stopped (found by a worker at start)."""

        def __init__(self, episodes: list[dict[str, Any]]) -> None:
            super().__init__()
            self.episodes = episodes

    def hold(self, session: PlaySession) -> None:
        """Hold ``session``'s episode for this app: no other app offers it while it is shown."""
        from data.holds import EpisodeHeld, hold

        if session.episode_id is None:
            return
        try:
            hold(self.store, session.episode_id, self.holder, session.player)
        except EpisodeHeld as e:  # taken meanwhile: the dialog checked just before
            show_error(self, e, ErrorToast("Held elsewhere", timeout=10, with_type=False))
        except Exception as e:  # noqa: BLE001 - e.g. the store is locked for too long
            show_error(self, e, ErrorToast("Could not mark the episode as played here", timeout=10))

    def let_go(self, episode_id: int | None = None) -> None:
        """Release this app's hold of ``episode_id`` (None: of every episode)."""
        from data.holds import release

        try:
            release(self.store, self.holder, None if episode_id is None else [episode_id])
        except Exception:  # noqa: BLE001, S110 - a hold of a process that ended counts for nothing
            pass

    def on_unmount(self) -> None:
        self.let_go()

    def action_unfinished(self) -> None:
        """Offer the unfinished episodes: those an earlier app left and those kept in this one."""
        self._find_unfinished(say_none=True)

    @work(thread=True, exclusive=True, group="unfinished", exit_on_error=False)
    def _find_unfinished(self, say_none: bool = False) -> None:
        # Only those left by an earlier app or kept here: an episode this app has begun meanwhile
        # is in progress because it is being played, here.
        # Of those, only this person's (a local app that knows no name: its person's), and none
        # that another app (a browser, a terminal) is playing now.
        from data.holds import offered_to
        from data.paired_resume import paired_ids

        episodes = offered_to(
            (
                e
                for e in self.store.unfinished_episodes()
                if e["id"] <= self._last_id_at_start or e["id"] in self.kept_here
            ),
            self.store,
            self.holder,
            self.player,
            anyone=not self.served,
        )
        # A paired episode goes on with its two people, each on their side: an app that knows
        # no name cannot tell which side is its person's (nor whether it is one of the two).
        paired = paired_ids(self.store, [e["id"] for e in episodes])
        episodes = [
            {**e, "paired": e["id"] in paired}
            for e in episodes
            if self.player or e["id"] not in paired
        ]
        if episodes or say_none or self.start_request is not None or self.campaign is not None:
            self.post_message(self.UnfinishedFound(episodes))

    def on_unfinished_episodes_unfinished_found(
        self, message: UnfinishedEpisodes.UnfinishedFound
    ) -> None:
        from lmrl_tui.screens.leave import UnfinishedDialog

        if not message.episodes:
            if self.start_request is not None or self.campaign is not None:
                self.open_requested()
            else:
                self.notify("No unfinished episodes.")
            return
        self.push_screen(UnfinishedDialog(message.episodes), self._unfinished_answered)

    def _unfinished_answered(self, session: PlaySession | PairedComeBack | None) -> None:
        """A resumed episode shows (a paired one once the other person is back: the lobby
        first); else the configured episode asked for at start, if any."""
        from lmrl_tui.screens.leave import PairedComeBack

        if isinstance(session, PairedComeBack):
            self.open_pair_resume(session.episode)  # type: ignore[attr-defined]
            return
        if session is not None:
            self.start_request = None
            if session.campaign is not None:  # the header says where they stand
                self.campaign_line = self.resumed_campaign_line(session)  # type: ignore[attr-defined]
            self._show_session(session)
        else:
            self.open_requested()
