"""A person sells to a buyer checkpoint (``lmrl train bc --side partner``) picked in the
new-episode dialog: the buyer loads in its own process and answers; the store names it."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import envs  # noqa: E402
from data.generate import generate  # noqa: E402
from data.store import Store  # noqa: E402
from lmrl_tui.app import make_app  # noqa: E402
from lmrl_tui.cli import main  # noqa: E402
from lmrl_tui.screens.play import PlayScreen  # noqa: E402


@pytest.mark.slow
async def test_a_person_sells_to_a_buyer_checkpoint(store, tmp_path):
    data = Store(tmp_path / "data.db")
    generate(data, "car-dealer", envs.make_policy("car-dealer", "behaviour"), 8, seed=100)
    data.close()
    buyer = tmp_path / "buyer"
    assert (
        main(
            [
                "--db",
                str(tmp_path / "data.db"),
                "train",
                "bc",
                "--task",
                "car-dealer",
                "--side",
                "partner",
                "--out",
                str(buyer),
                "--max-steps",
                "2",
                "--batch-size",
                "4",
                "--n-embd",
                "32",
                "--n-head",
                "2",
                "--n-layer",
                "1",
                "--vocab-size",
                "300",
                "--eval-episodes",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        await app.workers.wait_for_complete()
        app.new_episode("car-dealer", seed=5)
        await pilot.pause()
        app.screen.query_one("#partner-model").value = str(tmp_path / "missing")
        await pilot.click("#start")
        await pilot.pause()
        assert not isinstance(
            app.screen, PlayScreen
        )  # a folder that is not there: the field says so
        app.screen.query_one("#partner-model").value = str(buyer)
        # The error focused (and scrolled to) its field: let the form settle so the click lands on
        # Start, not where Start was (CI once timed out here with the first attempt's message shown).
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert await pilot.click("#start"), "the click did not land on Start"
        # The buyer loads in a worker (its own process imports torch: slow on a loaded machine);
        # wait for that worker itself rather than for a fixed time.
        for _ in range(600):
            await app.workers.wait_for_complete()
            await pilot.pause(0.1)
            if isinstance(app.screen, PlayScreen):
                break
        screen = app.screen
        shown = [str(box.render()) for box in screen.query(".field-error.-shown, #error")]
        assert isinstance(screen, PlayScreen), shown  # the dialog's messages, if it stayed
        await pilot.pause(0.3)
        screen.query_one("#chat-input").value = "Hi! What kind of car are you looking for?"
        await pilot.press("enter")
        for _ in range(1200):
            await pilot.pause(0.1)
            if screen.session.transitions:
                break
        assert len(screen.session.transitions) == 1
        await pilot.press("escape", "escape")
        await pilot.pause()
    ep = store.recent_episodes(1)[0]
    assert (ep["agent_kind"], ep["partner_kind"], ep["player"]) == ("human", "checkpoint", "ann")
    (step,) = store.steps(ep["id"])
    assert step["action"].startswith("Hi! What kind of car") and step["info"]["partner_replies"]
