"""The Textual app and its factory (used by the ``lmrl`` command and by the tests).

The app owns the store and the screen stack. Screens read what they need through
:class:`~lmrl_tui.screens.base.LmrlHost` and post :mod:`lmrl_tui.messages` to change screens;
workers report their results as messages and their failures through :mod:`lmrl_tui.workers`.
Styles live in ``styles/*.tcss`` (loaded here, for every screen and task view).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message

from data.session import PlaySession
from data.store import Store
from envs.core import Agent
from envs.core.agents import MODEL_KINDS, make_agent
from envs.core.session import HumanAgent
from lmrl_tui.commands import LmrlCommands
from lmrl_tui.messages import (
    AboutRequested,
    BrowseRequested,
    NewEpisodeRequested,
    PlayAgainRequested,
    RunsRequested,
)
from lmrl_tui.prefs import LastChoices
from lmrl_tui.screens.dialogs import NewEpisodeDialog, StartedEpisode
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.info import HelpScreen, about_markdown
from lmrl_tui.starting import open_session
from lmrl_tui.workers import ErrorToast, ReportsWorkerErrors, show_error

if TYPE_CHECKING:
    from lmrl_tui.screens.play import PlayScreen

STYLES = Path(__file__).parent / "styles"
CANNOT_START = ErrorToast("Cannot start", timeout=10, with_type=False)


class LmrlApp(ReportsWorkerErrors, App[None]):
    """The lmrl-tui app on one store (see the module docstring)."""

    TITLE = "lmrl-tui"
    CSS_PATH = [STYLES / "screens.tcss", STYLES / "views.tcss"]
    COMMANDS = App.COMMANDS | {LmrlCommands}
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True)]
    WORKER_ERRORS = {"unfinished": ErrorToast("Could not look for unfinished episodes", timeout=30)}

    class UnfinishedFound(Message, bubble=False):
        """Episodes left ``in_progress`` by an app that stopped (found by a worker at start)."""

        def __init__(self, episodes: list[dict[str, Any]]) -> None:
            super().__init__()
            self.episodes = episodes

    def __init__(self, store: Store, *, player: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.db_path: Path = store.path
        self._last_id_at_start = store.last_episode_id()
        self.choices = LastChoices()
        """The new-episode dialog's last choices per task (kept across restarts)."""
        self.player = player or self.choices.player

    def on_mount(self) -> None:
        if self.is_headless:
            # Tests and snapshots: the same colours whatever $TEXTUAL_THEME says (the screens
            # also keep the text cursor from blinking, see LmrlScreen.set_focus).
            self.theme = "textual-dark"
        self.push_screen(HomeScreen())
        self._find_unfinished()

    @work(thread=True, exclusive=True, group="unfinished", exit_on_error=False)
    def _find_unfinished(self) -> None:
        # Only those left by an earlier app: an episode this app has begun meanwhile is in progress
        # because it is being played, here.
        episodes = self.store.unfinished_episodes(up_to_id=self._last_id_at_start)
        if episodes:
            self.post_message(self.UnfinishedFound(episodes))

    def on_lmrl_app_unfinished_found(self, message: LmrlApp.UnfinishedFound) -> None:
        from lmrl_tui.screens.leave import UnfinishedDialog

        self.push_screen(UnfinishedDialog(message.episodes), self._show_session)

    # -- requests from the screens ------------------------------------------------------------
    def on_new_episode_requested(self, message: NewEpisodeRequested) -> None:
        self.new_episode(message.task_id, message.seed, message.checkpoint, player=message.player)

    def on_play_again_requested(self, message: PlayAgainRequested) -> None:
        self.restart_session(message.session, message.seed)

    def on_browse_requested(self, message: BrowseRequested) -> None:
        self.action_browse()

    def on_runs_requested(self, message: RunsRequested) -> None:
        self.action_runs()

    def on_about_requested(self, message: AboutRequested) -> None:
        self.action_about()

    # -- episodes -----------------------------------------------------------------------------
    def new_episode(
        self, task_id: str, seed: int | None = None, checkpoint: str | None = None, *, player: str | None = None
    ) -> None:
        """Open the new-episode dialog (``player``: the name to pre-fill, by default the last one),
        with the choices made for ``task_id`` last time."""
        dialog = NewEpisodeDialog(
            task_id, player=self.player if player is None else player, seed=seed, checkpoint=checkpoint,
            remembered=self.choices.for_task(task_id),
        )  # fmt: skip
        self.push_screen(dialog, self.episode_started)

    def episode_started(self, started: StartedEpisode | None) -> None:
        """The dialog started an episode: remember its choices and show it."""
        if started is None:
            return
        self.player = started.choice.player
        self.choices.remember(started.choice.task_id, started.fields, self.player)
        self._show_session(started.session)

    def _show_session(self, session: PlaySession | None) -> None:
        from lmrl_tui.screens.play import PlayScreen

        if session is not None:
            self.push_screen(PlayScreen(session))

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
        from lmrl_tui.screens.play import PlayScreen

        try:
            session = open_session(self.store, task_id, agent, partner, seed, player, strict, agent_choice, options)
        except Exception as e:  # noqa: BLE001 - e.g. Stockfish missing: one clear message
            show_error(self, e, CANNOT_START)
            return None
        screen = PlayScreen(session)
        self.push_screen(screen)
        return screen

    def restart_session(self, old: PlaySession, seed: int | None) -> None:
        """Play again: same task, same sides, a new (or the same) seed, replacing the old screen."""
        self.pop_screen()
        agent = old.agent
        # A scripted policy is made again; a model (a checkpoint: seconds to load) plays on as it
        # is, reset by the new session, so the event loop never waits for a load here.
        if agent is not None and old.agent_choice is not None and getattr(agent, "kind", None) not in MODEL_KINDS:
            agent = make_agent(old.task_id, old.agent_choice)
        partner = HumanAgent(old.partner.name, old.partner.role) if isinstance(old.partner, HumanAgent) else None
        self.start_session(old.task_id, agent, partner, seed, old.player, old.strict, old.agent_choice,
                           dict(old.options))  # fmt: skip

    # -- other screens ------------------------------------------------------------------------
    def action_about(self) -> None:
        self.push_screen(HelpScreen(about_markdown(self.db_path)))

    def action_runs(self) -> None:
        from lmrl_tui.screens.runs import RunsScreen

        self.push_screen(RunsScreen())

    def action_browse(self) -> None:
        from lmrl_tui.screens.browse import BrowseScreen

        self.push_screen(BrowseScreen())


def make_app(db: str | Path | Store | None = None, *, player: str | None = None) -> LmrlApp:
    """Build the app on a store (a path, an open Store, or the default database)."""
    store = db if isinstance(db, Store) else Store(db)
    return LmrlApp(store, player=player)
