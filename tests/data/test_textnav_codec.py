"""LMRL-Gym's Text-Nav format: export matches it, import reads it, and both round-trip."""

from __future__ import annotations

import io
import json

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.io.formats import export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Store, Who


def record(task: str, seed: int, policy: str, **opts) -> EpisodeRecord:
    ep = envs.run_episode(envs.make(task, **opts), envs.make_policy(task, policy), seed)
    steps = [
        StepRecord(x.action, x.observation, x.reward, x.terminated, x.truncated, x.info)
        for x in ep.transitions
    ]
    return EpisodeRecord(
        task,
        1,
        seed,
        ep.first_observation,
        steps,
        Who("scripted", policy),
        success=ep.total_return > 0,
    )


def test_export_shape_is_lmrl(store):
    store.write_episodes([record("textnav-fo", 3, "strong")])
    out = io.StringIO()
    assert export_episodes(store, out, "lmrl", DatasetQuery(task="textnav-fo")) == 1
    item = json.loads(out.getvalue())
    assert set(item) == {"text_history", "rewards", "dones"}
    th = item["text_history"]
    assert len(th) % 2 == 1 and len(item["rewards"]) == len(item["dones"]) == len(th) // 2
    assert all(x == x.strip() for x in th) and th[-1].endswith("***")
    assert (
        th[-2] == "close fridge"
        and item["rewards"][-1] == 1
        and item["dones"] == [False] * (len(th) // 2 - 1) + [True]
    )
    assert '"rewards": [0, 0' in out.getvalue()  # TextWorld's integer score


def test_import_an_lmrl_item():
    from data.io.codecs.textnav import import_item

    item = {
        "text_history": [
            "Welcome!\n\nYou are in the living room.",
            "take stale food from table",
            "You take the stale food.",
            "eat stale food",
            "*** You lost! ***",
        ],
        "rewards": [0, 0],
        "dones": [False, True],
    }
    rec = import_item(item, "textnav-po")
    assert rec.first_observation == "Welcome!\n\nYou are in the living room.\n"
    assert [s.action for s in rec.steps] == ["take stale food from table\n", "eat stale food\n"]
    assert rec.steps[-1].terminated and not rec.steps[-1].truncated and rec.success is False
    item["text_history"][-1] = "You eat it."
    assert import_item(item, "textnav-po").steps[-1].truncated


def test_round_trip_through_the_store(tmp_path, store):
    for task in ("textnav-fo", "textnav-po"):
        recs = [record(task, s, "behaviour") for s in range(20)]
        recs += [record(task, s, "strong") for s in range(3)]
        recs += [record(task, s, "random", max_steps=5) for s in range(3)]
        store.write_episodes(recs)
        a, b = tmp_path / f"{task}-a.jsonl", tmp_path / f"{task}-b.jsonl"
        with a.open("w") as f:
            assert export_episodes(store, f, "lmrl", DatasetQuery(task=task)) == 26
        other = Store(tmp_path / f"{task}.db")
        assert import_episodes(other, a, "lmrl", task) == 26
        with b.open("w") as f:
            export_episodes(other, f, "lmrl", DatasetQuery(task=task))
        assert a.read_text() == b.read_text()
        x = list(load_episodes(store, select_episode_ids(store, DatasetQuery(task=task))))
        y = list(load_episodes(other, select_episode_ids(other, DatasetQuery(task=task))))
        keys = ("action", "observation", "reward", "terminated", "truncated")
        for e, f in zip(x, y, strict=True):
            assert e.episode["first_observation"] == f.episode["first_observation"]
            assert [[s[k] for k in keys] for s in e.steps] == [
                [s[k] for k in keys] for s in f.steps
            ]
            assert e.episode["success"] == f.episode["success"]
        other.close()
