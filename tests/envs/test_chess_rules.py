"""Rules, texts and input parsing of the chess tasks (no engine: the opponent plays random moves)."""

from __future__ import annotations

import json

import chess
import pytest

import envs
from envs import InvalidInput
from envs.chess.data import endgame_positions, random_endgame
from envs.chess.task import ChessTask
from envs.chess.text import parse_model_action
from envs.core import RandomAgent, replay, run_episode
from envs.core.checker import NASTY_INPUTS

START_OBS = (
    "r n b q k b n r / p p p p p p p p / 8 / 8 / 8 / 8 / P P P P P P P P / "
    "R N B Q K B N R   w   K Q k q   -   0   1"
)


def task(variant: str = "chess", **kw) -> ChessTask:
    return ChessTask(variant, opponent="random", **kw)


def test_observation_is_lmrl_spaced_fen() -> None:
    t = task()
    assert t.reset(0) == START_OBS
    assert t.history()[-1].text == START_OBS and len(t.history()) == 1
    assert "N f 3\n" in t.legal_actions() and len(t.legal_actions()) == 20


def test_illegal_move_costs_one_and_keeps_the_position() -> None:
    t = task()
    t.reset(0)
    st = t.step("K e 3\n")
    assert (st.observation, st.reward, st.terminated, st.truncated) == (
        START_OBS,
        -1.0,
        False,
        False,
    )
    assert st.info["invalid"] is True
    for text in ["0000", "- -\n", "n f 3\n", "e 4 !\n", "e 4   e 5\n", "P e 4\n", *NASTY_INPUTS]:
        st = t.step(text)
        assert st.reward == -1.0 and not st.terminated and st.observation == START_OBS
    assert t.state()["illegal_moves"] == 1 + 6 + len(NASTY_INPUTS)
    assert t.board.fen() == chess.STARTING_FEN


@pytest.mark.parametrize(
    ("text", "uci"),
    [
        ("e 4\n", "e2e4"),
        ("e 2 e 4\n", "e2e4"),
        ("e4#", "e2e4"),
        ("Ng1f3", "g1f3"),
        ("e2-e4", "e2e4"),
        ("N f 3", "g1f3"),
    ],
)
def test_model_actions_are_read_leniently_like_lmrl(text: str, uci: str) -> None:
    move = parse_model_action(chess.Board(), text)
    assert move is not None and move.uci() == uci


def test_legal_model_move_then_opponent_reply() -> None:
    t = task()
    t.reset(3)
    st = t.step("e 4\n")
    assert st.reward == 0.0 and not st.terminated
    assert st.info["san"] == "e4" and st.info["uci"] == "e2e4" and "opponent_uci" in st.info
    assert st.observation.split("   ")[1] == "w"
    s = t.state()
    assert (
        s["moves_san"][0] == "e4" and len(s["moves_uci"]) == 2 and s["last_move"]["by"] == "black"
    )
    json.dumps(s)


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("Nf3", "N f 3\n"),
        ("g1f3", "N f 3\n"),
        ("N f 3", "N f 3\n"),
        ("nf3", "N f 3\n"),
        ("  e4 ", "e 4\n"),
        ("e2e4", "e 4\n"),
        ("E2E4", "e 4\n"),
        ("e 4\n", "e 4\n"),
        ("Nf3!", "N f 3\n"),
    ],
)
def test_parse_input_canonicalises_san_uci_and_spaced_san(typed: str, canonical: str) -> None:
    t = task()
    t.reset(0)
    assert t.parse_input(typed) == canonical


def test_parse_input_castling_promotion_and_errors() -> None:
    t = task()
    t.reset(0, {"fen": "r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1"})
    assert t.parse_input("0-0") == "O - O\n"
    assert t.parse_input("o-o-o") == "O - O - O\n"
    assert t.parse_input("e1g1") == "O - O\n"
    assert t.parse_input("bxa8=q") == "b x a 8 = Q +\n"
    assert t.parse_input("b7b8n") == "b 8 = N\n"
    with pytest.raises(InvalidInput, match="promote"):
        t.parse_input("b7b8")
    with pytest.raises(InvalidInput, match="not a legal move"):
        t.parse_input("Ke3")
    with pytest.raises(InvalidInput, match="SAN or UCI"):
        t.parse_input("hello")
    for text in NASTY_INPUTS:
        with pytest.raises(InvalidInput):
            t.parse_input(text)
    t.reset(0, {"fen": "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1"})
    with pytest.raises(InvalidInput, match="ambiguous"):
        t.parse_input("Nd2")
    assert t.parse_input("Nbd2") == "N b d 2\n"


