"""data.runs (runs, checkpoints, evaluations) and data.stats (aggregates): the queries that moved
out of training/ and the app."""

from __future__ import annotations

import pytest

from data import runs, stats
from data.records import EpisodeRecord, StepRecord, Who


def _ep(
    task="maze-fo",
    ret=-1.0,
    source="scripted",
    options=None,
    success=None,
    info=None,
    run_id=None,
    meta=None,
) -> EpisodeRecord:
    steps = [StepRecord("a\n", "b\n", ret, True, info=info)]
    return EpisodeRecord(
        task,
        1,
        0,
        "o\n",
        steps,
        Who("scripted", "x"),
        source=source,
        options=options,
        success=success,
        run_id=run_id,
        meta=meta,
    )


def test_a_run_its_checkpoints_and_its_last_evaluation(store):
    rid = runs.start_run(
        store,
        kind="train",
        algo="ilql",
        task="maze-fo",
        config={"lr": 0.1},
        dataset_query='{"task": "maze-fo"}',
        episode_ids=[3, 1],
        out_dir="out",
    )
    c1 = runs.add_checkpoint(store, rid, "out/ck", 10, {"eval": None})
    c2 = runs.add_checkpoint(store, rid, "out/ck", 20, {})
    assert (
        runs.checkpoint_id_for(store, "out/ck") == c2
        and runs.checkpoint_id_for(store, "nope") is None
    )
    assert [c["step"] for c in runs.run_checkpoints(store, rid)] == [20, 10]
    assert runs.last_run_evaluation(store, rid) is None
    runs.add_evaluation(
        store, "maze-fo", "ilql", {"episodes": 4, "mean_return": -3.0, "method": "sampled"}, c1
    )
    e2 = runs.add_evaluation(
        store, "maze-fo", "ilql", {"episodes": 25, "mean_return": -2.5, "ci_low": -3.0}, c2
    )
    last = runs.last_run_evaluation(store, rid)
    assert (last["id"], last["episodes"], last["ci_low"], last["meta"]) == (e2, 25, -3.0, {})
    run = runs.recent_runs(store)[0]
    assert (run["status"], run["config"], run["episode_ids"]) == ("running", {"lr": 0.1}, [3, 1])
    runs.finish_run(store, rid, "failed", {"loss": 1.5})
    runs.resume_run(store, rid)
    assert runs.recent_runs(store)[0]["status"] == "running"
    runs.finish_run(store, rid, "finished", {"loss": 1.0})
    run = runs.recent_runs(store)[0]
    assert (run["status"], run["metrics"]) == ("finished", {"loss": 1.0}) and run["ended_at"]


def test_the_rounds_of_an_online_run(store):
    rid = runs.start_run(
        store,
        kind="train",
        algo="ppo",
        task="maze-fo",
        config={},
        dataset_query=None,
        episode_ids=None,
        out_dir=None,
    )
    ids = store.write_episodes([_ep(run_id=rid, meta={"round": r}) for r in (1, 1, 2, 3)])
    assert runs.round_recorded(store, rid, 2) and not runs.round_recorded(store, rid, 4)
    assert not runs.round_recorded(store, None, 1)
    assert runs.run_episode_ids(store, rid, 2) == ids[:3]
    assert runs.run_episode_ids(store, rid) == ids


def test_source_counts_and_not_understood(store):
    store.write_episodes(
        [
            _ep(ret=-2.0, success=False, info={"understood": True}),
            _ep(ret=0.0, success=True, info={"understood": False}),
            _ep(task="wordle", ret=-6.0),
        ]
    )
    store.start_episode("maze-fo", 1, 0, "o\n", Who("human", "human"))  # in progress: not counted
    rows = {(r["task"], r["source"]): r for r in stats.source_counts(store)}
    maze = rows[("maze-fo", "scripted")]
    assert (maze["finished"], maze["mean_return"], maze["success_rate"]) == (2, -1.0, 0.5)
    assert (
        rows[("maze-fo", "human")]["in_progress"] == 1
        and rows[("wordle", "scripted")]["mean_return"] == -6.0
    )
    assert stats.not_understood_rates(store) == {("maze-fo", "scripted"): 0.5}


def test_logged_returns_leave_out_agents_rollouts_and_filter_by_options(store):
    store.write_episodes(
        [
            _ep(ret=-4.0),
            _ep(ret=-2.0, source="human"),
            _ep(ret=-100.0, source="agent"),
            _ep(ret=-10.0, options={"penalty": 2}),
            _ep(task="wordle", ret=-1.0),
        ]
    )
    assert stats.logged_return(store, "maze-fo", "avg") == pytest.approx(-16 / 3)
    assert stats.logged_return(store, "maze-fo", "min") == -10.0
    assert stats.logged_return(store, "maze-fo", "avg", {"penalty": 2}) == -10.0
    assert stats.logged_return(store, "maze-fo", "avg", {"penalty": 3}) is None
    assert stats.logged_return(store, "text-nav", "min") is None


def test_episode_returns_keep_the_order_asked(store):
    ids = store.write_episodes([_ep(ret=float(-i)) for i in range(5)])
    assert stats.episode_returns(store, ids[::-1], chunk=2) == [-4.0, -3.0, -2.0, -1.0, -0.0]
    assert store.count(task="maze-fo") == 5 and store.count("return < ?", [-2], task="maze-fo") == 2
