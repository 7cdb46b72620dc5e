"""LMRL's normalised score means what LMRL's Table 2 means: 0 = the constants' min (negatives
clipped, as the paper's GPT-4 endgames -22.8), 50 = LMRL's dataset average, 100 = its max; and
Wordle's constants apply to LMRL's own game (``wordle-lmrl --option words=lmrl``)."""

from __future__ import annotations

import pytest

import envs
from envs.core import NormConstants
from training.evaluate import lmrl_score, normalise

ENDGAMES = NormConstants(-1.0, 0.586, 1.0)


@pytest.mark.parametrize(("ret", "score"), [(-1.0, 0.0), (0.586, 50.0), (1.0, 100.0), (0.112, 35.06)])
def test_endgame_constants_match_lmrl_table2(ret, score):
    # LMRL's raw BC return 0.112 is Table 2's 35.1
    assert lmrl_score(ret, ENDGAMES) == pytest.approx(score, abs=0.01)


@pytest.mark.parametrize("ret", [-1.0001, -22.8, -401.0])
def test_returns_below_lmrl_min_score_zero(ret):
    """A poor agent that keeps paying -1 per illegal move (LMRL's env allows 401) scored -3,253
    before; LMRL's Table 2 clips GPT-4's -22.8 to 0."""
    assert lmrl_score(ret, ENDGAMES) == 0.0


def test_maze_invalid_actions_clip_too():
    maze = envs.spec("maze-fo").norm
    assert lmrl_score(-401.0, maze) == 0.0
    assert lmrl_score(-6.84, maze) == pytest.approx(100.0)
    assert lmrl_score(-83.0, maze) == pytest.approx(50.0)


def test_no_constants_no_score():
    assert lmrl_score(-3.0, None) is None


def test_normalise_endgames_result_is_clipped():
    res = normalise({"mean_return": -65.0, "episodes": 4}, "endgames", strong=1.0)
    assert res["normalised_lmrl"] == 0.0


def test_wordle_lmrl_on_lmrl_game_has_lmrl_constants():
    spec = envs.spec("wordle-lmrl", words="lmrl")
    assert spec.norm is not None
    assert (spec.norm.avg, spec.norm.max) == (-4.121715, -1.935)
    # LMRL's raw ILQL / BC returns (load_results.py) give Table 2's 97.7 / 79.9
    assert lmrl_score(-2.0354, spec.norm) == pytest.approx(97.7, abs=0.05)
    assert lmrl_score(-2.8142, spec.norm) == pytest.approx(79.9, abs=0.05)
    task = envs.make("wordle-lmrl", words="lmrl")
    try:
        assert task.vocab.size == 431
    finally:
        task.close()


def test_wordle_constants_only_on_lmrl_game():
    """The constants are that game's (431 words, LMRL's feedback rule): other games get none."""
    assert envs.spec("wordle-lmrl").norm is None  # the 2,300-word game
    assert envs.spec("wordle-lmrl", words="small").norm is None
    assert envs.spec("wordle", words="lmrl").norm is None  # the real feedback rule
    assert envs.spec("wordle-lmrl", words="lmrl", bad_word_reward=-10.0).norm is None


def test_lmrl_behaviour_on_lmrl_game_is_near_lmrl_dataset_average():
    task = envs.make("wordle-lmrl", words="lmrl")
    policy = envs.make_policy("wordle-lmrl", "behaviour")
    try:
        rets = [envs.run_episode(task, policy, seed=100_000 + i).total_return for i in range(200)]
    finally:
        task.close()
    mean = sum(rets) / len(rets)
    assert abs(mean - (-4.121715)) < 0.25
    assert 40 < lmrl_score(mean, task.spec.norm) < 60


def test_endgame_illegal_move_is_lmrl_s():
    """LMRL's ChessEnv: an illegal move is -1 and not terminal (the game goes on), also in endgames."""
    task = envs.make("endgames", opponent="random")
    try:
        task.reset(seed=0)
        step = task.step("K x x 9\n")
        assert step.reward == -1.0
        assert not step.terminated and not step.truncated
    finally:
        task.close()
