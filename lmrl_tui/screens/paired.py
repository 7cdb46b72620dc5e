"""Two people in one episode (``--vs paired``; :mod:`data.pairing`): the waiting screen of the
lobby, and the play screen of a paired episode.

* :class:`PairingScreen`: asks the store for someone waiting to play the other side, else waits
  for them (escape: give up); with ``wait`` seconds set (a campaign's ``pair_wait``), the person
  then plays against the built-in partner (or the strong scripted player on the first side).
* :class:`PairedPlayScreen`: the play screen of either side. Turns go in order through the
  store; the watch controls (step, auto-play, take over) are not offered, since the other side
  is a person; a person who leaves ends the episode as abandoned for both.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from data.pairing import ANY_SIDE, Pairing, PartnerLeft, ask_to_pair, cancel, pairing
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.leave import ConfirmDialog
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.screens.watching import SPEEDS
from lmrl_tui.workers import ErrorToast

if TYPE_CHECKING:
    from data.paired_session import HostSession, MirrorSession
    from data.session import PlaySession
    from lmrl_tui.starting import PlayRequest

LOBBY_POLL_S = 0.1
NOT_PAIRED = frozenset(
    {"take_over", "step_agent", "toggle_auto", "faster", "slower", "toggle_values", "policy_map"}
)
"""The play screen's actions that make no sense when a person plays the other side."""


class PairingScreen(LmrlScreen, ModalScreen["PlaySession | str | None"]):
    """Waiting for someone to play the other side (see the module docstring). Dismissed with the
    paired session, ``"fallback"`` (play against the built-in side instead) or None (cancelled).
    A subclass waits for something else in the same way (:meth:`ask`, :meth:`open`,
    :meth:`check`, :meth:`waited_long`, :meth:`stopped_waiting`): the other person of a paired
    episode coming back to it (:mod:`lmrl_tui.screens.paired_resume`)."""

    BINDINGS = [Binding("escape", "give_up", "Cancel", id="pairing.cancel")]
    WORKER_ERRORS = {"pairing": ErrorToast("Cannot pair", timeout=15)}

    class Paired(Message, bubble=False):
        """Paired (the session of this person's side), or ``"fallback"``: nobody came in time."""

        def __init__(self, session: PlaySession | str) -> None:
            super().__init__()
            self.session = session

    def __init__(self, request: PlayRequest, player: str, holder: str) -> None:
        super().__init__()
        self.request = request
        self.player = player
        self.holder = holder
        self.pairing: Pairing | None = None
        self.started = time.monotonic()
        self._gave_up = False
        self._round = 0
        """Each wait's number: a wait begun again (:meth:`wait_again`) ends the one before."""
        self._opening = threading.Lock()
        self._opened = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.heading())
            yield Static(
                escape(self.waiting_text() + "\nescape: stop waiting"), id="pairing-status"
            )

    def heading(self) -> str:
        import envs

        return f"[b]{escape(envs.spec(self.request.task_id).title)} with another person[/b]"

    def waiting_text(self) -> str:
        import envs

        r = self.request
        side = r.pair or ANY_SIDE
        roles = envs.spec(r.task_id).roles
        wanted = "either side" if side == ANY_SIDE else f"the {side}"
        other = (
            "someone" if side == ANY_SIDE else f"someone to play the {roles[1 - roles.index(side)]}"
        )
        after = f" (after {r.pair_wait:g} s: the built-in side)" if r.pair_wait else ""
        return f"You play {wanted}. Waiting for {other} …{after}"

    def on_mount(self) -> None:
        self._look()

    # -- what is waited for (in the worker's thread) ------------------------------------------
    def ask(self) -> Pairing:
        """Ask the lobby (paired at once, or waiting)."""
        r = self.request
        return ask_to_pair(self.lmrl_app.store, r.task_id, r.pair or ANY_SIDE, self.player,
                           self.holder, options=r.options, seed=r.seed, campaign=r.campaign)  # fmt: skip

    def open(self, p: Pairing) -> PlaySession:
        """The session of this person's side, once paired."""
        from data.paired_session import open_paired

        return open_paired(self.lmrl_app.store, p, self.player)

    def check(self, p: Pairing) -> None:
        """Raise (the failure is shown) when the wait cannot go on."""

    @work(thread=True, exclusive=True, group="pairing", exit_on_error=False)
    def _look(self, p: Pairing | None = None) -> None:
        """Ask the lobby (unless ``p``: asked already), then wait (polling the store) until
        paired and the episode is open."""
        store = self.lmrl_app.store
        r = self.request
        this_round = self._round
        p = self.ask() if p is None else p
        self.pairing = p
        while not self._gave_up and this_round == self._round:
            p = pairing(store, p.id, self.holder)
            self.pairing = p
            if p.status == "paired" and (p.records or p.episode_id is not None):
                with self._opening:  # one session, even with a wait begun again meanwhile
                    if self._opened or this_round != self._round:
                        return
                    self._opened = True
                self.post_message(self.Paired(self.open(p)))
                return
            if p.status in ("cancelled", "ended"):
                if self._gave_up:
                    return
                raise PartnerLeft("the other person left before the episode began")
            self.check(p)
            if (
                r.pair_wait
                and p.status == "waiting"
                and time.monotonic() - self.started > r.pair_wait
            ):
                if cancel(store, p.id, self.holder).status == "cancelled":
                    self.post_message(self.Paired("fallback"))
                    return
            time.sleep(LOBBY_POLL_S)

    # -- the answers (on the app's thread) ----------------------------------------------------
    def on_pairing_screen_paired(self, message: PairingScreen.Paired) -> None:
        if message.session == "fallback":
            self._gave_up = True
            self.waited_long()
        else:
            self.dismiss(message.session)

    def waited_long(self) -> None:
        """Nobody came within the wait (the request is cancelled): the built-in side plays."""
        self.dismiss("fallback")

    def action_give_up(self) -> None:
        if self.pairing is None:  # the lobby is being asked: give up once it has answered
            self.set_timer(LOBBY_POLL_S, self.action_give_up)
            return
        self._gave_up = True
        if self.pairing is not None and self.pairing.status == "waiting":
            p = cancel(self.lmrl_app.store, self.pairing.id, self.holder)
            if p.status != "cancelled":
                self._gave_up = False  # paired meanwhile: the episode opens
                self._round += 1
                self._look(p)
                return
        self.stopped_waiting()

    def stopped_waiting(self) -> None:
        """The person stopped waiting (the request is cancelled)."""
        self.dismiss(None)

    def wait_again(self) -> None:
        """Ask again and wait anew (after :meth:`waited_long` or :meth:`stopped_waiting`)."""
        self._gave_up = False
        self._round += 1
        self.started = time.monotonic()
        self.pairing = None
        self._look()

    def worker_failed(self, group: str, error: BaseException) -> None:
        self.dismiss(None)


