"""A task's ladder: who plays it how well, people and agents on one table (the app's ladder screen).

One row per player (episodes a person played) and per agent (a scripted policy by name, a model or
checkpoint by its name or path), from the store's finished episodes, plus one row per stored
evaluation (``lmrl eval``'s ``evaluations`` table). Each row has its episodes, mean return with a
95 % t-interval, success rate and LMRL-normalised score (LMRL's piecewise normalisation with the
constants on the task's spec, :attr:`envs.core.TaskSpec.norm`; None where the spec has none).
Rows are ranked by mean return, best first.

The normalised score uses the constants of the task's spec with its default options (an episode
played with other options, e.g. a random maze, is still scored against them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import envs
from envs.core import NormConstants
from envs.players.agents import HUMAN, MODEL_KINDS

if TYPE_CHECKING:
    from data.store import Store

SOURCES = ("human", "scripted", "agent", "import")
"""The episode sources a ladder can be filtered by (``episodes.source``)."""

_T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
"""Student's t, two-sided 95 %, for 1 .. 30 degrees of freedom (then the normal 1.96)."""


def t975(df: int) -> float:
    """Student's t, two-sided 95 %, for ``df`` degrees of freedom (past 30: the normal 1.96)."""
    return _T975[df - 1] if 1 <= df <= len(_T975) else 1.96


def t_interval(n: int, mean: float, sum_sq: float) -> tuple[float | None, float | None]:
    """The 95 % t-interval of a mean from ``n`` values with ``sum_sq`` the sum of their squares
    (one value has none: ``(None, None)``, shown blank, not as a zero-width interval)."""
    if n < 2:
        return None, None
    var = max(0.0, (sum_sq - n * mean * mean) / (n - 1))
    half = t975(n - 1) * math.sqrt(var / n)
    return mean - half, mean + half


def lmrl_score(mean_return: float, norm: NormConstants | None) -> float | None:
    """LMRL's normalised score of a mean return (0 = its minimum, 50 = its dataset average,
    100 = its maximum; floored at 0 as LMRL-Gym's table reports it); None without constants."""
    return None if norm is None else max(0.0, norm.normalise(mean_return))


@dataclass(frozen=True)
class LadderRow:
    """One contender on a task's ladder."""

    who: str
    """The player's name, or the agent's (a policy name, a checkpoint path, ``hf:`` model)."""
    kind: str
    """``person``, ``scripted`` or the model kind (``checkpoint``, ``hf``, ``http``), ``import``."""
    source: str
    """The episodes' source (human, scripted, agent, import)."""
    origin: str
    """``episodes`` (played or generated in the store) or ``eval #N`` (a stored evaluation)."""
    episodes: int
    mean_return: float
    ci_low: float | None
    ci_high: float | None
    success_rate: float | None
    lmrl_score: float | None


_EPISODE_GROUPS = """
    SELECT source, agent_kind, agent_name,
           CASE WHEN agent_kind = 'human' THEN COALESCE(player, agent_name) END AS person,
           partner_kind, COUNT(*) AS n, AVG(return) AS mean, SUM(return * return) AS sum_sq,
           AVG(success) AS success
    FROM episodes WHERE task = ? AND status = 'finished' {sources}
    GROUP BY source, agent_kind, agent_name, person, partner_kind"""

_EVALUATIONS = """
    SELECT e.id, e.policy, e.episodes, e.mean_return, e.ci_low, e.ci_high, e.success_rate,
           e.normalised_lmrl, json_extract(e.meta, '$.checkpoint') AS meta_path, c.path AS path
    FROM evaluations e LEFT JOIN checkpoints c ON c.id = e.checkpoint_id WHERE e.task = ?"""


def _marks(sources: Iterable[str] | None) -> tuple[str, list[str]]:
    if sources is None:
        return "", []
    chosen = [s for s in sources if s in SOURCES]
    return f"AND source IN ({','.join('?' * len(chosen))})" if chosen else "AND 0", chosen


def episode_rows(store: Store, task: str, sources: Iterable[str] | None = None) -> list[LadderRow]:
    """The ladder's rows from the task's finished episodes (``sources``: keep these only)."""
    where, args = _marks(sources)
    norm = envs.spec(task).norm if task in envs.ids() else None
    out = []
    for r in store.db.query(_EPISODE_GROUPS.format(sources=where), [task, *args]):
        lo, hi = t_interval(r["n"], r["mean"], r["sum_sq"])
        if r["agent_kind"] == HUMAN:
            who, kind = r["person"], "person"
        else:
            who, kind = r["agent_name"], r["agent_kind"]
            if r["partner_kind"] == HUMAN:
                who += " (with a person)"
        out.append(
            LadderRow(
                who,
                kind,
                r["source"],
                "episodes",
                r["n"],
                r["mean"],
                lo,
                hi,
                r["success"],
                lmrl_score(r["mean"], norm),
            )
        )
    return out


def evaluation_rows(
    store: Store, task: str, sources: Iterable[str] | None = None
) -> list[LadderRow]:
    """The ladder's rows from the stored evaluations of the task: a checkpoint's (or a model's) are
    source ``agent``, a scripted policy's ``scripted``."""
    scripted = set(envs.policies(task)) if task in envs.ids() else set()
    norm = envs.spec(task).norm if task in envs.ids() else None
    keep = None if sources is None else set(sources)
    out = []
    for r in store.db.query(_EVALUATIONS, [task]):
        path = r["path"] or r["meta_path"]
        is_policy = path is None and r["policy"] in scripted
        source = "scripted" if is_policy else "agent"
        if keep is not None and source not in keep:
            continue
        kind = "scripted" if is_policy else ("checkpoint" if path else _model_kind(r["policy"]))
        score = r["normalised_lmrl"]
        if score is None:
            score = lmrl_score(r["mean_return"], norm)
        out.append(
            LadderRow(
                path or r["policy"],
                kind,
                source,
                f"eval #{r['id']}",
                r["episodes"],
                r["mean_return"],
                r["ci_low"],
                r["ci_high"],
                r["success_rate"],
                score,
            )
        )
    return out


def _model_kind(policy: str) -> str:
    kind = policy.split(":", 1)[0]
    return kind if kind in MODEL_KINDS else "agent"


def ladder(
    store: Store, task: str, sources: Iterable[str] | None = None, evaluations: bool = True
) -> list[LadderRow]:
    """The task's ladder, best mean return first (ties: more episodes first): rows from its
    finished episodes and, with ``evaluations``, its stored evaluations; ``sources`` keeps the
    rows of those sources only (some of :data:`SOURCES`)."""
    sources = None if sources is None else list(sources)
    rows = episode_rows(store, task, sources)
    if evaluations:
        rows += evaluation_rows(store, task, sources)
    return sorted(rows, key=lambda r: (-r.mean_return, -r.episodes, r.who))


def episode_pairs(store: Store, episode_id: int, limit: int = 50) -> list[dict[str, Any]]:
    """Finished episodes to replay next to ``episode_id``: those of the same task, the ones from
    the same seed first, then the newest (``id``, ``seed``, ``source``, ``agent_kind``,
    ``agent_name``, ``player``, ``return``)."""
    sql = """SELECT o.id, o.seed, o.source, o.agent_kind, o.agent_name, o.player, o.return
             FROM episodes e JOIN episodes o ON o.task = e.task AND o.id != e.id
             WHERE e.id = ? AND o.status != 'in_progress'
             ORDER BY (o.seed IS e.seed) DESC, o.id DESC LIMIT ?"""
    return list(store.db.query(sql, [episode_id, limit]))
