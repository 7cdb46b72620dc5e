"""The Textual app and its factory (used by the ``lmrl`` command and by the tests).

The app owns the store and the screen stack. Screens read what they need through
:class:`~lmrl_tui.screens.base.LmrlHost` and post :mod:`lmrl_tui.messages` to change screens;
workers report their results as messages and their failures through :mod:`lmrl_tui.workers`.
Styles live in ``styles/*.tcss`` (loaded here, for every screen and task view).
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.binding import Binding

from data.holds import new_holder
from data.store import Store
from lmrl_tui.campaigning import CampaignStarts
from lmrl_tui.commands import LmrlCommands
from lmrl_tui.garbage import FrozenGarbage
from lmrl_tui.messages import (
    AboutRequested,
    AnnotatorsRequested,
    BrowseRequested,
    NewEpisodeRequested,
    PlayAgainRequested,
    RunsRequested,
    SessionNoteRequested,
)
from lmrl_tui.pairing_starts import PairedStarts
from lmrl_tui.people import UnfinishedEpisodes
from lmrl_tui.prefs import LastChoices, choice_scope
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.player import PlayerChosen, PlayerPrompt, SessionNoteDialog
from lmrl_tui.workers import ErrorToast, ReportsWorkerErrors, show_error

if TYPE_CHECKING:
    from data.session import PlaySession
    from envs.core import Agent
    from lmrl_tui.screens.episode_form import StartedEpisode
    from lmrl_tui.screens.play import PlayScreen
    from lmrl_tui.starting import PlayRequest

# What only a played episode, a dialog or the help screen needs is imported where it is used, so
# that the home screen is drawn sooner (bench/bench_spine.py --start-only).

STYLES = Path(__file__).parent / "styles"
CANNOT_START = ErrorToast("Cannot start", timeout=10, with_type=False)
ASK_PLAYER_ENV = "LMRL_ASK_PLAYER"
"""Set to 1 (by ``lmrl serve``, one app per browser session): ask who plays at every start, and
keep the name out of the shared prefs file."""


class LmrlApp(
    UnfinishedEpisodes, CampaignStarts, PairedStarts, FrozenGarbage, ReportsWorkerErrors, App[None]
):
    """The lmrl-tui app on one store (see the module docstring)."""

    TITLE = "lmrl-tui"
    CSS_PATH = [STYLES / "screens.tcss", STYLES / "views.tcss"]
    COMMANDS = App.COMMANDS | {LmrlCommands}
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True)]

    def __init__(
        self,
        store: Store,
        *,
        player: str | None = None,
        ask_player: bool = False,
        start: PlayRequest | None = None,
    ) -> None:
        """``player``: who plays (``--player``); else the name remembered from last time. With
        ``ask_player`` (the ``lmrl`` command; tests leave it off) a start that knows no name
        asks for one; with ``$LMRL_ASK_PLAYER=1`` every start does and nothing is remembered.
        ``start``: open this configured episode at once (``lmrl play``, ``lmrl serve --task``)."""
        super().__init__()
        self.store = store
        self.db_path: Path = store.path
        self._last_id_at_start = store.last_episode_id()
        self.served = os.environ.get(ASK_PLAYER_ENV) == "1"
        """A served browser session: the player name is asked each time and never saved."""
        self.choices = LastChoices(persist=not self.served)
        """The new-episode dialog's last choices per task, store and player (kept across restarts,
        except in a served session)."""
        self.start_request = start
        self.load_campaign()
        self.player = player or (None if self.served else self.choices.player)
        self.asks_player = self.player is None and (ask_player or self.served)
        self.session_note: str | None = None
        """The note the person wrote about this session (kept with each episode played in it)."""
        self._played: list[PlaySession] = []
        self.kept_here: set[int] = set()
        """Episodes left unfinished in this app to go on with later (offered by u on the home screen)."""
        self.holder = new_holder()
        """This app's id in the store's episode holds: an episode shown here is offered to no
        other app (:mod:`data.holds`)."""

    def on_mount(self) -> None:
        if self.freeze_after_start:
            self.call_after_refresh(gc.freeze)
        if self.is_headless:
            # Tests and snapshots: the same colours whatever $TEXTUAL_THEME says (the screens
            # also keep the text cursor from blinking, see LmrlScreen.set_focus).
            self.theme = "textual-dark"
        self.push_screen(HomeScreen())
        if self.asks_player:  # the unfinished episodes are looked for once the name is known
            self.push_screen(PlayerPrompt(remembered=not self.served), self._player_chosen)
        else:
            self._find_unfinished()

    def _player_chosen(self, chosen: PlayerChosen | None) -> None:
        if chosen is None:
            return
        from data.annotators import register_player

        self.player = chosen.name
        try:
            register_player(self.store, chosen.name)
        except Exception as e:  # noqa: BLE001 - the name still holds for this run
            show_error(self, e, ErrorToast("Could not save the player name", timeout=10))
        if not self.served:
            self.choices.remember_player(chosen.name)
        if chosen.note:
            self.set_session_note(chosen.note)
        self._find_unfinished()

    # -- session note -------------------------------------------------------------------------
    def on_session_note_requested(self, message: SessionNoteRequested) -> None:
        self.push_screen(SessionNoteDialog(self.session_note), self._note_written)

    def _note_written(self, note: str | None) -> None:
        if note is not None:  # None: cancelled; "": cleared
            self.set_session_note(note)
            self.notify("Session note saved." if note else "Session note cleared.")

    def set_session_note(self, note: str | None) -> None:
        """Keep ``note`` (None or blank: none) with every episode played in this session so far
        and from now on."""
        from data.annotators import note_session

        self.session_note = note.strip() if note and note.strip() else None
        try:
            for session in self._played:
                note_session(session, self.session_note)
        except Exception as e:  # noqa: BLE001 - e.g. the store is locked for too long
            show_error(self, e, ErrorToast("Could not save the session note", timeout=10))

    def _played_here(self, session: PlaySession) -> PlayScreen:
        """The play screen of ``session``, which joins this session's episodes (and its note)."""
        from data.annotators import note_session
        from lmrl_tui.screens.play import PlayScreen

        self._played.append(session)
        self.hold(session)
        if self.session_note:
            try:
                note_session(session, self.session_note)
            except Exception as e:  # noqa: BLE001
                show_error(self, e, ErrorToast("Could not save the session note", timeout=10))
        return PlayScreen(session)

    async def action_quit(self) -> None:
        """ctrl+q: with an unfinished episode that has steps on screen, ask first whether to keep
        it to resume later or abandon it (or stay); else quit at once."""
        from lmrl_tui.screens.leave import LeaveDialog
        from lmrl_tui.screens.play import PlayScreen

        if isinstance(self.screen, LeaveDialog):
            return  # already asking
        playing = [
            s for s in self.screen_stack if isinstance(s, PlayScreen) and s.has_unfinished_steps
        ]
        if playing:
            playing[-1].ask_to_leave(quitting=True)
            return
        self.exit()

    # -- requests from the screens ------------------------------------------------------------
    def on_new_episode_requested(self, message: NewEpisodeRequested) -> None:
        self.new_episode(message.task_id, message.seed, message.checkpoint, player=message.player)

    def on_play_again_requested(self, message: PlayAgainRequested) -> None:
        if message.session.paired and self.campaign is None:
            self.play_paired_again()
            return
        if message.session.campaign is not None and self.campaign is not None:
            self.pop_screen()  # the campaign's next episode for this person, not the same again
            self.open_requested()
            return
        self.restart_session(message.session, message.seed)

    def on_browse_requested(self, message: BrowseRequested) -> None:
        self.action_browse()

    def on_runs_requested(self, message: RunsRequested) -> None:
        self.action_runs()

    def on_about_requested(self, message: AboutRequested) -> None:
        self.action_about()

    def on_annotators_requested(self, message: AnnotatorsRequested) -> None:
        from lmrl_tui.screens.annotators import AnnotatorsScreen

        self.push_screen(AnnotatorsScreen())

    # -- episodes -----------------------------------------------------------------------------
    def new_episode(
        self,
        task_id: str,
        seed: int | None = None,
        checkpoint: str | None = None,
        *,
        player: str | None = None,
    ) -> None:
        """Open the new-episode dialog (``player``: the name to pre-fill, by default the last one),
        with the choices made for ``task_id`` last time."""
        from lmrl_tui.screens.dialogs import NewEpisodeDialog

        dialog = NewEpisodeDialog(
            task_id,
            player=self.player if player is None else player,
            seed=seed,
            checkpoint=checkpoint,
            remembered=self.choices.for_task(task_id, self.choice_scope),
        )
        self.push_screen(dialog, self.episode_started)

    @property
    def choice_scope(self) -> str:
        """Whose remembered choices the dialog offers: this store's and this player's."""
        return choice_scope(self.db_path, self.player)

    def open_requested(self) -> None:
        """Open the configured episode asked for at start (``lmrl play``): its dialog starts at
        once, and explains in place what does not work."""
        from lmrl_tui.screens.dialogs import NewEpisodeDialog

        request, self.start_request = self.start_request, None
        request = request or self.next_campaign_request()
        if request is None:
            return
        if request.pair is not None:  # with another person: the lobby first
            self.open_pairing(request)
            return
        dialog = NewEpisodeDialog(
            request.task_id,
            player=self.player,
            seed=request.seed,
            remembered=request.fields,
            start_now=True,
            campaign=request.campaign,
        )
        self.push_screen(dialog, self.episode_started)

    def episode_started(self, started: StartedEpisode | None) -> None:
        """The dialog started an episode: remember its choices and show it."""
        if started is None:
            return
        self.player = started.choice.player
        self.choices.remember(
            started.choice.task_id,
            started.fields,
            None if self.served else self.player,
            self.choice_scope,
        )
        self._show_session(started.session)

    def _show_session(self, session: PlaySession | None) -> None:
        if session is not None:
            self.push_screen(self._played_here(session))

    def start_session(
        self,
        task_id: str,
        agent: Agent | None,
        partner: Agent | None,
        seed: int | None,
        player: str | None,
        strict: bool = False,
        agent_choice: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> PlayScreen | None:
        """Start an episode and show it; returns the play screen (None if it could not start).

        ``options`` are the task's; by default a checkpoint agent's own (the game it learnt)."""
        from lmrl_tui.starting import open_session

        try:
            session = open_session(
                self.store, task_id, agent, partner, seed, player, strict, agent_choice, options
            )
        except Exception as e:  # noqa: BLE001 - e.g. Stockfish missing: one clear message
            show_error(self, e, CANNOT_START)
            return None
        screen = self._played_here(session)
        self.push_screen(screen)
        return screen

    def restart_session(self, old: PlaySession, seed: int | None) -> None:
        """Play again: same task, same sides, a new (or the same) seed, replacing the old screen."""
        from envs.players.agents import MODEL_KINDS, make_agent
        from envs.players.session import HumanAgent

        self.pop_screen()
        agent = old.agent
        # A scripted policy is made again; a model (a checkpoint: seconds to load) plays on as it
        # is, reset by the new session, so the event loop never waits for a load here.
        if (
            agent is not None
            and old.agent_choice is not None
            and getattr(agent, "kind", None) not in MODEL_KINDS
        ):
            agent = make_agent(old.task_id, old.agent_choice)
        partner = (
            HumanAgent(old.partner.name, old.partner.role)
            if isinstance(old.partner, HumanAgent)
            else None
        )
        self.start_session(
            old.task_id,
            agent,
            partner,
            seed,
            old.player,
            old.strict,
            old.agent_choice,
            dict(old.options),
        )

    # -- other screens ------------------------------------------------------------------------
    def action_about(self) -> None:
        from lmrl_tui.screens.info import HelpScreen, about_markdown

        self.push_screen(HelpScreen(about_markdown(self.db_path)))

    def action_runs(self) -> None:
        from lmrl_tui.screens.runs import RunsScreen

        self.push_screen(RunsScreen())

    def action_browse(self) -> None:
        from lmrl_tui.screens.browse import BrowseScreen

        self.push_screen(BrowseScreen())


def make_app(
    db: str | Path | Store | None = None,
    *,
    player: str | None = None,
    ask_player: bool = False,
    start: PlayRequest | None = None,
) -> LmrlApp:
    """Build the app on a store (a path, an open Store, or the default database); ``ask_player``:
    ask who plays when no name is known (the ``lmrl`` command; see :class:`LmrlApp`); ``start``:
    open that configured episode at once (``lmrl play``)."""
    store = db if isinstance(db, Store) else Store(db)
    return LmrlApp(store, player=player, ask_player=ask_player, start=start)
