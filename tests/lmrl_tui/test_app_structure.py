"""How the app's pieces talk: typed access to the app, workers that report through one path,
styles in .tcss files that ship with the package, a steady cursor in headless runs."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from textual.app import App
from textual.css.stylesheet import Stylesheet

import lmrl_tui
from lmrl_tui.app import LmrlApp, make_app
from lmrl_tui.screens.base import LmrlHost, LmrlScreen

PACKAGE = Path(lmrl_tui.__file__).parent
UI_FILES = sorted([*PACKAGE.glob("screens/*.py"), *PACKAGE.glob("views/*.py"), PACKAGE / "app.py"])


def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_screens_and_views_reach_the_app_typed():
    for path in UI_FILES:
        text = _source(path)
        assert "type: ignore[attr-defined]" not in text, path
        assert "call_from_thread" not in text, f"{path}: workers post messages"
        assert not re.search(r"getattr\(self\.app,", text), f"{path}: use self.lmrl_app"


def _workers(tree: ast.AST):
    """(class name, method, group, exit_on_error) of every @work(...) method."""
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            for dec in fn.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", None) == "work":
                    kw = {k.arg: k.value for k in dec.keywords}
                    group = ast.literal_eval(kw["group"]) if "group" in kw else "default"
                    exits = ast.literal_eval(kw["exit_on_error"]) if "exit_on_error" in kw else True
                    yield cls.name, fn, group, exits


def test_workers_report_failures_through_one_path():
    found = 0
    for path in UI_FILES:
        tree = ast.parse(_source(path))
        module = importlib.import_module(
            "lmrl_tui." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        )
        for cls_name, fn, group, exits in _workers(tree):
            found += 1
            for handler in (n for n in ast.walk(fn) if isinstance(n, ast.ExceptHandler)):
                caught = ast.unparse(handler.type) if handler.type is not None else "everything"
                assert caught not in ("Exception", "BaseException", "everything"), (
                    f"{path.name}:{fn.name} catches {caught}: let it fail and list its group in WORKER_ERRORS"
                )
            if not exits:  # reported, not fatal: it needs its toast
                assert group in getattr(module, cls_name).WORKER_ERRORS, (
                    f"{cls_name}.{fn.name} ({group})"
                )
    assert found >= 7


def _ui_classes() -> set[str]:
    names = set()
    for path in UI_FILES:
        names |= {n.name for n in ast.walk(ast.parse(_source(path))) if isinstance(n, ast.ClassDef)}
    return names


def test_styles_are_tcss_files_in_the_package_with_rules_scoped_to_a_class():
    for path in UI_FILES:
        assert not re.search(r"DEFAULT_CSS\s*=", _source(path)), (
            f"{path}: styles go in lmrl_tui/styles/*.tcss"
        )
    paths = [Path(p) for p in LmrlApp.CSS_PATH]
    assert paths and all(
        p.is_file() and p.suffix == ".tcss" and PACKAGE in p.parents for p in paths
    )
    sheet = Stylesheet(variables=App().get_css_variables())
    for p in paths:
        sheet.read(p)
    sheet.parse()  # raises on an error
    classes = _ui_classes()
    for rule in sheet.rules:
        for selectors in rule.selector_set:
            assert selectors.selectors[0].name in classes, (
                f"{selectors.css}: start with the screen or view"
            )


def test_every_screen_uses_the_base_and_the_app_is_a_host(store):
    from lmrl_tui.screens import browse, dialogs, home, leave, play, runs

    for module in (browse, dialogs, home, leave, play, runs):
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and obj.__module__ == module.__name__
                and name.endswith(("Screen", "Dialog"))
            ):
                assert issubclass(obj, LmrlScreen), name
    assert isinstance(make_app(store), LmrlHost)


async def test_headless_runs_have_a_steady_cursor_and_a_fixed_theme(store):
    """Snapshots must not depend on the blink phase at the moment they are taken, nor on
    $TEXTUAL_THEME."""
    app = make_app(store, player="ann")
    app.theme = "nord"  # as if $TEXTUAL_THEME said so
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        assert app.theme == "textual-dark"
        app.new_episode("maze-fo", seed=1)
        await pilot.pause()
        await pilot.click("#seed")
        seed = app.screen.query_one("#seed")
        for _ in range(4):
            await pilot.pause(0.3)
            assert app.focused is seed and not seed.cursor_blink and seed._cursor_visible


async def test_screens_ask_the_app_by_message(store):
    """Keys on the home screen and a task picked in the dialog reach the app as messages."""
    from lmrl_tui.screens.browse import BrowseScreen
    from lmrl_tui.screens.dialogs import NewEpisodeDialog
    from lmrl_tui.screens.home import HomeScreen
    from lmrl_tui.screens.info import HelpScreen

    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, BrowseScreen)
        await pilot.press("escape", "enter")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, NewEpisodeDialog) and dialog.task_id == "maze-fo"
        dialog.query_one("#player").value = "bea"
        dialog.query_one("#task").value = "wordle"
        await pilot.pause()
        await pilot.pause()
        again = app.screen
        assert isinstance(again, NewEpisodeDialog) and again is not dialog
        assert again.task_id == "wordle" and again.query_one("#player").value == "bea"
        assert [type(s) for s in app.screen_stack[-2:]] == [
            HomeScreen,
            NewEpisodeDialog,
        ]  # one dialog
