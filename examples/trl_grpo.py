"""GRPO (TRL 1.16) on an lmrl-tui task, one turn per sample, its rollouts kept in our store.

    python examples/trl_grpo.py --task maze-fo --steps 3 --db runs.db        # a tiny model, CPU
    python examples/trl_grpo.py --task wordle --model Qwen/Qwen3-0.6B --vllm # a real one, GPU

Each row is the conversation before one turn of a scripted episode (``envs.adapters.trl_env``);
the model writes that turn and is rewarded with the return from it on, the scripted policy playing
the rest of the episode. (TRL 1.16 plays whole episodes only through tool calls,
``environment_factory``: ``TaskToolEnv``, for a model that calls tools; see docs/trainers.md.)
With ``--db`` every scored episode goes to the store as an ``agent`` episode of kind ``hf`` (its
meta says which turn was the model's, the reward and the GRPO step; its steps' info ``by`` says
who played each turn), so ``lmrl browse``, datasets and exports see them.

``--model tiny`` (the default) builds a 2-layer GPT-2 from a config, and a tokenizer whose words
are the maze's four moves (every other character is unknown): no download, and a random model's
samples are moves that differ, so GRPO's advantages are not all zero. Needs the train and
trainers extras: ``pip install -e '.[train,trainers]'``.
"""

from __future__ import annotations

import argparse
import string
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)
MAZE_MOVES = ("move up", "move down", "move left", "move right")


def tiny_model(folder: Path, words: tuple[str, ...] = MAZE_MOVES, positions: int = 1024) -> str:
    """A random 2-layer GPT-2 and a tokenizer with a chat template, saved in ``folder``: the
    tokens are ``words`` (whole) and, when ``words`` is empty, every printable character."""
    import re

    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    pieces = list(words) if words else list(string.printable)
    vocab = {t: i for i, t in enumerate(["<unk>", "<eos>", *pieces])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    pattern = "|".join(re.escape(w) for w in words) + "|[\\s\\S]" if words else "[\\s\\S]"
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        eos_token="<eos>",
        pad_token="<eos>",
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.padding_side = "left"
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    eos = vocab["<eos>"]
    config = GPT2Config(
        vocab_size=len(vocab),
        n_positions=positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=eos,
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    return str(folder)


def store_episodes(db: str, scored: list[Any], model: str, step_of: list[int]) -> list[int]:
    """Write the scored episodes to the store at ``db``; returns their ids."""
    import envs
    from data.recorder import BatchRecorder
    from data.records import Who, episode_record, partner_identity
    from data.store import Store
    from envs.core.episode import episode_success
    from envs.players.agents import episode_source

    store = Store(db)
    try:
        with BatchRecorder(store) as rec:
            for ep, step in zip(scored, step_of, strict=True):
                task = envs.make(ep.task_id, **ep.options)
                partner = partner_identity(None, task.spec)
                task.close()
                last = ep.transitions[-1].info if ep.transitions else None
                rec.add(
                    episode_record(
                        ep.task_id,
                        task.spec.version,
                        ep.seed,
                        ep.first_observation,
                        ep.transitions,
                        Who("hf", model),
                        partner=partner,
                        source=episode_source("hf", partner.kind if partner else None),
                        options=ep.options,
                        success=episode_success(task.spec, last, ep.total_return),
                        meta={
                            "trainer": "trl-grpo",
                            "model_turn": ep.model_turn,
                            "scripted": ep.policy,
                            "reward": ep.reward,
                            "grpo_step": step,
                        },
                    )
                )
            ids = rec.flush()
        return ids
    finally:
        store.close()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--task", default="maze-fo")
    p.add_argument("--model", default="tiny", help="tiny, a local folder or a hub id")
    p.add_argument("--out", default="grpo-out", help="the trainer's output folder")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--seeds", type=int, default=4, help="episodes the rows come from")
    p.add_argument("--turns", type=int, default=2, help="rows per episode (its first turns)")
    p.add_argument("--generations", type=int, default=4, help="samples per prompt")
    p.add_argument("--completion-tokens", type=int, default=4)
    p.add_argument("--policy", default="behaviour", help="the scripted policy around the turn")
    p.add_argument("--db", default=None, help="keep every scored episode in this store")
    p.add_argument("--vllm", action="store_true", help="generate with vLLM (colocated, GPU)")
    args = p.parse_args(argv)

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from envs.adapters.trl_env import TurnReward, turn_rows

    out = Path(args.out)
    model = tiny_model(out / "tiny-model") if args.model == "tiny" else args.model
    rows = turn_rows(args.task, range(args.seeds), policy=args.policy, turns=args.turns)
    reward = TurnReward()
    config = GRPOConfig(
        output_dir=str(out),
        max_steps=args.steps,
        per_device_train_batch_size=args.generations,
        num_generations=args.generations,
        max_completion_length=args.completion_tokens,
        learning_rate=1e-3 if args.model == "tiny" else 1e-6,
        beta=0.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=not args.vllm,
        use_vllm=args.vllm,
        vllm_mode="colocate",
        bf16=args.vllm,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model, reward_funcs=[reward], args=config, train_dataset=Dataset.from_list(rows)
    )
    steps: list[int] = []
    seen = 0

    def note_steps() -> None:
        nonlocal seen
        steps.extend([trainer.state.global_step] * (len(reward.episodes) - seen))
        seen = len(reward.episodes)

    from transformers import TrainerCallback

    class NoteSteps(TrainerCallback):  # which GRPO step scored each episode
        def on_step_end(self, *a: Any, **k: Any) -> None:
            note_steps()

    trainer.add_callback(NoteSteps())
    trainer.train()
    note_steps()
    stored = store_episodes(args.db, reward.episodes, str(args.model), steps) if args.db else []
    result = {
        "steps": trainer.state.global_step,
        "log": trainer.state.log_history,
        "episodes": reward.episodes,
        "stored": stored,
        "model": trainer.model,
    }
    print(f"{trainer.state.global_step} GRPO steps; {len(reward.episodes)} episodes scored", end="")
    print(f", {len(stored)} stored in {args.db}" if args.db else "")
    return result


if __name__ == "__main__":
    main()
