"""Browse the store: recent episodes, and every step of the one under the cursor."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Log


class BrowseScreen(Screen[None]):
    DEFAULT_CSS = """
    BrowseScreen #episodes { width: 3fr; }
    BrowseScreen #steps { width: 2fr; border-left: solid $primary; }
    """
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="browse.back"),
        Binding("r", "reload", "Reload", id="browse.reload"),
    ]
    LIMIT = 500

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield DataTable(id="episodes", cursor_type="row", zebra_stripes=True)
            yield Log(id="steps")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Episodes"
        table = self.query_one("#episodes", DataTable)
        table.add_columns("id", "task", "source", "player", "agent", "status", "steps", "return", "started")
        table.focus()
        self.action_reload()

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="browse")
    def _load(self) -> None:
        rows = self.app.store.recent_episodes(self.LIMIT)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._fill, rows)

    def _fill(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#episodes", DataTable)
        table.clear()
        for r in rows:
            table.add_row(
                str(r["id"]), r["task"], r["source"], r["player"] or "",
                f"{r['agent_kind']}:{r['agent_name']}", r["status"], str(r["n_steps"]),
                f"{r['return']:g}", (r["started_at"] or "")[:19], key=str(r["id"]),
            )  # fmt: skip
        self.sub_title = f"{len(rows)} most recent"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._show_steps(int(event.row_key.value))

    def _show_steps(self, episode_id: int) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        ep = store.episode(episode_id)
        log = self.query_one("#steps", Log)
        log.clear()
        if ep is None:
            return
        log.write_line(f"Episode {episode_id} · {ep['task']} · seed {ep['seed']} · {ep['status']}")
        log.write_line(f"obs: {ep['first_observation']!r}")
        for s in store.steps(episode_id):
            typed = f" (typed {s['typed']!r})" if s["typed"] is not None else ""
            think = f" {s['think_ms']}ms" if s["think_ms"] is not None else ""
            log.write_line(f"{s['idx']:>3} act: {s['action']!r}{typed} r={s['reward']:g}{think}")
            log.write_line(f"    obs: {s['observation']!r}")
