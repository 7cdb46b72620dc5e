"""The Text-Nav play view, driven with Textual's Pilot, plus snapshots."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList

import envs
from lmrl_tui.app import make_app
from lmrl_tui.views.textnav import TextNavView, render_map


@pytest.mark.slow  # about 11 s
async def test_person_wins_with_list_typing_and_completion(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("textnav-fo", None, None, 0, "ann")
        await pilot.pause()
        session = screen.session
        view = screen.query_one(TextNavView)
        strong = envs.make_policy("textnav-fo", "strong")
        strong.reset(session.task, 0)
        # 1. An empty Enter plays nothing; the first command is played from the list (Down/Up
        # and ctrl+o), stored as chosen, not as typed.
        await pilot.press("enter", "enter")
        await pilot.pause()
        assert session.transitions == [] and session.attempts == []
        cmd = strong.act(session.task.history()).strip()
        idx = session.state()["admissible"].index(cmd)
        await pilot.press(*["down"] * (idx + 1), "up")
        assert view.query_one("#commands", OptionList).highlighted == idx
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert session.transitions[0].action == cmd + "\n"
        assert session.transitions[0].typed is None
        # 2. A command that is not possible here is explained and not played.
        await pilot.press(*"fly away", "enter")
        await pilot.pause()
        assert len(session.transitions) == 1 and "can't" in str(view.query_one("#turn").render())
        # 3. Type the rest, completing each with Tab from a prefix.
        while not session.done:
            cmd = strong.act(session.task.history()).strip()
            await pilot.press(*cmd[: max(1, len(cmd) - 3)])
            await pilot.pause()
            await pilot.press("tab", "enter")
            await pilot.pause()
        assert session.success and session.total_return == 1.0
        assert "You won" in str(view.query_one("#room").render())
    ep = store.recent_episodes(1)[0]
    assert ep["success"] == 1 and ep["task"] == "textnav-fo"
    steps = store.steps(ep["id"])
    assert steps[0]["typed"] is None and steps[0]["info"]["chosen"] == "list"
    assert steps[1]["info"]["attempts"][0]["typed"] == "fly away"
    again = envs.replay(envs.make("textnav-fo"), 0, [s["action"] for s in steps])
    assert [t.observation for t in again.transitions] == [s["observation"] for s in steps]


async def test_natural_phrasing_is_played_as_the_canonical_command(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("textnav-fo", None, None, 3, "ann")  # starts in the living room
        await pilot.pause()
        session = screen.session
        view = screen.query_one(TextNavView)
        # "food" could be either food on the table: asked which one, no turn spent.
        await pilot.press(*"take the food", "enter")
        await pilot.pause()
        turn = str(view.query_one("#turn").render())
        assert (
            "Did you mean" in turn
            and "take stale food from table" in turn
            and "take fresh food" in turn
        )
        assert session.transitions == [] and session.attempts[0]["typed"] == "take the food"
        for typed in (
            "grab the stale food",
            "w",
            "west",
            "open the fridge",
            "put stale food in fridge",
        ):
            await pilot.press(*typed, "enter")
            await pilot.pause()
        # The last command from the list itself: focused, highlighted, Enter.
        options = view.query_one("#commands", OptionList)
        options.focus()
        await pilot.pause()
        options.highlighted = session.state()["admissible"].index("close fridge")
        await pilot.press("enter")
        await pilot.pause()
        assert session.success
    steps = store.steps(store.recent_episodes(1)[0]["id"])
    assert [(s["typed"], s["action"]) for s in steps] == [
        ("grab the stale food", "take stale food from table\n"),
        ("w", "go west\n"),
        ("west", "go west\n"),
        ("open the fridge", "open fridge\n"),
        ("put stale food in fridge", "insert stale food into fridge\n"),
        (None, "close fridge\n"),
    ]
    assert steps[-1]["info"]["chosen"] == "list" and "chosen" not in steps[-2]["info"]
    assert steps[0]["info"]["attempts"][0]["error"].startswith("Did you mean")


async def test_watching_the_behaviour_agent(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session(
            "textnav-po", envs.make_policy("textnav-po", "behaviour"), None, 3, None
        )
        await pilot.pause()
        assert screen.query_one("#prompt").disabled
        for _ in range(3):
            await pilot.press("space")
            await app.workers.wait_for_complete()
            await pilot.pause()
        session = screen.session
        assert 1 <= len(session.transitions) <= 3
        assert session.state()["feedback"] in str(screen.query_one("#room").render())
        assert session.done or len(session.transitions) == 3


def test_map_shows_the_house_or_only_visited_rooms():
    t = envs.make("textnav-fo")
    t.reset(0, {"start_room": "kitchen"})
    t.step("go east\n")
    full = render_map(t.state()).plain
    for name in (
        "backyard",
        "kitchen",
        "garden",
        "dining",
        "living",
        "bedroom",
        "office",
        "bathroom",
    ):
        assert name in full
    p = envs.make("textnav-po")
    p.reset(0, {"start_room": "kitchen"})
    p.step("go east\n")
    part = render_map(p.state()).plain
    assert "you" in part and "seen" in part and "──" in part  # two rooms visited, linked
    for name in (
        "backyard",
        "kitchen",
        "garden",
        "dining",
        "living",
        "bedroom",
        "office",
        "bathroom",
    ):
        assert name not in part  # the PO text hides the room's name: so does its map


def test_textnav_fo_snapshot(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        app.start_session("textnav-fo", None, None, 0, "snap")
        await pilot.pause()
        for cmd in ("go south", "open fridge"):
            await pilot.press(*cmd, "enter")
            await pilot.pause()
        await pilot.press(*"take f")  # the completion is shown after the cursor
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_textnav_po_snapshot(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        app.start_session("textnav-po", None, None, 0, "snap")
        await pilot.pause()
        await pilot.press(*"go south", "enter", *"go west", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)
