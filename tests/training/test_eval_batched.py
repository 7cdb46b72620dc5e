"""Batched evaluation (issue #12): episodes played side by side, one batched forward per turn, give
the same episodes as playing them one at a time (the reference, ``batch_size=1``: envs.run_episode
with the agent's single-prompt decoding) for the same seeds: greedy generation, the reranker over
legal actions (BC, ILQL, MC with a frozen π_β), scripted partners (twenty questions); sampled
decoding draws from a generator per episode, so the batch size does not change what it plays."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from envs.core import history_to_str  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def behaviour_pairs(
    task_id: str, episodes: int, max_pairs: int = 48, window: int = 460
) -> list[tuple[str, str]]:
    """(prompt, action) pairs of the task's behaviour policy, for a few BC steps. The prompts keep the
    last ``window`` characters: as long as the prompts the agent is given at evaluation (its
    max_length, 496 byte tokens), so every position it reads has been trained."""
    task, pol = envs.make(task_id), envs.make_policy(task_id, "behaviour")
    pairs = []
    try:
        for s in range(episodes):
            task.reset(1000 + s)
            pol.reset(task, 1000 + s)
            for _ in range(6):
                h = task.history()
                a = pol.act(h)
                pairs.append((history_to_str(h)[-window:], a))
                st = task.step(a)
                if st.terminated or st.truncated:
                    break
    finally:
        task.close()
    return pairs[:max_pairs]


class _Checkpoints(dict):
    """Tiny checkpoints, each trained the first time a test asks for it (the default selection
    needs only the quick ones; the slow tests the rest):

    - ("bc", task): BC on behaviour pairs (byte tokenizer), 60 steps on 460-character prompts. At
      15 steps the twenty-questions model says little more than "I" on some CPUs, which leaves
      the batched/sequential comparison weak.
    - ("bc-quick", task): 12 steps on 160-character prompts, for the checks that compare a batch
      with one prompt at a time whatever the model says.
    - ("ilql" | "mc", "maze-fo"): a few steps on maze-fo episodes in a store (MC with a frozen π_β).
    """

    def __init__(self, root) -> None:
        super().__init__()
        self.root = root
        self.store = None  # the maze-fo episodes of the value learners, made once

    def __missing__(self, key):
        from training.online.toy import tiny_checkpoint

        algo, task_id = key
        if algo in ("bc", "bc-quick"):
            quick = algo == "bc-quick"
            pairs = behaviour_pairs(task_id, 8, window=160 if quick else 460)
            ck = tiny_checkpoint(
                self.root / algo / task_id,
                task_id,
                pairs,
                bc_steps=12 if quick else 60,
                lr=1e-2,
                n_positions=256 if quick else 512,
                texts=["abcdefghijklmnopqrstuvwxyz?,.'"],
            )
        else:
            from data.datasets import DatasetQuery
            from training.config import TrainConfig, resolve
            from training.offline.loop import train
            from training.offline.toy import maze_store

            if self.store is None:
                self.store = maze_store(self.root / "maze.db", episodes=12)
            kw = {"pi_beta": "frozen"} if algo == "mc" else {}
            base = dict(
                algo=algo,
                task="maze-fo",
                max_steps=4,
                batch_size=8,
                n_embd=32,
                n_head=2,
                vocab_size=300,
                eval_episodes=0,
                progress=False,
                log_every=1,
                lr=1e-2,
                **kw,
            )
            cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
            ck = train(cfg, self.store, DatasetQuery(task="maze-fo"), self.root / algo)[
                "checkpoint"
            ]
        self[key] = ck
        return ck


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    return _Checkpoints(tmp_path_factory.mktemp("ckpts"))


def _agent(path, decoding, **kw):
    from training.agents.checkpoint_agent import load_agent

    return load_agent(path, decoding=decoding, **kw)


def _played(task_id, agent, n, batch_size, seed=0):
    from training.evaluation.evaluate import play_episodes

    eps = play_episodes(
        task_id, agent, n, seed, batch_size=batch_size, progress=False, max_steps=16
    )
    return [(ep.seed, [t.action for t in ep.transitions], ep.total_return) for ep in eps]


CASES = [
    ("bc", "maze-fo", "greedy", 5),
    ("bc", "maze-fo", "rerank", 5),
    ("ilql", "maze-fo", "rerank", 5),
    ("ilql", "maze-fo", "greedy", 3),
    ("mc", "maze-fo", "greedy", 3),
    ("bc", "twenty-questions", "greedy", 5),
    ("bc", "textnav-fo", "greedy", 5),
    ("bc", "textnav-fo", "rerank", 5),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "algo,task_id,decoding,n", CASES, ids=[f"{a}-{t}-{d}" for a, t, d, _ in CASES]
)
def test_batched_greedy_equals_sequential(ckpts, algo, task_id, decoding, n):
    agent = _agent(ckpts[(algo, task_id)], decoding, max_new_tokens=12)
    one = _played(task_id, agent, n, batch_size=1)
    agent.decoder._cache.clear()
    side = _played(task_id, agent, n, batch_size=3)  # 3 slots for n episodes: slots are refilled
    assert side == one
    if algo == "bc" and decoding == "greedy":  # the tiny BC models generate words, not just "\n"
        assert any(len(a.strip()) > 2 for _, acts, _ in one for a in acts)
        if task_id != "twenty-questions":  # (the oracle's answers to its odd questions never vary)
            assert len({tuple(a) for _, a, _ in one}) > 1, "every episode played alike"


@pytest.mark.slow
def test_sampled_evaluation_does_not_depend_on_the_batch_size(ckpts):
    agent = _agent(ckpts[("bc", "twenty-questions")], "sample", max_new_tokens=12, temperature=1.5)
    runs = [_played("twenty-questions", agent, 5, batch_size=b, seed=7) for b in (1, 2, 5)]
    assert runs[0] == runs[1] == runs[2]
    assert len({tuple(a) for _, a, _ in runs[0]}) == 5  # sampled: every episode differs


def test_batched_rows_match_single_prompt_logits(ckpts):
    """Left padding with position ids leaves a prompt's next-token scores as they are alone."""
    from training.decoding.padding import left_pad, position_ids

    agent = _agent(ckpts[("ilql", "maze-fo")], "greedy")
    dec = agent.decoder
    prompts = ["a", "The goal is at position 8, 6.\n", "move up\nmove"]
    rows = [list(dec.tok(p)["input_ids"]) for p in prompts]
    ids, attn = left_pad(rows, dec.pad)
    assert attn.sum(1).tolist() == [len(r) for r in rows]
    lm = dec.model.lm
    with torch.no_grad():
        batch = lm(input_ids=ids, attention_mask=attn, position_ids=position_ids(attn)).logits[
            :, -1
        ]
        for i, r in enumerate(rows):
            alone = lm(input_ids=torch.tensor([r])).logits[0, -1]
            torch.testing.assert_close(batch[i], alone, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("algo", ["ilql", "mc"])
def test_action_scores_batch_equals_one_prompt_at_a_time(ckpts, algo):
    """Scoring many prompts' actions together (each prompt fed once, its cache copied to its
    actions) gives the scores of whole (prompt, action) rows fed one prompt at a time."""
    agent = _agent(ckpts[(algo, "maze-fo")], "rerank")
    dec = agent.decoder
    task = envs.make("maze-fo")
    prompts, legal = [], []
    for s in range(4):
        task.reset(s)
        prompts.append(history_to_str(task.history()))
        legal.append(task.legal_actions())
    alone = []
    for p, a in zip(prompts, legal, strict=True):
        sc, lp = dec._score_rows_full(dec._rows(p, a))  # the uncached reference
        alone.append((torch.stack(sc).float(), torch.stack(lp).float()))
    dec._cache.clear()
    batch = dec.action_scores_batch(prompts, legal, max_tokens=100)  # chunks of whole prompts
    for (s1, l1), (s2, l2) in zip(alone, batch, strict=True):
        torch.testing.assert_close(s1, s2, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(l1, l2, atol=1e-5, rtol=1e-5)
        assert int(s1.argmax()) == int(s2.argmax())


def test_progress_bar_counts_finished_episodes(ckpts, capsys):
    from training.evaluation.evaluate import play_episodes

    agent = _agent(ckpts[("bc-quick", "maze-fo")], "rerank")
    play_episodes("maze-fo", agent, 3, batch_size=2, progress=True)
    err = capsys.readouterr().err
    assert "eval maze-fo" in err and "3/3" in err
    play_episodes("maze-fo", agent, 2, batch_size=2, progress=None)  # stderr is no terminal here
    assert capsys.readouterr().err == ""


def test_exact_evaluation_is_unchanged_by_the_batch_size(ckpts):
    from training.evaluation.evaluate import evaluate

    agent = _agent(ckpts[("ilql", "maze-fo")], "rerank")
    a = evaluate(agent, "maze-fo", 4, batch_size=1, strong=1.0)
    b = evaluate(agent, "maze-fo", 4, batch_size=32, strong=1.0)
    assert a["method"] == b["method"] == "exact" and a == b


@pytest.mark.slow
def test_cli_batch_size_gives_the_sequential_result(ckpts, tmp_path, capsys):
    from lmrl_tui.cli import main

    db = str(tmp_path / "s.db")
    ck = str(ckpts[("bc-quick", "twenty-questions")])
    outs = []
    for bs in ("1", "4"):
        rc = main(
            [
                "--db",
                db,
                "eval",
                ck,
                "--episodes",
                "5",
                "--batch-size",
                bs,
                "--decoding",
                "greedy",
                "--no-progress",
            ]
        )
        assert rc == 0
        outs.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    keys = ("mean_return", "ci_low", "ci_high", "success_rate", "episodes")
    assert [o[k] for k in keys for o in outs[:1]] == [outs[1][k] for k in keys]
    rc = main(["--db", db, "eval", ck, "--episodes", "2", "--batch-size", "0"])
    assert rc == 1 and "--batch-size" in capsys.readouterr().err


@pytest.mark.slow
def test_endgames_against_stockfish_batched_equals_sequential(tmp_path):
    """Tasks whose partner is a process (Stockfish) are stepped in threads; the games are the
    sequential ones, and no engine outlives the evaluation."""
    from support.processes import live_children

    from training.online.toy import tiny_checkpoint

    t = envs.make("endgames")
    first = t.reset(seed=0)
    moves = t.legal_actions()
    t.close()
    ck = tiny_checkpoint(
        tmp_path / "eg", "endgames", [(first, m) for m in moves[:4]], bc_steps=30, n_positions=256
    )
    agent = _agent(ck, "rerank")
    one = _played("endgames", agent, 3, batch_size=1)
    side = _played("endgames", agent, 3, batch_size=3)
    assert side == one and max(len(a) for _, a, _ in one) >= 2
    assert live_children() == []


@pytest.mark.slow
@pytest.mark.parametrize("task_id", ["guess-city", "car-dealer"])
def test_scripted_partners_sampled_batched_equals_sequential(task_id, tmp_path):
    from training.online.toy import tiny_checkpoint

    ck = tiny_checkpoint(
        tmp_path / task_id,
        task_id,
        behaviour_pairs(task_id, 4, 24),
        bc_steps=10,
        lr=1e-2,
        n_positions=512,
    )
    agent = _agent(ck, "sample", max_new_tokens=10)
    one = [(s, a) for s, a, _ in _played(task_id, agent, 3, batch_size=1)]
    side = [(s, a) for s, a, _ in _played(task_id, agent, 3, batch_size=2)]
    assert side == one and len({tuple(a) for _, a in one}) == 3


def test_the_batched_draw_is_torch_multinomial_row_by_row():
    """next_tokens gives each row the token torch.multinomial draws from its own generator, and
    leaves the generator where that call leaves it (so later draws agree too)."""
    from training.decoding.free_text import next_tokens

    z = torch.randn(24, 700, generator=torch.Generator().manual_seed(3)) * 4
    z[:, :7] = float("-inf")  # banned tokens
    ours = [torch.Generator().manual_seed(50 + r) for r in range(24)]
    ref = [torch.Generator().manual_seed(50 + r) for r in range(24)]
    for _ in range(5):
        want = [
            int(torch.multinomial(torch.softmax(z[r], dim=-1), 1, generator=ref[r]))
            for r in range(24)
        ]
        assert next_tokens(z, False, ours) == want
    assert next_tokens(z, True, ours) == [int(torch.argmax(z[r])) for r in range(24)]
    z[3] = float("-inf")
    with pytest.raises(RuntimeError, match="no finite token"):
        next_tokens(z, False, ours)
