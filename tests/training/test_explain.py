"""training.agents.explain: the watch overlay's numbers equal the model's own Q, V and probabilities,
computed here again straight from the checkpoint's modules."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from support.checkpoint_support import tiny_checkpoint  # noqa: E402

import envs  # noqa: E402
from envs.core import history_to_str  # noqa: E402
from training.agents.checkpoint_agent import load_agent  # noqa: E402
from training.agents.explain import explain  # noqa: E402
from training.model.tokenization import encode  # noqa: E402
from training.offline.toy import maze_store  # noqa: E402


class Checkpoints(dict):
    """Tiny checkpoints by algorithm, each trained when first asked for."""

    def __init__(self, folder) -> None:
        super().__init__()
        self.folder = folder
        self.store = maze_store(folder / "maze.db", episodes=12)

    def __missing__(self, algo: str):
        kw = (
            {"qsft_target": "prob"} if algo == "qsft" else {}
        )  # the ratio target: its own test below
        self[algo] = tiny_checkpoint(self.folder, algo, self.store, **kw)
        return self[algo]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return Checkpoints(tmp_path_factory.mktemp("ckpt"))


def state_after(agent, seed: int, moves: int):
    """A maze-fo task after the agent played ``moves`` steps from ``seed``."""
    task = envs.make("maze-fo")
    task.reset(seed)
    agent.reset(task, seed)
    for _ in range(moves):
        task.step(agent.act(task.history()))
    return task


@torch.no_grad()
def per_token(agent, prompt: str, action: str):
    """(hidden states, LM logits, action tokens) at the positions predicting the action's tokens."""
    tok, model = agent.decoder.tok, agent.decoder.model
    p, a = encode(tok, prompt), encode(tok, action)
    out = model.lm(input_ids=torch.tensor([p + a]), output_hidden_states=True)
    pos = torch.arange(len(p) - 1, len(p) + len(a) - 1)
    return out.hidden_states[-1][0, pos], out.logits[0, pos], torch.tensor(a)


def test_ilql_values_are_the_models_q_and_v(checkpoints):
    agent = load_agent(checkpoints["ilql"])
    task = state_after(agent, seed=5, moves=2)
    legal = task.legal_actions()
    expl = explain(agent, task.history(), legal, top=len(legal))
    assert expl.kind == "value" and expl.total == len(legal) == len(expl.candidates)
    m = agent.decoder.model
    prompt = history_to_str(task.history())
    for c in expl.candidates:
        h, _, a = per_token(agent, prompt, c.action)
        with torch.no_grad():
            q = torch.minimum(m.target_q_heads[0](h), m.target_q_heads[1](h)).gather(
                -1, a[:, None]
            )[:, 0]
            v = m.v_head(h)[:, 0]
        assert c.v == pytest.approx(float(v[0]), abs=1e-4)
        assert c.advantage == pytest.approx(float((q - v).sum()), abs=1e-4)
        assert c.q == pytest.approx(float(v[0] + (q - v).sum()), abs=1e-4)
    assert expl.rl_choice == agent.act(task.history())  # the marked choice is what it plays
    ranked = sorted(expl.candidates, key=lambda c: c.advantage, reverse=True)
    assert [c.action for c in expl.candidates] == [c.action for c in ranked]


@pytest.mark.slow
def test_mc_qsft_and_policy_checkpoints(checkpoints):
    for algo in ("mc", "qsft", "bc"):
        agent = load_agent(checkpoints[algo])
        task = state_after(agent, seed=2, moves=1)
        legal = task.legal_actions()
        expl = explain(agent, task.history(), legal, top=2)
        assert expl.total == 4 and {expl.rl_choice, expl.bc_choice} <= {
            c.action for c in expl.candidates
        }
        full = explain(agent, task.history(), legal, top=4).candidates
        assert sum(c.beta_prob for c in full) == pytest.approx(1.0)
        if algo == "mc":  # V is π_β's expectation of Q over the candidates
            assert full[0].v == pytest.approx(sum(c.beta_prob * c.q for c in full), abs=1e-6)
        elif algo == "qsft":  # Q = p_θ(a|s); V = max Q; the best action's advantage is 0
            prompt = history_to_str(task.history())
            for c in full:
                _, logits, a = per_token(agent, prompt, c.action)
                p = float(torch.log_softmax(logits, -1).gather(-1, a[:, None]).sum())
                assert math.log(c.q) == pytest.approx(p, abs=1e-4)
            assert max(c.advantage for c in full) == 0 and full[0].v == max(c.q for c in full)
        else:
            assert expl.kind == "policy" and all(c.q is None for c in full)
            assert sum(c.prob for c in full) == pytest.approx(1.0)
            assert expl.rl_choice == max(full, key=lambda c: c.prob).action


