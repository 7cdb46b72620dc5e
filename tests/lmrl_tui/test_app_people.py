"""Two people, one store: an unfinished episode is offered only to the people who played it, and
never while another app (a served browser, a terminal) is playing it — not to resume, not to mark
abandoned. Each app here is a real app on its own connection to one SQLite file, as the
processes of ``lmrl serve`` are; a crashed app is a hold written by a process that has ended."""

from __future__ import annotations

import socket
import subprocess
import sys

from support.app_support import settle, spy_notifications, wait_for

from data.holds import hold
from data.store import Store
from lmrl_tui.app import make_app
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.leave import LeaveDialog, UnfinishedDialog
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.screens.player import PlayerPrompt

MAZE = "maze-fo"


def _dead_holder() -> str:
    """The holder id of an app process that has ended (a crash)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return f"{socket.gethostname()}:{int(done.stdout)}:crashed"


async def _name_yourself(app, pilot, name: str) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, PlayerPrompt), "the name prompt")
    await pilot.press(*name, "enter")
    await wait_for(pilot, lambda: app.player == name, "the name taken")
    await settle(app)
    await pilot.pause(0.1)
    await settle(app)


async def _offered(app, pilot) -> list[int]:
    """What the app offers when asked (u on the home screen): the dialog's episode ids."""
    if not isinstance(app.screen, UnfinishedDialog):
        await pilot.press("u")
        await settle(app)
        await pilot.pause(0.1)
    if isinstance(app.screen, UnfinishedDialog):
        ids = sorted(app.screen.episodes)
        await pilot.press("escape")
        await pilot.pause()
        return ids
    return []


async def test_a_served_episode_being_played_is_offered_to_nobody_else(db_path, monkeypatch):
    monkeypatch.setenv("LMRL_ASK_PLAYER", "1")  # as `lmrl serve` starts each browser's app
    a = make_app(Store(db_path))
    async with a.run_test(size=(120, 36)) as pa:
        await _name_yourself(a, pa, "ann")
        screen = a.start_session(MAZE, None, None, 5, "ann")
        assert isinstance(screen, PlayScreen)
        await pa.press("up")
        await wait_for(pa, lambda: len(screen.session.transitions) == 1, "ann's move")
        eid = screen.session.episode_id
        # ann opens a second tab (or another person types the same name: names are all we know)
        for name in ("ann",):
            other = make_app(Store(db_path))
            seen = spy_notifications(other)
            async with other.run_test(size=(120, 36)) as po:
                await _name_yourself(other, po, name)
                assert isinstance(other.screen, HomeScreen), type(other.screen)  # nothing offered
                assert await _offered(other, po) == []
                assert any(m == "No unfinished episodes." for m, *_ in seen)
        assert a.store.episode(eid)["status"] == "in_progress"
        await pa.press("left")  # ann plays on, undisturbed
        await wait_for(pa, lambda: len(screen.session.transitions) == 2, "ann's second move")
        await pa.press("ctrl+q")
        await wait_for(pa, lambda: isinstance(a.screen, LeaveDialog), "the quit question")
        await pa.press("enter")  # keep it to resume later
        await wait_for(pa, lambda: not a.is_running, "ann's app to close")
    # ann's app has closed with the episode unfinished: it is ann's to resume, and only ann's
    for name, offered in (("bo", []), ("ann", [eid])):
        later = make_app(Store(db_path))
        async with later.run_test(size=(120, 36)) as pl:
            await _name_yourself(later, pl, name)
            assert await _offered(later, pl) == offered
    store = Store(db_path)
    assert store.episode(eid)["status"] == "in_progress" and store.episode(eid)["n_steps"] == 2
    assert [(s["info"]["via"], s["info"]["key"]) for s in store.steps(eid)] == [
        ("key", "up"),
        ("key", "left"),
    ]


async def test_a_terminal_is_offered_its_own_unfinished_episodes_and_no_one_else_s(db_path):
    """The plain ``lmrl`` keeps its behaviour (its person's unfinished episodes, at start) and
    leaves alone another terminal's episode on the same store while that one is playing it."""
    store = Store(db_path)
    from data.session import PlaySession

    mine = PlaySession(store, MAZE, seed=3, player="ann")
    mine.start()
    mine.human_input("up")  # ann's terminal crashed here
    hold(store, mine.episode_id, _dead_holder(), "ann")
    a = make_app(Store(db_path), player="bea")  # bea's terminal, playing now
    async with a.run_test(size=(120, 36)) as pa:
        await settle(a)
        assert isinstance(a.screen, HomeScreen)  # ann's episode is not bea's
        screen = a.start_session(MAZE, None, None, 4, "bea")
        await pa.press("down")
        await wait_for(pa, lambda: len(screen.session.transitions) == 1, "bea's move")
        theirs = screen.session.episode_id
        for player in (None, "ann"):  # a terminal that knows no name; ann's
            other = make_app(Store(db_path), player=player)
            async with other.run_test(size=(120, 36)) as po:
                await wait_for(po, lambda o=other: isinstance(o.screen, UnfinishedDialog), "offer")
                assert sorted(other.screen.episodes) == [mine.episode_id]  # never bea's
                if player is None:
                    continue
                await po.press("enter")  # resume: the crashed app's hold does not count
                await wait_for(po, lambda o=other: isinstance(o.screen, PlayScreen), "resumed")
                assert other.screen.session.episode_id == mine.episode_id
                await po.press("up")
                await wait_for(
                    po, lambda o=other: len(o.screen.session.transitions) == 2, "ann's move"
                )
        assert a.store.episode(theirs)["status"] == "in_progress"


async def test_an_episode_taken_up_elsewhere_after_the_offer_is_left_alone(db_path):
    store = Store(db_path)
    from data.session import PlaySession

    left = PlaySession(store, MAZE, seed=3, player="ann")
    left.start()
    left.human_input("up")
    eid = left.episode_id
    app = make_app(Store(db_path), player="ann")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnfinishedDialog), "the offer")
        dialog = app.screen
        hold(store, eid, "elsewhere:1:other-window", "ann")  # ann resumed it in another window
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is dialog and dialog.query_one("#abandon").disabled
        assert "another window" in str(dialog.query_one("#resume-error").render())
        await pilot.press("r")
        await settle(app)
        await pilot.pause()
        assert app.screen is dialog and dialog.query_one("#resume").disabled
    assert store.episode(eid)["status"] == "in_progress"
