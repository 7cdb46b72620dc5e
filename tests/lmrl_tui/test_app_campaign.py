"""A campaign end to end: ``lmrl serve --campaign FILE`` keeps the checked file in the store, and
each person's served app (as textual-serve starts it: it asks the name) is handed the next
assignment, straight into its episode, with their progress in the header; "play again" hands the
next one, and when nothing is left they are told so. Two people, three assignments, every episode
played with real keys; the rows carry the campaign and assignment; ``lmrl stats --campaign``
shows where it stands."""

from __future__ import annotations

import pytest
from support.app_support import settle, spy_notifications, wait_for

import envs
from data.datasets import DatasetQuery, select_episode_ids
from data.store import Store
from lmrl_tui.app import make_app
from lmrl_tui.cli import main
from lmrl_tui.cli.serve import serve_campaign
from lmrl_tui.screens.annotators import AnnotatorsScreen
from lmrl_tui.screens.info import SummaryScreen
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.screens.player import PlayerPrompt

CAMPAIGN = """
name = "pilot"

[[assignment]]
id = "walk"
task = "maze-fo"
seeds = [11, 12]
episodes = 2
per_person = 1

[[assignment]]
id = "words"
task = "wordle"
seeds = [3, 4]
episodes = 2
per_person = 1

[[assignment]]
id = "fog"
task = "maze-po"
seeds = [5]
episodes = 2
per_person = 1
"""


async def _play_to_the_end(pilot, screen: PlayScreen) -> list[str]:
    """The episode on ``screen`` played to its end as a person does; returns what was typed or
    pressed, step by step."""
    session = screen.session
    done: list[str] = []
    if session.task_id == "wordle":
        word = session.task._answer  # the secret, as a person who guessed it at once
        await pilot.press(*word, "enter")
        done.append(word)
    else:
        policy = envs.make_policy(
            session.task_id, "optimal" if session.task_id == "maze-fo" else "strong"
        )
        policy.reset(session.task, session.seed)
        while not session.done:
            key = policy.act(session.task.history()).split()[1]
            n = len(session.transitions)
            await pilot.press(key)
            await wait_for(pilot, lambda n=n: len(session.transitions) > n, "the move")
            done.append(key)
    await wait_for(pilot, lambda: session.done, "the end of the episode")
    return done


async def _person_plays_the_campaign(
    db_path, name: str, n_assignments: int = 3
) -> dict[int, list[str]]:
    app = make_app(Store(db_path))
    seen = spy_notifications(app)
    played: dict[int, list[str]] = {}
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerPrompt), "the name prompt")
        await pilot.press(*name, "enter")
        for _ in range(n_assignments):
            await wait_for(
                pilot,
                lambda: (
                    isinstance(app.screen, PlayScreen)
                    and app.screen.session.episode_id
                    and app.screen.session.episode_id not in played
                ),
                "the next assignment's episode",
            )
            screen = app.screen
            assert "campaign " in screen.sub_title and "your episode 1 of 1" in screen.sub_title
            played[screen.session.episode_id] = await _play_to_the_end(pilot, screen)
            await wait_for(pilot, lambda: isinstance(app.screen, SummaryScreen), "the summary")
            await pilot.press("enter")  # play again: the campaign's next one
        await settle(app)
        await wait_for(
            pilot,
            lambda: any("nothing more for you" in m for m, *_ in seen),
            "the end of the campaign for this person",
        )
        assert not isinstance(app.screen, PlayScreen)
    return played


