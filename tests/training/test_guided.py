"""Goal-conditioned values (``lmrl train mc --goals``) and the ``guided:`` agent: a language model
proposes, the value model predicts each candidate's outcomes, the model chooses after the critique."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

from support.checkpoint_support import tiny_goal_checkpoint, tiny_hf_model  # noqa: E402

import envs  # noqa: E402
from data.generate import generate  # noqa: E402
from data.store import Store  # noqa: E402
from envs.core import history_to_str, run_episode  # noqa: E402
from envs.players.agents import AgentChoiceError, make_agent  # noqa: E402
from training.config import TrainConfig, resolve  # noqa: E402
from training.datasets.goals import achieved, goal_prompt, goals_for, relabel  # noqa: E402
from training.datasets.windows import PackedDataset, episode_windows  # noqa: E402


def test_goals_read_from_the_episode_and_the_last_info():
    assert [g.name for g in goals_for("twenty-questions")] == ["found", "not found"]
    assert achieved("twenty-questions", True, None) == {"found": True, "not found": False}
    sold = {"decision": {"car_bought": True, "msrp": 30000, "buy_price": 31000}}
    assert achieved("car-dealer", True, sold) == {
        "deal": True,
        "above list": True,
        "no deal": False,
    }
    cheap = {"decision": {"car_bought": True, "msrp": 30000, "buy_price": 29000}}
    assert achieved("car-dealer", True, cheap)["above list"] is False
    assert achieved("maze-fo", False, None) == {"success": False, "failure": True}


def test_relabel_one_chain_per_goal_reward_on_the_last_action():
    wins = episode_windows("s\n", [("A\n", "x\n", 0.5), ("B\n", "", 1.0)], True, "history", 3)
    goals = goals_for("twenty-questions")
    out = relabel(wins, {"found": False, "not found": True}, goals)
    assert len(out) == 4
    assert out[0].segments[0][0] == "s\nGoal: the secret is found\n" and out[0].segments[1] == (
        "A\n",
        True,
        0.0,
    )
    assert out[1].segments[1] == ("B\n", True, 0.0)  # not found: no reward for "found"
    assert out[3].segments[1] == ("B\n", True, 1.0) and out[3].segments[0][0].endswith(
        goals[1].text + "\n"
    )
    assert out[0].next_prompt == "s\nA\nx\nGoal: the secret is found\n"
    ds = PackedDataset(out, lambda t: [ord(c) % 50 for c in t], 0, gamma=1.0)
    acts = [int(p) for p in torch.nonzero(ds.act).squeeze(1)]  # 2 tokens per action, 4 actions
    # returns-to-go stay inside each goal's copy: "found" never sees "not found"'s reward
    assert [ds.ret[acts[i]].item() for i in (1, 3, 5, 7)] == [0.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="one window per step"):
        relabel(episode_windows("s\n", [("A\n", "", 1.0)], True, "episode"), {}, goals)


def test_goals_are_for_mc_on_step_windows():
    cfg = resolve(TrainConfig(algo="mc", task="twenty-questions", goals=True), {"goals"})
    assert cfg.windows == "history" and cfg.gamma == 1.0 and cfg.reward_scale == 1.0
    with pytest.raises(ValueError, match="lmrl train mc --goals"):
        resolve(TrainConfig(algo="ilql", task="twenty-questions", goals=True), {"goals"})
    with pytest.raises(ValueError, match="--windows history"):
        resolve(
            TrainConfig(algo="mc", task="twenty-questions", goals=True, windows="episode"),
            {"goals", "windows"},
        )


@pytest.fixture(scope="module")
def guided_parts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("guided")
    return str(tiny_goal_checkpoint(folder)), tiny_hf_model(folder / "llm", n_positions=1024)


@pytest.mark.slow  # 40 s on 2 cores: a tiny LLM and a value checkpoint, a whole episode
def test_the_guided_agent_plays_and_stores_what_it_weighed(guided_parts, tmp_path):
    from training.agents.explain import token_terms
    from training.agents.guided import GuidedAgent

    ckpt, llm = guided_parts
    agent = make_agent("twenty-questions", f"guided:hf:{llm}+{ckpt}")
    assert isinstance(agent, GuidedAgent) and agent.kind == "guided"
    task = envs.make("twenty-questions")
    ep = run_episode(task, agent, seed=3, max_steps=3)
    assert len(ep.transitions) == 3
    for t in ep.transitions:
        g = t.info["guided"]
        assert 1 <= len(g["candidates"]) <= 4 and g["chosen_by"] in ("model", "values")
        assert t.action == g["candidates"][g["choice"]]
        assert set(g["predictions"]) == {"found", "not found"}
        assert all(0.0 <= p <= 1.0 for ps in g["predictions"].values() for p in ps)
        assert "A value model predicts" in g["critique"]
    # the predictions are the value model's Q for each goal's prompt
    task.reset(5)
    agent.reset(task, 5)
    agent.act(task.history())
    notes = agent.step_notes()["guided"]
    assert agent.step_notes() is None  # once
    h = history_to_str(task.history())
    for goal in agent.goals:
        q = [
            float(x["q"][-1])
            for x in token_terms(agent.values.decoder, goal_prompt(h, goal), notes["candidates"])
        ]
        assert notes["predictions"][goal.name] == pytest.approx(
            [min(1, max(0, v)) for v in q], abs=1e-4
        )
    expl = agent.explain(task.history())
    assert expl.algo == "guided" and len(expl.candidates) == len(notes["candidates"])
    assert expl.notes[0].startswith("A value model predicts")
    # recorded by generate: the step's info keeps it
    store = Store(tmp_path / "g.db")
    generate(store, "twenty-questions", agent, 1, seed=9)
    steps = store.steps(store.recent_episodes(1)[0]["id"])
    assert all("guided" in s["info"] for s in steps if s["role"] == "agent")
    store.close()


def test_guided_choices_explain_what_is_wrong(guided_parts, tmp_path):
    ckpt, llm = guided_parts
    for choice, msg in [
        ("guided:hf:x", "guided:LLM+CHECKPOINT"),
        (f"guided:{llm}+{ckpt}", "hf:MODEL or http:MODEL@BASE_URL"),
        (f"guided:hf:{llm}+{tmp_path / 'none'}", "no value checkpoint"),
    ]:
        with pytest.raises(AgentChoiceError, match=re.escape(msg)):
            make_agent("twenty-questions", choice)
    from training.errors import TrainingError

    with pytest.raises(TrainingError, match="trained on twenty-questions, not guess-city"):
        make_agent("guess-city", f"guided:hf:{llm}+{ckpt}")
    from support.checkpoint_support import tiny_checkpoint

    from training.agents.checkpoint_agent import load_agent
    from training.agents.guided import GuidedAgent

    plain = load_agent(tiny_checkpoint(tmp_path, "mc"))
    with pytest.raises(TrainingError, match="lmrl train mc --goals"):
        GuidedAgent(make_agent("twenty-questions", f"hf:{llm}"), plain)


def test_a_candidate_longer_than_the_value_models_context_is_still_scored(guided_parts):
    """A language model's reply can outgrow the small value model's context (its tokenizer cuts
    odd text into many tokens): it is scored on its first tokens, not an IndexError."""
    from training.agents.checkpoint_agent import load_agent
    from training.agents.explain import token_terms

    values = load_agent(guided_parts[0])
    ctx = values.decoder.context
    long = "Is it " + "zq" * ctx + "?\n"
    rows = token_terms(values.decoder, "Question:\n" * ctx, ["Is it a cat?\n", long])
    assert len(rows[1]["q"]) == ctx - 1 and torch.isfinite(rows[1]["q"]).all()
    assert len(rows[0]["q"]) == len(values.decoder._rows("", ["Is it a cat?\n"])[0][1])


def test_the_values_pick_only_candidates_like_their_data():
    from training.agents.guided import best_candidate, critique

    goals = goals_for("twenty-questions")
    preds = {"found": [0.2, 0.9, 0.5], "not found": [0.8, 0.1, 0.5]}
    assert best_candidate(preds, goals) == 1
    assert best_candidate(preds, goals, [True, False, True]) == 2  # 1 is outside the data
    assert best_candidate(preds, goals, [False, False, False]) == 0  # none: the model's own line
    text = critique(["Is it a cat?\n", "No.\n", "Is it red?\n"], preds, goals, [True, False, True])
    lines = text.strip().splitlines()
    assert lines[2].endswith("(unlike anything in its data: a guess)")
    assert "guess" not in lines[1] and "guess" not in lines[3]


def test_the_guided_agent_stores_how_like_its_data_each_candidate_is(guided_parts):
    import math

    from training.agents.explain import token_terms

    ckpt, llm = guided_parts
    agent = make_agent("twenty-questions", f"guided:hf:{llm}+{ckpt}")
    assert agent.support == pytest.approx(-math.log(len(agent.values.decoder.tok)))
    task = envs.make("twenty-questions")
    for support, expect_all in ((-1e9, True), (1e9, False)):
        agent.support = support
        task.reset(5)
        agent.reset(task, 5)
        agent.act(task.history())
        g = agent.step_notes()["guided"]
        assert g["supported"] == [expect_all] * len(g["candidates"])
        h = history_to_str(task.history())
        want = [0.0] * len(g["candidates"])
        for goal in agent.goals:
            for i, t in enumerate(
                token_terms(agent.values.decoder, goal_prompt(h, goal), g["candidates"])
            ):
                want[i] += float(t["logp_beta"].mean()) / len(agent.goals)
        assert g["logp_beta"] == pytest.approx(want, abs=2e-3)
        if not expect_all:
            assert g["value_choice"] == 0 and "a guess" in g["critique"]


def test_values_that_learnt_only_the_mean_are_reported(tmp_path, capsys):
    from training.offline.common import constant_q_loss, flat_values_note

    assert flat_values_note([0.126, 0.125], 0.125) is not None
    assert (
        flat_values_note([0.101, 0.099], 0.125) is None
    )  # Twenty Questions' goal values at 2,400 steps
    assert flat_values_note([], 0.125) is None and flat_values_note([0.1], 0.0) is None
    wins = [
        w
        for g in ({"found": True, "not found": False}, {"found": False, "not found": True})
        for w in relabel(
            episode_windows("s\n", [("A\n", "x\n", 0.0), ("B\n", "", 1.0)], True, "history", 3),
            g,
            goals_for("twenty-questions"),
        )
    ]
    ds = PackedDataset(wins, lambda t: [ord(c) % 50 for c in t], 0, gamma=1.0)
    rets = ds.ret[ds.act]
    assert constant_q_loss(ds) == pytest.approx(0.5 * float(rets.double().var(unbiased=False)))
    assert constant_q_loss(ds) == pytest.approx(0.125)  # each goal reached in half the copies
    capsys.readouterr()
    ck = tiny_goal_checkpoint(tmp_path)  # three steps: nothing learnt yet
    err = capsys.readouterr().err
    assert "the Q head's loss" in err and "Train longer" in err
    meta = (ck / "lmrl.json").read_text()
    assert "q_loss_constant" in meta and "q_loss_end" in meta