def test_mate_wins_and_ends_the_game() -> None:
    t = task()
    t.reset(0, {"fen": "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"})
    st = t.step(t.parse_input("Ra8"))
    assert (st.reward, st.terminated, st.truncated) == (1.0, True, False)
    assert "   b   " in st.observation  # the final position, Black to move; no reply
    assert st.info["result"] == "1-0" and st.info["success"] is True
    s = t.state()
    assert (
        s["done"] and s["check"] and s["check_square"] == "g8" and s["termination"] == "checkmate"
    )
    with pytest.raises(InvalidInput, match="over"):
        t.parse_input("Kf1")
    with pytest.raises(RuntimeError):
        t.step("K f 1\n")
    assert t.legal_actions() == []


@pytest.mark.parametrize(
    ("fen", "move", "why"),
    [
        ("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1", "Qc7", "stalemate"),
        ("8/8/8/8/8/k7/3r4/3K4 w - - 0 1", "Kxd2", "insufficient material"),
    ],
)
def test_draws_by_the_agent_score_zero(fen: str, move: str, why: str) -> None:
    t = task()
    t.reset(0, {"fen": fen})
    st = t.step(t.parse_input(move))
    assert (st.reward, st.terminated) == (0.0, True)
    assert st.info["result"] == "1/2-1/2" and st.info["termination"] == why


def test_move_cap_lets_the_extra_move_play_then_truncates() -> None:
    t = task(max_moves=3)
    t.reset(1)
    for _ in range(3):
        assert not t.step("x\n").truncated
    st = t.step(t.legal_actions()[0])  # the 4th move is played normally, then the game is cut
    assert (st.reward, st.terminated, st.truncated) == (0.0, False, True)
    assert st.info["termination"] == "move limit" and st.info["result"] == "*"
    assert t.state()["moves_san"] and t.state()["done"]


def test_default_cap_is_401_steps_and_minimum_return_minus_401() -> None:
    t = task()
    t.reset(0)
    rewards = []
    for _ in range(401):
        st = t.step("?\n")
        rewards.append(st.reward)
    assert st.truncated and sum(rewards) == -401.0


def test_random_play_is_deterministic_and_replays() -> None:
    t = task()
    a = run_episode(t, RandomAgent(), 11)
    b = run_episode(t, RandomAgent(), 11)
    assert [x.action for x in a.transitions] == [x.action for x in b.transitions]
    again = replay(task(), 11, [x.action for x in a.transitions])
    assert [x.observation for x in again.transitions] == [x.observation for x in a.transitions]
    assert a.done and a.total_return in (-1.0, 0.0, 1.0)


def test_shipped_endgame_positions_are_valid_and_not_in_check() -> None:
    table = endgame_positions()
    assert 100 <= len(table) <= 1000
    fens = [p["fen"] for p in table]
    assert len(set(fens)) == len(fens)
    for p in table:
        b = chess.Board(p["fen"])
        assert b.is_valid() and b.turn == chess.WHITE and not b.is_check() and not b.is_game_over()
        pieces = "".join(sorted(x.symbol() for x in b.piece_map().values()))
        assert pieces == "".join(sorted(p["setup"]))


def test_endgames_reset_picks_from_the_set_or_fresh_positions() -> None:
    t = task("endgames")
    fens = {p["fen"] for p in endgame_positions()}
    picked = set()
    for s in range(20):
        t.reset(s)
        assert t.board.fen() in fens and t.state()["position_index"] is not None
        picked.add(t.board.fen())
    assert len(picked) > 10 and t.reset(5) == t.reset(5)
    r = task("endgames", positions="random", setups=["kRRK"])
    for s in range(10):
        r.reset(s)
        assert r.board.fen() not in fens and r.state()["setup"] == "kRRK"
        assert r.board.is_valid() and not r.board.is_check() and r.board.turn == chess.WHITE


def test_endgames_positions_file_in_either_format(tmp_path, monkeypatch) -> None:
    kqk = "8/5k2/8/8/8/8/8/Q3K3 w - - 0 1"
    krrk = "8/8/8/7k/8/4R2K/1R6/8 w - - 0 1"
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"fen": kqk, "setup": "kQK"}) + "\n\n" + json.dumps(krrk) + "\n")
    monkeypatch.chdir(tmp_path)
    t = task("endgames", positions="train.jsonl")
    assert t.spec.options["positions"] == str(
        path.resolve()
    )  # stored absolute: replays from anywhere
    seen = set()
    for s in range(12):
        t.reset(s)
        st = t.state()
        seen.add((t.board.fen(), st["setup"], st["position_index"]))
        assert st["positions"] == str(path.resolve())
    assert seen == {(kqk, "kQK", 0), (krrk, "kRRK", 1)}  # LMRL's quoted FEN gets its setup too
    only = task("endgames", positions=str(path), setups=["kRRK"])
    assert {only.reset(s) and only.board.fen() for s in range(5)} == {krrk}
    with pytest.raises(ValueError, match="no position of the setups kRK"):
        task("endgames", positions=str(path), setups=["kRK"]).reset(0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "cannot read .*: No such file or directory$"),
        (b"\xff\xfe", "is not UTF-8 text"),
        ("", "holds no position"),
        ('{"fen": "8/8/8 w"}\n', "line 1: not a position"),
        ('"4k3/8/8/8/8/8/8/4K2R b K - 0 1"\n', "White to move"),
        ("[1, 2]\n", "line 1"),
    ],
)
def test_a_bad_positions_file_gets_a_clear_message(tmp_path, text, message) -> None:
    path = tmp_path / "p.jsonl"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    with pytest.raises(ValueError, match="positions must be 'test'.*" + message):
        ChessTask("endgames", positions=str(path))


