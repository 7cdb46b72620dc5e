"""Packed sequences (``--pack``, issue #49): a batch's windows side by side in rows of the context
length give the same losses and gradients as one window per row, for BC, MC, ILQL and Q-SFT on a
tiny GPT-2 built from a config (block-diagonal causal attention, positions restarting per window,
targets never crossing a window's end)."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")

from training.config import TrainConfig  # noqa: E402
from training.datasets.packing import first_fit, pack_batch, padding_fraction, row_width  # noqa: E402
from training.datasets.windows import PackedDataset, episode_windows  # noqa: E402
from training.model.policy_value import PolicyValueModel, block_causal_mask, tiny_lm  # noqa: E402
from training.offline import loss_fn  # noqa: E402

VOCAB = 40


def _enc(text: str) -> list[int]:
    return [2 + ord(c) % (VOCAB - 2) for c in text]


def _dataset(mode: str) -> PackedDataset:
    """Twelve episodes of 1-4 steps, some not ended (bootstrapped), with varied lengths."""
    rng = random.Random(7)
    windows = []
    for ep in range(12):
        steps = rng.randint(1, 4)
        pairs = [
            (
                "".join(rng.choice("abcq") for _ in range(rng.randint(1, 4))) + "\n",
                "".join(rng.choice("xyz") for _ in range(rng.randint(0, 6))) + "\n",
                rng.choice([0.0, -1.0, 1.0]),
            )
            for _ in range(steps)
        ]
        windows += episode_windows("start" * rng.randint(1, 2) + "\n", pairs, ep % 3 != 0, mode, ep)
    return PackedDataset(windows, _enc, 0, gamma=0.9, max_length=40)


def _model(algo: str, **kw) -> PolicyValueModel:
    torch.manual_seed(3)
    model = PolicyValueModel(tiny_lm(VOCAB, 64, 2, 32, 4, 0.0, 0, 1), algo, head_bias=0.2, **kw)
    with torch.no_grad():  # heads that start at zero would hide a wrong gradient through them
        for head in [*model.q_heads, *([model.v_head] if model.v_head is not None else [])]:
            head.fc2.weight.normal_(0.0, 0.05)
    model.update_targets(0.5)  # the targets differ from the online heads
    return model


def _loss_and_grads(model, batch, cfg):
    model.zero_grad(set_to_none=True)
    loss, stats = loss_fn(cfg.algo)(model, batch, cfg)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return float(loss.detach()), stats, grads


CASES = [
    ("bc", "history", {}, {}),
    ("mc", "episode", {"cql_weight": 0.1}, {}),
    ("mc", "history", {"bisim_weight": 0.5}, {}),
    ("ilql", "history", {"cql_weight": 0.1, "bisim_weight": 0.5}, {}),
    ("ilql", "episode", {}, {"target": "full"}),
    ("ilql", "step", {}, {"pi_beta": "frozen", "target": "full"}),
    ("qsft", "history", {"qsft_target": "ratio", "qsft_support": 0.01}, {}),
]


@pytest.mark.parametrize(("algo", "mode", "opts", "model_kw"), CASES)
def test_packed_batches_give_the_unpacked_losses_and_gradients(algo, mode, opts, model_kw):
    ds = _dataset(mode)
    cfg = TrainConfig(algo=algo, **opts)
    idx = list(range(min(len(ds), 16)))
    plain = ds.collate(idx)
    packed = pack_batch(plain, 48, ds.pad_id)
    assert packed["input_ids"].shape[0] < len(idx)  # several windows share a row
    model = _model(algo, **model_kw)
    loss_u, stats_u, grads_u = _loss_and_grads(model, plain, cfg)
    loss_p, stats_p, grads_p = _loss_and_grads(model, packed, cfg)
    assert loss_p == pytest.approx(loss_u, rel=1e-5, abs=1e-6)
    for k, v in stats_u.items():
        assert stats_p[k] == pytest.approx(v, rel=1e-4, abs=1e-5), k
    assert grads_u.keys() == grads_p.keys()
    for name, g in grads_u.items():
        torch.testing.assert_close(grads_p[name], g, rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.parametrize("algo", ["bc", "ilql"])
def test_a_llama_type_model_packs_too(algo):
    """SmolLM2's architecture (Llama: rotary positions from the position ids, grouped-query
    attention), tiny and built from a config: the packed losses and gradients are the unpacked."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(5)
    lm = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
            pad_token_id=0,
        )
    )
    model = PolicyValueModel(lm, algo, head_bias=0.2)
    ds = _dataset("history")
    cfg = TrainConfig(algo=algo)
    plain = ds.collate(list(range(12)))
    loss_u, _, grads_u = _loss_and_grads(model, plain, cfg)
    loss_p, _, grads_p = _loss_and_grads(model, pack_batch(plain, 48, ds.pad_id), cfg)
    assert loss_p == pytest.approx(loss_u, rel=1e-5, abs=1e-6)
    for name, g in grads_u.items():
        torch.testing.assert_close(grads_p[name], g, rtol=1e-4, atol=1e-6, msg=name)


def test_a_different_packing_would_show_in_the_loss():
    """The comparison can fail: attention across windows (a causal mask without the blocks)
    changes the loss."""
    ds = _dataset("history")
    cfg = TrainConfig(algo="bc")
    plain = ds.collate(list(range(16)))
    packed = pack_batch(plain, 48, ds.pad_id)
    model = _model("bc")
    loss_u = float(loss_fn("bc")(model, plain, cfg)[0])
    leaky = dict(packed)
    leaky["segments"] = (packed["segments"] > 0).long()  # one window per row: attends across
    assert float(loss_fn("bc")(model, leaky, cfg)[0]) != pytest.approx(loss_u, rel=1e-4)


