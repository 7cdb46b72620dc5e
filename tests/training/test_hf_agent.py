"""The local Hugging Face agent, on a tiny random GPT-2 and a character tokenizer built here."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from support.checkpoint_support import tiny_hf_model  # noqa: E402

from envs.core import Text, run_episode  # noqa: E402
from envs.maze.task import MazeTask  # noqa: E402
from training.agents.hf_agent import HFAgent  # noqa: E402


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
    a, b = (
        HFAgent(tiny_model, device="cpu", max_new_tokens=8),
        HFAgent(tiny_model, device="cpu", max_new_tokens=8),
    )
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
    torch.save(
        AutoModelForCausalLM.from_pretrained(tiny_model).state_dict(), folder / "pytorch_model.bin"
    )
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
        target = {
            "config": "config.json",
            "weights": "model.safetensors",
            "tokenizer": "tokenizer.json",
        }[damage]
        (folder / target).write_text("{ not json")
    with pytest.raises(TrainingError) as err:
        HFAgent(str(folder), device="cpu").load()
    assert "\n" not in str(err.value)


@pytest.mark.slow  # an hf: model in its own process (~9 s)
def test_in_its_own_process_it_answers_as_here(tiny_model: str) -> None:
    from envs.players.process_agent import ProcessAgent

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


CHATML = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny model with a chat template on its tokenizer: a chat model, as an instruct one is
    (1,024 positions: a system message and a few turns fit, one character a token)."""
    from transformers import AutoTokenizer

    folder = tiny_hf_model(tmp_path_factory.mktemp("tiny-chat"), n_positions=1024)
    tok = AutoTokenizer.from_pretrained(folder)
    tok.chat_template = CHATML
    tok.save_pretrained(folder)
    return str(folder)


def test_a_chat_model_reads_the_tasks_instructions_and_the_dialogue_as_chat_turns(
    chat_model: str, tiny_model: str
) -> None:
    """SmolLM2-Instruct given LMRL's bare history (``Start\\n``) wrote empty lines on every turn of
    Car Dealer; a chat model now gets its role's instructions as the system message and the
    dialogue as turns. A model without a chat template still reads LMRL's plain history."""
    import envs
    from envs.players.agents import make_agent

    task = envs.make("twenty-questions")
    task.reset(0)
    agent = make_agent("twenty-questions", f"hf:{chat_model}", role="guesser")
    assert agent.role == "guesser"
    agent.reset(task, 0)
    agent.load()
    assert agent.chat is True
    hist = (*task.history(), Text("Is it alive?\n", True), Text("No.\n", False))
    prompt = agent._tok.decode(agent._prompt_ids(hist)[0])
    rules = task.spec.instructions["guesser"]
    assert (
        prompt
        == f"<|system|>{rules}\n<|user|>Questions:\n<|assistant|>Is it alive?\n<|user|>No.\n<|assistant|>"
    )
    plain = HFAgent(tiny_model, device="cpu", role="guesser")
    plain.reset(task, 0)
    plain.load()
    assert plain.chat is False
    assert plain._tok.decode(plain._prompt_ids(hist)[0]) == "Questions:\nIs it alive?\nNo.\n"


def test_a_chat_models_reply_skips_its_leading_blank_lines(
    chat_model: str, tiny_model: str
) -> None:
    """The reply is the first line with text in it (a chat model often opens with a newline); a
    plain model's reply stays LMRL's: up to its first newline."""
    replies = {}
    for name, folder in (("chat", chat_model), ("plain", tiny_model)):
        agent = HFAgent(folder, device="cpu", max_new_tokens=20)
        agent.load()
        tok = agent._tok
        written = torch.tensor(
            [tok("\n \nIs it a dog?\nNo.", add_special_tokens=False)["input_ids"]]
        )
        agent._model.generate = lambda ids, written=written, **kw: torch.cat([ids, written], dim=1)
        replies[name] = agent.act((Text("Questions:\n", False),))
    assert replies == {"chat": "Is it a dog?\n", "plain": "\n"}
    from training.agents.hf_agent import _StopAtNewline

    ids = torch.tensor([tok("ab\n\nIs", add_special_tokens=False)["input_ids"]])
    assert not _StopAtNewline(tok, 2, skip_blank=True)(ids, None)[0]  # only blank lines so far
    assert _StopAtNewline(tok, 2)(ids, None)[0]
    ids = torch.tensor([tok("ab\n\nIs it?\n", add_special_tokens=False)["input_ids"]])
    assert _StopAtNewline(tok, 2, skip_blank=True)(ids, None)[0]


def test_a_long_chat_prompt_loses_its_oldest_turns_and_keeps_the_system_message(
    chat_model: str,
) -> None:
    agent = HFAgent(
        chat_model, device="cpu", role="guesser", system_prompt="RULES", max_prompt_tokens=120
    )
    agent.load()
    hist = [Text("Questions:\n", False)]
    for i in range(20):
        hist += [Text(f"Question number {i}?\n", True), Text("No.\n", False)]
    ids = agent._prompt_ids(hist)
    prompt = agent._tok.decode(ids[0])
    assert ids.shape[1] <= 120
    assert prompt.startswith("<|system|>RULES\n") and prompt.endswith(
        "Question number 19?\n<|user|>No.\n<|assistant|>"
    )
    assert "Question number 0?" not in prompt


def test_in_its_own_process_a_chat_model_is_told_the_tasks_instructions(chat_model: str) -> None:
    """The app runs an hf: model in its own process (training/agents/server.py), which resets it
    without the task itself: the task's spec goes with it, so the instructions are the task's."""
    import envs
    from training.agents.server import AgentServer

    server = AgentServer()
    server.handle(
        {"op": "load", "task": "guess-city", "choice": f"hf:{chat_model}", "role": "guesser"}
    )
    server.handle({"op": "reset", "seed": 0})
    assert server.agent.system_prompt == envs.spec("guess-city").instructions["guesser"]
    reply = server.handle({"op": "act", "history": [["Questions:\n", False]]})
    assert reply["action"].endswith("\n")


@pytest.mark.slow  # a chat model in its own process (~16 s)
def test_what_the_model_sees_is_a_chat_models_messages(
    chat_model: str, tiny_model: str, tmp_path
) -> None:
    """The play screen's "What the model sees" (``model_text``) shows a chat model's system message
    and turns, made in the app's process as the agent's own process makes them; a plain model
    still shows LMRL's text history."""
    from data.session import PlaySession
    from data.store import Store
    from envs.players.process_agent import ProcessAgent
    from envs.players.remote import chat_view

    store = Store(tmp_path / "v.db")
    try:
        for folder, chat in ((chat_model, True), (tiny_model, False)):
            agent = ProcessAgent(f"hf:{folder}", "twenty-questions", role="guesser").load()
            try:
                assert agent.chat is chat
                session = PlaySession(store, "twenty-questions", agent=agent, seed=4)
                session.start()
                session.agent_step()
                hist = session.task.history()
                rules = session.task.spec.instructions["guesser"]
                if chat:
                    want = chat_view(hist, rules)
                    assert want.startswith(f"[system] {rules}\n[user] Questions:\n[assistant] ")
                else:
                    want = "".join(t.text for t in hist)
                assert session.model_text() == want
            finally:
                agent.close(wait=True)
    finally:
        store.close()
