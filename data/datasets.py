"""Datasets are queries over the store: task, sources, players, status, return filters, split.

``select_episode_ids(store, query)`` returns the ids a query picks, in a stable order, and
``load_episodes(store, ids)`` returns them with their steps. Trainers record the query and the ids
they used with each checkpoint (and what they hold: :mod:`data.composition`).

A query without sources means the logged data (:data:`LOGGED_SOURCES`: people's play, scripted
and imported episodes), not models' own rollouts (source ``agent``: online training, a checkpoint
playing); ``sources=["agent"]``, ``["any"]`` or a ``run_id`` ask for those.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from data.records import decode_row
from data.store import Store

SPLITS = ("train", "eval")
SOURCES = ("human", "scripted", "agent", "import")
"""Every episode source: a person played a side, a scripted policy, a model (an online run's
rollouts, a checkpoint, ``hf:`` or ``http:``), or read from a file."""
LOGGED_SOURCES = ("human", "scripted", "import")
"""The sources a dataset holds unless told otherwise: logged and generated data, not models'
own rollouts (the store average of evaluation leaves them out too: :mod:`data.stats`)."""
ANY_SOURCE = "any"


@dataclass
class DatasetQuery:
    """Which episodes make a dataset. Every field narrows the selection; None means "any"
    (except ``sources``: see below)."""

    task: str | None = None
    sources: list[str] | None = None
    """Episode sources to keep (human, scripted, agent, import); empty (or ``["any"]``) keeps
    all. None, the default, is :data:`LOGGED_SOURCES`, or every source when ``run_id`` picks
    one run's rollouts; the query stores the list it resolved to."""
    players: list[str] = field(default_factory=list)
    """Human player names to keep; empty keeps all."""
    agents: list[str] = field(default_factory=list)
    """Agent names to keep (e.g. ``behaviour``); empty keeps all."""
    partner_kinds: list[str] = field(default_factory=list)
    """Kinds of the partner side to keep, as recorded: ``human`` (a person answered), ``scripted``
    (the task's own partner), ``hf``, ``http``, ``checkpoint``; empty keeps all."""
    status: str = "finished"
    """``finished`` (default), ``abandoned``, ``in_progress`` or ``any``."""
    min_return: float | None = None
    top_percent: float | None = None
    """Keep episodes whose return is at least the (100 - p)th percentile (ties included)."""
    wins_only: bool = False
    """Keep successful episodes only."""
    split: str | None = None
    """``train`` or ``eval``: a deterministic split by seed (same seed, same split)."""
    eval_fraction: float = 0.1
    run_id: int | None = None
    limit: int | None = None
    takeover_only: bool = False
    """Keep episodes in which a person took over from the agent (``meta["takeover"]``: human
    corrections, DAgger-style relabelling data); any source unless ``sources`` says otherwise.
    :func:`takeover_steps` returns just the steps the person played."""
    campaigns: list[str] = field(default_factory=list)
    """Campaigns the episodes were played for (``lmrl serve --campaign``); empty keeps all."""
    assignments: list[str] = field(default_factory=list)
    """Campaign assignment ids to keep; empty keeps all."""
    options: dict[str, Any] = field(default_factory=dict)
    """Task options the episodes were logged with (``lmrl generate --option``): each given key
    must have this value; episodes logged with other options as well still match."""

    def __post_init__(self) -> None:
        if self.sources is None:
            self.sources = (
                [] if (self.run_id is not None or self.takeover_only) else list(LOGGED_SOURCES)
            )
        elif ANY_SOURCE in self.sources:
            self.sources = []
        else:
            self.sources = list(self.sources)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DatasetQuery:
        return cls(**json.loads(text))


def in_eval_split(seed: int | None, episode_id: int, eval_fraction: float) -> bool:
    """Hash the seed (or the id for seedless episodes) into [0, 1); below the fraction is eval."""
    key = seed if seed is not None else -episode_id
    h = (key * 2654435761 + 0x9E3779B9) & 0xFFFFFFFF
    return h / 2**32 < eval_fraction


def percentile(values: Sequence[float], q: float) -> float:
    """NumPy's default (linear) percentile, without NumPy."""
    xs = sorted(values)
    if not xs:
        raise ValueError("percentile of no values")
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def describe_query(query: DatasetQuery) -> str:
    """The query in one line, its fields that narrow the selection as ``key=value``."""
    default = DatasetQuery()
    parts = [f"task={query.task}"] if query.task else []
    parts.append("sources=" + (",".join(query.sources) if query.sources else ANY_SOURCE))
    parts.append(f"status={query.status}")
    for name in ("players", "agents", "partner_kinds", "campaigns", "assignments"):
        if getattr(query, name):
            parts.append(f"{name}=" + ",".join(getattr(query, name)))
    for name in (
        "min_return",
        "top_percent",
        "wins_only",
        "takeover_only",
        "split",
        "run_id",
        "limit",
    ):
        value = getattr(query, name)
        if value != getattr(default, name):
            parts.append(f"{name}={str(value).lower() if isinstance(value, bool) else value}")
    if query.split is not None and query.eval_fraction != default.eval_fraction:
        parts.append(f"eval_fraction={query.eval_fraction}")
    parts.extend(f"option {k}={v}" for k, v in sorted((query.options or {}).items()))
    return " ".join(parts)


