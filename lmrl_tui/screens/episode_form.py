"""The new-episode dialog's form: its fields (the task, the seed, who plays each side, the task's
options, the player), the focused field's marked label, and reading the form with what is wrong
shown under each field. :class:`lmrl_tui.screens.dialogs.NewEpisodeDialog` starts the episode
from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantFocus
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

import envs
from data.session import PlaySession
from envs.core.options import show_value
from envs.core.registry import option_specs
from envs.players.agents import HUMAN, agent_choices
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.starting import (
    PARTNER_EMBEDDED,
    EpisodeChoice,
    default_player,
    parse_options,
    parse_seed,
)


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


class EpisodeForm(LmrlScreen, ModalScreen[StartedEpisode | None]):
    """The form of :class:`lmrl_tui.screens.dialogs.NewEpisodeDialog` (its base class)."""

    def __init__(
        self,
        task_id: str,
        *,
        player: str | None = None,
        seed: int | None = None,
        checkpoint: str | None = None,
        remembered: dict[str, Any] | None = None,
        start_now: bool = False,
        campaign: tuple[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.campaign = campaign
        """The campaign and assignment the episode is played for (``lmrl serve --campaign``): it
        hands out the task, seed, sides and options, so the form shows them read-only."""
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
        widget.disabled = self.campaign is not None  # the campaign's choice, not the person's
        yield Horizontal(
            Label("  " + label, id=f"{field}-label"), widget, classes="row", id=f"{field}-row"
        )
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
            keys = (
                "ctrl+s: start, from any field · enter or tab: next field · space: open a list or "
                "tick a box · escape: cancel"
            )
            if self.campaign is not None:
                name, assignment = (escape(x) for x in self.campaign)
                keys = (
                    f"Campaign {name} · {assignment} sets this episode (read-only) · "
                    "enter or ctrl+s: start · escape: cancel"
                )
            yield Static(keys, id="keys")
            with Vertical(id="form"):
                yield from self._row(
                    "task",
                    "Task",
                    FormSelect(
                        [(f"{envs.spec(t).title} ({t})", t) for t in envs.ids()],
                        value=self.task_id,
                        allow_blank=False,
                        id="task",
                    ),
                )
                yield from self._row(
                    "seed",
                    "Seed",
                    Input(
                        "" if self.seed is None else str(self.seed),
                        placeholder="blank: random",
                        id="seed",
                    ),
                )
                yield from self._row(
                    "agent",
                    spec.roles[0].capitalize(),
                    FormSelect(
                        agents,
                        value=self._pick("agent", [v for _, v in agents], HUMAN),
                        allow_blank=False,
                        id="agent",
                    ),
                )
                yield from self._row(
                    "checkpoint",
                    "…or a model",
                    Input(
                        self.checkpoint or str(r.get("checkpoint") or ""),
                        placeholder="checkpoint folder [--decoding rerank --no-repeat …], hf:MODEL, http:MODEL@URL or guided:LLM+CHECKPOINT",
                        id="checkpoint",
                    ),
                )
                if len(spec.roles) > 1:
                    partners = [
                        (f"Built-in {spec.partner or spec.roles[1]}", PARTNER_EMBEDDED),
                        ("A person (hot-seat)", HUMAN),
                    ]
                    yield from self._row(
                        "partner",
                        spec.roles[1].capitalize(),
                        FormSelect(
                            partners,
                            value=self._pick("partner", [v for _, v in partners], PARTNER_EMBEDDED),
                            allow_blank=False,
                            id="partner",
                        ),
                    )
                    yield from self._row(
                        "partner-model",
                        "…or a model",
                        Input(
                            str(r.get("partner_model") or ""),
                            placeholder="hf:MODEL, http:MODEL@URL or a checkpoint folder",
                            id="partner-model",
                        ),
                    )
                yield from self._option_rows(str(r.get("options") or ""))
                yield from self._row("player", "Player name", Input(self.player, id="player"))
                yield from self._row(
                    "strict",
                    "LMRL-strict",
                    Checkbox(
                        "unreadable input counts as an invalid move",
                        bool(r.get("strict")),
                        id="strict",
                    ),
                )
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
                items = [
                    (show_value(c) + (" (default)" if c == o.default else ""), show_value(c))
                    for c in choices
                ]
                pick = show_value(value if value in choices else o.default)
                widget: Widget = FormSelect(items, value=pick, allow_blank=False, id=fid)
            else:
                text = "" if value is None else show_value(value)
                widget = Input(
                    text, placeholder=f"{o.values()}; blank: {show_value(o.default)}", id=fid
                )
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
        focused = next(
            (n.id[:-4] for n in event.widget.ancestors_with_self if n.id and n.id.endswith("-row")),
            None,
        )
        if focused == self._marked:
            return
        # Only the two rows that change, and no layout: a label's width is fixed (each label laid
        # the whole form out again: two more layouts of the dialog as it opened, bench_person_keys)
        for field, mark in ((self._marked, "  "), (focused, FOCUS_MARK)):
            if field in self._labels:
                self.query_one(f"#{field}-row").set_class(mark == FOCUS_MARK, "-focused")
                self.query_one(f"#{field}-label", Label).update(
                    mark + self._labels[field], layout=False
                )
        self._marked = focused

    def _value(self, field: str) -> str:
        found = self.query(f"#{field}")
        return "" if not found else str(found.first().value).strip()

    def fields(self) -> dict[str, Any]:
        """The form's remembered fields (see :data:`lmrl_tui.prefs.REMEMBERED`)."""
        return {
            "agent": self._value("agent"),
            "checkpoint": self._value("checkpoint"),
            "partner": self._value("partner") or PARTNER_EMBEDDED,
            "partner_model": self._value("partner-model"),
            "options": self._options_text(),
            "strict": self.query_one("#strict", Checkbox).value,
        }

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
        if f["partner_model"] and not (
            partner.startswith(("hf:", "http:")) or Path(partner).expanduser().is_dir()
        ):
            errors["partner-model"] = (
                "a model partner is hf:MODEL, http:MODEL@BASE_URL or a checkpoint folder "
                "(lmrl train bc --side partner)"
            )
        if errors:
            self._show_errors(errors)
            return None
        player = self._value("player") or default_player()
        return EpisodeChoice(
            self.task_id,
            seed,
            f["checkpoint"] or f["agent"],
            partner,
            player[:100],
            f["strict"],
            options,
            self.campaign,
        )

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
