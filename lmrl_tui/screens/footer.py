"""The key bar at the bottom of every screen: the screen's keys drawn as one line of text.

Textual's :class:`~textual.widgets.Footer` is a container of one widget per key (some twenty on
the play screen), each styled on its own and rebuilt after every ``refresh_bindings()``. On a
2-core CPU that bar was the costliest thing on the screen: ~50 ms of the app's start to the home
screen and about a third of each screen's first frame (bench/bench_spine.py,
bench/bench_watch.py). This bar is one widget: it looks the same (the theme's footer colours, the
command palette's key on the right), reads the screen's bindings once per burst of changes, redraws
only when what it shows differs (a key lit or dimmed, a key added or gone), and a click on a key
presses it (a dimmed key rings the bell), as Textual's keys do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.screen import Screen


@dataclass(frozen=True)
class BarKey:
    key: str
    """The key a click presses (``Binding.key``'s first key)."""
    display: str
    description: str
    enabled: bool
    tooltip: str
    palette: bool = False
    """The command palette's key (drawn on the right)."""


class Footer(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer--key", "footer--description", "footer--hover"}
    """Its look: lmrl_tui/styles/screens.tcss (the theme's footer colours, as Textual's bar)."""

    def __init__(self, *, id: str | None = None, show_command_palette: bool = True) -> None:  # noqa: A002
        super().__init__(id=id)
        self.show_command_palette = show_command_palette
        self.keys: tuple[BarKey, ...] = ()
        """What the bar shows, left to right (the palette's key last)."""
        self._spans: list[tuple[int, int, BarKey]] = []
        """(first cell, end cell, key) of each key as last drawn."""
        self._hover: BarKey | None = None
        """The key under the mouse."""
        self._update_pending = False

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.keys = self._read_keys()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        """The screen's bindings may have changed: read them after the next refresh (once for a
        burst: a focus change and a redraw each announce one)."""
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._update_pending:
            self._update_pending = True
            self.call_after_refresh(self._update_keys)

    def _update_keys(self) -> None:
        self._update_pending = False
        if not self.is_attached:
            return
        keys = self._read_keys()
        if keys != self.keys:
            self.keys = keys
            self.refresh()

    def _read_keys(self) -> tuple[BarKey, ...]:
        app = self.app
        shown: list[BarKey] = []
        seen: set[str] = set()
        palette: BarKey | None = None
        for _key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items():
            if binding.key == app.COMMAND_PALETTE_BINDING:
                if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
                    palette = BarKey(
                        binding.key,
                        app.get_key_display(binding),
                        binding.description,
                        bool(enabled),
                        binding.tooltip or binding.description,
                        palette=True,
                    )
                continue
            if not binding.show or binding.action in seen:  # one key per action, as Textual's bar
                continue
            seen.add(binding.action)
            shown.append(
                BarKey(
                    binding.key,
                    app.get_key_display(binding),
                    binding.description,
                    bool(enabled),
                    tooltip or binding.tooltip,
                )
            )
        return (*shown, *([palette] if palette else []))

    # -- drawing --------------------------------------------------------------------------------
    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer--key")
        text_style = self.get_component_rich_style("footer--description")
        hover_style = self.get_component_rich_style("footer--hover")
        width = self.size.width
        line = Text(no_wrap=True, overflow="crop", end="")
        spans: list[tuple[int, int, BarKey]] = []
        left = [k for k in self.keys if not k.palette]
        right = [k for k in self.keys if k.palette]

        def piece(k: BarKey) -> Text:
            out = Text.assemble(
                (f" {k.display} ", key_style),
                (f"{k.description} " if k.description else "", text_style),
            )
            if k == self._hover and k.enabled:
                out.stylize(hover_style)
            if not k.enabled:
                out.stylize("dim")
            return out

        def add(part: Text, k: BarKey) -> None:
            start = line.cell_len
            line.append_text(part)
            spans.append((start, line.cell_len, k))

        tail = piece(right[0]) if right else None
        room = width - (
            tail.cell_len + 1 if tail is not None else 0
        )  # the palette's key always shows
        for k in left:
            part = piece(k)
            if line.cell_len + part.cell_len > room:
                break  # no room for the rest (a narrow terminal): cut at a whole key
            add(part, k)
        if tail is not None and room >= 0:
            line.append(" " * (room - line.cell_len))
            line.append("▏", style="dim")
            add(tail, right[0])
        self._spans = spans
        return line

    # -- the mouse ------------------------------------------------------------------------------
    def key_at(self, x: int) -> BarKey | None:
        """The key drawn at cell ``x`` (None: between keys)."""
        return next((k for start, end, k in self._spans if start <= x < end), None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        key = self.key_at(event.x)
        if key is None:
            return
        if key.enabled:
            self.app.simulate_key(key.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        key = self.key_at(event.x)
        if key != self._hover:
            self._hover = key
            self.tooltip = (key.tooltip or None) if key is not None else None
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.refresh()
