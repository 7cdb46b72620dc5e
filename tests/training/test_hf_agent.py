"""The local Hugging Face agent, on a tiny random GPT-2 and a character tokenizer built here."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from envs.core import Text, run_episode  # noqa: E402
from envs.maze.task import MazeTask  # noqa: E402
from tests.checkpoint_support import tiny_hf_model  # noqa: E402
from training.hf_agent import HFAgent  # noqa: E402


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 2-layer GPT-2 with random weights and a character-level tokenizer, saved locally."""
    return tiny_hf_model(tmp_path_factory.mktemp("tiny-gpt2"))


def test_tokenizer_round_trips_text(tiny_model: str) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    text = "move up\nThe goal is at position 8, 6.\n"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert len(ids) == len(text)
    assert tok.decode(ids, clean_up_tokenization_spaces=False) == text


def test_act_returns_one_line_ending_in_newline(tiny_model: str) -> None:
    agent = HFAgent(tiny_model, device="cpu", max_new_tokens=12)
    agent.reset(None, seed=0)
    out = agent.act((Text("Start\n", False),))
    assert out.endswith("\n")
    assert out.count("\n") == 1
    assert len(out) <= 13


def test_greedy_is_deterministic_and_sampling_is_seeded(tiny_model: str) -> None:
    hist = (Text("The goal is at position 8, 6.\n", False),)
    a, b = HFAgent(tiny_model, device="cpu", max_new_tokens=8), HFAgent(tiny_model, device="cpu", max_new_tokens=8)
    assert a.act(hist) == b.act(hist)
    s1 = HFAgent(tiny_model, device="cpu", max_new_tokens=8, do_sample=True)
    s2 = HFAgent(tiny_model, device="cpu", max_new_tokens=8, do_sample=True)
    s1.reset(None, 5)
    s2.reset(None, 5)
    assert [s1.act(hist) for _ in range(3)] == [s2.act(hist) for _ in range(3)]


def test_long_prompt_is_cut_from_the_left(tiny_model: str) -> None:
    agent = HFAgent(tiny_model, device="cpu", max_new_tokens=4)
    out = agent.act((Text("x" * 5000 + "\n", False),))
    assert out.endswith("\n") and out.count("\n") == 1


def test_plays_a_maze_fo_episode(tiny_model: str) -> None:
    agent = HFAgent(tiny_model, device="cpu", max_new_tokens=6)
    ep = run_episode(MazeTask("fo", max_steps=10), agent, seed=3)
    assert ep.done
    assert all(t.action.endswith("\n") and t.action.count("\n") == 1 for t in ep.transitions)
    assert len(ep.transitions) <= 11
    assert ep.total_return <= 0


def test_a_pickled_model_is_never_unpickled(tiny_model: str, tmp_path, monkeypatch) -> None:
    """A folder with only ``pytorch_model.bin`` (a pickle: it can run code) is refused in one line
    before ``torch.load`` is ever called."""
    import shutil

    from transformers import AutoModelForCausalLM

    from training.errors import TrainingError

    folder = tmp_path / "pickled"
    shutil.copytree(tiny_model, folder)
    (folder / "model.safetensors").unlink()
    torch.save(AutoModelForCausalLM.from_pretrained(tiny_model).state_dict(), folder / "pytorch_model.bin")
    assert (folder / "pytorch_model.bin").exists() and not (folder / "model.safetensors").exists()

    def no_unpickling(*a, **kw):
        raise AssertionError("torch.load was called on an untrusted file")

    monkeypatch.setattr(torch, "load", no_unpickling)
    with pytest.raises(TrainingError, match="not a loadable causal language model"):
        HFAgent(str(folder), device="cpu").load()


@pytest.mark.parametrize("damage", ["empty", "config", "weights", "tokenizer"])
def test_broken_model_folders_are_one_line(tiny_model: str, tmp_path, damage: str) -> None:
    import shutil

    from training.errors import TrainingError

    folder = tmp_path / damage
    if damage == "empty":
        folder.mkdir()
    else:
        shutil.copytree(tiny_model, folder)
        target = {"config": "config.json", "weights": "model.safetensors", "tokenizer": "tokenizer.json"}[damage]
        (folder / target).write_text("{ not json")
    with pytest.raises(TrainingError) as err:
        HFAgent(str(folder), device="cpu").load()
    assert "\n" not in str(err.value)


def test_in_its_own_process_it_answers_as_here(tiny_model: str) -> None:
    from envs.core.process_agent import ProcessAgent

    here = HFAgent(tiny_model, device="cpu")
    there = ProcessAgent(f"hf:{tiny_model}", "twenty-questions", role="oracle").load()
    try:
        assert there.kind == "hf" and there.name == here.name
        hist = (Text("Is it an animal?\n", False),)
        for seed in (0, 1):
            here.reset(None, seed)
            there.reset(None, seed)
            assert there.act(hist) == here.act(hist)
    finally:
        there.close(wait=True)
