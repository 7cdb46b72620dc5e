"""Online training on the toy bandit (docs/algorithms.md §11, T10, T11), rollouts in the store, --resume."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from data.store import EpisodeRecord, StepRecord, Store, Who  # noqa: E402
from training.errors import TrainingError  # noqa: E402
from training.model.checkpoint import load_checkpoint  # noqa: E402
from training.online.loop import OnlineConfig, OnlineTrainer, resolve_online  # noqa: E402
from training.online.toy import (  # noqa: E402
    BANDIT,
    BANDIT_ACTIONS,
    action_probs,
    register_bandit,
    tiny_checkpoint,
)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models run fastest on one thread (and the 2-core CI box is shared)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def bandit_init(_one_thread, tmp_path_factory):
    register_bandit()
    path = tmp_path_factory.mktemp("bandit") / "init"
    return tiny_checkpoint(path, BANDIT, [("s\n", a) for a in BANDIT_ACTIONS], bc_steps=150)


def _cfg(init, **kw) -> OnlineConfig:
    base = dict(algo="ppo", task=BANDIT, init=str(init), rounds=30, n_rollouts=64, rollout_batch=64,
                batch_size=32, lr=1e-3, kl_coef=0.0, eval_every=0, save_every=0, progress=False,
                max_new_tokens=4)
    base.update(kw)
    return resolve_online(OnlineConfig(**base))


def _p_a(trainer) -> float:
    return action_probs(trainer.inner.policy.lm, trainer.tok, "s\n", BANDIT_ACTIONS)[0]


def test_init_is_near_uniform(bandit_init):
    model, tok, _, _ = load_checkpoint(bandit_init)
    probs = action_probs(model.lm, tok, "s\n", BANDIT_ACTIONS)
    assert all(0.15 < p < 0.35 for p in probs) and sum(probs) > 0.95


@pytest.mark.slow
def test_t10_ppo_bandit_learns_a(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    tr = OnlineTrainer(_cfg(bandit_init), store, tmp_path / "run")
    res = tr.run()
    assert _p_a(tr) > 0.9
    assert res["rounds"] == 30
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["mean_return"] > rows[0]["mean_return"]
    # every rollout is in the store as an agent episode of this run
    n, kinds = store.db.execute(
        "SELECT COUNT(*), GROUP_CONCAT(DISTINCT source || '/' || agent_kind) FROM episodes WHERE run_id = ?",
        [res["run_id"]]).fetchone()
    assert n == 30 * 64 and kinds == "agent/checkpoint"
    assert store.db.execute("SELECT status FROM runs WHERE id = ?", [res["run_id"]]).fetchone()[0] == "finished"


def test_t10_bc_term_on_b_data_keeps_p_a_lower(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    recs = [EpisodeRecord(BANDIT, 1, i, "s\n", [StepRecord("B\n", "", 0.0, True)], Who("scripted", "b"),
                          source="scripted") for i in range(64)]
    store.write_episodes(recs)
    p = []
    for w in (0.0, 1.0):
        tr = OnlineTrainer(_cfg(bandit_init, rounds=6, bc_weight=w), store, tmp_path / f"run{w}")
        tr.run()
        p.append(_p_a(tr))
    assert p[1] < p[0]


def test_t11_online_filtered_bc_improves_each_round(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    tr = OnlineTrainer(_cfg(bandit_init, algo="online-filtered-bc", rounds=1, lr=3e-3, epochs=2),
                       store, tmp_path / "run")
    probs = [_p_a(tr)]
    for r in range(1, 4):
        tr.cfg.rounds = r
        tr.run()
        probs.append(_p_a(tr))
    assert all(b > a for a, b in zip(probs, probs[1:], strict=False)), probs
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["kept"] for r in rows] == [int(64 * 0.3)] * 3
    assert all(r["pool"] == 64 for r in rows)


def test_t11_accumulate_keeps_top_of_everything(bandit_init, tmp_path):
    tr = OnlineTrainer(_cfg(bandit_init, algo="online-filtered-bc", rounds=2, accumulate=True,
                            filter="percent", keep=0.1), None, tmp_path / "run")
    tr.run()
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["pool"] for r in rows] == [64, 128]
    assert all(r["kept_min_return"] == 1.0 for r in rows)  # ties at the top (return 1) all kept


def test_resume_continues_a_killed_run(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    straight = OnlineTrainer(_cfg(bandit_init, rounds=3), store, tmp_path / "a")
    straight.run()
    first = OnlineTrainer(_cfg(bandit_init, rounds=2, save_every=1), store, tmp_path / "b")
    first.run()
    # simulate a kill after round 2: the run is left 'running' and resumed with the full budget
    resumed = OnlineTrainer(_cfg(bandit_init, rounds=3), store, tmp_path / "b", resume=True)
    res = resumed.run()
    assert res["rounds"] == 3 and res["run_id"] == first.state["run_id"]
    for pa, pb in zip(straight.inner.parameters(), resumed.inner.parameters(), strict=True):
        assert torch.allclose(pa, pb, atol=1e-6)
    rounds = [json.loads(x)["round"] for x in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()]
    assert rounds == [1, 2, 3]
    n = store.db.execute("SELECT COUNT(*) FROM episodes WHERE run_id = ?", [res["run_id"]]).fetchone()[0]
    assert n == 3 * 64


def test_resume_without_checkpoint_is_an_error(bandit_init, tmp_path):
    from training.errors import TrainingError

    with pytest.raises(TrainingError, match="nothing to resume"):
        OnlineTrainer(_cfg(bandit_init), None, tmp_path / "none", resume=True)


def _parse_train(argv):
    """The words after ``train``, parsed by the training entry module's command tree."""
    from training.cli import build_parser

    return build_parser().parse_args(["train", *argv])


