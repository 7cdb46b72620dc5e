"""The new-episode dialog as a person uses it: where focus starts and shows, what Enter does, what
it remembers from the last episode of a task, and errors shown under the field they concern."""

from __future__ import annotations

import pytest
from support.app_support import wait_for
from textual.containers import VerticalScroll
from textual.widgets import Input, Select

from lmrl_tui.app import make_app
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.play import PlayScreen


async def open_dialog(app, pilot, task_id: str = "maze-fo", **kw) -> NewEpisodeDialog:
    await app.workers.wait_for_complete()
    app.new_episode(task_id, **kw)
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, NewEpisodeDialog)
    return dialog


async def settle(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def wait_until(pilot, ready, tries: int = 200) -> None:
    """Pause until ``ready()`` (a worker's failure reaches the dialog as a message, which a loaded
    machine may deliver some pauses after the worker ended)."""
    for _ in range(tries):
        if ready():
            return
        await pilot.pause()


def field_error(dialog: NewEpisodeDialog, field: str) -> str:
    return str(dialog.query_one(f"#{field}-error").render())


async def test_focus_starts_on_the_first_field_and_is_marked(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert app.focused is dialog.query_one("#task", Select)
        # The focused field's label carries a marker that shows without colours.
        assert str(dialog.query_one("#task-label").render()).startswith("▸")
        assert not str(dialog.query_one("#seed-label").render()).startswith("▸")
        await pilot.press("tab")
        assert app.focused is dialog.query_one("#seed", Input)
        assert str(dialog.query_one("#seed-label").render()).startswith("▸")
        assert not str(dialog.query_one("#task-label").render()).startswith("▸")
        # Through every field and back with shift+tab: one label marked, the focused field's.
        fields = list(dialog._labels)
        for key in ["tab"] * len(fields) + ["shift+tab"] * 3:
            await pilot.press(key)
            row = next(
                (
                    n.id[:-4]
                    for n in app.focused.ancestors_with_self
                    if n.id and n.id.endswith("-row")
                ),
                None,
            )
            marked = [
                f for f in fields if str(dialog.query_one(f"#{f}-label").render()).startswith("▸")
            ]
            assert marked == ([row] if row else []), (key, app.focused)
            assert [
                f for f in fields if dialog.query_one(f"#{f}-row").has_class("-focused")
            ] == marked


async def test_enter_in_a_field_moves_on_and_does_not_start(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        dialog.query_one("#seed", Input).focus()
        await pilot.press("7", "enter")
        await settle(app, pilot)
        assert app.screen is dialog and store.count() == 0
        assert app.focused is dialog.query_one("#agent", Select)
        await pilot.press("enter")  # a drop-down too: enter moves on (space opens its list)
        await pilot.pause()
        assert app.focused is dialog.query_one("#checkpoint", Input) and app.screen is dialog
        await pilot.press("shift+tab", "space")
        await pilot.pause()
        assert dialog.query_one("#agent", Select).expanded
        await pilot.press("down", "enter")  # picks the next agent
        await pilot.pause()
        assert (
            dialog.query_one("#agent", Select).value == "strong"
            and not dialog.query_one("#agent").expanded
        )
        dialog.query_one("#agent", Select).value = "human"
        dialog.query_one("#opt-layout_seed", Input).focus()  # the maze's last option
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is dialog and app.focused is dialog.query_one("#player", Input)
        await pilot.press("enter")  # the last field: start
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen) and app.screen.session.seed == 7
    assert store.count() == 1


async def test_the_start_button_starts(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot, seed=3)
        dialog.query_one("#start").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen) and app.screen.session.seed == 3


async def test_the_last_choices_of_a_task_are_remembered_across_restarts(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot, "wordle")
        dialog.query_one("#agent", Select).value = "strong"
        dialog.query_one("#opt-words", Select).value = "small"
        dialog.query_one("#opt-max_guesses", Input).value = "7"
        dialog.query_one("#strict").value = True
        dialog.query_one("#player", Input).value = "bea"
        await pilot.click("#start")
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, HomeScreen)
        again = await open_dialog(app, pilot, "wordle")
        assert again.query_one("#agent", Select).value == "strong"
        assert again.query_one("#opt-words", Select).value == "small"
        assert again.query_one("#opt-max_guesses", Input).value == "7"
        assert again.query_one("#strict").value is True
        assert again.query_one("#player", Input).value == "bea"
        assert again.query_one("#seed", Input).value == ""  # a new random seed each time
        other = await open_dialog(app, pilot, "maze-fo")  # another task has its own choices
        assert other.query_one("#agent", Select).value == "human"
        assert other.query_one("#opt-layout", Select).value == "double_t"
    restarted = make_app(store)
    async with restarted.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(restarted, pilot, "wordle")
        assert dialog.query_one("#agent", Select).value == "strong"
        assert dialog.query_one("#opt-words", Select).value == "small"
        assert dialog.query_one("#player", Input).value == "bea"


