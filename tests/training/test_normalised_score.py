"""LMRL's normalised score means what LMRL's Table 2 means: 0 = the constants' min (negatives
clipped, as the paper's GPT-4 endgames -22.8), 50 = LMRL's dataset average, 100 = its max; and
Wordle's constants apply to LMRL's own game (``wordle-lmrl --option vocab_file=`` LMRL-Gym's
``wordle_official_400.txt``, recognised by its digest; the list is not shipped, so the tests use a
list of their own with the digest patched to match)."""

from __future__ import annotations

import pytest

import envs
from envs.core import NormConstants
from training.evaluation.evaluate import lmrl_score, normalise

ENDGAMES = NormConstants(-1.0, 0.586, 1.0)


@pytest.mark.parametrize(
    ("ret", "score"), [(-1.0, 0.0), (0.586, 50.0), (1.0, 100.0), (0.112, 35.06)]
)
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


@pytest.fixture
def lmrl_list(tmp_path, monkeypatch):
    """A 431-word list standing in for LMRL's (whose digest the task then recognises)."""
    import envs.wordle.task as wordle_task
    from envs.wordle.engine import list_digest, small_vocab

    words = list(small_vocab().answers)[:400] + list(envs.make("wordle").vocab.answers)[:600]
    words = list(dict.fromkeys(words))[:431]
    path = tmp_path / "wordle_official_400.txt"
    path.write_text("\n".join(words) + "\n")
    monkeypatch.setattr(wordle_task, "LMRL_LIST_SHA256", list_digest(words))
    return path


def test_wordle_lmrl_on_lmrl_game_has_lmrl_constants(lmrl_list):
    spec = envs.spec("wordle-lmrl", vocab_file=str(lmrl_list))
    assert spec.norm is not None
    assert (spec.norm.avg, spec.norm.max) == (-4.121715, -1.935)
    # LMRL's raw ILQL / BC returns (load_results.py) give Table 2's 97.7 / 79.9
    assert lmrl_score(-2.0354, spec.norm) == pytest.approx(97.7, abs=0.05)
    assert lmrl_score(-2.8142, spec.norm) == pytest.approx(79.9, abs=0.05)


def test_wordle_constants_only_on_lmrl_game(lmrl_list, tmp_path):
    """The constants are that game's (LMRL's 431 words, its feedback rule, default penalty): other
    games get none, a list of the same size included."""
    assert envs.spec("wordle-lmrl").norm is None  # the 2,300-word game
    assert envs.spec("wordle-lmrl", words="small").norm is None
    assert envs.spec("wordle", vocab_file=str(lmrl_list)).norm is None  # the real feedback rule
    assert envs.spec("wordle-lmrl", vocab_file=str(lmrl_list), bad_word_reward=-10.0).norm is None
    other = tmp_path / "other.txt"
    other.write_text("\n".join(lmrl_list.read_text().split()[1:] + ["zebra"]) + "\n")
    assert envs.spec("wordle-lmrl", vocab_file=str(other)).norm is None  # 431 words, not LMRL's
    with pytest.raises(ValueError):
        envs.spec("wordle-lmrl", words="lmrl")  # not shipped: LMRL's list is given as vocab_file


def test_the_digest_is_of_the_sorted_lower_case_list():
    from envs.wordle.engine import LMRL_LIST_SHA256, list_digest

    assert list_digest(["b", "a", "a"]) == list_digest(["a", "b"]) != LMRL_LIST_SHA256
    assert len(LMRL_LIST_SHA256) == 64


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
