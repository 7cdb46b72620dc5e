"""The ``guided:`` agent with an utterance-level critic (``--model utterance``): the language model
(faked here) proposes, the utterance checkpoint's Q of each candidate is the critique, the model
answers with a number, else the utterance agent's best-scored candidate is played."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from envs.core import Text, run_episode  # noqa: E402
from envs.players import agents as agents_mod  # noqa: E402
from envs.players.agents import AgentChoiceError, make_agent  # noqa: E402
from training.errors import TrainingError  # noqa: E402

SCALE = 20.0
LINES = [
    "Is your city Paris?",
    "Is your city in Asia?\nand more",  # the first line only
    "Is your city Paris?",  # a repeat: dropped
    "Is it on the coast?",
    "Does it have a river?",
]


def utterance_checkpoint(run: Path, algo: str = "mc", task: str = "guess-city") -> Path:
    """An untrained utterance-level checkpoint (random heads: any Q will do) in ``run/checkpoint``."""
    from training.config import TrainConfig
    from training.utterance.checkpoint import save_utterance
    from training.utterance.model import UtteranceModel

    torch.manual_seed(0)
    model = UtteranceModel(16, buckets=1 << 10)
    cfg = TrainConfig(algo=algo, task=task, model="utterance")
    extra = {"dim": 16, "buckets": 1 << 10, "scale": SCALE}
    data = {"actions": ["Is your city Paris?\n"]}
    return save_utterance(
        run / "checkpoint",
        model,
        cfg,
        SimpleNamespace(repeats=0.0),
        step=0,
        metrics={},
        extra=extra,
        dataset=data,
    )


class FakeLLM:
    """Proposes LINES (rotated by one each turn) and answers the critique from ``answers``."""

    name = "fake"

    def __init__(self, answers=("2",)) -> None:
        self.answers = list(answers)
        self.prompts: list[tuple[Text, ...]] = []
        self.turn = 0

    def reset(self, task=None, seed=None) -> None:
        self.turn = 0

    def propose(self, history, n):
        k = self.turn % 4
        self.turn += 1
        return LINES[k:] + LINES[:k]  # more than n: the agent keeps the first n distinct

    def act(self, history):
        self.prompts.append(tuple(history))
        return self.answers[(len(self.prompts) - 1) % len(self.answers)]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return utterance_checkpoint(tmp_path_factory.mktemp("u") / "run")


def test_an_utterance_critic_guides_the_proposer_through_an_episode(ckpt):
    from training.agents.checkpoint_agent import load_agent
    from training.agents.guided_utterance import UtteranceGuidedAgent

    values = load_agent(ckpt)
    llm = FakeLLM(answers=("I pick 2", "none of them", "3", "no"))
    agent = UtteranceGuidedAgent(llm, values)
    assert agent.kind == "guided" and agent.name.startswith("fake+mc:utterance")
    ep = run_episode(envs.make("guess-city"), agent, seed=3, max_steps=4)
    assert len(ep.transitions) == 4 and len(llm.prompts) == 4
    fallbacks = []
    for t, prompt in zip(ep.transitions, llm.prompts, strict=True):
        g = t.info["guided"]
        cands = g["candidates"]
        assert len(cands) == 4 and len(set(cands)) == 4 and "Is your city in Asia?\n" in cands
        history, asked = prompt[:-1], prompt[-1].text
        sc = values.scores(history, cands)
        q = [float(x) * SCALE for x in sc["q"]]
        mean = sum(q) / len(q)
        # the critique the proposer read: each candidate's number, expected return and change
        assert asked.startswith(g["critique"]) and "(1-4)" in asked
        for i, (a, v) in enumerate(zip(cands, q, strict=True)):
            change = round(v - mean, 1) + 0.0  # "+0.0", never "-0.0"
            line = f"{i + 1}. {a.strip()} -> expected return {v:.1f} ({change:+.1f})"
            assert line in g["critique"].splitlines()
        # the step notes name the candidates and their values
        assert g["critic"] == "utterance"
        assert g["predictions"]["return"] == pytest.approx(q, abs=1e-3)
        assert g["advantages"] == pytest.approx([v - mean for v in q], abs=1e-3)
        best = int(torch.argmax(sc["score"]))
        assert g["value_choice"] == best and g["scores"] == pytest.approx(
            sc["score"].tolist(), abs=1e-3
        )
        assert t.action == cands[g["choice"]]
        if g["chosen_by"] == "values":  # the answer named no candidate: the utterance agent's best
            assert g["choice"] == best
            fallbacks.append(best)
    assert [t.info["guided"]["chosen_by"] for t in ep.transitions] == [
        "model",
        "values",
        "model",
        "values",
    ]
    assert [t.info["guided"]["choice"] for t in ep.transitions][::2] == [1, 2]
    assert any(b != 0 for b in fallbacks)  # not merely the proposer's own line
    assert agent.step_notes() is None  # each step's notes once


def test_the_overlay_shows_the_last_turns_returns(ckpt):
    from training.agents.checkpoint_agent import load_agent
    from training.agents.guided_utterance import UtteranceGuidedAgent

    agent = UtteranceGuidedAgent(FakeLLM(answers=("?",)), load_agent(ckpt))
    task = envs.make("guess-city")
    task.reset(5)
    agent.reset(task, 5)
    said = agent.act(task.history())
    g = agent.step_notes()["guided"]
    expl = agent.explain(task.history())
    assert expl.algo == "guided" and expl.kind == "value" and expl.total == 4
    assert expl.rl_choice == said == expl.bc_choice == g["candidates"][g["value_choice"]]
    rows = {c.action: c for c in expl.candidates}
    assert [c.q for c in expl.candidates] == sorted((c.q for c in expl.candidates), reverse=True)
    for a, v in zip(g["candidates"], g["predictions"]["return"], strict=True):
        assert rows[a].q == pytest.approx(v, abs=1e-3)
        assert rows[a].advantage == pytest.approx(v - expl.state_value, abs=1e-3)
    assert sum(c.beta_prob for c in expl.candidates) == pytest.approx(1.0)
    assert expl.notes[0] == "A value model predicts the expected return after each possible reply:"
    from lmrl_tui.views.overlay import legend_text

    assert legend_text(expl).endswith("the value model's best (Q: expected return)")
    goals = replace(expl, notes=["A value model predicts how the conversation ends after …"])
    assert legend_text(goals).endswith("(Q: positive goals − negative goals)")
    # another state: a fresh proposal, no final question
    fresh = agent.explain([*task.history(), Text(said, True), Text("No.\n", False)])
    assert fresh.rl_choice is None and len(fresh.candidates) == 4


def test_a_guided_spec_takes_an_utterance_checkpoint_and_explains_a_wrong_one(
    ckpt, tmp_path, monkeypatch
):
    from training.agents.guided_utterance import UtteranceGuidedAgent

    made = []

    def fake_hf(model, role="agent"):
        made.append(model)
        return FakeLLM()

    monkeypatch.setitem(agents_mod._LOADERS, "hf", fake_hf)
    run = ckpt.parent
    for folder in (ckpt, run):  # the checkpoint or its run's folder
        agent = make_agent("guess-city", f"guided:hf:tiny-llm+{folder}")
        assert isinstance(agent, UtteranceGuidedAgent) and made[-1] == "tiny-llm"
        assert agent.meta["guided"] and agent.meta["model"] == "utterance"
        ep = run_episode(envs.make("guess-city"), agent, seed=1, max_steps=1)
        assert ep.transitions[0].info["guided"]["chosen_by"] == "model"
    made.clear()
    empty = tmp_path / "empty"
    empty.mkdir()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "lmrl.json").write_text('{"utterance": {"dim": 8}, "config": {"algo": "mc"}}')
    bc = utterance_checkpoint(tmp_path / "bc", "bc")
    for task, folder, error, msg in [
        ("guess-city", tmp_path / "none", AgentChoiceError, "no value checkpoint at"),
        ("guess-city", empty, TrainingError, "not an lmrl-tui checkpoint"),
        ("guess-city", damaged, TrainingError, "not a readable utterance-level checkpoint"),
        ("guess-city", bc, TrainingError, "lmrl train mc or ilql --model utterance, not bc"),
        ("twenty-questions", ckpt, TrainingError, "trained on guess-city, not twenty-questions"),
    ]:
        with pytest.raises(error, match=re.escape(msg)):
            make_agent(task, f"guided:hf:tiny-llm+{folder}")
    assert made == []  # refused before the language model loads
    with pytest.raises(TrainingError, match="--model utterance"):
        UtteranceGuidedAgent(FakeLLM(), object())


def test_a_wrong_critic_is_one_line_from_the_command_line(tmp_path):
    bc = utterance_checkpoint(tmp_path / "bc", "bc")
    out = subprocess.run(
        [sys.executable, "-m", "lmrl_tui", "--db", str(tmp_path / "s.db"), "generate",
         "guess-city", "--episodes", "1", "--policy", f"guided:hf:tiny-llm+{bc}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode != 0 and "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert "not bc" in line
