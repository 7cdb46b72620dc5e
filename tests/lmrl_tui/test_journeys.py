"""Journeys as people walk them: the specification of the keyboard paths.

For every task and every side a person can play: start from the home screen with the defaults
(the task's row, enter, ctrl+s: two keys once the row is highlighted) or, for the partner sides,
from ``lmrl play``'s configured episode; type into the wrong place on purpose (keys that are
bindings elsewhere, input the task refuses); act; quit with ctrl+q and keep the episode; start
again, resume it, act once more, and quit abandoning it. Then the store must hold exactly what
was done, and how: what was typed as typed, a key as that key, a button as that button.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from support.app_support import wait_for

import envs
from lmrl_tui.app import make_app
from lmrl_tui.cli.play import play_fields
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.leave import LeaveDialog, UnfinishedDialog
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.starting import PlayRequest


@pytest.fixture(autouse=True)
def fixed_random_seed(monkeypatch):
    """The dialog's default seed is a random one: the same one on every run here, so a journey
    never meets a start where its first move already ends the game."""
    monkeypatch.setattr(random, "SystemRandom", lambda: random.Random(20261207))


@dataclass
class Done:
    """What the person did, step by step: ``(typed, via, pressed)`` of each recorded step (for
    the agent side) or of each reply (for the partner side), and refused inputs."""

    steps: list[tuple[str | None, str, str | None]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def play_screen(app) -> PlayScreen:
    screen = app.screen
    assert isinstance(screen, PlayScreen), screen
    return screen


async def type_line(pilot, text: str) -> None:
    await pilot.press(*[" " if c == " " else c for c in text])
    await pilot.press("enter")


async def agent_turn(pilot, app) -> PlayScreen:
    """Wait until it is the person's turn as the acting side."""
    screen = play_screen(app)
    await wait_for(pilot, lambda: not screen.busy and not screen.thinking, "the person's turn")
    await pilot.pause()
    return screen


async def person_acts(pilot, app, n: int, done: Done) -> None:
    """``n`` moves of the acting side, by the means the task's view offers."""
    screen = await agent_turn(pilot, app)
    task = screen.session.task_id
    for _ in range(n):
        before = len(screen.session.transitions)
        if task.startswith("maze"):
            await pilot.press("x", "q", "1")  # not moves: nothing is played or stored
            assert len(screen.session.transitions) == before
            await pilot.press("w")
            done.steps.append((None, "key", "w"))
        elif task.startswith("wordle"):
            await pilot.press("1", "!")  # not letters: ignored
            word = ("crane", "slate", "pious")[before]
            await type_line(pilot, "zzzzq")  # not a word: refused, kept as an attempt
            done.refused.append("zzzzq")
            await wait_for(
                pilot, lambda: screen.view.typing == "zzzzq" or not screen.view.typing, "refusal"
            )
            await pilot.press(*["backspace"] * 5)
            await type_line(pilot, word)
            done.steps.append((word, "typed", None))
        elif task.startswith("textnav"):
            await type_line(pilot, "fly to the moon")  # not a command: refused
            done.refused.append("fly to the moon")
            await agent_turn(pilot, app)
            command = screen.session.task.state()["admissible"][0]
            await type_line(pilot, command)
            done.steps.append((command, "typed", None))
        elif task in ("chess", "endgames"):
            await type_line(pilot, "Zz9")  # not a move: refused, typed where the focus is
            done.refused.append("Zz9")
            await agent_turn(pilot, app)
            move = screen.session.task.state()["legal_moves_san"][0]
            await type_line(pilot, move)
            done.steps.append((move, "typed", None))
        else:  # the dialogue tasks: t, p, v and space are bindings elsewhere, text here
            line = {"car-dealer": "Hi there, what type of car suits you? Tell me, please."}.get(
                task, "is it portable or used at night"
            )
            line = (
                line
                if before == 0
                else "is it very very old"
                if task != "car-dealer"
                else "Do you want a test drive?"
            )
            await type_line(pilot, line)
            done.steps.append((line, "typed", None))
        await wait_for(
            pilot,
            lambda n=before: len(screen.session.transitions) == n + 1 or screen.session.done,
            "the move to be played",
        )
        await agent_turn(pilot, app)


async def person_tries_in_vain(pilot, app, done: Done) -> None:
    """Input the task refuses, typed just before quitting: it goes with the next step once the
    episode is resumed (the tasks that take any text or only keys refuse nothing to record)."""
    screen = await agent_turn(pilot, app)
    task = screen.session.task_id
    text = next(
        (
            t
            for prefix, t in (
                ("wordle", "qqqqx"),
                ("textnav", "fly to the moon"),
                ("chess", "Zz9"),
                ("endgames", "Zz9"),
            )
            if task.startswith(prefix)
        ),
        None,
    )
    if text is None:
        return
    attempts = len(screen.session.attempts)
    await type_line(pilot, text)
    await wait_for(pilot, lambda: len(screen.session.attempts) == attempts + 1, "the refusal")
    done.refused.append(text)
    if task.startswith("wordle"):
        await pilot.press(*["backspace"] * 5)


