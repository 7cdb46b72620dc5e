"""The online run's configuration (torch-free, so the CLI imports it cheaply): LMRL-Gym's PPO and
online filtered-BC defaults (docs/algorithms.md §5–§7) and per-task overrides."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from training.config import action_token_limit, task_fact
from training.errors import TrainingError
from training.settings import setting

ONLINE_ALGOS = ("ppo", "online-filtered-bc")


@dataclass
class OnlineConfig:
    """Everything an online run needs (LMRL-Gym defaults, docs/algorithms.md §7; task overrides in TASK_DEFAULTS).
    Each field's help line (``metadata["help"]``) is its ``lmrl train ppo --help`` text."""

    algo: str = setting("ppo", "algorithm: ppo or online-filtered-bc", flag=False)
    task: str = setting("", "task id the rollouts and evaluations play", flag=False)
    task_options: dict[str, Any] = setting(
        doc="task options (--option k=v) of the rollouts and evaluations; by default the init "
        "checkpoint's own when it was trained on the same task",
        factory=dict,
        flag=False,
    )
    init: str = setting("", "the starting policy: an lmrl checkpoint (e.g. BC)", flag=False)
    seed: int = setting(0, "random seed of the rollout seeds, sampling and minibatch order")
    rounds: int = setting(10, "rounds of (rollouts, update)")
    n_rollouts: int = setting(128, "episodes rolled out per round (over all processes)")
    rollout_batch: int = setting(32, "episodes played side by side (one batched generation)")
    max_new_tokens: int = setting(16, "longest utterance the policy generates, in tokens")
    temperature: float = setting(1.0, "sampling temperature of the rollouts")
    episode_max_steps: int | None = setting(
        None, "cut rollout episodes after this many steps (none: the task's own horizon)"
    )
    windows: str = setting("auto", "update windows: step, episode or auto (the task's LMRL choice)")
    max_length: int = setting(256, "longest window (and rollout prompt) in tokens")
    reward_scale: float = setting(1.0, "multiply rewards by this before the update")
    lr: float = setting(1e-4, "learning rate (AdamW)")
    batch_size: int = setting(32, "windows per optimiser step (over all processes)")
    epochs: int = setting(1, "passes over each round's data")
    grad_clip: float = setting(1.0, "clip the gradient norm to this (0: no clipping)")
    shuffle: bool = setting(True, "shuffle the minibatches (false: window order, for parity tests)")
    # PPO
    gamma: float = setting(1.0, "PPO: discount factor")
    lam: float = setting(0.95, "PPO: GAE λ")
    clip: float = setting(0.2, "PPO: policy ratio clip ε")
    value_clip: float = setting(0.2, "PPO: value clip range")
    vf_coef: float = setting(1.0, "PPO: weight of the value loss")
    value_bias: float = setting(0.0, "PPO: initial bias of the value head")
    value_lr_mult: float = setting(1.0, "PPO: the value head's learning rate is lr × this")
    value_warmup: int = setting(
        0, "PPO: first rounds that fit only the value head (the policy does not move)"
    )
    kl_coef: float = setting(0.001, "PPO: (initial) KL penalty coefficient to the initial policy")
    kl_target: float | None = setting(
        None, "PPO: adaptive KL target (with --kl-horizon; none: fixed coefficient)"
    )
    kl_horizon: float | None = setting(
        None, "PPO: adaptive KL horizon in episodes (with --kl-target)"
    )
    credit: str = setting(
        "token", "PPO: credit assignment, token (a value per token) or utterance (one per turn)"
    )
    whiten: bool = setting(True, "PPO: whiten the advantages (global statistics)")
    bc_weight: float = setting(0.0, "PPO: weight of a BC term on stored episodes (0: none)")
    bc_source: str = setting("scripted", "PPO: episode source of the BC term's data")
    # online filtered BC
    keep: float = setting(
        0.3, "online filtered BC: fraction of the round's episodes kept, by return"
    )
    filter: str = setting(
        "count",
        "online filtered BC: count (LMRL: exactly int(n*keep)) or percent (ties kept, ArCHer)",
    )
    accumulate: bool = setting(
        False, "online filtered BC: keep every round's episodes in the pool (ArCHer-style)"
    )
    # evaluation / logging
    eval_every: int = setting(
        1, "evaluate against the task before the first round and every N rounds (0: never)"
    )
    eval_episodes: int = setting(32, "episodes of each evaluation")
    eval_seed: int = setting(
        0,
        "first episode seed of the in-training evaluations (for --keep-best "
        "choose seeds that the final evaluation does not play, e.g. 500000)",
    )
    keep_best: bool = setting(
        False,
        "also keep the checkpoint of the best in-training evaluation (mean "
        "return; the starting policy counts, as round 0) in OUT/checkpoint-best",
    )
    save_every: int = setting(1, "save a checkpoint every N rounds (and after the last)")
    progress: bool = setting(
        True, "draw a progress bar on stderr (--no-progress: none)", flag=False
    )
    extra: dict[str, Any] = setting(
        doc="free-form settings saved with the run (experiments)", factory=dict, flag=False
    )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OnlineConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


