"""The utterance-level model (``--model utterance``): its features, its losses on a toy dialogue
whose answer is known, and the whole path a user takes — ``lmrl generate``, ``lmrl train ALGO
--model utterance``, ``lmrl eval`` and the checkpoint as an agent — on a real store."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
import torch

import envs
from envs.core import Text
from training.errors import TrainingError
from training.utterance.agent import Finishing, UtteranceAgent, history_turns
from training.utterance.checkpoint import load_utterance_agent
from training.utterance.data import Dialogue, returns_to_go
from training.utterance.features import candidate_features, turn_features
from training.utterance.losses import losses, make_batch
from training.utterance.model import UtteranceModel


def test_features_are_stable_and_read_the_answer_with_its_question():
    yes, no = (
        turn_features("Is it in Europe?\n", "Yes.\n"),
        turn_features("Is it in Europe?\n", "No.\n"),
    )
    assert yes == turn_features("Is it in Europe?\n", "Yes.\n")  # cached or not, the same hashes
    assert set(yes) != set(no)
    other = turn_features("Is it in Asia?\n", "Yes.\n")
    assert set(yes) - set(other)  # (question, answer) pairs differ, not only the words
    # CRC-32, not Python's salted hash: another process hashes the same
    code = (
        "from training.utterance.features import turn_features as f; print(f('Is it big?', 'No.'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == str(turn_features("Is it big?", "No."))
    assert candidate_features("Is your city Lima?\n") != candidate_features("Is your city Oslo?\n")


def test_history_turns_split_the_opening_and_each_action_with_its_reply():
    h = [
        Text("Questions:\n", False),
        Text("Is it hot?\n", True),
        Text("No.\n", False),
        Text("Is it Oslo?\n", True),
        Text("Yes.\n", False),
    ]
    assert history_turns(h) == [
        ("", "Questions:\n"),
        ("Is it hot?\n", "No.\n"),
        ("Is it Oslo?\n", "Yes.\n"),
    ]
    assert history_turns([Text("start\n", False)]) == [("", "start\n")]


def test_returns_to_go_discount_once_per_turn():
    assert returns_to_go([-1.0, -1.0, 0.0], 0.5) == [-1.5, -1.0, 0.0]


def test_the_said_before_feature_marks_each_turns_earlier_lines_and_the_agent_reads_it():
    t = turn_features("", "go")
    first = Dialogue(turns=(t, t, t, t), actions=(2, 0, 2), rewards=(0.0, 0.0, 1.0), ended=True)
    second = Dialogue(turns=(t, t), actions=(1,), rewards=(0.0,), ended=False)
    batch = make_batch([first, second], 0.9)
    assert batch.said_before(3).tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 1], [0, 0, 0]]
    later = batch.said_before(3, later=True).tolist()
    assert later == [[0, 0, 1], [1, 0, 1], [1, 0, 1], [0, 1, 0]]
    # a model whose said-before weight is strongly negative never picks a line said already
    model = UtteranceModel(16, buckets=1 << 10)
    with torch.no_grad():
        model.pi.said.fill_(-50.0)
    agent = UtteranceAgent(model, ["Is it red?\n", "Is it big?\n"], "bc", "t", {}, no_repeat=False)
    agent.reset(None, 0)
    history = [Text("Questions:\n", False), Text("Is it red?\n", True), Text("No.\n", False)]
    scores = agent.scores(history, agent.candidates)
    assert scores["logp"][0] < -40 and scores["logp"][1] > -1e-6
    assert {agent.act(history) for _ in range(20)} == {"Is it big?\n"}


def _toy(n: int = 64) -> list[Dialogue]:
    """One turn: the opening says which line pays ("say A" or "say B"); half the data says the
    right one. Candidates 0 = "A", 1 = "B"."""
    out = []
    for i in range(n):
        want, said = i % 2, (i // 2) % 2
        opening = turn_features("", "say A\n" if want == 0 else "say B\n")
        reply = turn_features("A\n" if said == 0 else "B\n", "ok\n")
        out.append(
            Dialogue(
                turns=(opening, reply),
                actions=(said,),
                rewards=(1.0 if said == want else 0.0,),
                ended=True,
            )
        )
    return out


@pytest.mark.slow  # three short trainings: 20–60 s each on a loaded 2-core machine
@pytest.mark.parametrize("algo", ["mc", "ilql", "qsft"])
def test_value_learners_prefer_the_line_that_pays_where_bc_cannot(algo):
    torch.manual_seed(0)
    model = UtteranceModel(32, buckets=1 << 12)
    target = model.target_copy()
    dense = torch.optim.Adam(model.dense_parameters(), lr=3e-3)
    sparse = torch.optim.SparseAdam(model.sparse_parameters(), lr=3e-3)
    cand_feats = [candidate_features("A\n"), candidate_features("B\n")]
    data = _toy()
    for _ in range(150):
        batch = make_batch(data, 0.99)
        loss, _ = losses(
            algo,
            model,
            target,
            batch,
            model.candidates(cand_feats),
            target.candidates(cand_feats).detach(),
            gamma=0.99,
            scale=1.0,
            tau=0.7,
            cql_weight=0.1,
            bc_weight=1.0,
            return_range=(0.0, 1.0),
        )
        dense.zero_grad()
        sparse.zero_grad()
        loss.backward()
        dense.step()
        sparse.step()
        target.polyak_from(model, 0.1)
    agent = UtteranceAgent(model, ["A\n", "B\n"], algo, "toy", {}, no_repeat=False)
    agent._vectors = {}  # the model changed since the agent was made
    bc = UtteranceAgent(model, ["A\n", "B\n"], "bc", "toy", {}, no_repeat=False)
    for opening, right in (("say A\n", "A\n"), ("say B\n", "B\n")):
        h = [Text(opening, False)]
        assert agent.act(h) == right
        probs = bc.scores(h, ["A\n", "B\n"])["logp"].exp()
        assert abs(float(probs[0]) - 0.5) < 0.15  # the data said each line half the time


def _lmrl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lmrl_tui", *args], capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_train_eval_and_play_an_utterance_checkpoint_from_the_command_line(tmp_path):
    db = str(tmp_path / "store.db")
    gen = _lmrl(
        "--db", db, "generate", "guess-city", "--episodes", "60", "--seed", "500", "--quiet"
    )
    assert gen.returncode == 0, gen.stderr
    run = tmp_path / "u-mc"
    tr = _lmrl(
        "--db",
        db,
        "train",
        "mc",
        "--task",
        "guess-city",
        "--model",
        "utterance",
        "--out",
        str(run),
        "--max-steps",
        "15",
        "--eval-episodes",
        "2",
        "--no-progress",
    )
    assert tr.returncode == 0, tr.stderr
    final = json.loads(tr.stdout.strip().splitlines()[-1])
    assert final["steps"] == 15 and final["eval"]["episodes"] == 2 and final["candidates"] > 126
    meta = json.loads((run / "checkpoint" / "lmrl.json").read_text())
    assert meta["config"]["model"] == "utterance" and meta["algo"] == "mc"
    ev = _lmrl("--db", db, "eval", str(run), "--episodes", "3", "--seed", "7")
    assert ev.returncode == 0, ev.stderr
    res = json.loads(ev.stdout.strip().splitlines()[-1])
    assert res["episodes"] == 3 and res["model"] == "utterance"
    from training.agents.checkpoint_agent import load_agent

    agent = load_agent(run)
    assert isinstance(agent, UtteranceAgent) and agent.meta["task"] == "guess-city"
    ep = envs.run_episode(envs.make("guess-city"), agent, seed=3)
    said = [t.action for t in ep.transitions]
    assert said and all(a in agent.candidates for a in said)
    assert len(set(said)) == len(said)  # the behaviour data rarely repeats: neither does the agent
    task = envs.make("guess-city")
    task.reset(3)
    agent.reset(task, 3)
    top = agent.top(task.history(), 3)
    assert len(top) == 3 and all(isinstance(q, float) for _, q, _ in top)


def test_train_then_play_in_process_records_the_run_and_loads_as_a_checkpoint(tmp_path):
    from data import runs
    from data.datasets import DatasetQuery
    from data.generate import generate
    from data.store import Store
    from envs.players.agents import make_agent
    from training.agents.checkpoint_agent import load_agent
    from training.config import TrainConfig
    from training.utterance.train import train_utterance

    store = Store(str(tmp_path / "s.db"))
    try:
        generate(
            store, "twenty-questions", make_agent("twenty-questions", "behaviour"), 12, seed=900
        )
        cfg = TrainConfig(
            algo="ilql",
            task="twenty-questions",
            model="utterance",
            max_steps=4,
            batch_size=4,
            eval_episodes=1,
            progress=False,
        )
        res = train_utterance(cfg, store, DatasetQuery(task="twenty-questions"), tmp_path / "run")
        assert res["steps"] == 4 and res["eval"]["episodes"] == 1
        (run,) = [r for r in runs.recent_runs(store) if r["kind"] == "train"]
        assert run["status"] == "finished" and run["algo"] == "ilql"
    finally:
        store.close()
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [x["kind"] for x in lines][-1] == "eval" and "v_loss" in lines[0]
    agent = load_agent(tmp_path / "run", beta=2.0)
    assert isinstance(agent, UtteranceAgent) and agent.beta == 2.0 and "beta=2.0" in agent.name
    ep = envs.run_episode(envs.make("twenty-questions"), agent, seed=1, max_steps=3)
    assert all(t.action in agent.candidates for t in ep.transitions)
    # the watch overlay: the lines it would say, with Q in the task's units, V and advantages
    task = envs.make("twenty-questions")
    task.reset(2)
    agent.reset(task, 2)
    expl = agent.explain(task.history(), top=3)
    assert (
        expl.kind == "value" and expl.algo == "ilql" and expl.rl_choice == agent.act(task.history())
    )
    assert 3 <= len(expl.candidates) <= 5 and expl.total == len(agent.candidates)
    assert all(c.q is not None and abs(c.advantage - (c.q - c.v)) < 1e-6 for c in expl.candidates)
    assert expl.source == "the data's lines"


def test_a_damaged_utterance_checkpoint_is_one_clear_error(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "lmrl.json").write_text(
        json.dumps({"utterance": {"dim": 8}, "config": {"algo": "mc"}})
    )
    with pytest.raises(TrainingError, match="not a readable utterance-level checkpoint"):
        load_utterance_agent(folder)


def _secret_toy(n: int = 64) -> list[Dialogue]:
    """Three turns: the answer to "Q?" names the secret (A or B), "Hmm?" follows, then a guess,
    right half the time (Guess My City's rewards: -1 a turn, 0 for the right guess). The data
    never guesses right after the answer.
    Candidates 0 = "Q?", 1 = "Hmm?", 2 = "A!", 3 = "B!"."""
    out = []
    for i in range(n):
        secret, guess = i % 2, (i // 2) % 2
        turns = (
            turn_features("", "go\n"),
            turn_features("Q?\n", "it is A\n" if secret == 0 else "it is B\n"),
            turn_features("Hmm?\n", "ok\n"),
            turn_features(
                "A!\n" if guess == 0 else "B!\n", "right\n" if guess == secret else "no\n"
            ),
        )
        won = guess == secret
        out.append(
            Dialogue(turns, (0, 1, 2 + guess), (-1.0, -1.0, 0.0 if won else -1.0), True, won)
        )
    return out


def test_the_hindsight_reader_learns_the_winning_guess_at_turns_the_data_never_guessed():
    data = _secret_toy()
    batch = make_batch(data[:4], 1.0)
    # the won episodes (0 and 3 of the first four: guess == secret) label every one of their turns
    assert batch.won_rows.tolist() == [0, 1, 2, 9, 10, 11]
    assert batch.won_action.tolist() == [2, 2, 2, 3, 3, 3]
    assert batch.won_reward.tolist() == [0.0] * 6
    assert batch.won_cost.tolist() == [-1.0] * 6  # what a wrong guess costs: a turn
    torch.manual_seed(0)
    model = UtteranceModel(32, buckets=1 << 12)
    dense = torch.optim.Adam(model.dense_parameters(), lr=3e-3)
    sparse = torch.optim.SparseAdam(model.sparse_parameters(), lr=3e-2)
    lines = ["Q?\n", "Hmm?\n", "A!\n", "B!\n"]
    cand_feats = [candidate_features(c) for c in lines]
    finishers = torch.tensor([2, 3])
    for _ in range(150):
        loss, stats = losses(
            "mc", model, None, make_batch(data, 1.0), model.candidates(cand_feats), None,
            gamma=1.0, scale=1.0, tau=0.7, cql_weight=0.1, bc_weight=1.0,
            return_range=(0.0, 1.0), hindsight=1.0, finishers=finishers,
        )  # fmt: skip
        dense.zero_grad()
        sparse.zero_grad()
        loss.backward()
        dense.step()
        sparse.step()
    # a third of the labelled rows come before the answer: ln 2 there, 0 elsewhere at best
    assert stats["hindsight_loss"] < math.log(2) / 3 + 0.05
    agent = UtteranceAgent(model, lines, "mc", "toy", {}, no_repeat=False)
    for answer, right, wrong in (("it is A\n", "A!\n", "B!\n"), ("it is B\n", "B!\n", "A!\n")):
        h = [Text("go\n", False), Text("Q?\n", True), Text(answer, False)]
        q = dict(zip(lines, agent.scores(h, lines)["q"].tolist(), strict=True))
        # the data's next line here is "Hmm?", never a guess; the right one would win now (0), a
        # wrong one would cost the turn and then the episode as it went (-1 + -1)
        assert q[right] > -0.5 and q[wrong] < -1.5
        with torch.no_grad():
            turns = [turn_features(u, r) for u, r in history_turns(h)]
            hist = model.histories(turns, [len(turns)])[-1:]
            aim = model.aim(hist, model.candidates(cand_feats[2:]))[0]
        assert lines[2 + int(aim.argmax())] == right
    # valued by the reader (a --hindsight checkpoint's finishing lines), the agent guesses as soon
    # as the answer is in
    reader = UtteranceAgent(
        model, lines, "mc", "toy", {}, no_repeat=False, beta=100.0,
        finishing=Finishing(frozenset(lines[2:]), 0.0, -1.0, 1.0),
    )  # fmt: skip
    reader.reset(None, 0)
    for answer, right in (("it is A\n", "A!\n"), ("it is B\n", "B!\n")):
        h = [Text("go\n", False), Text("Q?\n", True), Text(answer, False)]
        assert reader.act(h) == right
        q = reader.scores(h, lines)["q"]
        assert float(q[lines.index(right)]) > -0.2  # p(right) near 1: near the win's 0
    before = reader.scores([Text("go\n", False)], lines)["q"]
    assert abs(float(before[2] - before[3])) < 0.3  # before the answer, a coin toss
