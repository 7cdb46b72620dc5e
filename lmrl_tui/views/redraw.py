"""Redrawing a Static without re-arranging the whole screen when its size stays the same.

``Static.update`` asks for a layout every time, and a layout re-arranges every widget of the screen
(~10–20 ms on a 2-core CPU for the play screen): watching an agent, each step updated five
widgets and cost two or three of them (bench/bench_watch.py). :func:`update_static` skips content
that did not change and asks for a layout only when the new content's size differs from the
widget's laid-out one, as Textual itself would measure it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from textual.geometry import Size
from textual.reactive import Reactive
from textual.visual import visualize
from textual.widgets import Input, Log, Static


def update_static(widget: Static, content: Any, height: Callable[[int], int] | None = None) -> None:
    """``widget.update(content)``, with a layout only when the size it needs changes. ``height``:
    the lines ``content`` takes at a width, where the caller knows it without drawing it (measuring
    a Rich table draws it whole: a second full render per update)."""
    try:
        if content == widget.content:
            return
    except Exception:  # noqa: BLE001 - a renderable whose comparison fails: draw it
        pass
    widget.update(content, layout=_needs_layout(widget, content, height))


def _needs_layout(widget: Static, content: Any, height: Callable[[int], int] | None = None) -> bool:
    size = widget.content_size
    if not widget.is_mounted or size.width <= 0 or size.height <= 0:
        return True  # never laid out yet
    styles = widget.styles
    try:
        visual = visualize(widget, content, markup=widget._render_markup)
        if visual is None:
            return True
        if styles.width is not None and styles.width.is_auto:  # None: the container's width
            if visual.get_optimal_width(styles, widget.container_size.width) != size.width:
                return True
        if styles.height is None or styles.height.is_auto:
            if height is not None:
                return height(size.width) != size.height
            return visual.get_height(styles, size.width) != size.height
    except Exception:  # noqa: BLE001 - when in doubt, let Textual lay it out
        return True
    return False


class GrowingLog(Log):
    """A ``Log`` that grows without re-arranging the screen. Textual's ``virtual_size`` asks for
    a layout of the whole screen when it changes, so every line written re-arranged and redrew
    every widget of the play screen (~20 ms a step on a 2-core CPU, bench/bench_watch.py). Here a
    new line only updates the log's own scrollbars and lines; a layout still happens when a
    scrollbar appears or goes (Textual's ``show_vertical_scrollbar`` asks for it)."""

    virtual_size = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self, size: Size) -> None:
        if self.is_mounted:
            self._scroll_update(size)  # Textual's own update of the scrollbars for a new size


class TypingInput(Input):
    """An ``Input`` whose keystrokes do not re-arrange the screen. Textual's ``Input`` sets its
    ``virtual_size`` to the typed text's width at every key, and that reactive asks for a layout of
    the whole screen: on the play screen (~30 widgets) a key cost ~22 ms of CPU against ~12 ms
    here (2-core CPU, headless app; a served app types the same way). The text's width only bounds
    the horizontal scroll, which Textual reads from ``virtual_size`` directly, so no layout is
    needed (the box keeps its fixed height).

    In a served session (``lmrl serve``) the cursor is steady: a blinking one redraws the line
    and sends a frame to the browser twice a second in every app, waiting or not (20 paired
    apps idled at ~0.05 of a core each, a core in all, on a 2-core host)."""

    virtual_size = Reactive(Size(0, 0), layout=False)

    def on_mount(self) -> None:
        from lmrl_tui.app import ASK_PLAYER_ENV  # here: the app imports the views

        if os.environ.get(ASK_PLAYER_ENV) == "1":  # the app's ``served``
            self.cursor_blink = False