def test_cli_runs_and_resume_does_not_duplicate_rollouts(bandit_init, tmp_path, capsys):
    from training.online.cli import run_online

    store = Store(tmp_path / "s.db")
    argv = ["ppo", "--task", BANDIT, "--init", str(bandit_init), "--out", str(tmp_path / "run"),
            "--rounds", "1", "--n-rollouts", "16", "--eval-every", "0", "--no-progress", "--max-new-tokens", "4"]
    assert run_online(_parse_train(argv), store) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # a kill after round 2's rollouts were written but before its checkpoint: resume must not
    # store them twice
    ckpt_state = json.loads((tmp_path / "run" / "checkpoint" / "online_state.json").read_text())
    tr = OnlineTrainer(_cfg(bandit_init, rounds=2, n_rollouts=16), store, tmp_path / "run", resume=True)
    assert tr.state == ckpt_state
    from training.online.rollout import TaskPool

    with TaskPool(BANDIT, 4) as pool:
        tr.collect(pool, 1)
    assert run_online(_parse_train([*argv[:-7], "--rounds", "2", "--n-rollouts", "16", "--resume",
                                         "--eval-every", "0", "--no-progress", "--max-new-tokens", "4"]),
                      store) == 0
    n = store.db.execute("SELECT COUNT(*) FROM episodes WHERE run_id = ?", [res["run_id"]]).fetchone()[0]
    assert n == 2 * 16
    bogus = _parse_train(argv)
    bogus.algo = "bogus"
    assert run_online(bogus, store) == 1
    assert "unknown online algorithm" in capsys.readouterr().err


def test_utterance_credit_improves_the_bandit(bandit_init, tmp_path):
    tr = OnlineTrainer(_cfg(bandit_init, rounds=6, credit="utterance", kl_coef=0.01), None, tmp_path / "run")
    before = _p_a(tr)
    tr.run()
    assert _p_a(tr) > before + 0.1


def test_resume_of_accumulating_filtered_bc_reloads_the_pool(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    kw = dict(algo="online-filtered-bc", accumulate=True, n_rollouts=16, save_every=1)
    OnlineTrainer(_cfg(bandit_init, rounds=1, **kw), store, tmp_path / "run").run()
    tr = OnlineTrainer(_cfg(bandit_init, rounds=2, **kw), store, tmp_path / "run", resume=True)
    tr.run()
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["pool"] for r in rows] == [16, 32]


