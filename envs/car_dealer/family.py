"""Car Dealer: the task ids, the module that registers them and the options they take, declared to
the task core (read by :mod:`envs.discovery` from this file alone, without importing the package)."""

from __future__ import annotations

from envs.core.options import OptionSpec, int_option

_CAR_DEALER = (
    OptionSpec(
        "reward_mode", "choice", "fancy", ("fancy", "revenue"), "LMRL's reward: fancy or revenue"
    ),
    int_option("max_texts", 50, "utterances of both sides before the talk is cut", minimum=2),
    OptionSpec(
        "buyer_bias",
        "choice",
        "none",
        ("none", "anchoring", "feature", "mixed"),
        "a biased embedded buyer a seller can steer (mixed: drawn per episode)",
    ),
)

DECLARED = ((80, "envs.car_dealer", ("car-dealer",), _CAR_DEALER),)
"""(place in the task list, registering module, task ids, options)."""