def select_episode_ids(store: Store, query: DatasetQuery) -> list[int]:
    unknown = sorted(set(query.sources or ()) - set(SOURCES))
    if unknown:
        raise ValueError(f"unknown source {unknown[0]!r}: use {', '.join(SOURCES)} or {ANY_SOURCE}")
    where: list[str] = []
    args: list[Any] = []
    if query.task:
        where.append("task = ?")
        args.append(query.task)
    if query.status != "any":
        where.append("status = ?")
        args.append(query.status)
    for col, values in (
        ("source", query.sources),
        ("player", query.players),
        ("agent_name", query.agents),
        ("campaign", query.campaigns),
        ("assignment", query.assignments),
    ):
        if values:
            where.append(f"{col} IN ({','.join('?' * len(values))})")
            args.extend(values)
    if query.partner_kinds:
        where.append(f"partner_kind IN ({','.join('?' * len(query.partner_kinds))})")
        args.extend(query.partner_kinds)
    if query.min_return is not None:
        where.append("return >= ?")
        args.append(query.min_return)
    if query.wins_only:
        where.append("success = 1")
    if query.takeover_only:
        where.append("json_extract(meta, '$.takeover') = 1")
    if query.run_id is not None:
        where.append("run_id = ?")
        args.append(query.run_id)
    for key, value in sorted((query.options or {}).items()):
        path = '$."' + str(key).replace('"', "") + '"'
        if value is None:
            where.append("json_extract(options, ?) IS NULL")
            args.append(path)
        elif isinstance(value, (dict, list)):
            where.append("json_extract(options, ?) = ?")
            args.extend([path, json.dumps(value, separators=(",", ":"))])
        else:
            where.append("json_extract(options, ?) = ?")
            args.extend([path, value])
    sql = "SELECT id, seed, return FROM episodes"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id"
    rows = store.db.execute(sql, args).fetchall()
    if query.split is not None:
        if query.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}")
        want_eval = query.split == "eval"
        rows = [r for r in rows if in_eval_split(r[1], r[0], query.eval_fraction) == want_eval]
    if query.top_percent is not None and rows:
        if not 0 < query.top_percent <= 100:
            raise ValueError("top_percent must be in (0, 100]")
        threshold = percentile([r[2] for r in rows], 100 - query.top_percent)
        rows = [r for r in rows if r[2] >= threshold]
    ids = [int(r[0]) for r in rows]
    return ids[: query.limit] if query.limit is not None else ids


@dataclass
class StoredEpisode:
    episode: dict[str, Any]
    steps: list[dict[str, Any]]

    @property
    def id(self) -> int:
        return int(self.episode["id"])

    @property
    def task(self) -> str:
        return str(self.episode["task"])

    @property
    def total_return(self) -> float:
        return math.fsum(s["reward"] for s in self.steps)

    def text_pairs(self) -> list[tuple[str, str]]:
        return [(s["action"], s["observation"]) for s in self.steps]


def load_episodes(store: Store, ids: Sequence[int], chunk: int = 500) -> Iterator[StoredEpisode]:
    """Yield episodes with their steps, in the order of ``ids``."""
    for start in range(0, len(ids), chunk):
        part = list(ids[start : start + chunk])
        marks = ",".join("?" * len(part))
        eps = {
            int(r["id"]): decode_row(r)
            for r in store.db.query(f"SELECT * FROM episodes WHERE id IN ({marks})", part)
        }
        steps: dict[int, list[dict[str, Any]]] = {i: [] for i in part}
        for r in store.db.query(
            f"SELECT * FROM steps WHERE episode_id IN ({marks}) ORDER BY episode_id, idx", part
        ):
            steps[int(r["episode_id"])].append(decode_row(r))
        for i in part:
            if i in eps:
                yield StoredEpisode(eps[i], steps[i])


def takeover_steps(store: Store, query: DatasetQuery | None = None) -> list[dict[str, Any]]:
    """The steps a person played for an agent (``info["takeover"]``) in the episodes ``query``
    picks (by default every finished takeover episode, of any source; a query of its own keeps
    the sources it resolved to), in episode and step order. Each step's ``info`` holds
    ``agent_proposed`` (what the agent would have played) and ``player``."""
    from dataclasses import replace

    query = replace(query or DatasetQuery(takeover_only=True), takeover_only=True)
    ids = select_episode_ids(store, query)
    out: list[dict[str, Any]] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = store.db.query(
            f"SELECT * FROM steps WHERE episode_id IN ({marks}) AND json_extract(info, '$.takeover') = 1 "
            "ORDER BY episode_id, idx",
            part,
        )
        out.extend(decode_row(r) for r in rows)
    return out
