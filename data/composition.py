"""What a dataset holds: its episodes per source, player, agent and partner (episodes, steps, mean
return, success rate), the total, the query that selected them, and how many of models' own
rollouts the query left out. Every training run prints it (:func:`format_composition`) and keeps
it with its checkpoint and its row in ``runs``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from data.datasets import DatasetQuery, describe_query, select_episode_ids

if TYPE_CHECKING:
    from data.store import Store

_AGGREGATES = "COUNT(*), COALESCE(SUM(n_steps), 0), AVG(return), AVG(success)"
_GROUP = "source, player, agent_kind, agent_name, partner_kind, partner_name"


def _numbers(row: Sequence[Any]) -> dict[str, Any]:
    episodes, steps, mean_return, success = row
    return {
        "episodes": int(episodes),
        "steps": int(steps),
        "mean_return": None if mean_return is None else float(mean_return),
        "success_rate": None if success is None else float(success),
    }


def _who(kind: str | None, name: str | None) -> str | None:
    return None if kind is None else f"{kind}:{name}"


def left_out_rollouts(store: Store, query: DatasetQuery) -> int:
    """How many episodes of models' own rollouts (source ``agent``) the query's other filters
    would match but its sources leave out (before ``top_percent`` and ``limit``); 0 when the
    query takes them."""
    if not query.sources or "agent" in query.sources or query.run_id is not None:
        return 0
    return len(
        select_episode_ids(store, replace(query, sources=["agent"], top_percent=None, limit=None))
    )


def composition(
    store: Store, ids: Sequence[int], query: DatasetQuery | None = None
) -> dict[str, Any]:
    """The composition of the episodes ``ids`` (a JSON-ready dict): ``rows`` per source,
    player, agent and partner (``kind:name``), ``total``, and with ``query`` the query itself,
    its one-line form (``selected_by``) and ``left_out_rollouts``."""
    ids_json = json.dumps([int(i) for i in ids])
    where = "WHERE id IN (SELECT value FROM json_each(?))"
    rows = store.db.execute(
        f"SELECT {_GROUP}, {_AGGREGATES} FROM episodes {where} GROUP BY {_GROUP} ORDER BY {_GROUP}",
        [ids_json],
    ).fetchall()
    total = store.db.execute(f"SELECT {_AGGREGATES} FROM episodes {where}", [ids_json]).fetchone()
    out: dict[str, Any] = {
        "rows": [
            {
                "source": r[0],
                "player": r[1],
                "agent": _who(r[2], r[3]),
                "partner": _who(r[4], r[5]),
                **_numbers(r[6:]),
            }
            for r in rows
        ],
        "total": _numbers(total),
    }
    if query is not None:
        out["selected_by"] = describe_query(query)
        out["query"] = json.loads(query.to_json())
        out["left_out_rollouts"] = left_out_rollouts(store, query)
    return out


def _fmt(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def format_composition(comp: dict[str, Any], title: str = "dataset") -> str:
    """The composition as a compact table (lines of at most about 100 characters)."""
    total = comp["total"]
    head = f"{title}: {total['episodes']:,} episodes, {total['steps']:,} steps"
    partner = any(r.get("partner") for r in comp["rows"])
    header = [
        "source",
        "player",
        "agent",
        *(["partner"] if partner else []),
        "episodes",
        "steps",
        "mean return",
        "success",
    ]

    def cells(label: list[str], n: dict[str, Any]) -> list[str]:
        return [
            *label,
            str(n["episodes"]),
            str(n["steps"]),
            _fmt(n["mean_return"], ".3f"),
            _fmt(n["success_rate"], ".1%"),
        ]

    body = [
        cells(
            [
                r["source"],
                r["player"] or "",
                r["agent"] or "",
                *([r["partner"] or ""] if partner else []),
            ],
            r,
        )
        for r in comp["rows"]
    ]
    body.append(cells(["total", "", "", *([""] if partner else [])], total))
    numeric = len(header) - 4
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(len(header))]
    lines = [head]
    for row in (header, *body):
        text = "  ".join(
            c.rjust(w) if i >= numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        lines.append("  " + text.rstrip())
    if comp.get("selected_by"):
        lines.append(f"  query: {comp['selected_by']}")
    n = comp.get("left_out_rollouts") or 0
    if n:
        lines.append(
            f"  not included: {n:,} episodes of models' own rollouts (source agent: "
            "--source agent|any or --run ID)"
        )
    return "\n".join(lines)