@pytest.mark.slow
async def test_two_people_play_a_campaign_of_three_assignments(
    db_path, tmp_path, monkeypatch, capsys
):
    path = tmp_path / "pilot.toml"
    path.write_text(CAMPAIGN, encoding="utf-8")
    store = Store(db_path)
    assert serve_campaign(str(path), store) == "pilot"  # what `lmrl serve --campaign` runs first
    monkeypatch.setenv("LMRL_ASK_PLAYER", "1")
    monkeypatch.setenv("LMRL_CAMPAIGN", "pilot")
    ann = await _person_plays_the_campaign(db_path, "ann")
    bo = await _person_plays_the_campaign(db_path, "bo")
    rows = {e: store.episode(e) for e in (*ann, *bo)}
    assert [
        (r["player"], r["campaign"], r["assignment"], r["task"], r["seed"], r["status"])
        for r in rows.values()
    ] == [
        ("ann", "pilot", "walk", "maze-fo", 11, "finished"),
        ("ann", "pilot", "words", "wordle", 3, "finished"),
        ("ann", "pilot", "fog", "maze-po", 5, "finished"),
        ("bo", "pilot", "walk", "maze-fo", 12, "finished"),
        ("bo", "pilot", "words", "wordle", 4, "finished"),
        ("bo", "pilot", "fog", "maze-po", 5, "finished"),
    ]
    for eid, did in {**ann, **bo}.items():  # every step as the person acted
        steps = store.steps(eid)
        if rows[eid]["task"] == "wordle":
            assert [(s["typed"], s["info"]["via"]) for s in steps] == [(did[0], "typed")]
        else:
            assert [(s["info"]["via"], s["info"]["key"]) for s in steps] == [
                ("key", k) for k in did
            ]
    query = DatasetQuery(campaigns=["pilot"], assignments=["words"])
    assert select_episode_ids(store, query) == [e for e in rows if rows[e]["assignment"] == "words"]
    capsys.readouterr()
    assert main(["--db", str(db_path), "stats", "--campaign", "pilot"]) == 0
    out = capsys.readouterr().out
    assert "campaign pilot: 6 of 6 episodes finished" in out
    assert any(
        line.split()[:8] == ["walk", "maze-fo", "agent", "2", "2", "0", "0", "0"]
        for line in out.splitlines()
    ), out
    assert "ann 1/1, bo 1/1" in out


ONE = """
[[assignment]]
id = "walk"
task = "maze-fo"
seeds = [11]
episodes = 1
"""


async def test_a_person_is_handed_the_campaign_s_episode_and_the_organiser_sees_it(
    db_path, tmp_path, monkeypatch
):
    path = tmp_path / "short.toml"
    path.write_text(ONE, encoding="utf-8")
    store = Store(db_path)
    assert serve_campaign(str(path), store) == "short"
    monkeypatch.setenv("LMRL_ASK_PLAYER", "1")
    monkeypatch.setenv("LMRL_CAMPAIGN", "short")
    played = await _person_plays_the_campaign(db_path, "ann", n_assignments=1)
    (eid,) = played
    ep = store.episode(eid)
    assert (ep["campaign"], ep["assignment"], ep["seed"], ep["status"]) == (
        "short",
        "walk",
        11,
        "finished",
    )
    monkeypatch.delenv("LMRL_ASK_PLAYER")
    monkeypatch.delenv("LMRL_CAMPAIGN")
    organiser = make_app(Store(db_path), player="org")
    async with organiser.run_test(size=(140, 40)) as pilot:
        await settle(organiser)
        await pilot.press("a")  # the annotators screen
        await wait_for(
            pilot, lambda: isinstance(organiser.screen, AnnotatorsScreen), "the annotators"
        )
        table = organiser.screen.query_one("#campaigns")
        await wait_for(pilot, lambda: table.row_count == 1, "the campaign's rows")
        assert [str(c) for c in table.get_row_at(0)] == [
            "short",
            "walk",
            "maze-fo",
            "agent",
            "1",
            "1",
            "0",
            "0",
            "0",
            "ann 1/1",
        ]
        title = str(organiser.screen.query_one("#campaigns-title").render())
        assert "short: 1 of 1 episodes finished" in title


