"""The new-episode dialog: the task, the seed, who plays each side, the task's options; the
episode starts here (its form: :mod:`lmrl_tui.screens.episode_form`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Button, Input, Select, Static

from envs.core import Agent
from lmrl_tui.messages import NewEpisodeRequested
from lmrl_tui.screens.base import FORM_KEYS
from lmrl_tui.screens.episode_form import EpisodeForm, StartedEpisode
from lmrl_tui.starting import (
    EpisodeChoice,
    FieldError,
    close_agent,
    load_sides,
    loading_note,
    needs_loading,
    open_choice,
)
from lmrl_tui.workers import ErrorToast


class NewEpisodeDialog(EpisodeForm):
    """Pick the task, the seed and who plays each side; the episode starts here, so a choice that
    does not work is explained under its field and the form stays as it was typed.

    Focus starts on the first field and its label is marked (``▸``); enter in a field moves to
    the next one, and starts the episode only from the last field (or the Start button).
    ``remembered``: the fields chosen for this task last time (see :mod:`lmrl_tui.prefs`)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("ctrl+s", "start", "Start", id="dialog.start", priority=True),
        *FORM_KEYS,
    ]
    AUTO_FOCUS = "#task, #start"  # Start when the fields are read-only (a campaign's)
    WORKER_ERRORS = {"load-agent": ErrorToast("Cannot load the agent", in_place=True)}
    LAST_FIELD = "player"

    class SidesLoaded(Message, bubble=False):
        """The agent and model partner of ``choice``, loaded by the worker: open the episode."""

        def __init__(
            self,
            choice: EpisodeChoice,
            agent: Agent | None,
            partner: Agent | None,
            attempt: int = 0,
        ) -> None:
            super().__init__()
            self.attempt = attempt
            self.choice = choice
            self.agent = agent
            self.partner = partner

    # -- another task, cancel, enter in the last field ------------------------------------------
    @on(Select.Changed, "#task")
    def _task_changed(self, event: Select.Changed) -> None:
        if event.value != self.task_id and isinstance(event.value, str):
            self.dismiss(None)
            # To the app itself: this dialog is closing and will not pass messages on.
            player = self.query_one("#player", Input).value
            self.app.post_message(NewEpisodeRequested(event.value, player=player))

    _loading = 0
    """The number of the load in flight (0: none); a cancelled load's result is dropped."""
    _attempts = 0
    _processes: tuple[Any, ...] = ()
    """The agent processes the load in flight started (stopped if the person cancels)."""

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        if self._loading:  # escape while a model loads: cancel the load, keep the form
            self._loading = 0
            self.workers.cancel_group(self, "load-agent")
            self._stop_processes()
            self._busy(None)
            self.query_one("#error", Static).update("Loading cancelled.")
            return
        self.dismiss(None)

    @on(Input.Submitted)
    def _last_field_submitted(self, event: Input.Submitted) -> None:
        """Enter in the last field starts (in the others it moves on: ``action_form_enter``)."""
        event.stop()
        if event.input.id == self.LAST_FIELD:
            self._start()

    def on_mount(self) -> None:
        if self.start_now:
            self.call_after_refresh(self._start)

    def action_start(self) -> None:
        """ctrl+s: start with what the form shows, from any field."""
        if not self._loading:
            self._start()

    @on(Button.Pressed, "#start")
    def _start(self) -> None:
        choice = self._read_form()
        if choice is None:
            return
        if needs_loading(choice):  # a checkpoint or a model: seconds, off the UI thread
            self._load_sides(choice, self._start_loading(loading_note(choice)))
            return
        try:
            agent, partner = load_sides(choice)
        except FieldError as e:
            self._show_errors({e.field: str(e)})
            return
        prepare = getattr(agent, "prepare", None)  # e.g. a scripted asker's question bank
        if callable(prepare):
            attempt = self._start_loading("Preparing the scripted player … (escape: cancel)")
            self._prepare(choice, agent, partner, prepare, attempt)
            return
        self._open(choice, agent, partner)

    def _start_loading(self, note: str) -> int:
        """Show ``note`` with Start disabled; returns the attempt a worker's result must carry."""
        self._attempts += 1
        self._loading = self._attempts
        self._busy(note)
        return self._loading

    def _busy(self, note: str | None) -> None:
        self.query_one("#start", Button).disabled = note is not None
        self.query_one("#error", Static).update(note or "")

    @work(thread=True, exclusive=True, group="load-agent", exit_on_error=False)
    def _load_sides(self, choice: EpisodeChoice, attempt: int = 0) -> None:
        def started(agent: Any) -> None:  # an agent process: escape stops it, even mid-load
            self._processes = (*self._processes, agent)
            if self._loading != attempt:  # cancelled before it started
                agent.close()

        self.post_message(self.SidesLoaded(choice, *load_sides(choice, started), attempt=attempt))

    def _stop_processes(self) -> None:
        """Stop the agent processes of a cancelled load (a load waiting on one then fails)."""
        stopping, self._processes = self._processes, ()
        for agent in stopping:
            agent.close()

    @work(thread=True, exclusive=True, group="load-agent", exit_on_error=False)
    def _prepare(
        self,
        choice: EpisodeChoice,
        agent: Agent | None,
        partner: Agent | None,
        prepare: Callable[[], object],
        attempt: int,
    ) -> None:
        prepare()
        self.post_message(self.SidesLoaded(choice, agent, partner, attempt=attempt))

    def on_new_episode_dialog_sides_loaded(self, message: NewEpisodeDialog.SidesLoaded) -> None:
        if message.attempt != self._loading:
            close_agent(message.agent)  # a load the person cancelled
            close_agent(message.partner)
            return
        self._loading = 0
        self._processes = ()
        self._busy(None)
        self._open(message.choice, message.agent, message.partner)

    def worker_failed(self, group: str, error: BaseException) -> None:
        if not self._loading:
            return  # a cancelled load failed: nobody waits for it
        self._loading = 0
        self._processes = ()
        self._busy(None)
        if isinstance(error, FieldError):
            self._show_errors({error.field: str(error)})
        else:
            self._show_errors({None: f"{type(error).__name__}: {error}"})

    def _open(self, choice: EpisodeChoice, agent: Agent | None, partner: Agent | None) -> None:
        """Start the episode (on the UI thread: a dismissed dialog opens nothing)."""
        try:
            session = open_choice(self.lmrl_app.store, choice, agent, partner)
        except FieldError as e:
            close_agent(agent)  # Start loads them again
            close_agent(partner)
            self._show_errors({e.field: str(e)})
            return
        self.dismiss(StartedEpisode(session, choice, self.fields()))
