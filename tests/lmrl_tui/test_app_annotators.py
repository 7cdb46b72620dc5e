"""Who plays: the name asked once and remembered (asked every time in a served session), the
annotators screen, session notes, and ``lmrl stats --by player``'s row per annotator."""

from __future__ import annotations

import json

from support.annotator_lab import MAZE, build_lab

from data.annotators import annotator_figures, player_meta
from data.session import PlaySession
from lmrl_tui.app import make_app
from lmrl_tui.cli import main
from lmrl_tui.prefs import LastChoices
from lmrl_tui.screens.annotators import AnnotatorsScreen
from lmrl_tui.screens.episode_form import StartedEpisode
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.leave import UnfinishedDialog
from lmrl_tui.screens.player import PlayerPrompt
from lmrl_tui.starting import EpisodeChoice, open_choice


async def _start(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_first_start_asks_and_the_second_remembers(store):
    app = make_app(store, ask_player=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await _start(app, pilot)
        assert isinstance(app.screen, PlayerPrompt) and app.player is None
        assert app.focused is app.screen.query_one("#player-name")
        await pilot.press(*"Ann Lee", "enter")
        await _start(app, pilot)
        assert isinstance(app.screen, HomeScreen) and app.player == "Ann Lee"
    assert LastChoices().player == "Ann Lee"
    assert player_meta(store, "Ann Lee")["last_seen"]
    again = make_app(store, ask_player=True)
    async with again.run_test(size=(120, 36)) as pilot:
        await _start(again, pilot)
        assert isinstance(again.screen, HomeScreen) and again.player == "Ann Lee"
    overridden = make_app(store, player="zed", ask_player=True)  # --player
    assert overridden.player == "zed" and not overridden.asks_player
    LastChoices().path.unlink()
    assert not make_app(store).asks_player  # tests (make_app without ask_player) are never asked


async def test_empty_and_too_long_names_are_refused_in_place(store):
    app = make_app(store, ask_player=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await _start(app, pilot)
        prompt = app.screen
        error = prompt.query_one("#player-error")
        for typed in ("", "   "):
            prompt.query_one("#player-name").value = typed
            await pilot.press("enter")
            await pilot.pause()
            assert (
                app.screen is prompt
                and error.has_class("-shown")
                and "empty" in str(error.render())
            )
        prompt.query_one("#player-name").value = "x" * 45
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is prompt and "At most 40" in str(error.render())
        await pilot.press(
            "end", "ctrl+u", *"bo", "tab", *"new", "enter"
        )  # a name and a session note
        await _start(app, pilot)
        await pilot.pause()
        assert (
            isinstance(app.screen, HomeScreen) and app.player == "bo" and app.session_note == "new"
        )
    assert [r["player"] for r in annotator_figures(store)] == ["bo"]


async def test_a_served_session_asks_every_time_and_saves_nothing(store, monkeypatch):
    LastChoices().remember_player("ann")  # an earlier local start
    for name in ("cy", "zed"):  # games still being played in other browser sessions
        PlaySession(store, MAZE, seed=1, player=name).start()
    monkeypatch.setenv("LMRL_ASK_PLAYER", "1")
    app = make_app(store)  # as `lmrl serve` starts it: no --player
    async with app.run_test(size=(120, 36)) as pilot:
        await _start(app, pilot)
        assert isinstance(app.screen, PlayerPrompt) and app.player is None  # ann is not assumed
        assert "Asked again" in str(app.screen.query_one("#player-explain").render())
        await pilot.press(*"cy", "enter")
        await _start(app, pilot)
        assert app.player == "cy"
        dialog = app.screen  # only cy's own unfinished game is offered
        assert isinstance(dialog, UnfinishedDialog) and [
            e["player"] for e in dialog.episodes.values()
        ] == ["cy"]
        await pilot.press("escape")
        choice = EpisodeChoice(MAZE, 1, "human", "embedded", "cy", False)  # a game from the dialog
        app.episode_started(
            StartedEpisode(open_choice(store, choice, None, None), choice, {"agent": "human"})
        )
        await pilot.pause()
        assert store.episode(app.screen.session.episode_id)["player"] == "cy"
    saved = json.loads(LastChoices().path.read_text())
    assert saved == {"player": "ann"}  # a served session's choices stay in its own memory
    assert app.choices.for_task(MAZE, app.choice_scope) == {"agent": "human"}


def _cells(table, key: str) -> list[str]:
    return [str(c) for c in table.get_row(key)]


async def test_annotators_screen_shows_sorts_and_filters(store):
    build_lab(store)
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 36)) as pilot:
        await _start(app, pilot)
        await pilot.press("a")
        await _start(app, pilot)
        screen = app.screen
        assert isinstance(screen, AnnotatorsScreen)
        table = screen.query_one("#annotators")
        assert _cells(table, "ann") == ["ann", "2", "1", "2m 00s", "100%", "-2.00", "2.5", "3", "2"]
        assert _cells(table, "bob") == ["bob", "1", "1", "1m 00s", "0%", "-2.00", "7.0", "0", "1"]
        assert _cells(table, "cy") == ["cy", "0", "0", "0s", "", "", "", "0", "0"]
        order = lambda: [str(table.get_row_at(i)[0]) for i in range(table.row_count)]  # noqa: E731
        assert order() == ["ann", "bob", "cy"]
        screen.sort_by("think_ms")  # the most first; empty figures last
        assert order() == ["bob", "ann", "cy"]
        await pilot.press("v")
        assert order() == ["ann", "bob", "cy"]
        await pilot.press("s")  # the next column: time played, the most first
        assert screen.sort_key == "attempts" and order()[0] == "ann"
        screen.query_one("#annotators-task").value = MAZE
        await _start(app, pilot)
        assert table.row_count == 2 and _cells(table, "bob")[1:3] == ["0", "0"]
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


async def test_session_note_is_kept_with_every_episode_of_the_session(store):
    from lmrl_tui.screens.browse import BrowseScreen

    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        await _start(app, pilot)
        first = app.start_session(MAZE, None, None, 2, "ann")
        await pilot.press("escape")  # nothing played yet: it leaves at once
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("n", *"tired", "enter")  # the note joins the episodes played so far ...
        await pilot.pause()
        assert app.session_note == "tired"
        second = app.start_session(MAZE, None, None, 3, "ann")  # ... and those played later
        ids = [first.session.episode_id, second.session.episode_id]
        assert [store.episode(i)["meta"].get("session_note") for i in ids] == ["tired"] * 2
        app.set_session_note("")  # cleared
        assert [store.episode(i)["meta"].get("session_note") for i in ids] == [None, None]
        app.set_session_note("ok")
        app.push_screen(BrowseScreen())
        await _start(app, pilot)
        assert "session note: ok" in str(app.screen.query_one("#episode-info").render())


def test_stats_by_player_adds_a_row_per_annotator(store, db_path, capsys):
    build_lab(store)
    assert main(["--db", str(db_path), "stats", "--by", "player"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("per annotator:")
    assert out[start + 1].split() == [
        "player",
        "episodes",
        "finished",
        "time",
        "played",
        "success",
        "mean",
        "return",
        "think",
        "(s)",
        "refused",
        "labels",
    ]
    rows = {line.split()[0]: line.split()[1:] for line in out[start + 2 :]}
    assert rows["ann"] == ["2", "1", "2m00s", "100.0%", "-2.000", "2.5", "3", "2"]
    assert rows["bob"] == ["1", "1", "1m00s", "0.0%", "-2.000", "7.0", "0", "1"]
    assert rows["cy"] == ["0", "0", "0s", "0", "0"]
    assert max(len(x) for x in out if not x.startswith("database:")) <= 100
    assert main(["--db", str(db_path), "stats"]) == 0  # without --by player: no such table
    assert "per annotator:" not in capsys.readouterr().out