async def person_replies(pilot, app, n: int, done: Done) -> None:
    """``n`` replies of the partner side (the oracle, the buyer), the first typed with words that
    are bindings elsewhere (t: take over, p: auto-play, y/n), a yes/no oracle's last one by button."""
    screen = play_screen(app)
    view = screen.view
    for i in range(n):
        start = len(screen.session.transitions)
        await wait_for(pilot, lambda: view.replying is not None, "a question for the person")
        if screen.session.task_id == "car-dealer":
            text = (
                "Maybe, but my top budget is ten thousand, not a penny more"
                if i == 0
                else "Tell me more"
            )
            await type_line(pilot, text)
            done.steps.append((text, "typed", None))
        elif i == n - 1 and view.yes_no:
            await pilot.click("#chat-no")
            done.steps.append((None, "button", "No"))
        else:
            text = "sometimes" if i == 0 else "y"
            await type_line(pilot, text)
            done.steps.append((text, "typed", None))
        await wait_for(
            pilot, lambda n=start: len(screen.session.transitions) > n, "the reply to be taken"
        )


async def quit_keeping(pilot, app) -> None:
    await pilot.press("ctrl+q")
    await wait_for(pilot, lambda: isinstance(app.screen, LeaveDialog), "the quit question")
    await pilot.press("enter")  # Keep to resume, the focused choice
    await wait_for(pilot, lambda: not app.is_running, "the app to close")


async def resume(pilot, app) -> PlayScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, UnfinishedDialog), "the resume offer")
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, PlayScreen), "the resumed episode")
    return play_screen(app)


async def quit_abandoning(pilot, app) -> None:
    await pilot.press("ctrl+q")
    await wait_for(pilot, lambda: isinstance(app.screen, LeaveDialog), "the quit question")
    await pilot.press("a")
    await wait_for(pilot, lambda: not app.is_running, "the app to close")


async def open_from_home(pilot, app, task_id: str) -> None:
    """Highlight the task's row, then two keys: enter (the dialog) and ctrl+s (start)."""
    assert isinstance(app.screen, HomeScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press(*["down"] * envs.ids().index(task_id))
    await pilot.press("enter")
    await wait_for(
        pilot, lambda: isinstance(app.screen, NewEpisodeDialog), "the new-episode dialog"
    )
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, PlayScreen), "the episode")


def check_rows(store, done: Done, *, partner: bool) -> dict[str, Any]:
    (ep,) = store.recent_episodes(5)
    steps = store.steps(ep["id"])
    if partner:
        said = [s["info"]["partner"] for s in steps if "partner" in s["info"]]
        got = [
            (p.get("typed"), p["via"], p.get(p["via"]) if p["via"] != "typed" else None)
            for p in said
        ]
        assert all(s["typed"] is None for s in steps)  # the agent's steps: nothing typed
    else:
        got = [(s["typed"], s["info"]["via"], s["info"].get(s["info"]["via"])) for s in steps]
        refused = [a["typed"] for s in steps for a in s["info"].get("attempts", [])]
        refused += [a["typed"] for a in (ep["meta"] or {}).get("attempts", [])]
        assert refused == done.refused
    assert got == done.steps
    assert [s["idx"] for s in steps] == list(range(len(steps)))
    return ep


FAST_JOURNEYS = ("maze-fo", "wordle")
"""Acting-side journeys in the quick selection: a key press and a typed, refused and corrected
word. The other tasks' journeys (8–18 s each on two busy cores) run in the slow selection, which
CI runs too."""


@pytest.mark.parametrize(
    "task_id",
    [t if t in FAST_JOURNEYS else pytest.param(t, marks=pytest.mark.slow) for t in envs.ids()],
)
async def test_a_person_plays_the_acting_side_quits_resumes_and_the_rows_say_what_they_did(
    store, task_id
):
    done = Done()
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_from_home(pilot, app, task_id)
        await person_acts(pilot, app, 1, done)
        await person_tries_in_vain(pilot, app, done)
        await quit_keeping(pilot, app)
    (ep,) = store.recent_episodes(5)
    assert ep["status"] == "in_progress"
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await resume(pilot, app)
        assert len(screen.session.transitions) == 1
        await person_acts(pilot, app, 1, done)
        await quit_abandoning(pilot, app)
    ep = check_rows(store, done, partner=False)
    assert ep["status"] == "abandoned" and ep["player"] == "ann" and ep["agent_kind"] == "human"


PARTNER_SIDES = [
    ("twenty-questions", "oracle", "strong", {"secret": "guitar"}),
    pytest.param("guess-city", "oracle", "strong", {}, marks=pytest.mark.slow),
    pytest.param("car-dealer", "buyer", "strong", {}, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("task_id", "role", "vs", "options"), PARTNER_SIDES)
async def test_a_person_plays_the_partner_side_from_lmrl_play_and_the_rows_say_what_they_did(
    store, task_id, role, vs, options
):
    done = Done()
    request = PlayRequest(task_id, 3, play_fields(task_id, role, vs, list(options.items())))
    app = make_app(store, player="bo", start=request)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PlayScreen), "the configured episode")
        assert not play_screen(app).check_action("take_over", ())  # the keyboard is the person's
        await person_replies(pilot, app, 1, done)
        await quit_keeping(pilot, app)
    app = make_app(store, player="bo")
    async with app.run_test(size=(120, 40)) as pilot:
        await resume(pilot, app)
        await person_replies(pilot, app, 2, done)
        await quit_abandoning(pilot, app)
    ep = check_rows(store, done, partner=True)
    assert ep["status"] == "abandoned" and ep["partner_kind"] == "human" and ep["player"] == "bo"
    assert (
        ep["agent_kind"] == "scripted"
        and ep["seed"] == 3
        and ep["options"] == options | ep["options"]
    )
