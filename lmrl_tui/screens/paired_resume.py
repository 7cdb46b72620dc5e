"""Coming back to a paired episode whose two apps both stopped (:mod:`data.paired_resume`): the
first of its two people to resume it waits here for the other, as in the lobby; once the other
resumes it too, each plays their own side again, from where it stopped. Escape (or a campaign's
``pair_wait`` passing) asks what to do: leave it for later (it stays in progress, offered to both
again), mark it abandoned, or keep waiting. It never goes on in one app, hot-seat."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual.binding import Binding
from textual.widgets import Button

from data.pairing import CHECK_ALIVE_S, Pairing, PartnerLeft, cancel
from lmrl_tui.screens.leave import QuestionDialog
from lmrl_tui.screens.paired import PairingScreen
from lmrl_tui.workers import ErrorToast, show_error

if TYPE_CHECKING:
    from data.session import PlaySession
    from lmrl_tui.starting import PlayRequest


class ComeBackScreen(PairingScreen):
    """Waiting for the other person to come back to paired episode ``episode_id`` (module
    docstring). Dismissed with this person's side of it, resumed, or None (not now)."""

    WORKER_ERRORS = {"pairing": ErrorToast("Cannot resume", timeout=15, with_type=False)}

    def __init__(
        self, request: PlayRequest, player: str, holder: str, episode: dict[str, Any]
    ) -> None:
        super().__init__(request, player, holder)
        self.episode_id = int(episode["id"])
        self.other = (
            episode["partner_name"] if player == episode["player"] else episode["player"]
        ) or "the other person"
        self._checked = 0.0

    def heading(self) -> str:
        import envs

        title = envs.spec(self.request.task_id).title
        return f"[b]{escape(title)} with {escape(self.other)}: episode {self.episode_id}[/b]"

    def waiting_text(self) -> str:
        wait = self.request.pair_wait
        after = f" (for {wait:g} s)" if wait else ""
        return (
            f"You play the {self.request.pair} again, from where it stopped. "
            f"Waiting for {self.other} to come back to episode {self.episode_id} …{after}"
        )

    def ask(self) -> Pairing:
        from data.paired_resume import ask_to_resume

        return ask_to_resume(self.lmrl_app.store, self.episode_id, self.player, self.holder)

    def open(self, p: Pairing) -> PlaySession:
        from data.paired_resume import open_resumed

        return open_resumed(self.lmrl_app.store, p)

    def check(self, p: Pairing) -> None:
        if time.monotonic() - self._checked < CHECK_ALIVE_S:
            return
        self._checked = time.monotonic()
        ep = self.lmrl_app.store.episode(self.episode_id)
        status = ep["status"] if ep is not None else "gone"
        if status != "in_progress":  # marked abandoned meanwhile (by the other person)
            cancel(self.lmrl_app.store, p.id, self.holder)
            raise PartnerLeft(f"episode {self.episode_id} is {status} now: it cannot go on")

    def waited_long(self) -> None:
        self._ask_what_now(f"{self.other} has not come back within {self.request.pair_wait:g} s.")

    def stopped_waiting(self) -> None:
        self._ask_what_now(f"{self.other} has not come back yet.")

    def _ask_what_now(self, said: str) -> None:
        question = (
            f"{said} Episode {self.episode_id}:\n"
            "· Leave it for later (enter, l): it stays in progress; it is offered to you both "
            "again at the next start (u on the home screen), to go on when you both come back.\n"
            "· Mark it abandoned (a): kept, never used as data.\n"
            "· Keep waiting (escape, w)."
        )
        self.app.push_screen(NotBackDialog(question), self._answered)

    def _answered(self, choice: str | None) -> None:
        if choice == "later":
            self.notify(
                f"Episode {self.episode_id} stays in progress, for you both to go on later."
            )
            self.dismiss(None)
        elif choice == "abandon":
            from data.holds import EpisodeHeld
            from data.paired_resume import abandon

            try:
                abandon(self.lmrl_app.store, self.episode_id, self.holder, self.player)
            except EpisodeHeld as e:  # taken up meanwhile elsewhere: left alone
                show_error(self, e, ErrorToast("Not marked abandoned", with_type=False))
            else:
                self.notify(f"Episode {self.episode_id} marked abandoned.")
            self.dismiss(None)
        else:
            self.wait_again()


class NotBackDialog(QuestionDialog):
    """The other person has not come back: ``"later"`` (focused), ``"abandon"``, or None (keep
    waiting)."""

    BINDINGS = [
        Binding("l", "choose('later')", "Later", id="not-back.later"),
        Binding("a", "choose('abandon')", "Mark abandoned", id="not-back.abandon"),
        Binding("escape,w", "choose(None)", "Keep waiting", id="not-back.wait"),
    ]
    AUTO_FOCUS = "#later"

    def buttons(self) -> list[tuple[str, str, str]]:
        return [
            ("Leave it for later", "primary", "later"),
            ("Mark abandoned", "warning", "abandon"),
            ("Keep waiting", "default", "wait"),
        ]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "wait" else event.button.id)
