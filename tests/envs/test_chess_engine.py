"""The chess tasks against the real Stockfish: contract, opponent strength, engine process lifecycle."""

from __future__ import annotations

import gc
import os
import random
import signal

import chess
import pytest
from support.processes import live_children

import envs
from envs.chess.stockfish import (
    EngineFailure,
    EngineInfo,
    StockfishNotFound,
    clamp_elo,
    engine_info,
    find_stockfish,
    level_from_elo,
    make_strength,
    pick_skill_move,
)
from envs.chess.task import ChessTask
from envs.core import make_policy, run_episode
from envs.core.checker import check_task

stockfish = pytest.mark.stockfish


# -- without the engine ---------------------------------------------------------------------
def test_elo_is_clamped_to_the_engine_range() -> None:
    info = EngineInfo("/x", "Stockfish 15.1", 1350, 2850)
    assert (
        clamp_elo(1200, info) == 1350
        and clamp_elo(3200, info) == 2850
        and clamp_elo(2000, info) == 2000
    )
    s = make_strength(info, elo=1200)
    assert s.elo == 1350 and s.limited and s.search_limit().depth == 1
    assert level_from_elo(1350) == pytest.approx(0.0097, abs=1e-3)
    assert make_strength(info, elo=2000).search_limit().depth == 1 + int(level_from_elo(2000))
    assert not make_strength(info, elo=None).limited
    assert make_strength(info, elo=None, skill_level=5, depth=3).search_limit().depth == 3
    assert make_strength(info, elo=None, depth=7).search_limit().depth == 7


def test_skill_pick_is_seeded_and_weakness_matters() -> None:
    e4, d4, nf3, a3 = (chess.Move.from_uci(u) for u in ("e2e4", "d2d4", "g1f3", "a2a3"))
    lines = [(e4, 60), (d4, 50), (nf3, 40), (a3, 0)]
    weak = [pick_skill_move(lines, 0.0, random.Random(s)) for s in range(200)]
    assert weak == [pick_skill_move(lines, 0.0, random.Random(s)) for s in range(200)]
    assert len(set(weak)) >= 3
    crushing = [(e4, 3000), (d4, 0), (nf3, -100), (a3, -200)]
    assert {pick_skill_move(crushing, 0.0, random.Random(s)) for s in range(50)} == {e4}


def test_missing_engine_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import envs.chess.stockfish as sf

    monkeypatch.setattr(sf, "DEBIAN_PATHS", ())
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv(sf.PATH_ENV, raising=False)
    with pytest.raises(StockfishNotFound) as err:
        find_stockfish()
    msg = str(err.value)
    assert "apt-get install stockfish" in msg and "\n" not in msg
    with pytest.raises(StockfishNotFound):
        ChessTask("chess").reset(0)


def test_contract_without_engine_random_opponent() -> None:
    for tid in ("chess", "endgames"):
        check_task(tid, policy="random", options={"opponent": "random"})


# -- with the engine ------------------------------------------------------------------------
@stockfish
@pytest.mark.parametrize("task_id", ["chess", "endgames"])
def test_check_task(task_id: str) -> None:
    check_task(task_id)
    assert live_children() == []


@stockfish
def test_real_engine_reports_1350_minimum_and_task_uses_it() -> None:
    info = engine_info(find_stockfish())
    assert info.elo_min == 1350
    t = envs.make("chess")
    t.reset(0)
    assert t.state()["opponent"]["elo"] == 1350
    assert envs.make("chess", elo=9999).reset(0) and clamp_elo(9999, info) == info.elo_max


@stockfish
def test_opponent_mate_costs_one() -> None:
    t = envs.make("chess", elo=None, depth=4)
    t.reset(0, {"fen": "rnbqkbnr/pppp1ppp/8/4p3/8/5P2/PPPPP1PP/RNBQKBNR w KQkq - 0 2"})
    st = t.step("g 4\n")
    assert (st.reward, st.terminated) == (-1.0, True)
    assert st.info["opponent_san"] == "Qh4#" and st.info["result"] == "0-1"
    assert t.state()["termination"] == "checkmate" and live_children() == []


@stockfish
def test_weak_opponent_varies_with_the_seed_but_not_within_it() -> None:
    t = envs.make("chess")
    replies = []
    for seed in range(8):
        t.reset(seed)
        replies.append(t.step("e 4\n").info["opponent_uci"])
        t.reset(seed)
        assert t.step("e 4\n").info["opponent_uci"] == replies[-1]
    assert len(set(replies)) > 1
    t.close()


@stockfish
def test_strong_policy_mates_a_bare_king() -> None:
    t = envs.make("endgames")
    agent = make_policy("endgames", "strong")
    ep = run_episode(t, agent, 0, {"fen": "7k/8/5K2/8/8/8/8/6Q1 w - - 0 1"})
    assert ep.first_observation == "7 k / 8 / 5 K 2 / 8 / 8 / 8 / 8 / 6 Q 1   w   -   -   0   1"
    assert ep.total_return == 1.0 and len(ep.transitions) <= 5


# -- engine processes never outlive their game ------------------------------------------------
@stockfish
def test_engine_process_lives_only_during_the_game() -> None:
    assert live_children() == []
    t = envs.make("endgames")
    t.reset(1)
    assert live_children() == []  # opened on the first engine move
    t.step(t.legal_actions()[0])
    pid = t.engine_pid
    assert pid is not None and live_children() == [pid]
    t.reset(2)  # a new game: the old process is gone
    assert live_children() == []
    t.step(t.legal_actions()[0])
    assert len(live_children()) == 1
    t.close()
    assert live_children() == [] and t.state()["done"]
    t.close()  # idempotent


@stockfish
@pytest.mark.parametrize("policy", ["behaviour", "strong", "random"])
def test_no_process_after_an_episode(policy: str) -> None:
    t = envs.make("endgames")
    ep = run_episode(t, make_policy("endgames", policy), 3)
    assert ep.done and live_children() == []


@stockfish
def test_engine_closed_when_a_step_fails() -> None:
    t = envs.make("chess")
    t.reset(0)
    t.step("e 4\n")
    os.kill(t.engine_pid, signal.SIGKILL)
    with pytest.raises(EngineFailure):
        t.step(t.legal_actions()[0])
    assert live_children() == [] and t.state()["done"]


@stockfish
def test_engine_closed_when_the_agent_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    t = envs.make("chess")
    t.reset(0)
    t.step("e 4\n")
    import envs.chess.stockfish as sf

    def boom(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    agent = make_policy("chess", "behaviour", levels=[0])
    agent.reset(t, 0)
    monkeypatch.setattr(sf, "pick_skill_move", boom)
    with pytest.raises(KeyboardInterrupt):
        agent.act(t.history())
    assert live_children() == []


@stockfish
def test_engine_closed_when_the_task_is_dropped() -> None:
    t = envs.make("chess")
    t.reset(0)
    t.step("d 4\n")
    assert len(live_children()) == 1
    del t
    gc.collect()
    assert live_children() == []
