"""The online run's configuration (torch-free, so the CLI imports it cheaply): LMRL-Gym's PPO and
online filtered-BC defaults (algorithms.md §5-§7) and per-task overrides."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from training.config import task_fact
from training.errors import TrainingError

ONLINE_ALGOS = ("ppo", "online-filtered-bc")


@dataclass
class OnlineConfig:
    """Everything an online run needs (LMRL-Gym defaults, §7; task overrides in TASK_DEFAULTS)."""

    algo: str = "ppo"
    task: str = ""
    task_options: dict[str, Any] = field(default_factory=dict)
    """Task options (``--option k=v``) of the rollouts and evaluations; by default the init
    checkpoint's own when it was trained on the same task."""
    init: str = ""
    seed: int = 0
    rounds: int = 10
    n_rollouts: int = 128
    rollout_batch: int = 32
    max_new_tokens: int = 16
    temperature: float = 1.0
    episode_max_steps: int | None = None
    windows: str = "auto"
    max_length: int = 256
    reward_scale: float = 1.0
    lr: float = 1e-4
    batch_size: int = 32
    epochs: int = 1
    grad_clip: float = 1.0
    shuffle: bool = True  # False: minibatches in window order (parity tests)
    # PPO
    gamma: float = 1.0
    lam: float = 0.95
    clip: float = 0.2
    value_clip: float = 0.2
    vf_coef: float = 1.0
    value_bias: float = 0.0
    value_lr_mult: float = 1.0  # the value head's learning rate is lr × this
    value_warmup: int = 0  # first rounds that fit only the value head (the policy does not move)
    kl_coef: float = 0.001
    kl_target: float | None = None
    kl_horizon: float | None = None
    credit: str = "token"
    whiten: bool = True
    bc_weight: float = 0.0
    bc_source: str = "scripted"
    # online filtered BC
    keep: float = 0.3
    filter: str = "count"  # count (LMRL: exactly int(n*keep)) | percent (ties kept, ArCHer)
    accumulate: bool = False
    # evaluation / logging
    eval_every: int = 1
    eval_episodes: int = 32
    save_every: int = 1
    progress: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OnlineConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


TASK_DEFAULTS: dict[str, dict[str, Any]] = {
    # LMRL maze: γ 0.99, c_v 0.5, value bias −1, no BC term; rewards scaled like offline maze.
    "maze-fo": {"gamma": 0.99, "vf_coef": 0.5, "value_bias": -1.0, "reward_scale": 0.1,
                "max_new_tokens": 8, "max_length": 128},
    "maze-po": {"gamma": 0.99, "vf_coef": 0.5, "value_bias": -1.0, "reward_scale": 0.1,
                "max_new_tokens": 8, "max_length": 512},
    "chess": {"gamma": 0.99, "max_new_tokens": 8},
    "endgames": {"gamma": 0.99, "max_new_tokens": 8},
    # Wordle (measured on words=small from a tiny BC policy): returns of -6..0 scaled to O(0.1) so
    # the value loss does not swamp the shared trunk; the value head warmed up and on its own
    # faster lr; a small lr with more games a round (at 1e-4, even imitating its own games at
    # random degraded the policy: Adam turns the noise into full-size steps).
    "wordle": {"max_new_tokens": 12, "lr": 2e-5, "n_rollouts": 256, "reward_scale": 0.1,
               "value_bias": -0.3, "value_lr_mult": 30.0, "value_warmup": 3},
}


def resolve_online(cfg: OnlineConfig, explicit: set[str] | None = None) -> OnlineConfig:
    """Apply task defaults to fields the user did not set; validate choices."""
    explicit = explicit or set()
    if cfg.algo not in ONLINE_ALGOS:
        raise TrainingError(f"unknown online algorithm {cfg.algo!r}; choose ppo or online-filtered-bc")
    for k, v in TASK_DEFAULTS.get(cfg.task, {}).items():
        if k not in explicit:
            setattr(cfg, k, v)
    if cfg.windows == "auto":
        cfg.windows = task_fact(cfg.task, "window", "episode")
    checks = (("credit", ("token", "utterance")), ("filter", ("count", "percent")),
              ("windows", ("step", "episode")))
    for name, allowed in checks:
        if getattr(cfg, name) not in allowed:
            raise TrainingError(f"{name} must be one of {', '.join(allowed)}")
    if cfg.rounds < 1 or cfg.n_rollouts < 1 or cfg.rollout_batch < 1 or cfg.batch_size < 1:
        raise TrainingError("rounds, n-rollouts, rollout-batch and batch-size must be at least 1")
    if not 0 < cfg.keep <= 1:
        raise TrainingError("--keep must be in (0, 1]")
    return cfg
