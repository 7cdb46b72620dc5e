"""Modal screens that show things: the end-of-episode summary, help/about."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from lmrl_tui.screens.base import LmrlScreen


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
* **Keys:** `enter` start the highlighted task, `b` browse episodes, `t` training runs, `a` the
  annotators (who played and labelled what), `n` a note about this session (kept with every
  episode played in it), `r` refresh the counts, `?` help, `ctrl+p` command palette, `ctrl+q` quit.
* Your player name is asked at the first start and remembered (`--player NAME` overrides it).
* New-episode dialog: `tab` / `enter` go to the next field; `enter` in the last field (or on
  Start) starts; the last choices for each task are filled in again.
* While playing: `space` steps a watched agent, `p` toggles auto-play, `+`/`-` change its speed,
  `escape` leaves the episode (asked first once it has steps; it is kept, marked abandoned).
* An episode left unfinished when lmrl stopped is offered at the next start: resume it (its steps
  are replayed from its seed) or mark it abandoned. One played with another person, each in their
  own app, goes on when you both come back to it: resuming it waits for them.

Headless jobs: `lmrl tasks`, `lmrl generate`, `lmrl stats`, `lmrl export`, `lmrl import`,
`lmrl train`, `lmrl eval` (see `lmrl --help`).
"""
