"""Dataset queries and import/export (our JSONL and LMRL-Gym's maze formats)."""

from __future__ import annotations

import io
import json

import pytest

import envs
from data.datasets import DatasetQuery, load_episodes, percentile, select_episode_ids
from data.io.formats import FormatError, export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Store, Who


def generate(
    store: Store, task: str, n: int, policy: str = "behaviour", seed0: int = 0
) -> list[int]:
    recs = []
    for seed in range(seed0, seed0 + n):
        ep = envs.run_episode(envs.make(task), envs.make_policy(task, policy), seed)
        steps = [
            StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, t.info)
            for t in ep.transitions
        ]
        recs.append(
            EpisodeRecord(
                task,
                1,
                seed,
                ep.first_observation,
                steps,
                Who("scripted", policy),
                success=ep.transitions[-1].terminated,
            )
        )
    return store.write_episodes(recs)


LITERAL_FO_LINE = (
    '[{"state": "The goal is at position 8, 6. Your current position is at position 7, 6. '
    'There are walls to your right, to your left.\\n", "action": "move up\\n", "reward": -1.0, "done": false}, '
    '{"state": "The goal is at position 8, 6. Your current position is at position 6, 6. '
    'There are walls to your right, to your left.\\n", "action": "move down\\n", "reward": -1.0, "done": false}, '
    '{"state": "The goal is at position 8, 6. Your current position is at position 7, 6. '
    'There are walls to your right, to your left.\\n", "action": "move down\\n", "reward": 0.0, "done": true}]'
)


def test_exported_fo_line_equals_lmrl_format(store):
    t = envs.make("maze-fo")
    first = t.reset(options={"init_position": (7, 6)})
    steps = []
    for a in ("move up\n", "move down\n", "move down\n"):
        st = t.step(a)
        steps.append(StepRecord(a, st.observation, st.reward, st.terminated, st.truncated, st.info))
    store.write_episodes([EpisodeRecord("maze-fo", 1, 0, first, steps, Who("human", "human"))])
    out = io.StringIO()
    assert export_episodes(store, out, "lmrl", DatasetQuery(task="maze-fo")) == 1
    assert out.getvalue() == LITERAL_FO_LINE + "\n"


@pytest.mark.parametrize("task", ["maze-fo", "maze-po"])
@pytest.mark.parametrize("fmt", ["lmrl", "jsonl"])
def test_export_import_round_trips(tmp_path, store, task, fmt):
    generate(store, task, 30)
    generate(store, task, 5, "optimal", 100)
    store.add_label(3, "good", step_idx=1, author="ann")
    a = tmp_path / f"a.{fmt}"
    with a.open("w") as f:
        export_episodes(store, f, fmt, DatasetQuery(task=task))
    other = Store(tmp_path / "other.db")
    assert import_episodes(other, a, fmt, task) == 35
    b = tmp_path / f"b.{fmt}"
    with b.open("w") as f:
        export_episodes(other, f, fmt, DatasetQuery(task=task))
    assert a.read_text() == b.read_text()
    src = list(load_episodes(store, select_episode_ids(store, DatasetQuery(task=task))))
    dst = list(load_episodes(other, select_episode_ids(other, DatasetQuery(task=task))))
    for x, y in zip(src, dst, strict=True):
        assert x.episode["first_observation"] == y.episode["first_observation"]
        assert x.episode["success"] == y.episode["success"] and x.total_return == y.total_return
        keys = ("action", "observation", "reward", "terminated", "truncated")
        assert [[s[k] for k in keys] for s in x.steps] == [[s[k] for k in keys] for s in y.steps]
        if fmt == "jsonl":
            assert (
                x.episode["seed"] == y.episode["seed"]
                and x.episode["agent_name"] == y.episode["agent_name"]
            )
    if fmt == "jsonl":
        assert [(lab["step_idx"], lab["label"]) for lab in other.labels(3)] == [(1, "good")]