def test_the_layout_masks_and_position_ids():
    rows, offsets, n = first_fit([5, 4, 3, 2, 6], 8)  # decreasing: 6, 5, 4, then 3 and 2 fill in
    assert (rows, offsets, n) == ([1, 2, 1, 0, 0], [0, 0, 5, 6, 0], 3)
    assert row_width([30, 30, 30], 64) == 30 and row_width([30, 30, 4], 64) == 64
    ds = _dataset("history")
    plain = ds.collate([0, 1, 2])
    packed = pack_batch(plain, 64, ds.pad_id)
    lens = plain["attention_mask"].sum(1).tolist()
    # the fewest slots: here two rows as wide as the longest window, not one of 64
    assert packed["input_ids"].numel() < 64 and packed["input_ids"].shape[1] == max(lens)
    for b, n in enumerate(lens):
        row, at = (packed["segments"] == b + 1).nonzero(as_tuple=True)
        r, start = int(row[0]), int(at[0])
        m = block_causal_mask(packed["segments"])[r, 0]
        assert row.tolist() == [r] * n and at.tolist() == list(range(start, start + n))
        assert packed["position_ids"][r, at].tolist() == list(range(n))  # restart at 0
        assert packed["input_ids"][r, at].tolist() == plain["input_ids"][b, :n].tolist()
        # no target crosses the window's end: its last position is no action
        assert start + n - 1 >= packed["action_mask"].shape[1] or not bool(
            packed["action_mask"][r, start + n - 1]
        )
        # a token sees its own window up to itself and nothing of another window
        assert m[start + n - 1].nonzero().flatten().tolist() == at.tolist()
    free = (packed["segments"] == 0).nonzero()
    assert len(free) > 0
    r, pad = int(free[0, 0]), int(free[0, 1])
    sees = block_causal_mask(packed["segments"])[r, 0, pad].nonzero().flatten().tolist()
    assert sees == [pad]  # padding sees only itself
    assert int(packed["attention_mask"].sum()) == sum(lens)


def test_padding_fraction_counts_both_layouts():
    unpacked, packed = padding_fraction([10, 2, 2, 2], 4, 16)
    assert unpacked == pytest.approx(24 / 40) and packed == pytest.approx(0.0)


def test_bf16_autocast_of_a_packed_batch_stays_close_to_fp32():
    """``--precision bf16`` on the CPU: the block mask and the position ids work under autocast."""
    ds = _dataset("history")
    cfg = TrainConfig(algo="ilql")
    packed = pack_batch(ds.collate(list(range(16))), 48, ds.pad_id)
    model = _model("ilql")
    with torch.no_grad():
        full = float(loss_fn("ilql")(model, packed, cfg)[0])
        with torch.autocast("cpu", dtype=torch.bfloat16):
            half = float(loss_fn("ilql")(model, packed, cfg)[0])
    assert half == pytest.approx(full, rel=0.05)


@pytest.mark.slow
def test_the_training_loop_packed_logs_the_unpacked_losses(tmp_path):
    """``lmrl train ilql --pack`` through the loop: step for step the losses of the unpacked run
    (same data order, same initialisation), and again with the tokenised data kept in process."""
    import json

    import envs
    from data.datasets import DatasetQuery
    from data.generate import generate
    from data.store import Store
    from envs.players.agents import make_agent
    from training.config import resolve
    from training.offline.loop import train
    from training.offline.prepare import keep_datasets

    task = "twenty-questions"
    store = Store(str(tmp_path / "tq.db"))
    generate(store, task, make_agent(task, "behaviour", role=envs.spec(task).roles[0]), 6, seed=0)
    base = dict(algo="ilql", task=task, max_steps=3, batch_size=8, n_embd=32, n_head=2)
    base.update(vocab_size=300, eval_episodes=0, progress=False, log_every=1, lr=1e-3)
    base.update(windows="history")  # one window per turn, of many lengths: rows hold several

    def losses(out: str, **kw) -> list[float]:
        cfg = resolve(TrainConfig(**base, **kw), set(base) | set(kw))
        res = train(cfg, store, DatasetQuery(task=task), tmp_path / out)
        rows = [json.loads(x) for x in (tmp_path / out / "metrics.jsonl").read_text().splitlines()]
        assert res["steps"] == 3
        return [r["loss"] for r in rows if r["kind"] == "train"], res

    plain, res_plain = losses("plain")
    keep_datasets(True)
    try:
        packed, res_packed = losses("packed", pack=True)
        again, _ = losses("again", pack=True)  # the dataset from the cache
    finally:
        keep_datasets(False)
    assert packed == pytest.approx(plain, rel=1e-4) and again == pytest.approx(packed, rel=1e-6)
    assert res_packed["padding"] < res_plain["padding"]


def test_pack_with_an_utterance_model_is_refused_in_one_line(tmp_path):
    """``--pack`` with ``--model utterance`` was silently ignored (its batches are whole turns):
    now the command says so and trains nothing."""
    import subprocess
    import sys

    argv = [sys.executable, "-m", "lmrl_tui.cli", "--db", str(tmp_path / "s.db"), "train", "mc"]
    argv += ["--task", "guess-city", "--model", "utterance", "--pack", "--out", str(tmp_path / "r")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--pack" in done.stderr and "drop --pack" in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "r").exists()
