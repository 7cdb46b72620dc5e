"""The annotators: per player, what they played and labelled (:func:`data.annotators.annotator_figures`),
in a table sorted by any column (click its title, or ``s`` for the next column), for all tasks or one."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Select, Static

import envs
from data.annotators import annotator_figures
from data.campaigns import campaign_names, campaign_progress, progress_rows, stored_campaign
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.footer import Footer
from lmrl_tui.workers import ErrorToast

ALL = "all"


def played_time(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``2h 07m``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def _opt(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


COLUMNS: tuple[tuple[str, str, Any], ...] = (
    ("Player", "player", str),
    ("Episodes", "episodes", str),
    ("Finished", "finished", str),
    ("Time played", "seconds", played_time),
    ("Success", "success_rate", lambda v: _opt(v, ".0%")),
    ("Mean return", "mean_return", lambda v: _opt(v, ".2f")),
    ("Think (s)", "think_ms", lambda v: _opt(None if v is None else v / 1000, ".1f")),
    ("Refused inputs", "attempts", str),
    ("Labels", "labels", str),
)
"""(title, figure, format) per column."""


def sort_rows(rows: list[dict[str, Any]], key: str, reverse: bool) -> list[dict[str, Any]]:
    """``rows`` ordered by ``key`` (names without regard to case); an empty figure always last."""

    def value(r: dict[str, Any]) -> Any:
        v = r[key]
        return v.casefold() if isinstance(v, str) else v

    have = [r for r in rows if r[key] is not None]
    return sorted(have, key=value, reverse=reverse) + [r for r in rows if r[key] is None]


class AnnotatorsScreen(LmrlScreen, Screen[None]):
    """Per annotator: episodes, time played, success, mean return, think time, refused inputs, labels."""

    WORKER_ERRORS = {"annotators": ErrorToast("Could not read the annotators", timeout=30)}
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="annotators.back"),
        Binding("s", "next_sort", "Sort by next column", id="annotators.sort"),
        Binding("v", "reverse", "Reverse order", id="annotators.reverse"),
        Binding("r", "reload", "Reload", id="annotators.reload"),
    ]

    class FiguresLoaded(Message, bubble=False):
        """The figures per player (rows of :func:`~data.annotators.annotator_figures`)."""

        def __init__(
            self, rows: list[dict[str, Any]], campaigns: list[dict[str, Any]] | None = None
        ) -> None:
            super().__init__()
            self.rows = rows
            self.campaigns = campaigns or []
            """Where each campaign kept in the store stands (:func:`campaign_progress`)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self.sort_key = "player"
        self.reverse = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield Select([("All tasks", ALL)], value=ALL, allow_blank=False, id="annotators-task")
            yield Static("", id="annotators-sort")
        yield DataTable(id="annotators", cursor_type="row", zebra_stripes=True)
        yield Static(
            "Time played: the episodes' lengths, start to end. Success and mean return: finished "
            "episodes. Think: the mean time per move. Refused inputs: what the task could not take.",
            id="annotators-explain",
        )
        yield Static("", id="campaigns-title")
        yield DataTable(id="campaigns", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Annotators"
        self.query_one("#annotators-task", Select).set_options(
            [("All tasks", ALL)] + [(t, t) for t in envs.ids()]
        )
        table = self.query_one("#annotators", DataTable)
        for title, key, _ in COLUMNS:
            table.add_column(title, key=key)
        table.focus()
        for widget in ("#campaigns-title", "#campaigns"):  # shown when the store has campaigns
            self.query_one(widget).display = False
        self.action_reload()

    @on(Select.Changed, "#annotators-task")
    def action_reload(self) -> None:
        value = self.query_one("#annotators-task", Select).value
        self._load(None if value in (ALL, Select.BLANK) else str(value))

    @work(thread=True, exclusive=True, group="annotators", exit_on_error=False)
    def _load(self, task: str | None) -> None:
        store = self.lmrl_app.store
        kept = (stored_campaign(store, name) for name in campaign_names(store))
        campaigns = [campaign_progress(store, c) for c in kept if c is not None]
        self.post_message(self.FiguresLoaded(annotator_figures(store, task), campaigns))

    def on_annotators_screen_figures_loaded(self, message: AnnotatorsScreen.FiguresLoaded) -> None:
        self.rows = message.rows
        self._fill()
        self._fill_campaigns(message.campaigns)

    def _fill_campaigns(self, campaigns: list[dict[str, Any]]) -> None:
        """A row per campaign assignment: wanted, finished, being played, abandoned, left, who."""
        table = self.query_one("#campaigns", DataTable)
        table.clear(columns=True)
        for widget in ("#campaigns-title", "#campaigns"):
            self.query_one(widget).display = bool(campaigns)
        if not campaigns:
            return
        header: list[str] = []
        for progress in campaigns:
            header, rows = progress_rows(progress)
            if not table.columns:
                table.add_columns("campaign", *header)
            for row in rows:
                table.add_row(progress["campaign"], *row)
        self.query_one("#campaigns-title", Static).update(
            "[b]Campaigns[/b] · "
            + " · ".join(
                f"{p['campaign']}: {p['finished']} of {p['wanted']} episodes finished"
                for p in campaigns
            )
        )

    def _fill(self) -> None:
        table = self.query_one("#annotators", DataTable)
        table.clear()
        for r in sort_rows(self.rows, self.sort_key, self.reverse):
            table.add_row(*(fmt(r[key]) for _, key, fmt in COLUMNS), key=r["player"])
        title = next(t for t, k, _ in COLUMNS if k == self.sort_key)
        n = len(self.rows)
        self.query_one("#annotators-sort", Static).update(
            f"{n} annotator{'s' if n != 1 else ''} · sorted by {title.lower()}"
            f"{' (reversed)' if self.reverse else ''} · click a title or press s to sort"
        )

    def sort_by(self, key: str) -> None:
        """Sort by the figure ``key``; sorting again by the same figure reverses the order."""
        self.reverse = not self.reverse if key == self.sort_key else key not in ("player",)
        self.sort_key = key
        self._fill()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        if event.column_key.value is not None:
            self.sort_by(event.column_key.value)

    def action_next_sort(self) -> None:
        keys = [k for _, k, _ in COLUMNS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.reverse = self.sort_key != "player"  # numbers: the most first
        self._fill()

    def action_reverse(self) -> None:
        self.reverse = not self.reverse
        self._fill()
