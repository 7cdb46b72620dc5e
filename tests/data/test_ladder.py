"""A task's ladder (data.ladder) and stored episodes replayed frame by frame (data.replay)."""

from __future__ import annotations

import math
import statistics

import pytest

import envs
from data.generate import generate
from data.ladder import episode_pairs, ladder, lmrl_score, t_interval
from data.replay import load_replay
from data.runs import add_checkpoint, add_evaluation
from data.session import PlaySession


def _person(store, name: str, seed: int, moves: list[str]) -> int:
    s = PlaySession(store, "maze-fo", player=name, seed=seed)
    s.start()
    for m in moves:
        s.human_input(m)
    return s.episode_id


def test_a_strong_scripted_policy_ranks_above_a_random_one(store):
    generate(store, "maze-fo", envs.make_policy("maze-fo", "random"), 4, seed=0)
    generate(store, "maze-fo", envs.make_policy("maze-fo", "strong"), 4, seed=0)
    rows = ladder(store, "maze-fo")
    assert [r.who for r in rows] == ["optimal", "random"]
    strong, random_ = rows
    assert strong.mean_return > random_.mean_return
    assert strong.success_rate == 1.0 and random_.episodes == 4 and strong.origin == "episodes"
    returns = [e["return"] for e in store.recent_episodes(10) if e["agent_name"] == "optimal"]
    assert strong.mean_return == pytest.approx(statistics.fmean(returns))
    assert strong.ci_low <= strong.mean_return <= strong.ci_high
    norm = envs.spec("maze-fo").norm
    assert strong.lmrl_score == pytest.approx(max(0.0, norm.normalise(strong.mean_return)))
    assert strong.lmrl_score > random_.lmrl_score


def test_people_rank_per_player_and_sources_filter(store):
    generate(store, "maze-fo", envs.make_policy("maze-fo", "random"), 2, seed=0)
    _person(store, "ann", 3, ["up"] * 3)
    _person(store, "ann", 3, ["up"] * 3)  # not finished: not on the ladder
    rows = ladder(store, "maze-fo")
    assert {r.who for r in rows} == {"random"}  # unfinished people's episodes do not count
    ladder_sources = {r.source for r in ladder(store, "maze-fo", sources=["human"])}
    assert ladder_sources == set()
    assert [r.who for r in ladder(store, "maze-fo", sources=["scripted"])] == ["random"]


def test_finished_human_episodes_are_one_row_per_player(store):
    for name in ("ann", "bob"):
        s = PlaySession(store, "maze-fo", player=name, seed=1)
        s.start()
        strong = envs.make_policy("maze-fo", "strong")
        strong.reset(s.task, 1)
        while not s.done:
            s.human_input(strong.act(s.task.history()))
    rows = ladder(store, "maze-fo", sources=["human"])
    assert sorted(r.who for r in rows) == ["ann", "bob"]
    assert {r.kind for r in rows} == {"person"} and all(r.episodes == 1 for r in rows)


def test_evaluations_join_the_ladder(store):
    generate(store, "maze-fo", envs.make_policy("maze-fo", "random"), 2, seed=0)
    cid = add_checkpoint(store, None, "runs/bc/final", 10, {})
    add_evaluation(
        store,
        "maze-fo",
        "bc",
        {
            "episodes": 8,
            "mean_return": -12.0,
            "ci_low": -14.0,
            "ci_high": -10.0,
            "success_rate": 1.0,
        },
        cid,
    )
    rows = ladder(store, "maze-fo")
    assert (
        rows[0].who == "runs/bc/final"
        and rows[0].kind == "checkpoint"
        and rows[0].source == "agent"
    )
    assert rows[0].origin.startswith("eval #") and rows[0].lmrl_score is not None
    assert [r.who for r in ladder(store, "maze-fo", sources=["agent"])] == ["runs/bc/final"]
    assert ladder(store, "maze-fo", evaluations=False)[0].who == "random"


def test_t_interval_and_score():
    vals = [1.0, 2.0, 4.0]
    lo, hi = t_interval(3, statistics.fmean(vals), sum(v * v for v in vals))
    half = 4.303 * statistics.stdev(vals) / math.sqrt(3)
    assert (lo, hi) == pytest.approx((statistics.fmean(vals) - half, statistics.fmean(vals) + half))
    assert t_interval(1, 5.0, 25.0) == (None, None)
    assert lmrl_score(-3.0, None) is None


def test_replay_frames_reproduce_the_recorded_steps(store):
    generate(store, "maze-fo", envs.make_policy("maze-fo", "strong"), 1, seed=4)
    generate(store, "maze-fo", envs.make_policy("maze-fo", "random"), 1, seed=4)
    rp = load_replay(store, 1)
    steps = store.steps(1)
    assert rp.replayed and rp.last == len(steps)
    assert [f.action for f in rp.frames[1:]] == [s["action"] for s in steps]
    assert rp.frames[-1].return_so_far == pytest.approx(store.episode(1)["return"])
    assert rp.frames[-1].state["position"] == rp.frames[-1].state["goal"]
    assert rp.frame(10_000) is rp.frames[-1]
    assert [p["id"] for p in episode_pairs(store, 1)] == [2]


def test_an_episode_that_does_not_replay_keeps_its_recorded_texts(store):
    generate(store, "maze-fo", envs.make_policy("maze-fo", "strong"), 1, seed=4)
    store.db.execute("UPDATE steps SET observation = 'tampered' WHERE episode_id = 1 AND idx = 0")
    store.db.conn.commit()
    rp = load_replay(store, 1)
    assert not rp.replayed and "step 1" in rp.note
    assert rp.frames[1].observation == "tampered" and rp.frames[1].state is None
