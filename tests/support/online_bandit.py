"""The online tests' config on the toy bandit and the probability of its rewarded action."""

from __future__ import annotations

from training.online.config import OnlineConfig, resolve_online
from training.online.toy import BANDIT, BANDIT_ACTIONS, action_probs


def bandit_config(init, **kw) -> OnlineConfig:
    base = dict(
        algo="ppo",
        task=BANDIT,
        init=str(init),
        rounds=30,
        n_rollouts=64,
        rollout_batch=64,
        batch_size=32,
        lr=1e-3,
        kl_coef=0.0,
        eval_every=0,
        save_every=0,
        progress=False,
        max_new_tokens=4,
    )
    base.update(kw)
    return resolve_online(OnlineConfig(**base))


def p_a(trainer) -> float:
    return action_probs(trainer.inner.policy.lm, trainer.tok, "s\n", BANDIT_ACTIONS)[0]
