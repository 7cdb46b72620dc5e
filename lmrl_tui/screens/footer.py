"""The key bar at the bottom of every screen: Textual's :class:`~textual.widgets.Footer`, rebuilt
once per burst of binding changes, and only when what it shows has changed.

Textual's footer rebuilds all its keys (some twenty widgets, each restyled) after every
``refresh_bindings()``, and a screen calls that on each focus change and each redraw of its
controls: a single answer in a chat took a dozen rebuilds, over a second of CPU on a slow machine,
for a bar that looked the same. This one waits for the next refresh, then rebuilds only if the
keys, their labels, or which of them are enabled differ from what is on the screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer as _TextualFooter

if TYPE_CHECKING:
    from textual.screen import Screen


class Footer(_TextualFooter):
    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._rebuild_pending = False
        self._shown: tuple[object, ...] | None = None

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild_if_changed)

    def _keys_shown(self) -> tuple[object, ...]:
        """Everything of the screen's bindings that :meth:`compose` puts on the bar."""
        app = self.app
        keys = tuple(
            (key, b.key, b.action, b.description, b.show, b.group, b.tooltip, app.get_key_display(b), enabled, tip)
            for key, (_node, b, enabled, tip) in self.screen.active_bindings.items()
        )  # fmt: skip
        return (keys, self.show_command_palette, self.compact)

    async def _rebuild_if_changed(self) -> None:
        self._rebuild_pending = False
        if not self.is_attached:
            return
        shown = self._keys_shown()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