@pytest.mark.slow
def test_free_text_candidates_are_sampled(checkpoints):
    agent = load_agent(checkpoints["ilql"], decoding="sample", max_new_tokens=4)
    task = state_after(agent, seed=1, moves=0)
    expl = explain(agent, task.history(), None, top=3)
    assert expl.source == "samples" and 1 <= expl.total <= 6
    assert all(c.action.endswith("\n") for c in expl.candidates)


def test_a_long_history_is_cut_to_what_training_read(checkpoints):
    """Prompt + action never outgrow the training windows' max_length (positions past it were never
    trained), however long the history and the model's position table."""
    agent = load_agent(checkpoints["mc"])
    dec = agent.decoder
    assert dec.context == dec.cfg.max_length == 128 < dec.n_positions
    long = "move up\nYou bump into a wall.\n" * 200
    rows = dec._rows(long, ["move up\n", "move left\n"])
    assert all(len(p) + len(a) == 128 for p, a in rows)
    assert rows[0][0] == encode(dec.tok, long)[-(128 - len(rows[0][1])) :]  # cut from the left
    assert dec.sample(long, torch.Generator().manual_seed(0)).endswith("\n")


def test_logit_weight_adds_pi_betas_log_probability_to_the_reranker(checkpoints):
    from training.agents.explain import token_terms

    plain, weighted = load_agent(checkpoints["mc"]), load_agent(checkpoints["mc"], logit_weight=0.5)
    assert weighted.decoder.cfg.logit_weight == 0.5 and plain.decoder.cfg.logit_weight == 0.0
    task = state_after(plain, 2, 1)
    prompt, acts = history_to_str(task.history()), task.legal_actions()
    diff = (
        weighted.decoder.action_scores(prompt, acts)[0]
        - plain.decoder.action_scores(prompt, acts)[0]
    )
    beta = torch.stack([t["logp_beta"].sum() for t in token_terms(plain.decoder, prompt, acts)])
    assert torch.allclose(diff, 0.5 * beta, atol=1e-4)


def test_qsft_ratio_checkpoint_scores_and_explains_p_over_pi_beta(tmp_path):
    """With ``qsft_target: ratio`` an action's Q is p_θ/π_β at its last token (π_β the shared head), in
    the overlay and in the reranker alike, and the agent plays the action of highest Q."""
    ck = tiny_checkpoint(tmp_path, "qsft", qsft_target="ratio", max_steps=3)
    agent = load_agent(ck)
    task = state_after(agent, seed=3, moves=1)
    legal = task.legal_actions()
    m = agent.decoder.model
    prompt = history_to_str(task.history())
    want = []
    for action in legal:
        h, logits, a = per_token(agent, prompt, action)
        with torch.no_grad():
            beta = m.beta_head(h)
        want.append(
            float(torch.log_softmax(logits[-1], -1)[a[-1]] - torch.log_softmax(beta[-1], -1)[a[-1]])
        )
    scores, _ = agent.decoder.action_scores(prompt, legal)
    assert [float(s) for s in scores] == pytest.approx(want, abs=1e-4)
    full = explain(agent, task.history(), legal, top=len(legal)).candidates
    by_action = {c.action: c.q for c in full}
    assert [math.log(by_action[x]) for x in legal] == pytest.approx(want, abs=1e-4)
    assert agent.act(task.history()) == legal[max(range(len(legal)), key=want.__getitem__)]
