"""The key bar: one rebuild per burst of binding refreshes and only when its keys change; keys
that are only enabled or disabled are dimmed or lit in place, at once."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from lmrl_tui.screens.footer import Footer


class _KeysApp(App[None]):
    BINDINGS = [Binding("y", "yes", "Yes"), Binding("n", "no", "No"), Binding("h", "hidden", "Hidden", show=False)]
    can_answer = True
    no_key = True

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


def _keys(app: App[None]) -> list[tuple[str, bool]]:
    return [(k.key, k.has_class("-disabled")) for k in app.query(FooterKey)]


async def test_a_burst_of_refreshes_rebuilds_once_and_only_on_change() -> None:
    app = _KeysApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.query_one(Footer)
        rebuilds = 0
        real = footer.recompose

        async def counted() -> None:
            nonlocal rebuilds
            rebuilds += 1
            await real()

        footer.recompose = counted  # type: ignore[method-assign]
        assert ("y", False) in _keys(app) and ("n", False) in _keys(app)
        assert "h" not in [k for k, _ in _keys(app)]
        for _ in range(12):  # what one answer in a chat did: a dozen refreshes, same keys
            app.refresh_bindings()
        await pilot.press("tab", "tab")  # focus moves: more refreshes
        await pilot.pause()
        assert rebuilds == 0
        app.can_answer = False
        for _ in range(5):
            app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert rebuilds == 0  # only enabled -> disabled: dimmed in place
        assert ("y", True) in _keys(app) and ("n", True) in _keys(app)
        app.can_answer = True
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert rebuilds == 0 and ("y", False) in _keys(app) and ("n", False) in _keys(app)
        app.no_key = False
        for _ in range(3):
            app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert rebuilds == 1 and "n" not in [k for k, _ in _keys(app)] and ("y", False) in _keys(app)