def test_po_export_shape(store):
    generate(store, "maze-po", 1, "optimal")
    out = io.StringIO()
    export_episodes(store, out, "lmrl", DatasetQuery(task="maze-po"))
    item = json.loads(out.getvalue())
    th = item["text_history"]
    assert len(th) == len(item["rewards"]) == len(item["dones"]) and len(th) % 2 == 1
    assert th[-1] == "Success\n" and item["dones"][-2] is True and item["rewards"][0] == 0.0
    assert all(a.startswith("move ") for a in th[1::2])


def test_import_errors(tmp_path, store):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"nope": 1}\n')
    with pytest.raises(FormatError, match="^line 1: the episode has an unknown field 'nope'"):
        import_episodes(store, bad, "jsonl")
    bad.write_text("not json\n")
    with pytest.raises(FormatError, match="not valid JSON"):
        import_episodes(store, bad, "lmrl", "maze-fo")
    with pytest.raises(FormatError, match="no such file"):
        import_episodes(store, tmp_path / "missing.jsonl", "jsonl")
    with pytest.raises(FormatError, match="give --task"):
        import_episodes(store, bad, "lmrl")
    assert store.count() == 0


def test_queries(store):
    generate(store, "maze-fo", 200)
    generate(store, "maze-po", 10)
    eid = store.start_episode("maze-fo", 1, 1, "o\n", Who("human", "human"), player="zed")
    everything = select_episode_ids(store, DatasetQuery(task="maze-fo"))
    assert len(everything) == 200 and eid not in everything  # unfinished episodes stay out
    assert eid in select_episode_ids(store, DatasetQuery(task="maze-fo", status="in_progress"))
    rets = [e.total_return for e in load_episodes(store, everything)]
    top = select_episode_ids(store, DatasetQuery(task="maze-fo", top_percent=10))
    thr = percentile(rets, 90)
    assert len(top) == sum(r >= thr for r in rets) >= 20  # ties included
    wins = select_episode_ids(store, DatasetQuery(task="maze-fo", wins_only=True))
    assert 0 < len(wins) < 60
    train = set(select_episode_ids(store, DatasetQuery(task="maze-fo", split="train")))
    evals = set(select_episode_ids(store, DatasetQuery(task="maze-fo", split="eval")))
    assert train.isdisjoint(evals) and train | evals == set(everything) and 5 <= len(evals) <= 40
    assert select_episode_ids(store, DatasetQuery(task="maze-fo", players=["zed"])) == []
    assert len(select_episode_ids(store, DatasetQuery(task="maze-fo", min_return=-50))) <= len(
        everything
    )
    q = DatasetQuery(task="maze-fo", top_percent=10, sources=["scripted"])
    assert DatasetQuery.from_json(q.to_json()) == q


def test_percentile_matches_numpy_linear():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 90) == 5
    assert percentile([0, 10], 90) == 9


def test_query_by_task_options(tmp_path):
    store = Store(tmp_path / "o.db")
    recs = []
    for opts in (
        None,
        {"words": "small"},
        {"words": "small", "bad_word_reward": -10},
        {"words": "standard"},
    ):
        recs.append(
            EpisodeRecord(
                "wordle",
                1,
                0,
                "Wordle:\n",
                [StepRecord("c r a n e\n", "g g g g g\n", 0.0, True, False, {})],
                Who("scripted", "behaviour"),
                options=opts,
            )
        )
    store.write_episodes(recs)
    ids = lambda **o: select_episode_ids(store, DatasetQuery(task="wordle", options=o))  # noqa: E731
    assert ids() == [1, 2, 3, 4]
    assert ids(words="small") == [2, 3]
    assert ids(words="small", bad_word_reward=-10) == [3]
    assert ids(bad_word_reward=-10.0) == [3]
    assert ids(words="huge") == []
    assert DatasetQuery.from_json(DatasetQuery(options={"words": "small"}).to_json()).options == {
        "words": "small"
    }
