"""A dataset is what a user means: logged play and generated data (human, scripted, import),
finished, and not models' own rollouts (source ``agent``) unless asked for; its composition
(per source, player and agent) is the store's own numbers."""

from __future__ import annotations

import json
import math

import pytest

from data import runs
from data.composition import composition, format_composition, left_out_rollouts
from data.datasets import LOGGED_SOURCES, DatasetQuery, describe_query, select_episode_ids
from data.records import EpisodeRecord, StepRecord, Who


def _ep(returns, who, source, *, player=None, success=None, run_id=None, status="finished", seed=0):
    steps = [
        StepRecord("move up\n", "o\n", r, i == len(returns) - 1) for i, r in enumerate(returns)
    ]
    return EpisodeRecord(
        "maze-fo",
        1,
        seed,
        "o\n",
        steps,
        who,
        player=player,
        source=source,
        success=success,
        run_id=run_id,
        status=status,
    )


def mixed_store(store):
    """Scripted behaviour data, a person's game, an imported episode, an unfinished scripted
    one, and a PPO run's rollouts (source agent, with the run id). Returns ids by kind."""
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
    ids = {}
    ids["scripted"] = store.write_episodes(
        [
            _ep([-1.0] * 3, Who("scripted", "behaviour"), "scripted", success=False, seed=1),
            _ep([-1.0, 0.0], Who("scripted", "behaviour"), "scripted", success=True, seed=2),
            _ep([-1.0] * 5, Who("scripted", "strong"), "scripted", success=True, seed=3),
        ]
    )
    ids["human"] = store.write_episodes(
        [_ep([-1.0] * 4, Who("human", "human"), "human", player="ann", success=True, seed=4)]
    )
    ids["import"] = store.write_episodes(
        [_ep([-2.0, -1.0], Who("import", "import"), "import", seed=5)]
    )
    ids["abandoned"] = store.write_episodes(
        [_ep([-1.0], Who("scripted", "behaviour"), "scripted", status="abandoned", seed=6)]
    )
    ids["agent"] = store.write_episodes(
        [
            _ep(
                [-1.0] * n,
                Who("checkpoint", "ppo:run@round1"),
                "agent",
                success=n < 4,
                run_id=rid,
                seed=10 + n,
            )
            for n in (2, 3, 6)
        ]
    )
    return rid, ids


def test_the_default_query_is_the_logged_data_not_rollouts(store):
    rid, ids = mixed_store(store)
    q = DatasetQuery(task="maze-fo")
    assert q.sources == list(LOGGED_SOURCES)
    assert select_episode_ids(store, q) == ids["scripted"] + ids["human"] + ids["import"]
    assert json.loads(q.to_json())["sources"] == [
        "human",
        "scripted",
        "import",
    ]  # recorded explicitly


def test_rollouts_when_asked_for(store):
    rid, ids = mixed_store(store)
    assert (
        select_episode_ids(store, DatasetQuery(task="maze-fo", sources=["agent"])) == ids["agent"]
    )
    assert select_episode_ids(store, DatasetQuery(task="maze-fo", run_id=rid)) == ids["agent"]
    every = sorted(ids["scripted"] + ids["human"] + ids["import"] + ids["agent"])
    assert select_episode_ids(store, DatasetQuery(task="maze-fo", sources=["any"])) == every
    assert DatasetQuery(sources=["any"]).sources == []
    # a query stored before sources had a default (empty: every source) means what it meant
    assert (
        select_episode_ids(store, DatasetQuery.from_json('{"task": "maze-fo", "sources": []}'))
        == every
    )
    with pytest.raises(ValueError, match="unknown source 'agents'"):
        select_episode_ids(store, DatasetQuery(sources=["agents"]))


def test_the_composition_is_the_stores_numbers(store):
    rid, ids = mixed_store(store)
    q = DatasetQuery(task="maze-fo")
    chosen = select_episode_ids(store, q)
    comp = composition(store, chosen, q)
    rows = {(r["source"], r["player"], r["agent"]): r for r in comp["rows"]}
    assert set(rows) == {
        ("scripted", None, "scripted:behaviour"),
        ("scripted", None, "scripted:strong"),
        ("human", "ann", "human:human"),
        ("import", None, "import:import"),
    }
    eps = {e["id"]: e for e in store.recent_episodes(100)}
    for key, row in rows.items():
        mine = [
            eps[i]
            for i in chosen
            if (
                eps[i]["source"],
                eps[i]["player"],
                f"{eps[i]['agent_kind']}:{eps[i]['agent_name']}",
            )
            == key
        ]
        assert row["episodes"] == len(mine)
        assert row["steps"] == sum(e["n_steps"] for e in mine)
        assert row["mean_return"] == pytest.approx(math.fsum(e["return"] for e in mine) / len(mine))
        wins = [e["success"] for e in mine if e["success"] is not None]
        assert row["success_rate"] == (pytest.approx(sum(wins) / len(wins)) if wins else None)
    total = comp["total"]
    assert (total["episodes"], total["steps"]) == (5, 3 + 2 + 5 + 4 + 2)
    assert total["mean_return"] == pytest.approx((-3 - 1 - 5 - 4 - 3) / 5)
    assert total["success_rate"] == pytest.approx(3 / 4)
    assert comp["left_out_rollouts"] == 3 == left_out_rollouts(store, q)
    assert (
        comp["selected_by"]
        == describe_query(q)
        == "task=maze-fo sources=human,scripted,import status=finished"
    )
    assert comp["query"] == json.loads(q.to_json())
    text = format_composition(comp)
    assert text.splitlines()[0] == "dataset: 5 episodes, 16 steps"
    assert "scripted:behaviour" in text and "ann" in text and "total" in text
    assert "query: task=maze-fo sources=human,scripted,import status=finished" in text
    assert "not included: 3 episodes of models' own rollouts (source agent" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    run_comp = composition(store, ids["agent"], DatasetQuery(task="maze-fo", run_id=rid))
    assert run_comp["left_out_rollouts"] == 0 and run_comp["total"]["episodes"] == 3
    assert "not included" not in format_composition(run_comp)
