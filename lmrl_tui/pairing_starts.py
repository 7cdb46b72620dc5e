"""The app's way into a paired episode (``--vs paired``, a campaign's ``pairing = true``): the
waiting screen, then the play screen of this person's side; the built-in side after the wait a
campaign sets; "play again" asks the lobby again. A paired episode whose two apps stopped is
resumed the same way: waiting for the other person to come back to it, then each on their side."""

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
    start_request: PlayRequest | None
    campaign_line: str | None
    _played: list[PlaySession]
    pair_request: PlayRequest | None = None

    def open_pairing(self, request: PlayRequest) -> None:
        """Wait for the other person (:class:`~lmrl_tui.screens.paired.PairingScreen`)."""
        from lmrl_tui.screens.paired import PairingScreen

        self.pair_request = request
        screen = PairingScreen(request, self.player or "", self.holder)
        self.push_screen(screen, self._pairing_done)  # type: ignore[attr-defined]

    def open_pair_resume(self, episode: dict[str, Any]) -> None:
        """Resume the paired ``episode`` (a row): wait for its other person to come back to it
        (:class:`~lmrl_tui.screens.paired_resume.ComeBackScreen`), then play this person's side
        from where it stopped; if they do not come, what was asked for at start, if anything."""
        from dataclasses import replace

        from data.paired_resume import come_back_wait, sides
        from lmrl_tui.screens.paired_resume import ComeBackScreen
        from lmrl_tui.starting import PlayRequest

        player = self.player or ""
        try:
            side, _ = sides(episode, player)
            wait = come_back_wait(self.store, episode)
        except Exception as e:  # noqa: BLE001 - e.g. not theirs: one clear message
            from lmrl_tui.workers import ErrorToast, show_error

            show_error(self, e, ErrorToast("Cannot resume", timeout=15, with_type=False))  # type: ignore[arg-type]
            return
        campaign = (episode["campaign"], episode["assignment"]) if episode.get("campaign") else None
        options = episode["options"] if isinstance(episode.get("options"), dict) else {}
        request = PlayRequest(episode["task"], episode["seed"], {}, campaign=campaign, pair=side,
                              pair_wait=wait, options=dict(options))  # fmt: skip

        def come_back_done(result: Any) -> None:
            if result is None:  # not now: what was asked for at start, if anything
                self.open_requested()  # type: ignore[attr-defined]
                return
            self.start_request = None
            if campaign is not None:  # the header says where they stand, as when handed out
                self.campaign_line = self.resumed_campaign_line(result)  # type: ignore[attr-defined]
            # play again: a new episode, the same side and options
            self.pair_request = replace(request, seed=None, options=dict(result.pairing.options))
            self._pairing_done(result)

        screen = ComeBackScreen(request, player, self.holder, episode)
        self.push_screen(screen, come_back_done)  # type: ignore[attr-defined]

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
