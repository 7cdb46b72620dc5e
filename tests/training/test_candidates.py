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
from training.agents.checkpoint_agent import load_agent  # noqa: E402
from training.config import TrainConfig, resolve  # noqa: E402
from training.datasets.source import dataset_actions  # noqa: E402
from training.datasets.windows import Window  # noqa: E402
from training.offline.loop import train  # noqa: E402


def test_dataset_actions_are_distinct_most_frequent_first():
    windows = [
        Window(
            [("o", False, 0.0), ("b\n", True, 0.0), ("o", False, 0.0), ("a\n", True, 0.0)], False
        ),
        Window([("o", False, 0.0), ("a\n", True, 0.0), ("c\n", True, 0.0)], True),
    ]
    assert dataset_actions(windows) == ["a\n", "b\n", "c\n"]
    assert dataset_actions(windows, limit=2) == ["a\n", "b\n"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("q20")
    store = Store(folder / "q20.db")
    generate(
        store, "twenty-questions", envs.make_policy("twenty-questions", "behaviour"), 12, seed=100
    )
    base = dict(
        algo="ilql",
        task="twenty-questions",
        max_steps=2,
        batch_size=4,
        n_embd=32,
        n_head=2,
        n_layer=1,
        vocab_size=300,
        eval_episodes=0,
        progress=False,
        log_every=1,
        lr=1e-2,
    )
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    out = train(cfg, store, DatasetQuery(task="twenty-questions"), folder / "ilql")
    asked = {
        s["action"]
        for ep in store.recent_episodes(100)
        for s in store.steps(ep["id"])
        if s["role"] == "agent"
    }
    store.close()
    return out["checkpoint"], asked


def test_the_checkpoint_keeps_its_datas_actions_and_reranks_among_them(checkpoint):
    path, asked = checkpoint
    from training.model.checkpoint import resolve_path

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


def _play(agent, seed: int) -> list[str]:
    task = envs.make("twenty-questions")
    task.reset(seed)
    agent.reset(task, seed)
    said = []
    while not task.done:
        said.append(agent.act(task.history()))
        task.step(said[-1])
    return said


def test_no_repeat_never_chooses_an_action_the_episode_already_had(checkpoint):
    path, _ = checkpoint
    agent = load_agent(path, decoding="rerank", no_repeat=True)
    said = _play(agent, 3)
    assert len(said) == len(set(said)) and len(said) > 1
    # the first choice is the plain reranker's; then each one is the best of those not said yet
    plain = load_agent(path, decoding="rerank")
    assert said[0] == _play(plain, 3)[0]
    task = envs.make("twenty-questions")
    task.reset(3)
    agent.reset(task, 3)
    task.step(said[0])
    left = agent.choices(task, task.history())
    assert said[0] not in left and len(left) == len(agent.candidates) - 1
    scores, _ = agent.decoder.action_scores(history_to_str(task.history()), left)
    assert said[1] == left[int(torch.argmax(scores))]
    expl = agent.explain(
        task.history(), None
    )  # the values overlay ranks what the agent may still say
    assert expl.rl_choice == said[1] and said[0] not in [c.action for c in expl.candidates]


@pytest.mark.slow
def test_lmrl_eval_no_repeat_plays_batched_like_one_at_a_time_and_says_so(
    checkpoint, tmp_path, capsys
):
    from lmrl_tui.cli import main as lmrl

    path, _ = checkpoint
    db = str(tmp_path / "e.db")
    results = []
    for batch in ("1", "4"):
        assert (
            lmrl(
                [
                    "--db",
                    db,
                    "eval",
                    str(path),
                    "--episodes",
                    "4",
                    "--seed",
                    "5",
                    "--decoding",
                    "rerank",
                    "--no-repeat",
                    "--batch-size",
                    batch,
                    "--no-progress",
                ]
            )
            == 0
        )
        results.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    keys = ("mean_return", "ci_low", "ci_high", "success_rate")
    assert results[0]["no_repeat"] is True and [results[0][k] for k in keys] == [
        results[1][k] for k in keys
    ]
    assert lmrl(["--db", db, "eval", "behaviour", "--task", "twenty-questions", "--repeat"]) == 1
    assert "--repeat: only for a checkpoint" in capsys.readouterr().err


def test_in_the_apps_agent_process_no_repeat_reads_the_history_it_is_sent(checkpoint):
    """The app runs a checkpoint in its own process, which sees no task, only the history."""
    from training.agents.server import AgentServer

    path, _ = checkpoint
    server = AgentServer()
    server.agent = load_agent(path, decoding="rerank", no_repeat=True)
    task = envs.make("twenty-questions")
    task.reset(3)
    server.handle({"op": "reset", "seed": 3})
    first = server.handle(
        {"op": "act", "history": [[t.text, t.is_action] for t in task.history()]}
    )["action"]
    task.step(first)
    second = server.handle(
        {"op": "act", "history": [[t.text, t.is_action] for t in task.history()]}
    )["action"]
    left = [a for a in server.agent.candidates if a != first]
    scores, _ = server.agent.decoder.action_scores(history_to_str(task.history()), left)
    assert second == left[int(torch.argmax(scores))]


@pytest.mark.slow
def test_a_checkpoint_chosen_with_settings_plays_with_them_everywhere(checkpoint, tmp_path, capsys):
    """``FOLDER --decoding rerank --no-repeat`` in the app's model field, ``lmrl generate
    --policy`` or ``lmrl eval``: the agent plays as ``lmrl eval FOLDER --decoding rerank
    --no-repeat`` does, and its name (what the store records) says how."""
    from envs.players.agents import make_agent
    from lmrl_tui.cli import main as lmrl
    from training.agents.server import AgentServer

    path, _ = checkpoint
    choice = f"{path} --decoding rerank --no-repeat"
    agent = make_agent("twenty-questions", choice)
    flagged = load_agent(path, decoding="rerank", no_repeat=True)
    assert _play(agent, 3) == _play(flagged, 3)
    assert len(set(_play(agent, 3))) == len(_play(agent, 3))
    assert agent.name.endswith(" --decoding rerank --no-repeat") and agent.name == flagged.name
    assert agent.meta["settings"] == {"decoding": "rerank", "no_repeat": True}
    assert " --" not in load_agent(path).name and "settings" not in load_agent(path).meta
    server = AgentServer()  # the app's agent process loads the same text
    assert (
        server.handle({"op": "load", "task": "twenty-questions", "choice": choice})["name"]
        == agent.name
    )
    db = str(tmp_path / "g.db")
    assert (
        lmrl(
            [
                "--db",
                db,
                "generate",
                "twenty-questions",
                "--policy",
                choice,
                "--episodes",
                "2",
                "--seed",
                "3",
                "--quiet",
            ]
        )
        == 0
    )
    store = Store(db)
    eps = store.recent_episodes(10)
    assert {e["agent_name"] for e in eps} == {agent.name}
    said = [s["action"] for s in store.steps(min(e["id"] for e in eps)) if s["role"] == "agent"]
    store.close()
    assert said == _play(flagged, 3)
    capsys.readouterr()
    assert (
        lmrl(["--db", db, "eval", choice, "--episodes", "2", "--seed", "3", "--no-progress"]) == 0
    )
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert res["decoding"] == "rerank" and res["no_repeat"] is True
    assert lmrl(["--db", db, "eval", choice, "--decoding", "sample", "--episodes", "1"]) == 1
    assert "--decoding is given twice" in capsys.readouterr().err
