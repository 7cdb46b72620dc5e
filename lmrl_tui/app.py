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

import envs
from data.session import PlaySession
from data.store import Store
from envs.core import Agent
from envs.core.agents import HUMAN, make_agent, make_model_agent
from envs.core.session import HumanAgent
from lmrl_tui.messages import (
    AboutRequested,
    BrowseRequested,
    NewEpisodeRequested,
    PlayAgainRequested,
    RunsRequested,
)
from lmrl_tui.screens.dialogs import (
    PARTNER_EMBEDDED,
    EpisodeChoice,
    HelpScreen,
    NewEpisodeDialog,
    about_markdown,
)
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.workers import ErrorToast, ReportsWorkerErrors, show_error

if TYPE_CHECKING:
    from lmrl_tui.screens.play import PlayScreen

STYLES = Path(__file__).parent / "styles"
CANNOT_START = ErrorToast("Cannot start", timeout=10, with_type=False)


class LmrlApp(ReportsWorkerErrors, App[None]):
    """The lmrl-tui app on one store (see the module docstring)."""

    TITLE = "lmrl-tui"
    CSS_PATH = [STYLES / "screens.tcss", STYLES / "views.tcss"]
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True)]
    WORKER_ERRORS = {"load-agent": ErrorToast("Cannot load the agent", timeout=10, with_type=False)}

    class AgentsLoaded(Message, bubble=False):
        """The agent (and model partner) of ``choice``, loaded by a worker: start the episode."""

        def __init__(self, choice: EpisodeChoice, agent: Agent | None, partner: Agent | None) -> None:
            super().__init__()
            self.choice = choice
            self.agent = agent
            self.partner = partner

    def __init__(self, store: Store, *, player: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.db_path: Path = store.path
        self.player = player

    def on_mount(self) -> None:
        if self.is_headless:
            # Tests and snapshots: the same colours whatever $TEXTUAL_THEME says (the screens
            # also keep the text cursor from blinking, see LmrlScreen.set_focus).
            self.theme = "textual-dark"
        self.push_screen(HomeScreen())

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
        """Open the new-episode dialog (``player``: the name to pre-fill, by default the last one)."""
        dialog = NewEpisodeDialog(
            task_id, player=self.player if player is None else player, seed=seed, checkpoint=checkpoint
        )
        self.push_screen(dialog, self.start_episode_from_choice)

    def start_episode_from_choice(self, choice: EpisodeChoice | None) -> None:
        if choice is None:
            return
        self.player = choice.player
        simple = {HUMAN, *envs.policies(choice.task_id)}
        if choice.agent in simple and choice.partner in (HUMAN, PARTNER_EMBEDDED):
            self._start_with_agent(choice, make_agent(choice.task_id, choice.agent), None)
        else:  # a checkpoint or model: loading it can import torch, which takes seconds
            self.notify("Loading the model …", timeout=3)
            self._load_agent_then_start(choice)

    @work(thread=True, exclusive=True, group="load-agent", exit_on_error=False)
    def _load_agent_then_start(self, choice: EpisodeChoice) -> None:
        agent = make_agent(choice.task_id, choice.agent, role=envs.spec(choice.task_id).roles[0])
        model_partner = None
        if choice.partner not in (HUMAN, PARTNER_EMBEDDED):
            model_partner = make_model_agent(choice.partner, role=self._partner_role(choice.task_id))
        self.post_message(self.AgentsLoaded(choice, agent, model_partner))

    def on_lmrl_app_agents_loaded(self, message: LmrlApp.AgentsLoaded) -> None:
        self._start_with_agent(message.choice, message.agent, message.partner)

    def _start_with_agent(self, choice: EpisodeChoice, agent: Agent | None, model_partner: Agent | None) -> None:
        partner: Agent | None = model_partner
        if choice.partner == HUMAN:
            partner = HumanAgent(choice.player if agent is not None else f"{choice.player} (partner)", role="partner")
        self.start_session(
            choice.task_id, agent, partner, choice.seed, choice.player, choice.strict, choice.agent,
            choice.options,
        )

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

        if options is None:
            meta = getattr(agent, "meta", None)
            own = meta.get("task_options") if isinstance(meta, dict) and meta.get("task") == task_id else None
            options = dict(own or {})
        if isinstance(partner, HumanAgent):
            partner.role = self._partner_role(task_id)
        try:
            session = PlaySession(
                self.store, task_id, agent=agent, partner=partner,
                player=player if (agent is None or partner is not None) else None,
                seed=seed, strict=strict, agent_choice=agent_choice, options=options,
            )  # fmt: skip
            session.start()
        except Exception as e:  # noqa: BLE001 - e.g. Stockfish missing: one clear message
            show_error(self, e, CANNOT_START)
            return None
        screen = PlayScreen(session)
        self.push_screen(screen)
        return screen

    @staticmethod
    def _partner_role(task_id: str) -> str:
        roles = envs.spec(task_id).roles
        return roles[1] if len(roles) > 1 else "partner"

    def restart_session(self, old: PlaySession, seed: int | None) -> None:
        """Play again: same task, same sides, a new (or the same) seed, replacing the old screen."""
        self.pop_screen()
        agent = old.agent
        if agent is not None and old.agent_choice is not None:
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
