"""TRL's side of the tasks without TRL (``envs/adapters/trl_env.py``): the one-turn rows, the
return-from-turn reward, and the multi-turn tool environment."""

from __future__ import annotations

import math

import pytest

import envs
from envs.adapters.trl_env import TaskToolEnv, TurnReward, turn_rows


def _scripted(task_id: str, seed: int, policy: str = "behaviour"):
    return envs.run_episode(envs.make(task_id), envs.make_policy(task_id, policy), seed)


def test_rows_are_the_conversation_before_each_scripted_turn() -> None:
    rows = turn_rows("wordle", [0, 1], turns=3)
    assert [(r["seed"], r["turn"]) for r in rows] == [(s, k) for s in (0, 1) for k in range(3)]
    ep = _scripted("wordle", 1)
    row = rows[5]
    assert row["prompt"][0]["role"] == "system" and row["prompt"][-1]["role"] == "user"
    said = [m["content"] for m in row["prompt"] if m["role"] == "assistant"]
    assert said == [t.action.rstrip("\n") for t in ep.transitions[:2]]


@pytest.mark.parametrize("task_id", ["maze-fo", "wordle", "twenty-questions", "car-dealer"])
def test_the_scripted_move_scores_the_scripted_return_to_go(task_id: str) -> None:
    ep = _scripted(task_id, 2)
    reward = TurnReward()
    for turn in (0, 1):
        if turn >= len(ep.transitions):
            continue
        move = [{"role": "assistant", "content": ep.transitions[turn].action.rstrip("\n")}]
        (got,) = reward([None], [move], [task_id], [2], [turn], ["behaviour"])
        assert math.isclose(got, math.fsum(t.reward for t in ep.transitions[turn:]))
        kept = reward.episodes[-1]
        assert [t.action for t in kept.transitions] == [t.action for t in ep.transitions]
        assert kept.transitions[turn].info["by"] == "model"
        assert math.isclose(kept.total_return, math.fsum(t.reward for t in ep.transitions))


def test_another_move_changes_the_reward() -> None:
    ep = _scripted("maze-fo", 0)
    reward = TurnReward(keep=False)
    good, bad = reward(
        [None, None],
        [ep.transitions[0].action, "jump over the wall"],
        ["maze-fo"] * 2,
        [0, 0],
        [0, 0],
        ["behaviour"] * 2,
    )
    assert good != bad and reward.episodes == []


def test_the_tool_environment_plays_an_episode_to_its_return() -> None:
    ep = _scripted("twenty-questions", 4)
    env = TaskToolEnv()
    first = env.reset(prompt=[], task="twenty-questions", seed=4)
    assert first == ep.first_observation.rstrip("\n")
    said = ""
    for t in ep.transitions:
        said = env.act(t.action.rstrip("\n"))
    assert "The game is over" in said
    assert math.isclose(env.get_reward(), math.fsum(t.reward for t in ep.transitions))
    with pytest.raises(ValueError, match="over"):
        env.act("Is it a cat?")
