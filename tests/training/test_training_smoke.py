"""Tiny-model smoke runs per algorithm (loss finite, every trainable parameter changes), T14
(checkpoint round trip through --resume), checkpoints as agents, and bad input."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from data.datasets import DatasetQuery  # noqa: E402
from training.config import TrainConfig, resolve  # noqa: E402
from training.errors import TrainingError  # noqa: E402
from training.offline.toy import maze_store  # noqa: E402


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return maze_store(tmp_path_factory.mktemp("db") / "maze.db", episodes=12)


def small_cfg(algo: str, **kw) -> TrainConfig:
    base = dict(
        algo=algo,
        task="maze-fo",
        max_steps=3,
        batch_size=8,
        n_embd=32,
        n_head=2,
        vocab_size=300,
        eval_episodes=0,
        progress=False,
        log_every=1,
        lr=1e-2,
    )
    base.update(kw)
    cfg = TrainConfig(**base)
    return resolve(cfg, set(base) - {"algo", "task"})


def trainable(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


@pytest.mark.slow
@pytest.mark.parametrize(
    "algo,kw",
    [
        ("bc", {}),
        ("pbc", {}),
        ("mc", {}),
        ("ilql", {}),
        ("ilql", {"target": "full", "windows": "episode"}),
        ("qsft", {}),
        ("mc", {"pi_beta": "frozen", "cql_weight": 0.01}),
    ],
)
def test_smoke_every_trainable_parameter_changes(store, tmp_path, algo, kw):
    from training.model.checkpoint import load_checkpoint
    from training.offline.loop import train
    from training.offline.prepare import prepare

    cfg = small_cfg(algo, **kw)
    query = DatasetQuery(task="maze-fo", top_percent=50 if algo == "pbc" else None)
    before = trainable(prepare(cfg, store, query).model)
    res = train(cfg, store, query, tmp_path / "run")
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert all(torch.isfinite(torch.tensor(r["loss"])) for r in rows if r["kind"] == "train")
    model, _, cfg2, meta = load_checkpoint(res["checkpoint"])
    after = dict(model.named_parameters())
    same = [n for n, p in before.items() if torch.equal(p, after[n].detach())]
    assert not same, f"unchanged parameters: {same}"
    assert cfg2.algo == cfg.algo and meta["step"] == 3
    ds = json.loads((tmp_path / "run" / "checkpoint" / "dataset.json").read_text())
    assert ds["episode_ids"] and ds["query"]["task"] == "maze-fo"
    run = store.db.execute("SELECT status, algo FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    assert run == ("finished", cfg.algo)


@pytest.mark.slow
def test_t14_resume_reproduces_the_uninterrupted_run(store, tmp_path):
    from training.model.checkpoint import load_checkpoint
    from training.offline.loop import train

    query = DatasetQuery(task="maze-fo")
    train(small_cfg("ilql", max_steps=4), store, query, tmp_path / "a")
    train(small_cfg("ilql", max_steps=2), store, query, tmp_path / "b")
    train(small_cfg("ilql", max_steps=4), store, query, tmp_path / "b", resume=True)
    ma = load_checkpoint(tmp_path / "a")[0].state_dict()
    mb = load_checkpoint(tmp_path / "b")[0].state_dict()
    assert ma.keys() == mb.keys()
    for k in ma:  # trunk, heads, target heads
        assert torch.equal(ma[k], mb[k]), k
    loss = [
        [
            json.loads(x)["loss"]
            for x in (tmp_path / d / "metrics.jsonl").read_text().splitlines()
            if json.loads(x)["kind"] == "train" and json.loads(x)["step"] == 4
        ]
        for d in "ab"
    ]
    assert loss[0] == loss[1]
    opt = torch.load(tmp_path / "b" / "checkpoint" / "trainer_state.pt", weights_only=True)
    assert opt["step"] == 4 and opt["optimizer"]["state"]


@pytest.mark.slow
def test_checkpoint_is_an_agent_and_is_evaluated(store, tmp_path):
    from training.agents.checkpoint_agent import load_agent
    from training.evaluation.evaluate import evaluate
    from training.offline.loop import train

    train(small_cfg("ilql", max_steps=2), store, DatasetQuery(task="maze-fo"), tmp_path / "r")
    agent = load_agent(tmp_path / "r")
    assert agent.kind == "checkpoint" and agent.decoder.decoding == "rerank"
    task = envs.make("maze-fo")
    ep = envs.run_episode(task, agent, seed=3, max_steps=5)
    assert all(t.action in task.legal_actions() for t in ep.transitions)
    sampler = load_agent(tmp_path / "r", decoding="sample", max_new_tokens=4)
    ep = envs.run_episode(task, sampler, seed=3, max_steps=3)
    assert all(t.action.endswith("\n") for t in ep.transitions)
    exact = evaluate(agent, "maze-fo", store=store)
    assert exact["method"] == "exact" and -101 <= exact["mean_return"] <= 0
    assert exact["normalised_lmrl"] is not None and exact["strong_mean"] == pytest.approx(-6.84)
    played = evaluate(agent, "maze-fo", 2, exact=False)
    assert played["method"] == "sampled" and played["episodes"] == 2


def test_bad_input_raises_training_error(store, tmp_path):
    from training.agents.checkpoint_agent import load_agent
    from training.offline.loop import train

    with pytest.raises(TrainingError, match="empty"):
        train(small_cfg("bc"), store, DatasetQuery(task="maze-fo", min_return=1.0), tmp_path / "e")
    with pytest.raises(TrainingError, match="no episodes of task"):
        train(small_cfg("bc", task="maze-po"), store, DatasetQuery(task="maze-po"), tmp_path / "e")
    with pytest.raises(TrainingError, match="no checkpoint"):
        load_agent(tmp_path / "missing")
    (tmp_path / "notlm").mkdir()
    with pytest.raises(TrainingError):
        train(
            small_cfg("bc", model=str(tmp_path / "notlm")),
            store,
            DatasetQuery(task="maze-fo"),
            tmp_path / "e",
        )
    from transformers import T5Config

    T5Config(d_model=8, num_layers=1, num_heads=1, d_kv=8, d_ff=8, vocab_size=10).save_pretrained(
        tmp_path / "t5"
    )
    with pytest.raises(TrainingError, match="not"):
        train(
            small_cfg("bc", model=str(tmp_path / "t5")),
            store,
            DatasetQuery(task="maze-fo"),
            tmp_path / "e",
        )
    with pytest.raises(TrainingError, match="nothing to resume"):
        train(small_cfg("bc"), store, DatasetQuery(task="maze-fo"), tmp_path / "fresh", resume=True)


@pytest.mark.slow
def test_corrupt_checkpoints_raise_training_error(store, tmp_path):
    import shutil

    from training.agents.checkpoint_agent import load_agent
    from training.offline.loop import train

    train(small_cfg("mc", max_steps=1), store, DatasetQuery(task="maze-fo"), tmp_path / "ok")
    good = tmp_path / "ok" / "checkpoint"
    for name, junk in (
        ("lmrl.json", "{not json"),
        ("model.safetensors", "garbage"),
        ("heads.safetensors", "garbage"),
        ("trainer_state.pt", "garbage"),
    ):
        bad = tmp_path / f"bad-{name}"
        shutil.copytree(good, bad)
        (bad / name).write_text(junk)
        with pytest.raises(TrainingError):
            if name == "trainer_state.pt":
                from training.model.checkpoint import load_trainer_state

                load_trainer_state(bad)
            else:
                load_agent(bad)
    meta = json.loads((good / "lmrl.json").read_text())
    for field, value in (
        ("lr", "fast"),
        ("max_steps", 2.5),
        ("progress", "yes"),
        ("algo", 3),
        ("task_options", "abc"),
        ("n_embd", None),
    ):
        bad = tmp_path / f"bad-type-{field}"
        shutil.copytree(good, bad)
        (bad / "lmrl.json").write_text(
            json.dumps({**meta, "config": {**meta["config"], field: value}})
        )
        with pytest.raises(TrainingError, match="lmrl.json is corrupt"):
            load_agent(bad)


@pytest.mark.slow
def test_any_local_hf_causal_lm_trains_and_gets_a_pad_token(store, tmp_path):
    from transformers import PreTrainedTokenizerFast

    from training.model.checkpoint import load_checkpoint
    from training.model.policy_value import tiny_lm
    from training.model.tokenization import build_tokenizer
    from training.offline.loop import train

    tok = build_tokenizer(["move up\n", "The goal is at position 8, 6.\n"], vocab_size=280)
    no_pad = PreTrainedTokenizerFast(
        tokenizer_object=tok.backend_tokenizer, eos_token="<|endoftext|>"
    )
    no_pad.save_pretrained(tmp_path / "hf")
    tiny_lm(len(no_pad), 256, n_layer=1, n_embd=16, n_head=2).save_pretrained(tmp_path / "hf")
    res = train(
        small_cfg("bc", model=str(tmp_path / "hf")),
        store,
        DatasetQuery(task="maze-fo"),
        tmp_path / "r",
    )
    model, tok2, _, _ = load_checkpoint(res["checkpoint"])
    assert tok2.pad_token == "<|pad|>" or tok2.pad_token_id is not None
    assert model.lm.get_input_embeddings().weight.shape[0] == len(tok2)


@pytest.mark.slow
@pytest.mark.parametrize("pi_beta", ["shared", "frozen"])
def test_kv_cached_sampling_matches_full_recompute(store, tmp_path, pi_beta):
    from training.decoding.decoder import Decoder
    from training.model.checkpoint import load_checkpoint
    from training.model.tokenization import encode
    from training.offline.loop import train

    train(
        small_cfg("ilql", max_steps=2, pi_beta=pi_beta),
        store,
        DatasetQuery(task="maze-fo"),
        tmp_path / "r",
    )
    model, tok, cfg, _ = load_checkpoint(tmp_path / "r")
    dec = Decoder(model, tok, cfg, decoding="greedy", beta=4.0, max_new_tokens=6)
    prompt = envs.make("maze-fo").reset(seed=1)
    got = dec.sample(prompt, torch.Generator().manual_seed(0))
    ids = encode(tok, prompt)
    out: list[int] = []
    for _ in range(6):  # the same greedy rule without caches
        x = torch.tensor([ids + out])
        guided, _, _ = dec._forward(x, torch.ones_like(x))
        out.append(int(torch.argmax(guided[0, -1])))
        if out[-1] == dec.eos:
            break
    assert got == tok.decode(out).removesuffix("\n") + "\n"


@pytest.mark.slow
def test_a_textnav_value_checkpoint_is_evaluated_with_the_reranker(tmp_path):
    """Text-Nav's spec says rerank: a value-based checkpoint picks among the legal commands."""
    from data.generate import generate
    from data.store import Store
    from training.agents.checkpoint_agent import load_agent
    from training.evaluation.evaluate import evaluate
    from training.offline.loop import train

    store = Store(tmp_path / "tn.db")
    generate(store, "textnav-fo", envs.make_policy("textnav-fo", "behaviour"), 6, seed=0)
    cfg = small_cfg("ilql", task="textnav-fo", max_length=512)
    assert cfg.decoding == "rerank"
    train(cfg, store, DatasetQuery(task="textnav-fo"), tmp_path / "r")
    agent = load_agent(tmp_path / "r")
    assert agent.decoder.decoding == "rerank"
    task = envs.make("textnav-fo")
    task.reset(1)
    agent.reset(task, 1)
    for _ in range(3):  # every action is one of the commands legal at that moment
        legal = task.legal_actions()
        action = agent.act(task.history())
        assert legal and action in legal
        if task.step(action).terminated:
            break
    res = evaluate(agent, "textnav-fo", 1)
    assert res["method"] == "sampled" and res["episodes"] == 1
    store.close()
