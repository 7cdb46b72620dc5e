"""``lmrl generate --policy CHECKPOINT``: a checkpoint plays its episodes side by side (one batched
forward per turn, ``CheckpointAgent.play_many``) and the store gets the episodes that playing them
one at a time gives, seed for seed, in order, whatever the chunk size."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import data.generate as gen  # noqa: E402
import envs  # noqa: E402
from data.store import Store  # noqa: E402


@pytest.fixture(scope="module")
def maze_checkpoint(tmp_path_factory):
    from training.online.toy import tiny_checkpoint

    task, pol = envs.make("maze-fo"), envs.make_policy("maze-fo", "behaviour")
    pairs = []
    for s in range(4):
        task.reset(1000 + s)
        pol.reset(task, 1000 + s)
        for _ in range(5):
            h = task.history()
            pairs.append((str(h[-1])[-120:], pol.act(h)))
            if task.step(pairs[-1][1]).terminated:
                break
    task.close()
    return tiny_checkpoint(tmp_path_factory.mktemp("maze") / "ck", "maze-fo", pairs, bc_steps=10)


def _stored(store: Store) -> list[tuple]:
    return store.db.execute(
        "SELECT e.seed, e.return, e.agent_kind, s.idx, s.action, s.observation, s.reward FROM steps s "
        "JOIN episodes e ON e.id = s.episode_id ORDER BY e.id, s.idx"
    ).fetchall()


@pytest.mark.parametrize(
    "decoding", ["rerank", pytest.param("sample", marks=pytest.mark.slow)]
)  # sample: ~32 s
def test_side_by_side_stores_what_one_at_a_time_does(
    maze_checkpoint, tmp_path, monkeypatch, decoding
):
    from training.agents.checkpoint_agent import CheckpointAgent, load_agent

    agent = load_agent(maze_checkpoint, decoding=decoding)
    calls = []
    play_many = CheckpointAgent.play_many
    monkeypatch.setattr(
        CheckpointAgent, "play_many", lambda self, *a: calls.append(a[1]) or play_many(self, *a)
    )
    monkeypatch.setattr(gen, "SIDE_BY_SIDE", 2)
    seen = []
    batched = Store(tmp_path / "batched.db")
    res = gen.generate(batched, "maze-fo", agent, 5, seed=7, on_episode=seen.append)
    assert calls == [[7, 8], [9, 10], [11]] and seen == [1, 2, 3, 4, 5] and res.written == 5

    monkeypatch.setattr(CheckpointAgent, "play_many", None)  # what an agent without it does
    one = Store(tmp_path / "one.db")
    res1 = gen.generate(one, "maze-fo", agent, 5, seed=7)
    rows = _stored(batched)
    assert rows == _stored(one) and {r[0] for r in rows} == set(range(7, 12))
    assert rows[0][2] == "checkpoint" and res.mean_return == res1.mean_return and len(rows) > 5