async def test_errors_are_shown_under_their_field_and_the_dialog_stays(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot, "wordle")
        dialog.query_one("#seed", Input).value = "x"
        await pilot.click("#start")
        await settle(app, pilot)
        assert app.screen is dialog and "whole number" in field_error(dialog, "seed")
        dialog.query_one("#seed", Input).value = "4"
        dialog.query_one("#opt-max_guesses", Input).value = "0"
        await pilot.click("#start")
        await settle(app, pilot)
        assert app.screen is dialog and field_error(dialog, "seed") == ""
        assert (
            field_error(dialog, "opt-max_guesses")
            == "max_guesses must be a whole number ≥ 1, not '0'"
        )
        assert app.focused is dialog.query_one("#opt-max_guesses", Input)  # where the fix is typed
        dialog.query_one("#opt-max_guesses", Input).value = ""
        dialog.query_one("#checkpoint", Input).value = "no-such-policy"
        await pilot.click("#start")
        await settle(app, pilot)
        await wait_until(pilot, lambda: field_error(dialog, "checkpoint") != "")
        assert app.screen is dialog and "unknown policy 'no-such-policy'" in field_error(
            dialog, "checkpoint"
        )
        assert field_error(dialog, "opt-max_guesses") == ""
        assert dialog.query_one("#seed", Input).value == "4"  # the form is kept
        dialog.query_one("#checkpoint", Input).value = ""
        await pilot.click("#start")
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen) and app.screen.session.seed == 4
    assert store.count() == 1


async def test_every_option_of_the_task_has_a_field_with_its_values(store, tmp_path):
    """Enumerated options are drop-downs of their values (the default marked), the others fields
    whose placeholder names what they take; what is chosen is played and stored."""
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 50)) as pilot:
        dialog = await open_dialog(app, pilot, "endgames", seed=2)
        for name in (
            "opponent",
            "elo",
            "skill_level",
            "depth",
            "movetime",
            "nodes",
            "threads",
            "max_moves",
            "fen",
            "positions",
            "setups",
        ):
            assert dialog.query(f"#opt-{name}"), name
        opponent = dialog.query_one("#opt-opponent", Select)
        assert opponent.value == "stockfish" and "stockfish (default)" in [
            str(p) for p, _ in opponent._options
        ]
        positions = dialog.query_one("#opt-positions", Input)  # test, random or a positions file
        assert "test|random|a file; blank: test" in positions.placeholder
        positions.value = str(tmp_path / "missing.jsonl")
        await pilot.click("#start")
        await settle(app, pilot)
        assert app.screen is dialog and "cannot read the positions file" in str(
            dialog.query_one("#error").render()
        )
        (tmp_path / "mine.jsonl").write_text('"8/8/8/7k/8/4R2K/1R6/8 w - - 0 1"\n')
        positions.value = str(tmp_path / "mine.jsonl")
        await pilot.click("#start")
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen) and app.screen.session.state()["setup"] == "kRRK"
        app.screen.dismiss()  # back home: the next episode is the drop-downs' and fields' defaults
        await settle(app, pilot)
        dialog = await open_dialog(app, pilot, "endgames", seed=2)
        dialog.query_one("#opt-positions", Input).value = ""
        setups = dialog.query_one("#opt-setups", Input)
        assert "kQK,kRK,kQRK,kRRK" in setups.placeholder
        setups.value = "kQK,kXK"
        await pilot.click("#start")
        await settle(app, pilot)
        assert app.screen is dialog
        assert (
            field_error(dialog, "opt-setups")
            == "setups must be any of kQK,kRK,kQRK,kRRK, not 'kQK,kXK'"
        )
        setups.value = "kRK"
        await pilot.click("#start")
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen)
        assert app.screen.session.state()["setup"] == "kRK"
    ep = store.recent_episodes(1)[0]
    assert ep["options"]["setups"] == ["kRK"] and ep["options"]["positions"] == "test"


