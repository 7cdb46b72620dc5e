"""TRL on our data and tasks, with tiny models built from configs (no downloads): SFT on
``lmrl export --format chat``, and GRPO through ``envs.adapters.trl_env`` (``examples/trl_grpo.py``)
with its rollouts stored. Slow: real training steps on CPU. Needs the trainers extra (TRL)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")
torch = pytest.importorskip("torch")

import envs  # noqa: E402
from data.generate import generate  # noqa: E402
from data.store import Store  # noqa: E402
from lmrl_tui.cli import main as lmrl  # noqa: E402

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trl_grpo.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("trl_grpo_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _few_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_sft_trains_on_the_chat_export(tmp_path: Path, example) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    db = tmp_path / "e.db"
    store = Store(db)
    generate(store, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 4, seed=0)
    store.close()
    out = tmp_path / "chat.jsonl"
    assert (
        lmrl(["--db", str(db), "export", "--format", "chat", "--rows", "turn", "-o", str(out)]) == 0
    )
    ds = datasets.load_dataset("json", data_files=str(out))["train"].select(range(8))
    folder = example.tiny_model(tmp_path / "tiny", words=(), positions=2048)
    model = AutoModelForCausalLM.from_pretrained(folder)
    before = _weights(model)
    trainer = SFTTrainer(
        model=model,
        processing_class=AutoTokenizer.from_pretrained(folder),
        train_dataset=ds,
        args=SFTConfig(
            output_dir=str(tmp_path / "sft"),
            max_steps=2,
            per_device_train_batch_size=2,
            learning_rate=1e-3,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            max_length=2048,
        ),
    )
    trainer.train()
    assert trainer.state.global_step == 2
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(float(x)) for x in losses)
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)


def test_grpo_trains_three_steps_and_stores_its_rollouts(tmp_path: Path, example) -> None:
    db = tmp_path / "runs.db"
    result = example.main(
        ["--task", "maze-fo", "--steps", "3", "--out", str(tmp_path / "grpo"), "--db", str(db)]
    )
    assert result["steps"] == 3
    steps = [h for h in result["log"] if "loss" in h]
    assert len(steps) == 3 and all(math.isfinite(float(h["loss"])) for h in steps)
    assert any(float(h["reward_std"]) > 0 for h in steps)  # samples that differ: a gradient
    from transformers import AutoModelForCausalLM

    start = AutoModelForCausalLM.from_pretrained(str(tmp_path / "grpo" / "tiny-model"))
    trained = result["model"].state_dict()
    assert any(not torch.equal(v, trained[k]) for k, v in start.state_dict().items())

    scored = result["episodes"]
    assert len(result["stored"]) == len(scored) == 12  # 4 samples per step, 3 steps
    store = Store(db)
    for eid, ep in zip(result["stored"], scored, strict=True):
        row, rows = store.episode(eid), store.steps(eid)
        assert (row["source"], row["agent_kind"], row["task"]) == ("agent", "hf", "maze-fo")
        assert row["meta"]["model_turn"] == ep.model_turn and row["meta"]["grpo_step"] in (1, 2, 3)
        assert rows[ep.model_turn]["info"]["by"] == "model"
        rest = math.fsum(s["reward"] for s in rows[ep.model_turn :])
        assert math.isclose(rest, row["meta"]["reward"])  # what GRPO was given
        assert math.isclose(row["return"], ep.total_return)
    store.close()
    out = tmp_path / "rollouts.jsonl"
    assert (
        lmrl(["--db", str(db), "export", "--format", "chat", "--source", "agent", "-o", str(out)])
        == 0
    )
    assert len(datasets.load_dataset("json", data_files=str(out))["train"]) == 12
