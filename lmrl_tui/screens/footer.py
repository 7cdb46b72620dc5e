"""The key bar at the bottom of every screen: Textual's :class:`~textual.widgets.Footer`, rebuilt
once per burst of binding changes, and only when what it shows has changed.

Textual's footer rebuilds all its keys (some twenty widgets, each restyled) after every
``refresh_bindings()``, and a screen calls that on each focus change and each redraw of its
controls: a single answer in a chat took a dozen rebuilds, over a second of CPU on a slow machine,
for a bar that looked the same. This one waits for the next refresh, then rebuilds only if the
keys or their labels differ from what is on the screen; when only which keys are enabled changed
(a chat's y / n while the other side thinks), it dims or lights those keys in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer as _TextualFooter
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.screen import Screen


class Footer(_TextualFooter):
    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._rebuild_pending = False
        self._shown: tuple[tuple[object, ...], dict[tuple[str, str], bool]] | None = None

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild_if_changed)

    def _keys_shown(self) -> tuple[tuple[object, ...], dict[tuple[str, str], bool]]:
        """What :meth:`compose` puts on the bar from the screen's bindings: (everything but which
        keys are enabled, (key, action) -> enabled)."""
        app = self.app
        keys, enabled = [], {}
        for key, (_node, b, on, tip) in self.screen.active_bindings.items():
            keys.append((key, b.key, b.action, b.description, b.show, b.group, b.tooltip, app.get_key_display(b), tip))
            enabled[(b.key, b.action)] = bool(on)
        return (tuple(keys), self.show_command_palette, self.compact), enabled

    async def _rebuild_if_changed(self) -> None:
        self._rebuild_pending = False
        if not self.is_attached:
            return
        shown = self._keys_shown()
        if self._shown is not None and shown[0] == self._shown[0]:
            if shown[1] != self._shown[1]:
                self._light(shown[1])
        else:
            await self.recompose()
        self._shown = shown

    def _light(self, enabled: dict[tuple[str, str], bool]) -> None:
        for key in self.query(FooterKey):
            on = enabled.get((key.key, key.action))
            if on is not None and key._disabled == on:
                key._disabled = not on
                key.set_class(not on, "-disabled")