async def test_a_resumed_campaign_episode_tells_the_person_where_they_stand(
    db_path, tmp_path, monkeypatch
):
    """Handed the campaign's episode, the person moves once, quits keeping it and comes back:
    the resumed episode's header says their place as it did when it was handed out."""
    path = tmp_path / "short.toml"
    path.write_text(ONE, encoding="utf-8")
    assert serve_campaign(str(path), Store(db_path)) == "short"
    monkeypatch.setenv("LMRL_ASK_PLAYER", "1")
    monkeypatch.setenv("LMRL_CAMPAIGN", "short")
    place = "campaign short · walk: your episode 1 of 1 · 1 of 1 in all"
    await _ann_comes(db_path, place, resuming=False)
    await _ann_comes(db_path, place, resuming=True)


async def _ann_comes(db_path, place: str, resuming: bool) -> None:
    from lmrl_tui.screens.leave import LeaveDialog, UnfinishedDialog

    app = make_app(Store(db_path))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerPrompt), "the name prompt")
        await pilot.press(*"ann", "enter")
        if resuming:
            await wait_for(pilot, lambda: isinstance(app.screen, UnfinishedDialog), "the offer")
            await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayScreen), "the episode")
        screen = app.screen
        await wait_for(pilot, lambda: place in (screen.sub_title or ""), "the place")
        if resuming:
            assert len(screen.session.transitions) == 1
            return
        await pilot.press("w")
        await wait_for(pilot, lambda: len(screen.session.transitions) == 1, "the move")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, LeaveDialog), "the quit question")
        await pilot.press("enter")  # keep it to resume
        await wait_for(pilot, lambda: not app.is_running, "the app to close")


async def test_a_campaign_s_episode_dialog_shows_its_fields_read_only(
    db_path, tmp_path, monkeypatch
):
    """The campaign hands out the task, seed, sides and options: when its episode does not start
    at once and the dialog stays, the person cannot change them, only start again or cancel."""
    from textual.widgets import Button, Input

    from lmrl_tui.screens import dialogs
    from lmrl_tui.starting import FieldError

    path = tmp_path / "short.toml"
    path.write_text(ONE, encoding="utf-8")
    assert serve_campaign(str(path), Store(db_path)) == "short"
    monkeypatch.setenv("LMRL_ASK_PLAYER", "1")
    monkeypatch.setenv("LMRL_CAMPAIGN", "short")
    opened = dialogs.open_choice
    tries: list[object] = []

    def fails_once(*args):
        tries.append(args[1])
        if len(tries) == 1:
            raise FieldError(None, "The partner is busy: try again.")
        return opened(*args)

    monkeypatch.setattr(dialogs, "open_choice", fails_once)
    app = make_app(Store(db_path))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerPrompt), "the name prompt")
        await pilot.press(*"ann", "enter")
        await wait_for(pilot, lambda: len(tries) == 1, "the first try")
        dialog = app.screen
        assert isinstance(dialog, dialogs.NewEpisodeDialog)
        fields = [w for w in dialog.query("#form *") if w.id in dialog._labels]
        assert {w.id for w in fields} >= {"task", "seed", "agent", "player", "strict"}
        assert all(w.disabled for w in fields)
        assert app.focused is dialog.query_one("#start", Button)
        assert "Campaign short · walk sets this episode" in str(dialog.query_one("#keys").render())
        await pilot.press("9", "tab", "9")  # nothing to type into: tab goes to Cancel
        assert dialog.query_one("#seed", Input).value == "11"
        assert app.focused is dialog.query_one("#cancel", Button)
        await pilot.press("ctrl+s")  # start again
        await wait_for(pilot, lambda: isinstance(app.screen, PlayScreen), "the episode")
        eid = app.screen.session.episode_id
    ep = Store(db_path).episode(eid)
    assert (ep["campaign"], ep["assignment"], ep["task"], ep["seed"], ep["player"]) == (
        "short", "walk", "maze-fo", 11, "ann")  # fmt: skip
