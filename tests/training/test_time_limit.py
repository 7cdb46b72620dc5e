"""``--max-minutes``: a run stops on time, saves what it did and says so; ``LMRL_DEVICE``: where a
loaded checkpoint plays, with a clear error for a device that is not there."""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")

from data.datasets import DatasetQuery  # noqa: E402
from training.config import TrainConfig, resolve  # noqa: E402
from training.errors import TrainingError  # noqa: E402
from training.offline.toy import maze_store  # noqa: E402


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return maze_store(tmp_path_factory.mktemp("db") / "maze.db", episodes=8)


def cfg(**kw) -> TrainConfig:
    base = dict(
        algo="mc",
        task="maze-fo",
        batch_size=8,
        n_embd=32,
        n_head=2,
        vocab_size=300,
        eval_episodes=0,
        progress=False,
        log_every=50,
    )
    base.update(kw)
    return resolve(TrainConfig(**base), set(base) - {"algo", "task"})


@pytest.mark.slow  # a real training run against the clock (~17 s)
def test_a_run_stops_on_time_and_keeps_its_checkpoint(store, tmp_path, capfd):
    from training.model.checkpoint import load_checkpoint
    from training.offline.loop import train

    res = train(
        cfg(max_steps=100_000, max_minutes=1e-6),
        store,
        DatasetQuery(task="maze-fo"),
        tmp_path / "r",
    )
    assert res["steps"] == 1 and res["stopped_by"] == "time" and res["planned_steps"] == 100_000
    assert "stopped after 1e-06 min (--max-minutes) at step 1 of 100000" in capfd.readouterr().err
    _, _, _, meta = load_checkpoint(res["checkpoint"])
    assert meta["step"] == 1
    rows = [json.loads(x) for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    assert (
        rows[-1]["kind"] == "train" and rows[-1]["step"] == 1
    )  # the last step is logged, off the grid
    run = store.db.execute("SELECT status FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    assert run == ("finished",)
    # a limit that is not reached changes nothing
    res = train(
        cfg(max_steps=2, max_minutes=60), store, DatasetQuery(task="maze-fo"), tmp_path / "s"
    )
    assert res["steps"] == 2 and "stopped_by" not in res


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_max_minutes_must_be_a_positive_number(bad):
    with pytest.raises(ValueError, match="--max-minutes"):
        cfg(max_minutes=bad)


def test_lmrl_device_chooses_where_a_checkpoint_plays(monkeypatch):
    from training.agents.checkpoint_agent import agent_device

    monkeypatch.setenv("LMRL_DEVICE", "cpu")
    assert agent_device() == torch.device("cpu")
    monkeypatch.setenv("LMRL_DEVICE", "auto")
    assert agent_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad, says in (("gpu0", "is not a device"), ("meta", "cpu or cuda")):
        monkeypatch.setenv("LMRL_DEVICE", bad)
        with pytest.raises(TrainingError, match=says):
            agent_device()
    if not torch.cuda.is_available():
        monkeypatch.setenv("LMRL_DEVICE", "cuda")
        with pytest.raises(TrainingError, match="sees no GPU"):
            agent_device()


def test_the_end_of_run_measures_read_fewer_windows_of_a_large_model_on_a_cpu():
    from training.offline.common import END_WINDOWS, end_windows

    tiny = torch.nn.Linear(64, 64)  # ~4k parameters: every window
    large = torch.nn.Embedding(40_000, 1_000)  # 40M parameters: the floor
    middle = torch.nn.Embedding(4_000, 1_000)  # 4M: half
    assert end_windows(tiny, "cpu") == END_WINDOWS == 256
    assert end_windows(large, "cpu") == 16
    assert end_windows(middle, "cpu") == 128
    assert (
        end_windows(large, "cuda") == END_WINDOWS
    )  # the device decides, not whether one exists here


def test_top_k_keeps_only_the_behaviour_policys_likeliest_tokens():
    from types import SimpleNamespace

    from training.decoding.decoder import Decoder

    logp_beta = torch.log_softmax(torch.tensor([[5.0, 4.0, 3.0, 2.0, 1.0]]), dim=-1)
    guided = torch.tensor([[0.0, 0.0, 0.0, 0.0, 100.0]])  # the values love the least likely token
    kept = Decoder._keep_top_k(SimpleNamespace(top_k=2, banned=[]), guided, logp_beta)
    assert torch.isfinite(kept[0, :2]).all() and torch.isinf(kept[0, 2:]).all()
    # a never-sampled token (padding) does not take a place among the K
    kept = Decoder._keep_top_k(SimpleNamespace(top_k=2, banned=[0]), guided, logp_beta)
    assert torch.isfinite(kept[0, 1:3]).all() and torch.isinf(kept[0, [0, 3, 4]]).all()
    assert torch.equal(
        Decoder._keep_top_k(SimpleNamespace(top_k=5, banned=[]), guided, logp_beta), guided
    )


def test_a_value_checkpoint_sampled_at_top_k_1_writes_the_behaviour_policys_line(store, tmp_path):
    from training.agents.checkpoint_agent import load_agent
    from training.offline.loop import train

    train(cfg(max_steps=3, lr=1e-2), store, DatasetQuery(task="maze-fo"), tmp_path / "r")
    prompt = "You are in a maze.\n"
    free = load_agent(tmp_path / "r", decoding="sample", max_new_tokens=6)
    one = load_agent(tmp_path / "r", decoding="sample", max_new_tokens=6, top_k=1)
    assert one.decoder.top_k == 1 and free.decoder.top_k == 0
    lines = {one.decoder.sample(prompt, torch.Generator().manual_seed(s)) for s in range(6)}
    assert len(lines) == 1  # one token allowed at each step: the draw decides nothing
    assert (
        len({free.decoder.sample(prompt, torch.Generator().manual_seed(s)) for s in range(6)}) > 1
    )
    with pytest.raises(ValueError, match="--top-k"):
        cfg(top_k=-1)
