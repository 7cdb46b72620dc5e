"""Modal dialogs: start a new episode, the end-of-episode summary, help/about."""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

import envs
from envs.core.agents import HUMAN, agent_choices
from lmrl_tui.messages import NewEpisodeRequested
from lmrl_tui.screens.base import LmrlScreen

PARTNER_EMBEDDED = "embedded"


def default_player() -> str:
    try:
        return getpass.getuser() or "player"
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "player"


@dataclass
class EpisodeChoice:
    task_id: str
    seed: int | None
    agent: str
    partner: str
    player: str
    strict: bool
    options: dict[str, Any] | None = None
    """Task options; None: the defaults (or a checkpoint agent's own)."""


def parse_options(text: str) -> dict[str, Any] | None:
    """``key=value`` pairs separated by spaces or commas (``words=small``); blank means None."""
    from envs.core import parse_option

    parts = [p for p in text.replace(",", " ").split() if p]
    return dict(parse_option(p) for p in parts) if parts else None


def parse_seed(text: str) -> int | None:
    """Blank means a random seed; otherwise a non-negative integer below 2**63."""
    text = text.strip()
    if not text:
        return None
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"the seed must be a whole number, not {text!r}") from None
    if not 0 <= seed < 2**63:
        raise ValueError("the seed must be between 0 and 2**63 - 1")
    return seed


class NewEpisodeDialog(LmrlScreen, ModalScreen[EpisodeChoice | None]):
    """Pick the task, the seed and who plays each side."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]
    AUTO_FOCUS = "#start"

    def __init__(
        self, task_id: str, *, player: str | None = None, seed: int | None = None, checkpoint: str | None = None
    ) -> None:
        super().__init__()
        self.task_id = task_id
        self.player = player or default_player()
        self.seed = seed
        self.checkpoint = checkpoint

    def compose(self) -> ComposeResult:
        spec = envs.spec(self.task_id)
        with VerticalScroll():
            yield Static(f"[b]New episode[/b] · {spec.title}")
            with Grid(id="form"):
                yield Label("Task")
                yield Select([(f"{envs.spec(t).title} ({t})", t) for t in envs.ids()],
                             value=self.task_id, allow_blank=False, id="task")  # fmt: skip
                yield Label("Seed")
                yield Input("" if self.seed is None else str(self.seed), placeholder="blank: random", id="seed")
                yield Label(spec.roles[0].capitalize())
                yield Select(agent_choices(self.task_id), value=HUMAN, allow_blank=False, id="agent")
                yield Label("…or a model")
                yield Input(self.checkpoint or "", placeholder="checkpoint folder, hf:MODEL or http:MODEL@URL",
                            id="checkpoint")  # fmt: skip
                if len(spec.roles) > 1:
                    yield Label(spec.roles[1].capitalize())
                    yield Select(
                        [(f"Built-in {spec.partner or spec.roles[1]}", PARTNER_EMBEDDED), ("A person (hot-seat)", HUMAN)],
                        value=PARTNER_EMBEDDED, allow_blank=False, id="partner",
                    )  # fmt: skip
                    yield Label("…or a model")
                    yield Input(placeholder="hf:MODEL or http:MODEL@URL", id="partner-model")
                yield Label("Task options")
                yield Input(placeholder="key=value …, e.g. words=small (see help)", id="options")
                yield Label("Player name")
                yield Input(self.player, id="player")
            yield Checkbox("LMRL-strict: unreadable input counts as an invalid move", id="strict")
            yield Static("", id="error")
            with Horizontal(id="buttons"):
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    @on(Select.Changed, "#task")
    def _task_changed(self, event: Select.Changed) -> None:
        if event.value != self.task_id and isinstance(event.value, str):
            self.dismiss(None)
            # To the app itself: this dialog is closing and will not pass messages on.
            player = self.query_one("#player", Input).value
            self.app.post_message(NewEpisodeRequested(event.value, player=player))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def _start(self) -> None:
        err = self.query_one("#error", Static)
        try:
            seed = parse_seed(self.query_one("#seed", Input).value)
            options = parse_options(self.query_one("#options", Input).value)
        except ValueError as e:
            err.update(str(e))
            return
        agent = str(self.query_one("#agent", Select).value)
        ckpt = self.query_one("#checkpoint", Input).value.strip()
        if ckpt:
            agent = ckpt
        partners = self.query("#partner")
        partner = str(partners.first(Select).value) if partners else PARTNER_EMBEDDED
        models = self.query("#partner-model")
        if models and models.first(Input).value.strip():
            partner = models.first(Input).value.strip()
            if not partner.startswith(("hf:", "http:")):
                err.update("a model partner is hf:MODEL or http:MODEL@BASE_URL")
                return
        player = self.query_one("#player", Input).value.strip() or default_player()
        strict = self.query_one("#strict", Checkbox).value
        self.dismiss(EpisodeChoice(self.task_id, seed, agent, partner, player[:100], strict, options))


class SummaryScreen(LmrlScreen, ModalScreen[str]):
    """The end of an episode: return, steps, the best return possible, and what next."""

    BINDINGS = [
        Binding("enter,r", "choose('again')", "Play again", id="summary.again"),
        Binding("s", "choose('same')", "Same seed", id="summary.same"),
        Binding("escape,h", "choose('home')", "Home", id="summary.home"),
    ]

    def __init__(self, lines: list[str], title: str) -> None:
        super().__init__()
        self.lines = lines
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]{self.title_text}[/b]")
            yield Static("\n".join(self.lines), id="summary")
            with Horizontal(id="buttons"):
                yield Button("Play again", variant="primary", id="again")
                yield Button("Same seed", id="same")
                yield Button("Home", id="home")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))

    def action_choose(self, what: str) -> None:
        self.dismiss(what)


class HelpScreen(LmrlScreen, ModalScreen[None]):
    """Help for a task (or the app), with the database location."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "Close", id="help.close")]

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # markdown-it is slow to import: not at start-up

        with VerticalScroll():
            yield Markdown(self.markdown)

    def action_dismiss_help(self) -> None:
        self.dismiss(None)


def about_markdown(db_path: Any) -> str:
    return f"""\
# lmrl-tui

Play the LMRL-Gym multi-turn RL tasks, log every step to SQLite as an offline RL dataset, train
agents on the logs and watch them play.

* **Database:** `{db_path}` (change with `--db PATH` or `LMRL_DB`)
* **Keys:** `enter` start the highlighted task, `b` browse episodes, `?` help, `ctrl+p` command
  palette, `ctrl+q` quit.
* While playing: `space` steps a watched agent, `p` toggles auto-play, `+`/`-` change its speed,
  `escape` leaves the episode (it is kept, marked abandoned).

Headless jobs: `lmrl tasks`, `lmrl generate`, `lmrl stats`, `lmrl export`, `lmrl import`,
`lmrl train`, `lmrl eval` (see `lmrl --help`).
"""
