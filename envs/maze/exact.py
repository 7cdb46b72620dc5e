"""Exact evaluation on a fully observed maze: a policy that depends only on the current observation
(the cell) has an expected return that dynamic programming over the step cap gives exactly, with no
sampling noise. Used by ``lmrl eval`` for maze-fo."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from envs.core import Text

ActionDistribution = Callable[[Sequence[Text], Sequence[str]], Sequence[float]]


def exact_return(
    tables: Any, actions: Sequence[str], max_steps: int, action_distribution: ActionDistribution
) -> dict[str, Any]:
    """Exact expected return and success rate over the start cells of ``tables``.

    ``action_distribution(history, actions)`` gives each move's probability in a cell (its history
    is the cell's observation alone); the remaining mass is invalid text (-4, stay). Also counts
    the start cells whose most likely move is optimal.
    """
    t = tables
    n = len(t.cells)
    probs = []
    optimal_cells = 0
    for c in range(n):
        if c == t.goal_index:
            probs.append([0.0] * 4)
            continue
        p = list(action_distribution((Text(t.obs_fo[c], False),), actions))
        probs.append(p)
        if c in t.starts:
            best = max(range(4), key=lambda a: p[a])
            optimal_cells += t.dist[t.nxt[c * 4 + best]] == t.dist[c] - 1
    value = [-1.0] * n  # E_0: the call after the cap returns Failure, -1
    succ = [0.0] * n
    for _ in range(max_steps):
        nv, ns = [0.0] * n, [0.0] * n
        for c in range(n):
            if c == t.goal_index:
                continue
            p = probs[c]
            inval = max(0.0, 1.0 - sum(p))
            v = inval * (-4.0 + value[c])
            s = inval * succ[c]
            for a in range(4):
                j = t.nxt[c * 4 + a]
                if j == t.goal_index:
                    s += p[a]
                else:
                    v += p[a] * (-1.0 + value[j])
                    s += p[a] * succ[j]
            nv[c], ns[c] = v, s
        value, succ = nv, ns
    starts = t.starts
    mean = math.fsum(value[c] for c in starts) / len(starts)
    return {
        "episodes": len(starts),
        "mean_return": mean,
        "ci_low": mean,
        "ci_high": mean,
        "success_rate": math.fsum(succ[c] for c in starts) / len(starts),
        "optimal_cells": int(optimal_cells),
        "cells": len(starts),
        "method": "exact",
    }