async def test_a_scripted_asker_builds_its_question_bank_off_the_ui_thread(store, monkeypatch):
    """The first Twenty Questions episode with a scripted guesser builds its question bank (every
    question asked of every secret, about a second): in a worker, with a note, not on the UI."""
    import threading

    from envs.questions.policies import BankAsker

    threads, real = [], BankAsker.prepare

    def prepare(self):
        threads.append(threading.current_thread() is threading.main_thread())
        real(self)

    monkeypatch.setattr(BankAsker, "prepare", prepare)
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot, "twenty-questions", seed=5)
        dialog.query_one("#agent", Select).value = "strong"
        dialog.query_one("#start").focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert threads == [False]
        assert isinstance(app.screen, PlayScreen) and app.screen.session.seed == 5
        assert app.screen.session.agent.name == "strong"


@pytest.mark.parametrize("size", [(160, 50), (100, 24)])
async def test_a_refusal_under_a_long_form_is_scrolled_into_view(store, tmp_path, size):
    """The task refuses its options (a missing positions file): the message under the form, below
    the fold of a small terminal, is brought into view with its reason."""
    app = make_app(store, player="ann")
    async with app.run_test(size=size) as pilot:
        dialog = await open_dialog(app, pilot, "endgames", seed=2)
        dialog.query_one("#opt-positions", Input).value = str(tmp_path / "missing.jsonl")
        dialog.query_one("#player", Input).focus()
        await settle(app, pilot)
        form = dialog.query_one(VerticalScroll)
        form.scroll_home(animate=False)  # the person scrolled back up to check the fields
        await settle(app, pilot)
        await pilot.press("enter")  # enter in the last field starts
        await settle(app, pilot)
        error, buttons = dialog.query_one("#error"), dialog.query_one("#buttons")
        await wait_until(
            pilot, lambda: error.region.height and error.region.bottom <= buttons.region.y
        )
        assert "cannot read the positions file" in str(error.render()) and "No such file" in str(
            error.render()
        )
        assert app.screen is dialog and form.region.contains_region(error.region)
        assert error.region.bottom <= buttons.region.y  # not under the buttons


async def test_enter_on_a_checkbox_moves_on_and_ctrl_s_starts_from_any_field(store):
    from textual.widgets import Checkbox

    app = make_app(store, player="ann")
    async with app.run_test(
        size=(80, 24)
    ) as pilot:  # the smallest usual terminal: the form scrolls
        dialog = await open_dialog(app, pilot, "wordle")
        box = dialog.query_one("#strict", Checkbox)
        box.focus()
        await pilot.pause()
        await pilot.press("enter")  # never ticks it: it moves on
        await pilot.pause()
        assert box.value is False and app.focused is not box
        box.focus()
        await pilot.press("space")  # space ticks it
        await pilot.pause()
        assert box.value is True
        dialog.query_one("#seed", Input).focus()
        await pilot.press(
            "4", "2", "ctrl+s"
        )  # starts with what the form shows, from the seed field
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen))
        session = app.screen.session
        assert (session.task_id, session.seed, session.strict) == ("wordle", 42, True)


async def test_every_form_fits_an_80_by_24_terminal(store):
    """The forms are no wider than the smallest usual terminal, and scroll to their last field."""
    from textual.containers import Vertical

    from lmrl_tui.screens.leave import UnfinishedDialog
    from lmrl_tui.screens.train_form import TrainForm

    app = make_app(store, player="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        app.push_screen(TrainForm("maze-fo"))
        await pilot.pause()
        app.push_screen(
            UnfinishedDialog(
                [
                    {
                        "id": 1,
                        "task": "maze-fo",
                        "n_steps": 2,
                        "player": "ann",
                        "agent_kind": "human",
                        "agent_name": None,
                        "started_at": None,
                    }
                ]
            )
        )
        await pilot.pause()
        app.new_episode("endgames")  # the longest form: its options
        await pilot.pause()
        for screen, box in [
            (app.screen_stack[-1], VerticalScroll),
            (app.screen_stack[-2], Vertical),
            (app.screen_stack[-3], VerticalScroll),
        ]:
            region = screen.query_one(box).region
            assert region.x >= 0 and region.right <= 80 and region.bottom <= 24, (screen, region)
        form = app.screen.query_one(VerticalScroll)
        assert form.max_scroll_y > 0  # taller than the terminal: it scrolls
        player = app.screen.query_one("#player", Input)
        player.focus()
        await wait_for(
            pilot, lambda: player.region.bottom <= 24, "the focused field brought into view", 10
        )