def test_task_options_reach_rollouts_and_the_checkpoint(bandit_init, tmp_path, capsys):
    from training.online.cli import run_online

    store = Store(tmp_path / "s.db")
    argv = ["online-filtered-bc", "--task", BANDIT, "--option", "flavour=mint", "--init", str(bandit_init),
            "--out", str(tmp_path / "run"), "--rounds", "1", "--n-rollouts", "8", "--eval-every", "0",
            "--no-progress", "--max-new-tokens", "4"]  # fmt: skip
    assert run_online(_parse_train(argv), store) == 0
    rows = store.db.execute("SELECT DISTINCT options FROM episodes").fetchall()
    assert [json.loads(r[0]) for r in rows] == [{"flavour": "mint"}]
    meta = json.loads((tmp_path / "run" / "checkpoint" / "lmrl.json").read_text())
    assert meta["config"]["task_options"] == {"flavour": "mint"}
    # a later run from that checkpoint plays the same game unless told otherwise
    again = _cfg(tmp_path / "run", rounds=1, n_rollouts=8, algo="online-filtered-bc")
    OnlineTrainer(again, store, tmp_path / "run2")
    assert again.task_options == {"flavour": "mint"}


def test_ppo_does_not_train_on_a_newline_it_did_not_sample():
    """A generation cut at max_new_tokens gets "\\n" appended for the task; PPO's ratios must be of
    sampled tokens only, so that newline is no action token and its reward moves to the token before."""
    from envs.core import Transition
    from training.model.tokenization import build_tokenizer
    from training.online.rollout import RolloutEpisode
    from training.online.update import episodes_dataset, utterances

    tok = build_tokenizer(["Wordle:\n", "c r a n e\n", "b y g b b\n", "x x x\n", "\n"], kind="byte")
    trs = [Transition("c r a n e\n", "b y g b b\n", -1.0, False, False, {}),
           Transition("x x x\n", "\n", -10.0, True, False, {})]  # fmt: skip
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
    tr = OnlineTrainer(_cfg(bandit_init, rounds=1, value_warmup=1, value_lr_mult=10.0, bc_weight=0.0),
                       store, tmp_path / "run")  # fmt: skip
    assert [g["lr"] for g in tr.opt.param_groups] == [1e-3, 1e-2]
    lm0 = [p.detach().clone() for p in tr.inner.policy.lm.parameters()]
    head0 = tr.inner.v_head.bias.detach().clone()
    from training.online.rollout import TaskPool

    with TaskPool(BANDIT, 8) as pool:
        eps, _ = tr.collect(pool, 0)
        st = tr.ppo_update(eps, 0)
        assert st["value_warmup"] == 1.0
        assert all(torch.equal(a, b) for a, b in zip(lm0, tr.inner.policy.lm.parameters(), strict=True))
        assert not torch.equal(head0, tr.inner.v_head.bias)
        eps, _ = tr.collect(pool, 1)
        assert tr.ppo_update(eps, 1)["value_warmup"] == 0.0
    assert not all(torch.equal(a, b) for a, b in zip(lm0, tr.inner.policy.lm.parameters(), strict=True))


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
    lm = tiny_lm(len(tok), 64, n_layer=1, n_embd=16, pad_id=tok.pad_token_id, eos_id=tok.eos_token_id)
    with torch.no_grad():  # make the special tokens likely
        lm.transformer.wte.weight[banned] = lm.transformer.ln_f.bias.detach() + 3.0
    sampler = BatchSampler(lm, tok, max_new_tokens=8)
    texts = sampler.generate(["a b\n"] * 64)
    assert not any("<|pad|>" in t or "<|endoftext|>" in t for t in texts)
    from training.config import TrainConfig

    dec = Decoder(PolicyValueModel(lm, "bc"), tok, TrainConfig(algo="bc", task="x"), decoding="sample",
                  max_new_tokens=8)  # fmt: skip
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
    init = tiny_checkpoint(tmp_path / "init", "endgames", [(first, m) for m in moves[:4]], bc_steps=30,
                           n_positions=256)  # fmt: skip
    store = Store(tmp_path / "s.db")
    cfg = resolve_online(OnlineConfig(algo="ppo", task="endgames", init=str(init), rounds=1, n_rollouts=4,
                                      rollout_batch=2, eval_every=0, save_every=0, progress=False,
                                      max_new_tokens=8, episode_max_steps=6, max_length=256))  # fmt: skip
    res = OnlineTrainer(cfg, store, tmp_path / "run").run()
    assert store.db.execute("SELECT COUNT(*) FROM episodes WHERE run_id = ?", [res["run_id"]]).fetchone()[0] == 4
    # the engine answered: some game went on past the agent's first move
    longest = store.db.execute("SELECT MAX(n_steps) FROM episodes WHERE run_id = ?", [res["run_id"]]).fetchone()[0]
    assert longest >= 2
    assert live_children() == []


