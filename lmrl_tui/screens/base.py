"""What every screen of the app shares.

* :attr:`LmrlScreen.lmrl_app`: the app, typed as :class:`LmrlHost` (what screens may read from
  it). Screens ask the app to do things by posting :mod:`lmrl_tui.messages`, never by calling
  its own methods (Textual's ``push_screen``, ``pop_screen`` and ``notify`` are fine).
* The error path for workers (:class:`~lmrl_tui.workers.ReportsWorkerErrors`).
* A steady text cursor when the app runs headless (tests, snapshots): a blinking cursor makes a
  screenshot depend on the moment it is taken.
* Text typed while the focus moves reaches the field it was typed for (:meth:`LmrlScreen.on_key`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual import events
from textual.actions import SkipAction
from textual.binding import Binding
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
    kept_here: set[int]
    holder: str
    campaign_line: str | None

    def let_go(self, episode_id: int | None = None) -> None: ...

    def freeze_garbage(self) -> None: ...
    def sweep_frozen(self) -> None: ...
    def action_unfinished(self) -> None: ...


FORM_KEYS = [
    Binding("tab", "app.focus_next", show=False, priority=True),
    Binding("shift+tab", "app.focus_previous", show=False, priority=True),
    Binding("enter", "form_enter", show=False, priority=True),
]
"""For the BINDINGS of a form: tab, and enter in a text field or a closed drop-down, move the
focus the moment they are read, so what is typed right behind them goes to the next field (a
plain tab or enter moves it once the key has passed the field it leaves, and keys read meanwhile
went to that field: a seed typed behind enter landed in the task list). Enter in the form's
:attr:`LmrlScreen.LAST_FIELD` is left to that field (it submits the form)."""


class LmrlScreen(ReportsWorkerErrors, _ScreenBase):
    """Mixin for every screen and dialog of the app; it comes first:
    ``class HomeScreen(LmrlScreen, Screen[None])``, ``class HelpScreen(LmrlScreen, ModalScreen[None])``.
    """

    LAST_FIELD: str | None = None
    """A form's last text field (its id): enter there starts, through its ``Input.Submitted``."""

    @property
    def lmrl_app(self) -> LmrlHost:
        """The running app, typed (the screens are only ever shown by an :class:`LmrlHost`)."""
        app = self.app
        if not isinstance(app, LmrlHost):
            raise TypeError(
                f"{type(self).__name__} needs an app with a store, not {type(app).__name__}"
            )
        return app

    def action_form_enter(self) -> None:
        """Enter in a form (:data:`FORM_KEYS`): a text field other than the last, or a drop-down
        whose list is closed (a :class:`~lmrl_tui.screens.dialogs.FormSelect`), hands the focus on
        now, and so does a checkbox (enter never toggles one: space does); anything else (a
        button, an open list, the last field) gets the key."""
        from textual.widgets import Checkbox  # forms only: the home screen need not load it

        field = self.focused
        if isinstance(field, Input):
            moves_on = field.id != self.LAST_FIELD
        elif isinstance(field, Checkbox):
            moves_on = True
        else:
            moves_on = hasattr(field, "action_next_field") and not getattr(field, "expanded", False)
        if not moves_on:
            raise SkipAction()
        self.focus_next()

    def reveal_form_error(self) -> None:
        """Bring a form's message under its fields (``#error``, the last thing above its docked
        buttons) into view: scroll the form to its end (``scroll_visible`` counts the space under
        the docked buttons as visible, so only the message's first line showed)."""
        from textual.containers import VerticalScroll

        self.call_after_refresh(self.query_one(VerticalScroll).scroll_end, animate=False)

    def set_focus(
        self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False
    ) -> None:
        # Before the Input gets its Focus event, so its blink timer never starts.
        if isinstance(widget, Input) and self.app.is_headless:
            widget.cursor_blink = False
        super().set_focus(widget, scroll_visible=scroll_visible, from_app_focus=from_app_focus)

    # -- text typed while the focus was moving --------------------------------------------------
    # Textual hands each key to the widget focused when the key is read, but moves the focus for
    # tab (or enter in a form) only when that key has gone up through the widget: text typed right
    # behind a tab went to the field that was being left. A person who pressed enter on a task,
    # tab and "42" while the dialog was opening (0.7 s here) found the seed empty: the task list
    # had them. A key with text that comes back unused to the screen, while a text field has the
    # focus, was meant for that field (the field itself would have used it): it gets it, once.
    # (Input only: the app has no TextArea, and importing it costs the home screen ~17 ms.)
    def on_key(self, event: events.Key) -> None:
        if event.is_printable:
            self._to_text_field(event, events.Key(event.key, event.character))

    def on_paste(self, event: events.Paste) -> None:
        self._to_text_field(event, events.Paste(event.text))

    def _to_text_field(
        self, event: events.Key | events.Paste, again: events.Key | events.Paste
    ) -> None:
        field = self.focused
        if isinstance(field, Input) and not getattr(event, "_lmrl_again", False):
            event.stop()
            event.prevent_default()
            again._lmrl_again = True  # type: ignore[union-attr]  # (a read-only field: not again)
            field.post_message(again)