class PairedPlayScreen(PlayScreen):
    """A paired episode, on either side (see the module docstring)."""

    BINDINGS = [Binding("escape", "leave", "Leave", id="play.leave")]
    WORKER_ERRORS = {
        **PlayScreen.WORKER_ERRORS,
        "partner-check": ErrorToast("Could not look for the other person", timeout=10),
    }

    class PartnerLeftNow(Message, bubble=False):
        def __init__(self, who: str) -> None:
            super().__init__()
            self.who = who

    def __init__(self, session: HostSession | MirrorSession) -> None:
        super().__init__(session)
        self.paired = session
        mine = frozenset({session.pairing.my_side})
        self.human_roles = self.view.human_roles = mine  # the other side is not at this screen
        self.speed_index = len(SPEEDS) - 1  # the other person's move shows as soon as it comes
        self.auto = True

    def on_mount(self) -> None:  # Textual runs PlayScreen's on_mount too, after this one
        self.call_after_refresh(self._say_with_whom)
        self.set_interval(0.5, self._check_partner)

    def _say_with_whom(self) -> None:
        other = self.paired.pairing.other
        self.sub_title = f"{self.sub_title or ''} · with {other}"

    def watch_status(self) -> str:
        if self.thinking:  # the other person's move is awaited, not an agent's
            return f"waiting for {escape(self.paired.pairing.other or 'the other person')} …"
        return ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in NOT_PAIRED:
            return False
        return super().check_action(action, parameters)

    @work(thread=True, exclusive=True, group="partner-check", exit_on_error=False)
    def _check_partner(self) -> None:
        who = self.paired.partner_gone()
        if who is not None:
            self.post_message(self.PartnerLeftNow(who))

    def on_paired_play_screen_partner_left_now(
        self, message: PairedPlayScreen.PartnerLeftNow
    ) -> None:
        who = message.who
        if not self.is_attached:
            return
        self.notify(
            f"{who} left: the episode ended, marked abandoned for both (every step played is kept).",
            severity="warning",
            timeout=15,
        )
        if self.app.screen is self:
            self.app.pop_screen()

    def worker_failed(self, group: str, error: BaseException) -> None:
        if isinstance(error, PartnerLeft):
            self._check_partner()
            return
        super().worker_failed(group, error)

    def action_leave(self) -> None:
        if self.session.done:
            self._end_and_pop()
        else:
            self.ask_to_leave(quitting=False)

    def ask_to_leave(self, *, quitting: bool) -> None:
        s = self.session
        question = (
            f"Episode {s.episode_id} is played with {self.paired.pairing.other}: leaving ends it for both "
            "of you, marked abandoned (every step played so far is kept).\n"
            "· Leave (l).\n· Stay (escape, s)."
        )
        self.app.push_screen(
            LeavePairedDialog(question), lambda choice: self._leave_answered(choice, quitting)
        )

    def _leave_answered(self, choice: Any, quitting: bool = False) -> None:
        if not choice:
            return
        if not self.session.done:  # a paired episode cannot wait for one of its people
            self._stop_episode()
            self.notify(f"Episode {self.session.episode_id} ended, marked abandoned for both.")
        if quitting:
            self.app.exit()
        elif self.app.screen is self:
            self.app.pop_screen()


class LeavePairedDialog(ConfirmDialog):
    """Leave a paired episode (it ends for both: True) or stay (False)."""

    BINDINGS = [
        Binding("l", "choose(True)", "Leave", id="leave-paired.leave"),
        Binding("escape,s", "choose(False)", "Stay", id="leave-paired.stay"),
    ]
    YES = ("Leave", "warning", "yes")
    NO = ("Stay", "no")
    AUTO_FOCUS = "#no"

    def on_button_pressed(self, event: Any) -> None:
        self.dismiss(event.button.id == "yes")


def paired_fields(request: Any) -> dict[str, Any]:
    """The new-episode fields of the fallback: the built-in partner for the first side, the
    strong scripted player when the person asked for the other side."""
    import envs
    from lmrl_tui.play_fields import play_fields

    roles = envs.spec(request.task_id).roles
    side = request.pair if request.pair in roles else roles[0]
    return play_fields(request.task_id, side, None, list((request.options or {}).items()))
