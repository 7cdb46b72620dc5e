"""The resolved training configuration: one dataclass for every offline algorithm.

Defaults follow LMRL-Gym (algorithms.md §7) where they matter for parity, with the maze-fo
calibration of algorithms.md §13 applied by :func:`resolve` (``turn`` discounting, larger polyak α,
reranker decoding). Torch-free, so the CLI can import it cheaply.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import envs

ALGOS = ("bc", "pbc", "mc", "ilql", "qsft")
ALGO_ALIASES = {"%bc": "pbc", "filtered_bc": "pbc", "percent_bc": "pbc", "mc_returns": "mc", "q-sft": "qsft"}


def task_fact(task_id: str, name: str, default: str) -> str:
    """A fact from the task's spec (``window``, ``decoding``), or ``default`` for a task id that is
    not registered (a toy task of the tests, an empty config)."""
    try:
        return getattr(envs.spec(task_id), name)
    except envs.UnknownTask:
        return default


@dataclass
class TrainConfig:
    """Everything a run needs besides the data; saved with every checkpoint."""

    algo: str = "bc"
    task: str = ""
    task_options: dict[str, Any] = field(default_factory=dict)
    """Task options (``--option k=v``): the data is the episodes logged with them, and evaluation
    and watching play the task with them."""
    model: str = "tiny"
    seed: int = 0
    # tiny model / tokenizer
    tokenizer: str = "bpe"  # bpe (byte-level BPE trained on the data) | byte (no merges)
    vocab_size: int = 512
    n_layer: int = 2
    n_embd: int = 64
    n_head: int = 4
    dropout: float = 0.0
    # data
    windows: str = "auto"  # auto | step | episode
    max_length: int = 256
    truncation: str = "terminal"  # terminal (LMRL) | drop (drop a timed-out last step, bootstrap)
    dedupe: bool = False  # one copy per distinct window (deterministic tasks; value learning)
    top_mode: str = "ties"  # %BC with --top-percent: ties (numpy percentile, >=) | count (exact)
    # optimisation
    lr: float = 1e-3
    weight_decay: float = 0.0
    batch_size: int = 32
    epochs: float = 1.0
    max_steps: int | None = None
    grad_clip: float = 1.0
    warmup_steps: int = 0
    lr_schedule: str = "constant"  # constant (after warmup) | linear (decay to 0 at the last step)
    # value learning
    gamma: float = 0.99
    discount_mode: str = "turn"  # token | turn
    tau: float = 0.7
    cql_weight: float = 0.0
    polyak_alpha: float = 0.005
    target: str = "heads_only"  # heads_only | full
    pi_beta: str = "shared"  # shared (LM head trained with bc_weight) | frozen (copy of the init)
    bc_weight: float = 1.0
    head_bias: float | None = None  # None: the mean return-to-go of the data (scaled)
    reward_scale: float = 1.0
    # Q-SFT
    qsft_reward: str = "return"  # return (normalised episode return on the last action) | step
    # decoding
    beta: float = 8.0
    decoding: str = "auto"  # auto | sample | greedy | rerank | rerank_sample
    logit_weight: float = 0.0
    # evaluation / logging
    eval_every: int = 0
    eval_episodes: int = 32
    save_every: int = 0
    log_every: int = 10
    progress: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        names = {f.name for f in fields(cls)}
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
}


# Task x algorithm recipes measured on this project's 2-core CPU (algorithms.md §13; see
# training/README.md): maze-fo is deterministic, so value learning trains on one copy of each
# distinct window, drops the timed-out step (bootstraps instead), and keeps the trunk for values
# (reranker decoding needs no π_β). γ 0.98 / τ 0.7 / lr 3e-4 avoid the maximisation-bias
# divergence seen with γ 0.99 / τ 0.95 on a shared trunk.
RECIPES: dict[tuple[str, str], dict[str, Any]] = {
    ("maze-fo", "mc"): {"dedupe": True, "truncation": "drop", "bc_weight": 0.0, "max_steps": 3000},
    ("maze-fo", "ilql"): {"dedupe": True, "truncation": "drop", "bc_weight": 0.0, "gamma": 0.98,
                          "tau": 0.7, "lr": 3e-4, "max_steps": 6000},
    ("maze-fo", "qsft"): {"dedupe": True, "max_steps": 3000},
}


def resolve(cfg: TrainConfig, explicit: set[str] | None = None) -> TrainConfig:
    """Fill task/algorithm defaults for every field the user did not set explicitly."""
    explicit = explicit or set()
    cfg.algo = canonical_algo(cfg.algo)
    for table in (TASK_DEFAULTS.get(cfg.task, {}), ALGO_DEFAULTS[cfg.algo],
                  RECIPES.get((cfg.task, cfg.algo), {})):
        for k, v in table.items():
            if k == "max_steps" and "epochs" in explicit:
                continue
            if k not in explicit:
                setattr(cfg, k, v)
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
        ("windows", ("step", "episode")),
        ("tokenizer", ("bpe", "byte")),
        ("decoding", ("sample", "greedy", "rerank", "rerank_sample")),
        ("qsft_reward", ("return", "step")),
        ("top_mode", ("ties", "count")),
        ("truncation", ("terminal", "drop")),
        ("lr_schedule", ("constant", "linear")),
    ):
        if getattr(cfg, name) not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}")
    return cfg
