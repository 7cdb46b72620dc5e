"""The new-episode dialog: the task, the seed, who plays each side, the task's options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantFocus
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

import envs
from data.session import PlaySession
from envs.core import Agent
from envs.core.options import show_value
from envs.core.registry import option_specs
from envs.players.agents import HUMAN, agent_choices
from lmrl_tui.messages import NewEpisodeRequested
from lmrl_tui.screens.base import FORM_KEYS, LmrlScreen
from lmrl_tui.starting import (
    PARTNER_EMBEDDED,
    EpisodeChoice,
    FieldError,
    close_agent,
    default_player,
    load_sides,
    loading_note,
    needs_loading,
    open_choice,
    parse_options,
    parse_seed,
)
from lmrl_tui.workers import ErrorToast


@dataclass
class StartedEpisode:
    """What the new-episode dialog gives back: the started session, and the fields to remember."""

    session: PlaySession
    choice: EpisodeChoice
    fields: dict[str, Any]


FOCUS_MARK = "▸ "


class FormSelect(Select[Any]):
    """A drop-down of the form: enter moves on to the next field like everywhere in the form;
    space, up or down open the list (and enter there picks)."""

    BINDINGS = [Binding("enter", "next_field", "Next field", show=False)]

    def action_next_field(self) -> None:
        self.screen.focus_next()


class NewEpisodeDialog(LmrlScreen, ModalScreen[StartedEpisode | None]):
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
    AUTO_FOCUS = "#task"
    WORKER_ERRORS = {"load-agent": ErrorToast("Cannot load the agent", in_place=True)}
    LAST_FIELD = "player"

    class SidesLoaded(Message, bubble=False):
        """The agent and model partner of ``choice``, loaded by the worker: open the episode."""

        def __init__(self, choice: EpisodeChoice, agent: Agent | None, partner: Agent | None,
                     attempt: int = 0) -> None:  # fmt: skip
            super().__init__()
            self.attempt = attempt
            self.choice = choice
            self.agent = agent
            self.partner = partner

    def __init__(
        self,
        task_id: str,
        *,
        player: str | None = None,
        seed: int | None = None,
        checkpoint: str | None = None,
        remembered: dict[str, Any] | None = None,
        start_now: bool = False,
    ) -> None:
        super().__init__()
        self.start_now = start_now
        """Start as soon as the form shows (``lmrl play``): what does not work is explained in place."""
        self.task_id = task_id
        self.player = player or default_player()
        self.seed = seed
        self.checkpoint = checkpoint
        self.remembered = dict(remembered or {})
        self._labels: dict[str, str] = {}
        self._marked: str | None = None
        """The field whose label is marked (focused)."""

    def _row(self, field: str, label: str, widget: Widget) -> ComposeResult:
        self._labels[field] = label
        yield Horizontal(Label("  " + label, id=f"{field}-label"), widget, classes="row", id=f"{field}-row")
        yield Static("", id=f"{field}-error", classes="field-error")

    def _pick(self, key: str, values: list[Any], default: Any) -> Any:
        got = self.remembered.get(key)
        return got if got in values else default

    def compose(self) -> ComposeResult:
        spec = envs.spec(self.task_id)
        r = self.remembered
        agents = agent_choices(self.task_id)
        with VerticalScroll(can_focus=False):
            yield Static(f"[b]New episode[/b] · {spec.title}", id="title")
            yield Static("ctrl+s: start, from any field · enter or tab: next field · space: open a list or "
                         "tick a box · escape: cancel", id="keys")  # fmt: skip
            with Vertical(id="form"):
                yield from self._row("task", "Task", FormSelect(
                    [(f"{envs.spec(t).title} ({t})", t) for t in envs.ids()],
                    value=self.task_id, allow_blank=False, id="task"))  # fmt: skip
                yield from self._row("seed", "Seed", Input(
                    "" if self.seed is None else str(self.seed), placeholder="blank: random", id="seed"))  # fmt: skip
                yield from self._row("agent", spec.roles[0].capitalize(), FormSelect(
                    agents, value=self._pick("agent", [v for _, v in agents], HUMAN), allow_blank=False,
                    id="agent"))  # fmt: skip
                yield from self._row("checkpoint", "…or a model", Input(
                    self.checkpoint or str(r.get("checkpoint") or ""),
                    placeholder="checkpoint folder [--decoding rerank --no-repeat …], hf:MODEL, http:MODEL@URL or guided:LLM+CHECKPOINT", id="checkpoint"))  # fmt: skip
                if len(spec.roles) > 1:
                    partners = [(f"Built-in {spec.partner or spec.roles[1]}", PARTNER_EMBEDDED),
                                ("A person (hot-seat)", HUMAN)]  # fmt: skip
                    yield from self._row("partner", spec.roles[1].capitalize(), FormSelect(
                        partners, value=self._pick("partner", [v for _, v in partners], PARTNER_EMBEDDED),
                        allow_blank=False, id="partner"))  # fmt: skip
                    yield from self._row("partner-model", "…or a model", Input(
                        str(r.get("partner_model") or ""), placeholder="hf:MODEL, http:MODEL@URL or a checkpoint folder",
                        id="partner-model"))  # fmt: skip
                yield from self._option_rows(str(r.get("options") or ""))
                yield from self._row("player", "Player name", Input(self.player, id="player"))
                yield from self._row("strict", "LMRL-strict", Checkbox(
                    "unreadable input counts as an invalid move", bool(r.get("strict")), id="strict"))  # fmt: skip
            yield Static("", id="error")
            with Horizontal(id="buttons"):
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def _option_rows(self, remembered: str) -> ComposeResult:
        """One row per task option: a drop-down of its values when they are enumerated, else a
        field (blank: the default) checked when the episode starts."""
        try:
            given = parse_options(remembered) or {}
        except ValueError:
            given = {}
        for o in option_specs(self.task_id):
            fid = f"opt-{o.name}"
            value = given.get(o.name)
            if o.kind in ("choice", "bool"):
                choices = list(o.choices) if o.kind == "choice" else [True, False]
                items = [(show_value(c) + (" (default)" if c == o.default else ""), show_value(c))
                         for c in choices]  # fmt: skip
                pick = show_value(value if value in choices else o.default)
                widget: Widget = FormSelect(items, value=pick, allow_blank=False, id=fid)
            else:
                text = "" if value is None else show_value(value)
                widget = Input(text, placeholder=f"{o.values()}; blank: {show_value(o.default)}", id=fid)
            widget.tooltip = o.help or None
            yield from self._row(fid, o.name, widget)

    def _read_options(self, errors: dict[str | None, str]) -> dict[str, Any] | None:
        """The options chosen (only those not at their default); a bad value is explained under
        its field, naming the valid values."""
        chosen: dict[str, Any] = {}
        for o in option_specs(self.task_id):
            text = self._value(f"opt-{o.name}")
            try:
                value = o.parse(text)
            except ValueError as e:
                errors[f"opt-{o.name}"] = str(e)
                continue
            if text and value != o.default:
                chosen[o.name] = value
        return chosen or None

    def _options_text(self) -> str:
        """The options chosen as ``key=value`` text, remembered for the next time."""
        errors: dict[str | None, str] = {}
        chosen = self._read_options(errors) or {}
        return " ".join(f"{k}={show_value(v)}" for k, v in chosen.items())

    # -- focus: the focused field's label is marked -----------------------------------------------
    def on_descendant_focus(self, event: DescendantFocus) -> None:
        focused = next((n.id[:-4] for n in event.widget.ancestors_with_self
                        if n.id and n.id.endswith("-row")), None)  # fmt: skip
        if focused == self._marked:
            return
        # Only the two rows that change, and no layout: a label's width is fixed (each label laid
        # the whole form out again: two more layouts of the dialog as it opened, bench_person_keys)
        for field, mark in ((self._marked, "  "), (focused, FOCUS_MARK)):
            if field in self._labels:
                self.query_one(f"#{field}-row").set_class(mark == FOCUS_MARK, "-focused")
                self.query_one(f"#{field}-label", Label).update(mark + self._labels[field], layout=False)
        self._marked = focused

    # -- the form -------------------------------------------------------------------------------
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

    def _value(self, field: str) -> str:
        found = self.query(f"#{field}")
        return "" if not found else str(found.first().value).strip()

    def fields(self) -> dict[str, Any]:
        """The form's remembered fields (see :data:`lmrl_tui.prefs.REMEMBERED`)."""
        return {"agent": self._value("agent"), "checkpoint": self._value("checkpoint"),
                "partner": self._value("partner") or PARTNER_EMBEDDED,
                "partner_model": self._value("partner-model"), "options": self._options_text(),
                "strict": self.query_one("#strict", Checkbox).value}  # fmt: skip

    def _read_form(self) -> EpisodeChoice | None:
        """The choice typed in the form; None after showing what is wrong under each field."""
        self._show_errors({})
        errors: dict[str | None, str] = {}  # by field id
        seed = options = None
        try:
            seed = parse_seed(self._value("seed"))
        except ValueError as e:
            errors["seed"] = str(e)
        options = self._read_options(errors)
        f = self.fields()
        partner = f["partner_model"] or f["partner"]
        if f["partner_model"] and not (partner.startswith(("hf:", "http:")) or Path(partner).expanduser().is_dir()):
            errors["partner-model"] = ("a model partner is hf:MODEL, http:MODEL@BASE_URL or a checkpoint folder "
                                       "(lmrl train bc --side partner)")  # fmt: skip
        if errors:
            self._show_errors(errors)
            return None
        player = self._value("player") or default_player()
        return EpisodeChoice(self.task_id, seed, f["checkpoint"] or f["agent"], partner, player[:100],
                             f["strict"], options)  # fmt: skip

    def _show_errors(self, errors: dict[str | None, str]) -> None:
        """Show each message under its field (None: under the form) and focus the first one."""
        if "options" in errors:  # the task refused its options as a whole: under the form
            errors = {**errors, None: errors.pop("options")}
        for field in self._labels:
            box = self.query_one(f"#{field}-error", Static)
            box.update(escape(errors.get(field, "")))
            box.set_class(field in errors, "-shown")
        self.query_one("#error", Static).update(escape(errors.get(None, "")))
        first = next((f for f in self._labels if f in errors), None)
        if first is not None:
            self.query_one(f"#{first}").focus()
        elif errors.get(None):
            self.reveal_form_error()

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
    def _prepare(self, choice: EpisodeChoice, agent: Agent | None, partner: Agent | None,
                 prepare: Callable[[], object], attempt: int) -> None:  # fmt: skip
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
