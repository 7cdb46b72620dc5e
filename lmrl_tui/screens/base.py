"""What every screen of the app shares.

* :attr:`LmrlScreen.lmrl_app`: the app, typed as :class:`LmrlHost` (what screens may read from
  it). Screens ask the app to do things by posting :mod:`lmrl_tui.messages`, never by calling
  its own methods (Textual's ``push_screen``, ``pop_screen`` and ``notify`` are fine).
* The error path for workers (:class:`~lmrl_tui.workers.ReportsWorkerErrors`).
* A steady text cursor when the app runs headless (tests, snapshots): a blinking cursor makes a
  screenshot depend on the moment it is taken.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual.widget import Widget
from textual.widgets import Input

from data.store import Store
from lmrl_tui.workers import ReportsWorkerErrors

if TYPE_CHECKING:
    from textual.screen import Screen

    _ScreenBase = Screen[Any]
else:
    # A plain mixin at run time: a Screen subclass between a dialog and ModalScreen would change
    # which of Textual's own DEFAULT_CSS wins (ModalScreen's translucent background).
    _ScreenBase = object


@runtime_checkable
class LmrlHost(Protocol):
    """The app as the screens see it: the store every screen reads, and who is playing."""

    store: Store
    db_path: Path
    player: str | None


class LmrlScreen(ReportsWorkerErrors, _ScreenBase):
    """Mixin for every screen and dialog of the app; it comes first:
    ``class HomeScreen(LmrlScreen, Screen[None])``, ``class HelpScreen(LmrlScreen, ModalScreen[None])``.
    """

    @property
    def lmrl_app(self) -> LmrlHost:
        """The running app, typed (the screens are only ever shown by an :class:`LmrlHost`)."""
        app = self.app
        if not isinstance(app, LmrlHost):
            raise TypeError(f"{type(self).__name__} needs an app with a store, not {type(app).__name__}")
        return app

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        # Before the Input gets its Focus event, so its blink timer never starts.
        if isinstance(widget, Input) and self.app.is_headless:
            widget.cursor_blink = False
        super().set_focus(widget, scroll_visible=scroll_visible, from_app_focus=from_app_focus)
