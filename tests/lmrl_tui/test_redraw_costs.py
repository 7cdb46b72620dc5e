"""What keeps watching an agent smooth (bench/bench_watch.py measures the stalls): a move log
that grows without re-arranging the screen, and garbage frozen after an episode's screen opens
and freed on the idle home screen."""

from __future__ import annotations

import gc
import weakref

from support.app_support import wait_for
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Log, Static

import lmrl_tui.screens.home as home
from data.session import PlaySession
from lmrl_tui.app import make_app
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.info import HelpScreen
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.views.redraw import GrowingLog, TypingInput


class _LogApp(App[None]):
    CSS = "#box { height: 10; } #other { height: 5; }"

    def __init__(self, log: Log) -> None:
        super().__init__()
        self.log_widget = log

    def compose(self) -> ComposeResult:
        yield Static("other widgets", id="other")
        with Vertical(id="box"):
            yield self.log_widget


def _count_layouts(app: App) -> list[int]:
    """From now on, count the screen's layouts (the list's one item)."""
    layouts = [0]
    real = app.screen._refresh_layout

    def counted(*a, **k):  # type: ignore[no-untyped-def]
        layouts[0] += 1
        return real(*a, **k)

    app.screen._refresh_layout = counted  # type: ignore[method-assign]
    return layouts


async def _layouts_while_writing(log: Log) -> tuple[int, Log]:
    app = _LogApp(log)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        for n in range(30):  # enough for its scrollbar to appear
            log.write_line(f"move {n}")
        await pilot.pause()
        layouts = _count_layouts(app)
        for n in range(30, 60):
            log.write_line(f"move {n}")
            await pilot.pause()
        assert log.line_count == 60 and log.virtual_size.height == 60
        assert log.scroll_y == log.max_scroll_y > 0  # still following the last line
        assert log.vertical_scrollbar.window_virtual_size == 60  # the scrollbar knows the size
        shown = [
            "".join(s.text for s in log.render_line(y)._segments)
            for y in range(log.scrollable_content_region.height)
        ]
        assert shown[-1].strip() == "move 59"  # the last line shows, at the bottom
        return layouts[0], log


async def test_the_move_log_grows_without_laying_out_the_screen_again() -> None:
    plain, _ = await _layouts_while_writing(Log())
    growing, _ = await _layouts_while_writing(GrowingLog())
    assert plain >= 30  # Textual's Log: a layout of the whole screen per line
    assert growing == 0


async def test_an_episodes_screen_is_frozen_once_drawn_and_freed_on_the_idle_home_screen(
    store, monkeypatch
) -> None:
    monkeypatch.setattr(home, "SWEEP_AFTER", 0.2)
    app = make_app(store, player="ann")
    app.freeze_after_start = True
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            screen = PlayScreen(PlaySession(store, "maze-fo", player="ann", seed=1))
            app.push_screen(screen)
            await pilot.pause()
            await pilot.pause()
            assert gc.get_freeze_count() > 0 and app._frozen_garbage  # drawn, then frozen
            gone = weakref.ref(screen)
            del screen
            # back home and at once a dialog on it (one tick: a loaded machine cannot let the
            # sweep's timer run out between the two): not idle there, so no sweep
            app.pop_screen()
            app.push_screen(HelpScreen("help"))
            await pilot.pause(0.4)
            assert app._frozen_garbage and gone() is not None
            app.pop_screen()
            await wait_for(
                pilot, lambda: not app._frozen_garbage, "the idle home screen's sweep", 10
            )
            assert isinstance(app.screen, HomeScreen)
            assert gone() is None  # the sweep freed the left screen
    finally:
        gc.unfreeze()  # other tests' apps are not frozen


async def test_typing_a_question_does_not_lay_out_the_play_screen_and_the_line_scrolls(
    store,
) -> None:
    """Every key into the chat line used to re-arrange the whole play screen (Textual's Input
    grows its virtual size, a layout reactive): half the CPU of a keystroke, which the served
    app pays per person. Now a key is a redraw of the line; a question longer than the box still
    scrolls to the cursor, and what was typed is what is stored."""
    app = make_app(store, player="ann")
    async with app.run_test(size=(100, 36)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.start_session("twenty-questions", None, None, 3, "ann")
        await wait_for(pilot, lambda: screen.query("#chat-input"), "the play screen")
        line = screen.query_one("#chat-input")
        await wait_for(pilot, lambda: not line.disabled and line.has_focus, "the guesser's turn")
        await pilot.pause()
        layouts = _count_layouts(app)
        question = "is it something people keep in the kitchen, near a window or in a shed?"
        await pilot.press(*[" " if c == " " else c for c in question])
        await pilot.pause()
        assert line.value == question
        assert layouts == [0]
        assert line.scroll_x == line.max_scroll_x > 0  # the end of the line is in view
        shown = "".join(s.text for s in line.render_line(0)._segments)
        assert "in a shed?" in shown and not shown.startswith("is it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(screen.session.transitions) == 1, "the question")
    (ep,) = store.recent_episodes(1)
    assert store.steps(ep["id"])[0]["typed"] == question


class _LineApp(App[None]):
    def compose(self) -> ComposeResult:
        yield TypingInput(id="line")


async def test_a_served_session_s_typing_line_has_a_steady_cursor(monkeypatch) -> None:
    """A blinking cursor redraws the line and sends the browser a frame twice a second in every
    served app, waiting or not: served, the cursor is steady; in a terminal it blinks."""
    from lmrl_tui.app import ASK_PLAYER_ENV

    for served in (True, False):
        monkeypatch.setenv(ASK_PLAYER_ENV, "1" if served else "0")
        app = _LineApp()
        async with app.run_test() as pilot:
            await pilot.pause()
            assert app.query_one("#line", TypingInput).cursor_blink is not served
