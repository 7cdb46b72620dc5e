"""The app's way into a paired episode (``--vs paired``, a campaign's ``pairing = true``): the
waiting screen, then the play screen of this person's side; the built-in side after the wait a
campaign sets; "play again" asks the lobby again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from data.session import PlaySession
    from data.store import Store
    from lmrl_tui.starting import PlayRequest


class PairedStarts:
    """A mixin of :class:`lmrl_tui.app.LmrlApp`."""

    store: Store
    player: str | None
    holder: str
    _played: list[PlaySession]
    pair_request: PlayRequest | None = None

    def open_pairing(self, request: PlayRequest) -> None:
        """Wait for the other person (:class:`~lmrl_tui.screens.paired.PairingScreen`)."""
        from lmrl_tui.screens.paired import PairingScreen

        self.pair_request = request
        screen = PairingScreen(request, self.player or "", self.holder)
        self.push_screen(screen, self._pairing_done)  # type: ignore[attr-defined]

    def _pairing_done(self, result: Any) -> None:
        from lmrl_tui.screens.dialogs import NewEpisodeDialog
        from lmrl_tui.screens.paired import PairedPlayScreen, paired_fields

        request = self.pair_request
        if result is None or request is None:
            return
        if result == "fallback":  # nobody came in time: the built-in side
            self.notify("Nobody came to pair with: playing the built-in side.", timeout=10)  # type: ignore[attr-defined]
            dialog = NewEpisodeDialog(
                request.task_id,
                player=self.player,
                seed=request.seed,
                remembered=paired_fields(request),
                start_now=True,
                campaign=request.campaign,
            )
            self.push_screen(dialog, self.episode_started)  # type: ignore[attr-defined]
            return
        session = result
        self._played.append(session)
        if session.pairing.records:  # the episode is this app's to hold (and write)
            self.hold(session)  # type: ignore[attr-defined]
        self.push_screen(PairedPlayScreen(session))  # type: ignore[attr-defined]

    def play_paired_again(self) -> bool:
        """After a paired episode's summary: back to the lobby (False: it was not paired)."""
        request = self.pair_request
        if request is None:
            return False
        self.pop_screen()  # type: ignore[attr-defined]
        self.open_pairing(request)
        return True