TASK_DEFAULTS: dict[str, dict[str, Any]] = {
    # LMRL maze: γ 0.99, c_v 0.5, value bias −1, no BC term; rewards scaled like offline maze.
    # The tasks that bound their actions generate at most that many tokens (resolve_online).
    "maze-fo": {
        "gamma": 0.99,
        "vf_coef": 0.5,
        "value_bias": -1.0,
        "reward_scale": 0.1,
        "max_length": 128,
    },
    "maze-po": {
        "gamma": 0.99,
        "vf_coef": 0.5,
        "value_bias": -1.0,
        "reward_scale": 0.1,
        "max_length": 512,
    },
    "chess": {"gamma": 0.99},
    "endgames": {"gamma": 0.99},
    # Wordle (measured on words=small from a tiny BC policy): returns of -6..0 scaled to O(0.1) so
    # the value loss does not swamp the shared trunk; the value head warmed up and on its own
    # faster lr; a small lr with more games a round (at 1e-4, even imitating its own games at
    # random degraded the policy: Adam turns the noise into full-size steps).
    "wordle": {
        "max_new_tokens": 12,
        "lr": 2e-5,
        "n_rollouts": 256,
        "reward_scale": 0.1,
        "value_bias": -0.3,
        "value_lr_mult": 30.0,
        "value_warmup": 3,
    },
}
TASK_DEFAULTS["wordle-lmrl"] = TASK_DEFAULTS[
    "wordle"
]  # the same guesses and returns, LMRL's feedback rule


def resolve_online(cfg: OnlineConfig, explicit: set[str] | None = None) -> OnlineConfig:
    """Apply task defaults to fields the user did not set; validate choices."""
    explicit = explicit or set()
    if cfg.algo not in ONLINE_ALGOS:
        raise TrainingError(
            f"unknown online algorithm {cfg.algo!r}; choose ppo or online-filtered-bc"
        )
    for k, v in TASK_DEFAULTS.get(cfg.task, {}).items():
        if k not in explicit:
            setattr(cfg, k, v)
    if "max_new_tokens" not in explicit and "max_new_tokens" not in TASK_DEFAULTS.get(cfg.task, {}):
        # a chess move's 14 bytes (e x d 8 = Q +) took 10 BPE tokens: a bound of 8 forbade it
        cfg.max_new_tokens = action_token_limit(cfg.task, cfg.max_new_tokens)
    if cfg.windows == "auto":
        cfg.windows = task_fact(cfg.task, "window", "episode")
    checks = (
        ("credit", ("token", "utterance")),
        ("filter", ("count", "percent")),
        ("windows", ("step", "episode", "history")),
    )
    for name, allowed in checks:
        if getattr(cfg, name) not in allowed:
            raise TrainingError(f"{name} must be one of {', '.join(allowed)}")
    if cfg.rounds < 1 or cfg.n_rollouts < 1 or cfg.rollout_batch < 1 or cfg.batch_size < 1:
        raise TrainingError("rounds, n-rollouts, rollout-batch and batch-size must be at least 1")
    if not 0 < cfg.keep <= 1:
        raise TrainingError("--keep must be in (0, 1]")
    if cfg.keep_best and (cfg.eval_every < 1 or cfg.eval_episodes < 1):
        raise TrainingError(
            "--keep-best chooses by the in-training evaluations: give --eval-every and "
            "--eval-episodes of at least 1"
        )
    return cfg
