"""Training throughput with the ``tiny`` model on maze-fo behaviour data (CPU or GPU).

Prints ``name value unit`` lines: tokens/s of our BC and ILQL loops (``training.offline.loop.train``, with
collation, accelerate, clipping and logging) and of a bare torch loop doing the same BC forward /
backward / AdamW step on one fixed batch, plus the step-time ratios the issue targets
(BC loop <= 1.10x bare; ILQL step <= 1.6x BC step). Measurements alternate and the median of
``--repeats`` is reported, so other load on the machine affects both sides alike.

    .venv/bin/python bench/bench_training.py [--steps 60] [--repeats 3] [--episodes 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def bare_loop(model_cfg, batch, steps: int, lr: float, clip: float) -> float:
    """Tokens/s of forward + masked CE + backward + clip + AdamW on one batch."""
    import torch

    from training.losses import bc_loss
    from training.model.policy_value import tiny_lm

    torch.manual_seed(0)
    lm = tiny_lm(**model_cfg)
    opt = torch.optim.AdamW(lm.parameters(), lr=lr, betas=(0.9, 0.95), eps=1e-8)
    ids, attn, mask = batch["input_ids"], batch["attention_mask"], batch["action_mask"]
    n_tok = int(attn.sum())
    lm.train()
    for i in range(steps + 3):
        if i == 3:
            t0 = time.perf_counter()
        loss = bc_loss(lm(input_ids=ids, attention_mask=attn).logits, ids, mask)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(lm.parameters(), clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return n_tok * steps / (time.perf_counter() - t0)


def our_loop(algo: str, store, steps: int, out: Path, batch_size: int) -> float:
    from data.datasets import DatasetQuery
    from training.config import TrainConfig, resolve
    from training.offline.loop import train

    cfg = TrainConfig(
        algo=algo,
        task="maze-fo",
        max_steps=steps,
        batch_size=batch_size,
        eval_episodes=0,
        progress=False,
        log_every=steps,
        dedupe=False,
    )
    cfg = resolve(cfg, {"batch_size", "max_steps", "dedupe", "truncation"})  # same data for all
    train(cfg, store, DatasetQuery(task="maze-fo"), out)
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return [r for r in rows if r["kind"] == "train"][-1]["tokens_per_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()

    import transformers

    transformers.logging.set_verbosity_error()
    from training.config import TrainConfig
    from training.offline.prepare import prepare
    from training.offline.toy import maze_store

    tmp = Path(tempfile.mkdtemp(prefix="bench-training-"))
    store = maze_store(tmp / "maze.db", episodes=args.episodes)
    from data.datasets import DatasetQuery

    cfg = TrainConfig(algo="bc", task="maze-fo")
    from training.config import resolve

    resolve(cfg)
    prep = prepare(cfg, store, DatasetQuery(task="maze-fo"))
    lm_cfg = prep.model.lm.config
    model_cfg = dict(
        vocab_size=lm_cfg.vocab_size,
        n_positions=lm_cfg.n_positions,
        n_layer=lm_cfg.n_layer,
        n_embd=lm_cfg.n_embd,
        n_head=lm_cfg.n_head,
        pad_id=prep.tokenizer.pad_token_id,
        eos_id=prep.tokenizer.eos_token_id,
    )
    batch = prep.dataset.collate(range(args.batch_size))
    bare, bc, ilql = [], [], []
    for r in range(args.repeats):
        bare.append(bare_loop(model_cfg, batch, args.steps, cfg.lr, cfg.grad_clip))
        bc.append(our_loop("bc", store, args.steps, tmp / f"bc{r}", args.batch_size))
        ilql.append(our_loop("ilql", store, args.steps, tmp / f"ilql{r}", args.batch_size))
    bare_t, bc_t, ilql_t = (statistics.median(x) for x in (bare, bc, ilql))
    print(f"bare_bc_tokens_per_s {bare_t:.0f} tokens/s")
    print(f"bc_tokens_per_s {bc_t:.0f} tokens/s")
    print(f"ilql_tokens_per_s {ilql_t:.0f} tokens/s")
    print(f"bc_step_over_bare {bare_t / bc_t:.3f} x")
    print(f"ilql_step_over_bc {bc_t / ilql_t:.3f} x")


if __name__ == "__main__":
    main()
