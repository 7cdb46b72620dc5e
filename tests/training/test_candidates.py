"""A checkpoint keeps its data's distinct actions; on a free-text task the reranking decodings
choose among them (by the decoder's own scores), sampling still generates."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from data.datasets import DatasetQuery  # noqa: E402
from data.generate import generate  # noqa: E402
from data.store import Store  # noqa: E402
from envs.core import history_to_str  # noqa: E402
from training.agent import load_agent  # noqa: E402
from training.config import TrainConfig, resolve  # noqa: E402
from training.dataset import Window  # noqa: E402
from training.offline.data_source import dataset_actions  # noqa: E402
from training.offline.loop import train  # noqa: E402


def test_dataset_actions_are_distinct_most_frequent_first():
    windows = [Window([("o", False, 0.0), ("b\n", True, 0.0), ("o", False, 0.0), ("a\n", True, 0.0)], False),
               Window([("o", False, 0.0), ("a\n", True, 0.0), ("c\n", True, 0.0)], True)]  # fmt: skip
    assert dataset_actions(windows) == ["a\n", "b\n", "c\n"]
    assert dataset_actions(windows, limit=2) == ["a\n", "b\n"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("q20")
    store = Store(folder / "q20.db")
    generate(store, "twenty-questions", envs.make_policy("twenty-questions", "behaviour"), 12, seed=100)
    base = dict(algo="ilql", task="twenty-questions", max_steps=2, batch_size=4, n_embd=32, n_head=2, n_layer=1,
                vocab_size=300, eval_episodes=0, progress=False, log_every=1, lr=1e-2)  # fmt: skip
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    out = train(cfg, store, DatasetQuery(task="twenty-questions"), folder / "ilql")
    asked = {s["action"] for ep in store.recent_episodes(100) for s in store.steps(ep["id"]) if s["role"] == "agent"}
    store.close()
    return out["checkpoint"], asked


def test_the_checkpoint_keeps_its_datas_actions_and_reranks_among_them(checkpoint):
    path, asked = checkpoint
    from training.checkpoint import resolve_path

    kept = json.loads((resolve_path(path) / "dataset.json").read_text())["actions"]
    assert set(kept) == asked
    agent = load_agent(path, decoding="rerank")
    assert agent.candidates == kept
    task = envs.make("twenty-questions")
    task.reset(7)
    agent.reset(task, 7)
    action = agent.act(task.history())
    assert action in kept
    scores, _ = agent.decoder.action_scores(history_to_str(task.history()), kept)
    assert action == kept[int(torch.argmax(scores))]  # the reranker's best by its own scores
    expl = agent.explain(task.history(), None)  # the overlay: the agent's top-ranked data actions
    assert expl.rl_choice == action and "of the data's" in expl.source
    sampler = load_agent(path, decoding="sample")
    sampler.reset(task, 7)
    assert sampler.choices(task) is None and isinstance(sampler.act(task.history()), str)
