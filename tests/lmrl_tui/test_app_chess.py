"""Drive the app's chess view with Textual's Pilot against the real Stockfish."""

from __future__ import annotations

import pytest

import envs
from data.session import PlaySession
from envs.chess.task import ChessTask
from envs.players.session import HumanAgent
from lmrl_tui.app import make_app
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.views.chess import ChessView, move_list, position_label, render_board

pytestmark = pytest.mark.stockfish

# White: Kg6, Rb1; Black: Kh8. 1. Rb7 forces Kg8 (the only legal move), 2. Rb8 is mate.
MATE_IN_TWO = "7k/8/6K1/8/8/8/8/1R6 w - - 0 1"


async def type_move(pilot, app, text: str) -> None:
    await pilot.click("#move-input")
    await pilot.press(*text, "enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_human_mates_in_two_by_typing_and_the_store_has_it(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        session = PlaySession(store, "endgames", player="ann", seed=4, options={"fen": MATE_IN_TWO})
        screen = PlayScreen(session)
        app.push_screen(screen)
        await pilot.pause()
        assert isinstance(screen.view, ChessView)
        await type_move(pilot, app, "Kh8")  # illegal: explained, not a move
        assert "not a legal move" in str(screen.view.query_one("#message").render())
        assert session.transitions == [] and session.attempts
        await type_move(pilot, app, "b1b7")  # UCI
        assert session.state()["moves_san"] == ["Rb7", "Kg8"]
        await type_move(pilot, app, "rb8")  # lower-case SAN
        assert session.done and session.success and session.total_return == 1.0
    ep = store.recent_episodes(1)[0]
    assert ep["task"] == "endgames" and ep["player"] == "ann" and ep["source"] == "human"
    assert ep["status"] == "finished" and ep["success"] == 1 and ep["return"] == 1.0
    assert ep["partner_name"] == "stockfish"
    steps = store.steps(ep["id"])
    assert [s["typed"] for s in steps] == ["b1b7", "rb8"]
    assert [s["action"] for s in steps] == ["R b 7\n", "R b 8 #\n"]
    assert [s["reward"] for s in steps] == [0.0, 1.0] and steps[-1]["terminated"]
    assert (
        steps[0]["info"]["opponent_san"] == "Kg8"
        and steps[0]["info"]["attempts"][0]["typed"] == "Kh8"
    )
    assert ep["first_observation"] == "7 k / 8 / 6 K 1 / 8 / 8 / 8 / 8 / 1 R 6   w   -   -   0   1"
    # The recorded actions replay from the recorded seed and options.
    again = envs.replay(
        ChessTask("endgames", fen=MATE_IN_TWO), ep["seed"], [s["action"] for s in steps]
    )
    assert [t.observation for t in again.transitions] == [s["observation"] for s in steps]


async def test_hot_seat_person_plays_black(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("chess", None, HumanAgent("bob"), 1, "ann")
        await pilot.pause()
        await pilot.click("#move-input")
        await pilot.press(*"e4", "enter")
        await pilot.pause(0.2)
        assert screen.view._role == "opponent"  # Black is asked
        await pilot.press(*"Qh4", "enter")  # illegal (the e7 pawn blocks): asked again, with why
        await pilot.pause(0.2)
        assert "not a legal move" in str(screen.view.query_one("#message").render())
        assert screen.view._role == "opponent"
        await pilot.press(*"e6", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session.state()["moves_san"] == ["e4", "e6"]
        assert screen.view._role == "agent"
    steps = store.steps(store.recent_episodes(1)[0]["id"])
    assert steps[0]["info"]["partner"]["typed"] == "e6" and steps[0]["info"]["opponent_san"] == "e6"


async def test_watch_strong_agent_and_legal_moves_panel(store):
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session(
            "chess", envs.make_policy("chess", "strong", depth=2), None, 2, None
        )
        await pilot.pause()
        await pilot.press("space")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.session.state()["moves_san"]) == 2
        view = screen.view
        view.action_toggle_legal()
        view.action_flip()
        assert view.query_one("#legal").display and view.flipped
        await pilot.press("escape")
        await pilot.pause()
    assert store.recent_episodes(1)[0]["status"] == "abandoned"


def test_board_and_move_list_rendering():
    t = ChessTask("chess", opponent="random")
    t.reset(0, {"fen": "4k3/8/8/8/8/8/8/4K2R w K - 0 1"})
    t.step("O - O\n")
    s = t.state()
    board = render_board(s, tall=False).plain.splitlines()
    assert board[0].startswith(" 8 ") and board[7].startswith(" 1 ") and "♚" in "".join(board)
    assert board[7][3:].replace(" ", "") == "♖♔"  # after O-O: Rf1, Kg1
    assert board[-1].split() == list("abcdefgh")
    assert render_board(s, tall=False, flipped=True).plain.splitlines()[-1].split() == list(
        "hgfedcba"
    )
    assert len(render_board(s).plain.splitlines()) == 8 * 3 + 1
    assert move_list(
        ["e4", "e5", "Nf3"], "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    ) == ("1. e4 e5\n2. Nf3")
    assert move_list(["e5", "Nf3"], "8/8/8/8/8/8/8/8 b - - 0 7") == "7. … e5\n8. Nf3"


async def test_a_move_played_after_opening_the_legal_moves_records_the_hint(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        session = PlaySession(store, "endgames", player="ann", seed=4, options={"fen": MATE_IN_TWO})
        screen = PlayScreen(session)
        app.push_screen(screen)
        await pilot.pause()
        await pilot.click("#move-input")
        await pilot.press("enter")  # an empty Enter: nothing is played or stored
        await app.workers.wait_for_complete()
        assert session.transitions == [] and session.attempts == []
        await pilot.press("f2")
        await type_move(pilot, app, "Rb7")
        await pilot.press("f2")  # closed again
        await type_move(pilot, app, "Rb8")
        assert session.done
    steps = store.steps(session.episode_id)
    assert steps[0]["info"]["hints"] == ["legal_moves"] and "hints" not in steps[1]["info"]


def test_the_endgame_line_names_where_the_position_comes_from(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text('"8/8/8/7k/8/4R2K/1R6/8 w - - 0 1"\n')
    for positions, label in (
        ("test", " · test position "),
        (str(path), " · position 0 of train.jsonl"),
        ("random", ""),
    ):
        task = ChessTask("endgames", positions=positions)
        task.reset(3)
        got = position_label(task.state())
        assert got.startswith(label) and (label or got == ""), (positions, got)
        task.close()
