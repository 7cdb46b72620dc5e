"""Maze rules, texts and policies against LMRL-Gym's behaviour (docs/tasks.md §1)."""

from __future__ import annotations

import statistics

import pytest

import envs
from envs.core.checker import check_task
from envs.maze.policies import bad_moves
from envs.maze.task import ACTIONS, MazeTask, optimal_return


@pytest.mark.parametrize("task_id", ["maze-fo", "maze-po"])
def test_check_task(task_id):
    check_task(task_id)


def test_literal_fo_transcript():
    t = envs.make("maze-fo")
    obs = t.reset(options={"init_position": (1, 1)})
    assert obs == (
        "The goal is at position 8, 6. Your current position is at position 1, 1. "
        "There are walls to your left, above you, below you.\n"
    )
    st = t.step("move right\n")
    assert st.observation == (
        "The goal is at position 8, 6. Your current position is at position 1, 2. "
        "There are walls above you, below you.\n"
    )
    assert st.reward == -1.0
    st = t.step("move up\n")  # wall bump: valid, stays
    assert st.reward == -1.0 and st.observation.endswith(
        "position 1, 2. There are walls above you, below you.\n"
    )
    st = t.step("jump\n")
    assert st.reward == -4.0 and st.info["invalid"]
    assert t.history() == (envs.Text(st.observation, False),)


def test_two_digit_columns_are_spaced():
    t = envs.make("maze-fo")
    obs = t.reset(options={"init_position": (1, 10)})
    assert "Your current position is at position 1, 1 0." in obs


@pytest.mark.parametrize("text", ["move up", "Move up\n", "move up \n", " move up\n", ""])
def test_exact_string_matching(text):
    t = envs.make("maze-fo")
    t.reset(options={"init_position": (1, 1)})
    assert t.step(text).reward == -4.0


def test_literal_po_history_and_invalid_keeps_history():
    t = envs.make("maze-po")
    t.reset(options={"init_position": (1, 1)})
    t.step("move right\n")
    t.step("move up\n")
    assert envs.history_to_str(t.history()) == (
        "There are walls to your left, above you, below you.\nmove right\n"
        "There are walls above you, below you.\nmove up\nThere are walls above you, below you.\n"
    )
    t.step("fly\n")  # LMRL wipes the history here; we keep it
    assert len(t.history()) == 7


def test_po_window_is_40_texts_starting_with_an_action():
    t = envs.make("maze-po")
    t.reset(options={"init_position": (1, 1)})
    for _ in range(25):
        t.step("move up\n")
    h = t.history()
    assert len(h) == 40 and h[0].is_action and not h[-1].is_action


def test_goal_reward_and_success_text():
    t = envs.make("maze-fo")
    t.reset(options={"init_position": (7, 6)})
    st = t.step("move down\n")
    assert st == envs.Step("Success\n", 0.0, True, False, {"success": True})
    with pytest.raises(RuntimeError):
        t.step("move down\n")


def test_hundred_step_cap_then_failure_whatever_the_action():
    t = envs.make("maze-fo")
    t.reset(options={"init_position": (1, 1)})
    for _ in range(99):
        t.step("move left\n")
    t2_obs = t.step("move left\n")
    assert not t2_obs.terminated and not t2_obs.truncated
    st = t.step("move right\n")
    assert st.observation == "Failure\n" and st.reward == -1.0 and st.truncated
    assert t.state()["return"] == -101.0


def test_hundredth_step_can_still_reach_goal():
    t = envs.make("maze-fo")
    t.reset(options={"init_position": (7, 6)})
    for _ in range(99):
        t.step("move left\n")
    assert t.step("move down\n").terminated


def test_optimal_returns_match_lmrl():
    tables = envs.make("maze-fo").tables
    assert len(tables.starts) == 25
    assert statistics.mean(optimal_return(tables, c) for c in tables.starts) == pytest.approx(-6.84)
    assert len(set(tables.obs_po)) == 8


def test_optimal_policy_is_optimal_from_every_start():
    task = envs.make("maze-fo")
    for cell in task.tables.starts:
        rc = task.tables.cells[cell]
        agent = envs.make_policy("maze-fo", "optimal")
        task.reset(options={"init_position": rc})
        agent.reset(task, 0)
        ret = 0.0
        while True:
            st = task.step(agent.act(task.history()))
            ret += st.reward
            if st.terminated:
                break
        assert ret == optimal_return(task.tables, cell)


def test_behaviour_policy_matches_lmrl_data_statistics():
    rets, wins = [], 0
    for seed in range(600):
        ep = envs.run_episode(envs.make("maze-fo"), envs.make_policy("maze-fo", "behaviour"), seed)
        rets.append(ep.total_return)
        wins += ep.transitions[-1].terminated
    assert 0.04 < wins / 600 < 0.18  # LMRL's maze data: ~0.11
    assert -98 < statistics.mean(rets) < -88


def test_bad_moves_never_approach_the_goal():
    tables = envs.make("maze-fo").tables
    for cell, a in enumerate(bad_moves(tables)):
        if cell != tables.goal_index:
            assert tables.dist[tables.nxt[cell * 4 + a]] >= tables.dist[cell]


@pytest.mark.parametrize(
    "typed,action",
    [
        ("w", "move up\n"),
        ("a", "move left\n"),
        ("s", "move down\n"),
        ("d", "move right\n"),
        ("Up", "move up\n"),
        ("move left", "move left\n"),
    ],
)
def test_parse_input(typed, action):
    assert envs.make("maze-fo").parse_input(typed) == action


def test_parse_input_rejects_with_a_message():
    with pytest.raises(envs.InvalidInput, match="arrow keys"):
        envs.make("maze-fo").parse_input("jump")


def test_other_layouts_and_bad_options():
    for layout in ("umaze", "medium"):
        t = MazeTask("fo", layout=layout)
        ep = envs.run_episode(t, envs.make_policy("maze-fo", "optimal"), 0)
        assert ep.transitions[-1].terminated
    t = MazeTask("po", layout="random", size=5, layout_seed=3)
    assert envs.run_episode(t, envs.make_policy("maze-fo", "optimal"), 1).transitions[-1].terminated
    assert t.spec.norm is None
    with pytest.raises(ValueError, match="unknown maze layout"):
        MazeTask("fo", layout="nope")
    assert set(ACTIONS) == set(envs.make("maze-fo").legal_actions())


def test_normalised_score_matches_lmrl_formula():
    norm = envs.spec("maze-fo").norm
    assert norm.normalise(-101) == 0 and norm.normalise(-83) == 50
    assert norm.normalise(-6.84) == pytest.approx(100)
    assert norm.normalise(-6.97) == pytest.approx(99.9, abs=0.1)  # LMRL Table 2: ILQL 99.9
