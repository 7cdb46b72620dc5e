"""Offline training from the store: BC, %BC, MC Returns, ILQL and Q-SFT, one file per algorithm;
each exposes ``compute_loss(model, batch, cfg)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def loss_fn(algo: str) -> Callable[..., Any]:
    """The ``compute_loss`` of an algorithm (``pbc`` is BC on a filtered dataset)."""
    from training.offline import bc, ilql, mc, qsft

    return {
        "bc": bc.compute_loss,
        "pbc": bc.compute_loss,
        "mc": mc.compute_loss,
        "ilql": ilql.compute_loss,
        "qsft": qsft.compute_loss,
    }[algo]