def test_random_endgame_matches_lmrl_generator_shape() -> None:
    import random

    fen = random_endgame("kQK", random.Random(0))
    assert fen.endswith(" w - - 0 1") and fen == random_endgame("kQK", random.Random(0))
    assert sorted(p.symbol() for p in chess.Board(fen).piece_map().values()) == ["K", "Q", "k"]


def test_bad_options_and_start_positions_are_rejected() -> None:
    with pytest.raises(ValueError):
        ChessTask("chess", opponent="human")
    with pytest.raises(ValueError):
        ChessTask("endgames", setups=["kNNK"])
    with pytest.raises(ValueError):
        ChessTask("chess", depth=0)
    with pytest.raises(ValueError, match="White to move"):
        task().reset(0, {"fen": "4k3/8/8/8/8/8/8/4K2R b K - 0 1"})


class ScriptedBlack:
    """A partner playing Black from a list of replies (records what it was shown)."""

    kind = "scripted"
    name = "black"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[str, ...]] = []

    def reset(self, task, seed=None) -> None:
        self.reset_with = (task, seed)

    def act(self, history) -> str:
        self.seen.append(tuple(t.text for t in history))
        return self.replies.pop(0)


def test_partner_plays_black_and_is_asked_again_after_an_illegal_reply() -> None:
    black = ScriptedBlack(["Qh4", "e 5\n"])
    t = ChessTask("chess", partner=black)
    assert t.spec.partner == "scripted" and t.spec.options["opponent"] == "partner"
    t.reset(0)  # no engine needed
    assert black.reset_with == (t, 0)
    st = t.step("e 4\n")
    assert st.info["opponent_san"] == "e5" and t.state()["moves_san"] == ["e4", "e5"]
    assert black.seen[0][0].split("   ")[1] == "b" and "not a legal move" in black.seen[1][1]
    assert t.state()["opponent"]["description"] == "scripted: black"


def test_a_non_human_partner_that_never_answers_legally_gets_a_random_move() -> None:
    t = ChessTask("chess", partner=ScriptedBlack(["x"] * 10))
    t.reset(0)
    st = t.step("d 4\n")
    assert len(t.state()["moves_san"]) == 2 and st.reward == 0.0


def test_fen_option_fixes_the_start_position() -> None:
    fen = "7k/8/6K1/8/8/8/8/1R6 w - - 0 1"
    t = task("endgames", fen=fen)
    assert t.spec.options["fen"] == fen
    for seed in (0, 1):
        t.reset(seed)
        assert t.board.fen() == fen
    st = t.step(t.parse_input("Rb7"))
    assert st.info["opponent_san"] == "Kg8"
    assert t.step(t.parse_input("Rb8")).reward == 1.0
    with pytest.raises(ValueError):
        task("chess", fen="8/8/8/8/8/8/8/8 w - - 0 1")


def test_policy_module_imports_on_its_own() -> None:
    import subprocess
    import sys

    code = "import envs.chess.policies as p, envs; assert envs.policies('endgames') == list(p.POLICIES)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_a_person_can_choose_the_endgame_kind() -> None:
    """``setups`` (a list, or ``kQK,kRK`` as a command line writes it) picks the test positions."""
    for setups, kinds in (("kQK", {"kQK"}), ("kRK,kRRK", {"kRK", "kRRK"}), (["kQRK"], {"kQRK"})):
        task = envs.make("endgames", setups=setups, opponent="random")
        seen = set()
        for seed in range(12):
            task.reset(seed)
            seen.add(task.state()["setup"])
        task.close()
        assert seen <= kinds and seen


def test_a_wrong_option_names_the_options_not_a_traceback() -> None:
    with pytest.raises(ValueError, match=r"no option 'variant' \(its options: .*setups"):
        envs.make("endgames", variant="kQK")
    with pytest.raises(ValueError, match="setups must be among"):
        envs.make("endgames", setups="kQX")