def test_resume_of_a_run_saved_with_one_optimizer_group(bandit_init, tmp_path):
    """Runs saved before the value head had its own learning rate resume with their one group."""
    store = Store(tmp_path / "s.db")
    OnlineTrainer(_cfg(bandit_init, rounds=1, save_every=1), store, tmp_path / "run").run()
    f = tmp_path / "run" / "checkpoint" / "trainer_state.pt"
    state = torch.load(f, weights_only=True)
    groups = state["optimizer"]["param_groups"]
    assert len(groups) == 2
    merged = dict(groups[0], params=[i for g in groups for i in g["params"]])
    state["optimizer"]["param_groups"] = [merged]
    torch.save(state, f)
    resumed = OnlineTrainer(_cfg(bandit_init, rounds=2), store, tmp_path / "run", resume=True)
    assert len(resumed.opt.param_groups) == 1
    assert resumed.run()["rounds"] == 2


def test_keep_best_keeps_the_best_evaluated_round_not_the_last(bandit_init, tmp_path, monkeypatch):
    scores = iter([0.2, 0.5, 0.9, 0.3])  # rounds 0 (the start), 1, 2, 3: the run collapses at the end
    monkeypatch.setattr(OnlineTrainer, "evaluate", lambda self: {"mean_return": next(scores)})
    tr = OnlineTrainer(_cfg(bandit_init, rounds=3, n_rollouts=16, keep_best=True, eval_every=1,
                            eval_episodes=4, save_every=0), None, tmp_path / "run")  # fmt: skip
    res = tr.run()
    assert res["best"] == {"round": 2, "mean_return": 0.9} and res["rounds"] == 3
    best, last = tmp_path / "run" / "checkpoint-best", tmp_path / "run" / "checkpoint"
    assert json.loads((best / "online_state.json").read_text())["round"] == 2
    assert json.loads((last / "online_state.json").read_text())["round"] == 3
    assert not (tmp_path / "run" / "checkpoint-best.tmp").exists()
    p_best = action_probs(load_checkpoint(best)[0].lm, tr.tok, "s\n", BANDIT_ACTIONS)
    p_last = action_probs(load_checkpoint(last)[0].lm, tr.tok, "s\n", BANDIT_ACTIONS)
    assert p_best != p_last  # round 3's update moved the policy; the best copy is round 2's


def test_keep_best_with_real_evaluations_on_their_own_seeds(bandit_init, tmp_path, monkeypatch):
    import training.agents.checkpoint_agent as checkpoint_agent

    seeds = []
    real = checkpoint_agent.evaluate_model

    def spy(*a, seed=0, **kw):
        seeds.append(seed)
        return real(*a, seed=seed, **kw)

    monkeypatch.setattr(checkpoint_agent, "evaluate_model", spy)
    cfg = _cfg(bandit_init, rounds=2, n_rollouts=16, keep_best=True, eval_every=1, eval_episodes=8,
               eval_seed=500_000)  # fmt: skip
    store = Store(tmp_path / "s.db")
    res = OnlineTrainer(cfg, store, tmp_path / "run").run()
    evals = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
             if json.loads(x)["kind"] == "eval"]  # fmt: skip
    assert seeds == [500_000] * 3 and [e["round"] for e in evals] == [0, 1, 2]
    top = max(evals, key=lambda e: e["mean_return"])  # the first of equals: a later one must beat it
    assert res["best"] == {"round": top["round"], "mean_return": top["mean_return"]}
    state = json.loads((tmp_path / "run" / "checkpoint-best" / "online_state.json").read_text())
    assert state["round"] == top["round"] and state["best"]["round"] == top["round"]
    kept = [r for r in store.db.execute("SELECT path, step, meta FROM checkpoints WHERE run_id = ?", [res["run_id"]])
            if r[0].endswith("checkpoint-best")]  # fmt: skip
    assert kept and kept[-1][1] == top["round"] and json.loads(kept[-1][2])["kept_best"] == res["best"]
    assert kept[-1][0] == str((tmp_path / "run" / "checkpoint-best").resolve())


def test_keep_best_needs_evaluations(bandit_init):
    with pytest.raises(TrainingError, match="--keep-best"):
        _cfg(bandit_init, keep_best=True, eval_every=0)
