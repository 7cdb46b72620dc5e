"""GPU training benchmark: tokens/s and model FLOPs utilisation (MFU) of one BC, ILQL and PPO
update step on a GPT-2-small-sized model built from a config (no download), bf16 autocast.

    .venv/bin/python bench/bench_gpu.py                 # GPU: GPT-2 small, batch 16 x 512, ~2-3 min
    .venv/bin/python bench/bench_gpu.py --cpu-smoke     # CPU: a tiny model, a few steps (tests)

Prints ``name value unit`` lines. MFU = achieved model FLOPs / the GPU's peak bf16 dense FLOPs
(``--peak-tflops``, guessed from the device name). Model FLOPs per trained token are
6·N + 12·L·T·d (forward + backward, Kaplan/PaLM); ILQL adds its Q/V heads and the no-grad target
heads; PPO adds the two no-grad scoring forwards (policy and reference).
"""

from __future__ import annotations

import argparse
import time


def peak_flops(name: str, override: float | None) -> float | None:
    from training.model.speed import peak_flops as peak

    return peak(name, override)


def synthetic_batch(vocab: int, batch: int, length: int, seed: int = 0):
    """A PackedDataset batch of ``batch`` windows: 3/4 observation tokens, 1/4 action tokens."""
    import torch

    from training.datasets.windows import PackedDataset, Window

    g = torch.Generator().manual_seed(seed)
    table: dict[str, list[int]] = {}

    def enc(text: str) -> list[int]:
        if text not in table:
            n = length * 3 // 4 if text.startswith("o") else length - length * 3 // 4
            table[text] = torch.randint(2, vocab, (n,), generator=g).tolist()
        return table[text]

    wins = [
        Window([(f"o{i}", False, 0.0), (f"a{i}", True, float(i % 2))], True, None, i)
        for i in range(batch)
    ]
    ds = PackedDataset(wins, enc, 0, max_length=length)
    return ds.collate(list(range(batch)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny sizes on CPU (crash test)")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--d-model", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50304)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--length", type=int, default=512)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--peak-tflops", type=float, default=None)
    args = ap.parse_args()

    import torch

    from training.config import TrainConfig
    from training.model.policy_value import PolicyValueModel, tiny_lm
    from training.offline import loss_fn
    from training.online import ppo
    from training.online.update import PolicyWithValue

    if args.cpu_smoke:
        args.layers, args.d_model, args.heads, args.vocab = 2, 64, 4, 512
        args.batch, args.length, args.steps, args.warmup = 4, 64, 2, 1
    cuda = torch.cuda.is_available() and not args.cpu_smoke
    if not cuda:
        torch.set_num_threads(1)
    dev = torch.device("cuda" if cuda else "cpu")
    dtype = torch.bfloat16 if cuda else torch.float32
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
    peak = peak_flops(torch.cuda.get_device_name() if cuda else "cpu", args.peak_tflops)
    batch = {k: v.to(dev) for k, v in synthetic_batch(args.vocab, args.batch, args.length).items()}
    tokens = int(batch["attention_mask"].sum())
    L, d, T, V = args.layers, args.d_model, args.length, args.vocab

    def make(algo: str):
        torch.manual_seed(0)
        lm = tiny_lm(V, T + 64, L, d, args.heads, 0.0, 0, 1)
        return PolicyValueModel(lm, algo, head_bias=0.0).to(dev)

    def run(name: str, model, step_fn, extra_flops_per_token: float) -> None:
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-5, betas=(0.9, 0.95), fused=cuda)
        lm = model.policy.lm if hasattr(model, "policy") else model.lm
        n_lm = sum(p.numel() for p in lm.parameters())
        for i in range(args.warmup + args.steps):
            if i == args.warmup:
                if cuda:
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
            with torch.autocast(dev.type, dtype=dtype, enabled=cuda):
                loss = step_fn(model)
            if not torch.isfinite(loss):
                raise SystemExit(f"{name}: the loss is {float(loss)}")
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / args.steps
        flops = tokens * (6 * n_lm + 12 * L * T * d + extra_flops_per_token)
        print(f"{name}_tokens_per_s {tokens / dt:.0f} tokens/s")
        print(f"{name}_step_ms {dt * 1e3:.1f} ms")
        if peak:
            print(f"{name}_mfu {100 * flops / dt / peak:.1f} %")
        del opt

    cfg_bc = TrainConfig(algo="bc")
    run("bc", make("bc"), lambda m: loss_fn("bc")(m, batch, cfg_bc)[0], 0.0)
    cfg_ilql = TrainConfig(algo="ilql", tau=0.7, cql_weight=0.0)
    heads = 2 * (d * d + d * V) + (d * d + d)  # two Q heads (d->d->V) and V (d->d->1)
    # trained heads (6 FLOPs/param) + the no-grad target Q heads' forward (2 FLOPs/param)
    run(
        "ilql",
        make("ilql"),
        lambda m: loss_fn("ilql")(m, batch, cfg_ilql)[0],
        6 * heads + 2 * (2 * (d * d + d * V)),
    )

    pv = PolicyWithValue(make("ppo"), 0.0).to(dev)
    ref = make("ppo").lm.requires_grad_(False).eval()
    mask = batch["action_mask"]
    with torch.no_grad(), torch.autocast(dev.type, dtype=dtype, enabled=cuda):
        old_lp, old_v = pv(batch["input_ids"], batch["attention_mask"])
        ref(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    adv = ppo.whiten(
        torch.randn(mask.shape, generator=torch.Generator().manual_seed(1)).to(dev), mask
    )
    ret = old_v.float() + adv

    def ppo_step(m):
        lp, v = m(batch["input_ids"], batch["attention_mask"])
        lpg, _ = ppo.policy_loss(lp, old_lp.float(), adv, mask)
        lv, _ = ppo.value_loss(v, old_v.float(), ret, mask)
        return lpg + lv

    n_lm = sum(p.numel() for p in pv.policy.lm.parameters())
    run("ppo", pv, ppo_step, 2 * (2 * n_lm))  # + the two scoring forwards of each rollout token
    print(f"model_params {n_lm / 1e6:.1f} M")
    print(f"batch_tokens {tokens} tokens")


if __name__ == "__main__":
    main()
