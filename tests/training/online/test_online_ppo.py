"""Online PPO on the toy bandit (docs/algorithms.md §5, T10): it learns the rewarded action, a BC
term holds it back, utterance credit, the token data it trains on, the value warm-up, the
samplers, a round against Stockfish."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from support.online_bandit import bandit_config, p_a  # noqa: E402

from data.store import EpisodeRecord, StepRecord, Store, Who  # noqa: E402
from training.model.checkpoint import load_checkpoint  # noqa: E402
from training.online.loop import OnlineConfig, OnlineTrainer, resolve_online  # noqa: E402
from training.online.toy import BANDIT, BANDIT_ACTIONS, action_probs  # noqa: E402


def test_init_is_near_uniform(bandit_init):
    model, tok, _, _ = load_checkpoint(bandit_init)
    probs = action_probs(model.lm, tok, "s\n", BANDIT_ACTIONS)
    assert all(0.15 < p < 0.35 for p in probs) and sum(probs) > 0.95


@pytest.mark.slow
def test_t10_ppo_bandit_learns_a(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    tr = OnlineTrainer(bandit_config(bandit_init), store, tmp_path / "run")
    res = tr.run()
    assert p_a(tr) > 0.9
    assert res["rounds"] == 30
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["mean_return"] > rows[0]["mean_return"]
    # every rollout is in the store as an agent episode of this run
    n, kinds = store.db.execute(
        "SELECT COUNT(*), GROUP_CONCAT(DISTINCT source || '/' || agent_kind) FROM episodes WHERE run_id = ?",
        [res["run_id"]],
    ).fetchone()
    assert n == 30 * 64 and kinds == "agent/checkpoint"
    assert (
        store.db.execute("SELECT status FROM runs WHERE id = ?", [res["run_id"]]).fetchone()[0]
        == "finished"
    )


def test_t10_bc_term_on_b_data_keeps_p_a_lower(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    recs = [
        EpisodeRecord(
            BANDIT,
            1,
            i,
            "s\n",
            [StepRecord("B\n", "", 0.0, True)],
            Who("scripted", "b"),
            source="scripted",
        )
        for i in range(64)
    ]
    store.write_episodes(recs)
    p = []
    for w in (0.0, 1.0):
        tr = OnlineTrainer(
            bandit_config(bandit_init, rounds=6, bc_weight=w), store, tmp_path / f"run{w}"
        )
        tr.run()
        p.append(p_a(tr))
    assert p[1] < p[0]


def test_utterance_credit_improves_the_bandit(bandit_init, tmp_path):
    tr = OnlineTrainer(
        bandit_config(bandit_init, rounds=6, credit="utterance", kl_coef=0.01),
        None,
        tmp_path / "run",
    )
    before = p_a(tr)
    tr.run()
    assert p_a(tr) > before + 0.1


def test_ppo_does_not_train_on_a_newline_it_did_not_sample():
    """A generation cut at max_new_tokens gets "\\n" appended for the task; PPO's ratios must be of
    sampled tokens only, so that newline is no action token and its reward moves to the token before."""
    from envs.core import Transition
    from training.model.tokenization import build_tokenizer
    from training.online.rollout import RolloutEpisode
    from training.online.update import episodes_dataset, utterances

    tok = build_tokenizer(["Wordle:\n", "c r a n e\n", "b y g b b\n", "x x x\n", "\n"], kind="byte")
    trs = [
        Transition("c r a n e\n", "b y g b b\n", -1.0, False, False, {}),
        Transition("x x x\n", "\n", -10.0, True, False, {}),
    ]
    ep = RolloutEpisode("wordle", 1, "Wordle:\n", trs, cut=[False, True])
    plain = episodes_dataset([ep], tok, "episode", 256, 1.0)
    fixed = episodes_dataset([ep], tok, "episode", 256, 1.0, sampled_only=True)
    (u1, u2) = utterances(plain)[0]
    assert utterances(fixed)[0] == [u1, u2[:-1]]
    assert float(fixed.rew[u2[-2]]) == -10.0 and float(fixed.rew[u2[-1]]) == 0.0
    assert float(fixed.rew.sum()) == float(plain.rew.sum()) == -11.0
    assert int(fixed.collate([0])["action_mask"].sum()) == int(plain.act.sum()) - 1


def test_value_warmup_moves_only_the_value_head(bandit_init, tmp_path):
    """--value-warmup N: the first N rounds fit the value head alone (the policy stays put), at
    lr × --value-lr-mult; afterwards PPO updates both."""
    store = Store(tmp_path / "s.db")
    tr = OnlineTrainer(
        bandit_config(bandit_init, rounds=1, value_warmup=1, value_lr_mult=10.0, bc_weight=0.0),
        store,
        tmp_path / "run",
    )
    assert [g["lr"] for g in tr.opt.param_groups] == [1e-3, 1e-2]
    lm0 = [p.detach().clone() for p in tr.inner.policy.lm.parameters()]
    head0 = tr.inner.v_head.bias.detach().clone()
    from training.online.rollout import TaskPool

    with TaskPool(BANDIT, 8) as pool:
        eps, _ = tr.collect(pool, 0)
        st = tr.ppo_update(eps, 0)
        assert st["value_warmup"] == 1.0
        assert all(
            torch.equal(a, b) for a, b in zip(lm0, tr.inner.policy.lm.parameters(), strict=True)
        )
        assert not torch.equal(head0, tr.inner.v_head.bias)
        eps, _ = tr.collect(pool, 1)
        assert tr.ppo_update(eps, 1)["value_warmup"] == 0.0
    assert not all(
        torch.equal(a, b) for a, b in zip(lm0, tr.inner.policy.lm.parameters(), strict=True)
    )


def test_samplers_never_write_padding_or_end_of_text():
    """An untrained model writes any token; the rollout sampler and the agent's decoder must still
    never emit <|pad|> or <|endoftext|> (they are not text, and would garble the action)."""
    from training.decoding.decoder import Decoder
    from training.model.policy_value import PolicyValueModel, tiny_lm
    from training.model.tokenization import build_tokenizer, never_sampled
    from training.online.rollout import BatchSampler

    tok = build_tokenizer(["a b c\n"], kind="byte")
    banned = never_sampled(tok)
    assert banned == sorted({tok.pad_token_id, tok.eos_token_id})
    torch.manual_seed(0)
    lm = tiny_lm(
        len(tok), 64, n_layer=1, n_embd=16, pad_id=tok.pad_token_id, eos_id=tok.eos_token_id
    )
    with torch.no_grad():  # make the special tokens likely
        lm.transformer.wte.weight[banned] = lm.transformer.ln_f.bias.detach() + 3.0
    sampler = BatchSampler(lm, tok, max_new_tokens=8)
    texts = sampler.generate(["a b\n"] * 64)
    assert not any("<|pad|>" in t or "<|endoftext|>" in t for t in texts)
    from training.config import TrainConfig

    dec = Decoder(
        PolicyValueModel(lm, "bc"),
        tok,
        TrainConfig(algo="bc", task="x"),
        decoding="sample",
        max_new_tokens=8,
    )
    g = torch.Generator().manual_seed(0)
    assert not any("<|" in dec.sample("a b\n", g) for _ in range(32))


@pytest.mark.slow
@pytest.mark.stockfish
def test_online_round_on_endgames_pools_and_closes_stockfish(tmp_path):
    """A PPO round against the real Stockfish: each pooled game holds one engine process for the
    whole run, every rollout is stored, and no engine outlives the run."""
    from support.processes import live_children

    import envs
    from training.online.toy import tiny_checkpoint

    t = envs.make("endgames")
    first = t.reset(seed=0)
    moves = t.legal_actions()
    t.close()
    init = tiny_checkpoint(
        tmp_path / "init", "endgames", [(first, m) for m in moves[:4]], bc_steps=30, n_positions=256
    )
    store = Store(tmp_path / "s.db")
    cfg = resolve_online(
        OnlineConfig(
            algo="ppo",
            task="endgames",
            init=str(init),
            rounds=1,
            n_rollouts=4,
            rollout_batch=2,
            eval_every=0,
            save_every=0,
            progress=False,
            max_new_tokens=8,
            episode_max_steps=6,
            max_length=256,
        )
    )
    res = OnlineTrainer(cfg, store, tmp_path / "run").run()
    assert (
        store.db.execute(
            "SELECT COUNT(*) FROM episodes WHERE run_id = ?", [res["run_id"]]
        ).fetchone()[0]
        == 4
    )
    # the engine answered: some game went on past the agent's first move
    longest = store.db.execute(
        "SELECT MAX(n_steps) FROM episodes WHERE run_id = ?", [res["run_id"]]
    ).fetchone()[0]
    assert longest >= 2
    assert live_children() == []
