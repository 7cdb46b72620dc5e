"""The key bar: one widget that shows the screen's keys, redraws once per burst of binding
refreshes and only when what it shows changes, presses a key when it is clicked, and keeps the
command palette's key on the right however narrow the terminal."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button

from lmrl_tui.app import LmrlApp
from lmrl_tui.screens.footer import Footer


class _KeysApp(App[None]):
    CSS_PATH = LmrlApp.CSS_PATH  # the bar's look, as in the app
    BINDINGS = [
        Binding("y", "yes", "Yes"),
        Binding("n", "no", "No"),
        Binding("h", "hidden", "Hidden", show=False),
    ]
    can_answer = True
    no_key = True

    def __init__(self) -> None:
        super().__init__()
        self.pressed: list[str] = []

    def compose(self) -> ComposeResult:
        yield Button("a", id="a")
        yield Button("b", id="b")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "no" and not self.no_key:
            return False  # not on the bar at all
        if action in ("yes", "no"):
            return True if self.can_answer else None  # None: shown, disabled
        return True

    def action_yes(self) -> None:
        self.pressed.append("yes")

    def action_no(self) -> None:
        self.pressed.append("no")


def _keys(app: App[None]) -> list[tuple[str, bool]]:
    return [(k.key, k.enabled) for k in app.query_one(Footer).keys if not k.palette]


def _line(app: App[None]) -> str:
    footer = app.query_one(Footer)
    return "".join(seg.text for seg in footer.render_line(0)._segments)


async def test_a_burst_of_refreshes_redraws_once_and_only_on_change() -> None:
    app = _KeysApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.query_one(Footer)
        redraws = 0
        real = footer.refresh

        def counted(*a, **k):  # type: ignore[no-untyped-def]
            nonlocal redraws
            redraws += 1
            return real(*a, **k)

        footer.refresh = counted  # type: ignore[method-assign]
        assert _keys(app) == [("y", True), ("n", True)]  # "h" is not shown
        assert "Yes" in _line(app) and "Hidden" not in _line(app)
        for _ in range(12):  # what one answer in a chat did: a dozen refreshes, same keys
            app.refresh_bindings()
        await pilot.press("tab", "tab")  # focus moves: more refreshes
        await pilot.pause()
        assert redraws == 0
        app.can_answer = False
        for _ in range(5):
            app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert redraws == 1 and _keys(app) == [("y", False), ("n", False)]  # dimmed, one redraw
        app.can_answer = True
        app.no_key = False
        for _ in range(3):
            app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert redraws == 2 and _keys(app) == [("y", True)]


async def test_clicking_a_key_presses_it_and_a_dimmed_key_rings_the_bell() -> None:
    app = _KeysApp()
    bells = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        footer = app.query_one(Footer)
        x = next(start for start, _end, k in footer._spans if k.key == "n")
        await pilot.click(Footer, offset=(x + 1, 0))
        await pilot.pause()
        assert app.pressed == ["no"]
        app.can_answer = False
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        await pilot.click(Footer, offset=(x + 1, 0))
        await pilot.pause()
        assert app.pressed == ["no"] and bells == [1]


async def test_the_palette_key_stays_on_the_right_when_the_keys_do_not_fit() -> None:
    app = _KeysApp()
    async with app.run_test(size=(24, 10)) as pilot:
        await pilot.pause()
        line = _line(app)
        assert len(line) == 24 and line.rstrip().endswith("palette")
        assert "Yes" in line and "No" not in line  # cut at a whole key
