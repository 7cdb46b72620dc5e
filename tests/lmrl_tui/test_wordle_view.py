"""The Wordle play view, driven with Textual's Pilot, plus a snapshot."""

from __future__ import annotations

import envs
from lmrl_tui.app import make_app
from lmrl_tui.views.wordle import WordleView


async def type_word(pilot, word: str) -> None:
    await pilot.press(*word)
    await pilot.press("enter")
    await pilot.pause()


async def test_person_plays_wordle_and_wins(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("wordle", None, None, 4, "ann")
        await pilot.pause()
        view = screen.query_one(WordleView)
        answer = screen.session.task.answer
        await pilot.press("c", "r", "a", "n", "x", "y")  # the sixth letter is ignored
        assert view.typing == "cranx"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.session.transitions == [] and "not in the word list" in view._message
        await pilot.press("backspace")
        await pilot.press("e", "enter")
        await pilot.pause()
        assert len(screen.session.transitions) == 1 and view.typing == ""
        await pilot.press("enter")  # nothing typed: no guess and no attempt, nothing stored
        await pilot.pause()
        assert len(screen.session.transitions) == 1 and screen.session.attempts == []
        await type_word(pilot, answer)
        assert screen.session.done and screen.session.success
        assert "The word was " + answer.upper() in str(view.query_one("#message").render())
    ep = store.recent_episodes(1)[0]
    assert (
        ep["task"] == "wordle"
        and ep["success"] == 1
        and ep["return"] == (0.0 if answer == "crane" else -1.0)
    )
    steps = store.steps(ep["id"])
    assert [s["typed"] for s in steps] == ["crane", answer]
    assert [s["action"] for s in steps] == ["c r a n e\n", " ".join(answer) + "\n"]
    assert [a["typed"] for a in steps[0]["info"]["attempts"]] == ["cranx"]
    assert "attempts" not in steps[1]["info"]
    again = envs.replay(envs.make("wordle"), 4, [s["action"] for s in steps])
    assert [t.observation for t in again.transitions] == [s["observation"] for s in steps]


async def test_strict_mode_counts_unknown_words(store):
    app = make_app(store, player="bo")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("wordle-lmrl", None, None, 1, "bo", strict=True)
        await pilot.pause()
        await type_word(pilot, "qqqqq")
        await type_word(pilot, "ab")
        assert [t.step.observation for t in screen.session.transitions] == ["\n", "\n"]
        assert screen.session.total_return == -2.0
        text = str(screen.query_one("#grid").render())
        assert "not a word" in text


async def test_hint_toggle_and_watching_an_agent(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("wordle", envs.make_policy("wordle", "strong"), None, 9, None)
        await pilot.pause()
        view = screen.query_one(WordleView)
        await pilot.press("f2")
        await pilot.pause()
        assert "2300 words still possible" in str(view.query_one("#hint").render())
        await pilot.press("space")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.session.transitions) == 1
        n = screen.session.state()["consistent"]
        assert f"{n} word" in str(view.query_one("#hint").render())


def test_wordle_screen_snapshot(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        app.start_session("wordle", None, None, 2, "snap")
        await pilot.pause()
        for word in ("slate", "crony"):
            await pilot.press(*word, "enter")
        await pilot.press("p", "i")
        await pilot.press("f2")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


async def test_a_step_taken_with_the_hint_open_records_it(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("wordle", None, None, 4, "ann")
        await pilot.pause()
        await type_word(pilot, "crane")  # no hint
        await pilot.press("f2")  # opened and closed again before the guess: still an assisted step
        await pilot.press("f2")
        await type_word(pilot, "slate")
        await pilot.press("f2")  # left open: every guess while it shows is assisted
        await type_word(pilot, "pious")
        await type_word(pilot, "dumpy")
        assert len(screen.session.transitions) == 4
    steps = store.steps(store.recent_episodes(1)[0]["id"])
    assert [s["info"].get("hints") for s in steps] == [
        None,
        ["wordle_hint"],
        ["wordle_hint"],
        ["wordle_hint"],
    ]
