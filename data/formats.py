"""Import and export: LMRL-Gym's per-task JSON/JSONL formats (``lmrl``) and our own ``jsonl``.

``jsonl`` is lossless: one JSON object per episode with every column of the episode and its
steps, so export -> import -> export reproduces the file. ``lmrl`` writes exactly what LMRL-Gym's
trainers read for the task; each task's codec lives in ``data/codecs/<task>.py`` and registers
itself with :func:`register_codec`.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from data.datasets import DatasetQuery, StoredEpisode, load_episodes, select_episode_ids
from data.store import EpisodeRecord, StepRecord, Store, Who

FORMATS = ("jsonl", "lmrl")


class FormatError(ValueError):
    """A file that cannot be imported, with the line number and what is wrong."""


@dataclass(frozen=True)
class Codec:
    """One task's LMRL format. ``container`` is ``jsonl`` (one item per line) or ``json`` (a list)."""

    export_episode: Callable[[StoredEpisode], Any]
    import_item: Callable[[Any, str], EpisodeRecord]
    container: str = "jsonl"


_CODECS: dict[str, Codec] = {}
_codecs_loaded = False


def register_codec(task_id: str, codec: Codec) -> None:
    _CODECS[task_id] = codec


def codec(task_id: str) -> Codec:
    global _codecs_loaded
    if not _codecs_loaded:
        _codecs_loaded = True
        import data.codecs as pkg

        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"data.codecs.{mod.name}")
    try:
        return _CODECS[task_id]
    except KeyError:
        raise FormatError(f"no LMRL format is defined for task {task_id!r}") from None


def state_action_steps(ep: StoredEpisode) -> list[dict[str, Any]]:
    """LMRL's per-step list ``[{"state", "action", "reward", "done"}, ...]`` (maze-fo, chess),
    where ``state`` is the observation before the action."""
    states = [ep.episode["first_observation"]] + [s["observation"] for s in ep.steps]
    return [
        {
            "state": states[i],
            "action": s["action"],
            "reward": s["reward"],
            "done": bool(s["terminated"] or s["truncated"]),
        }
        for i, s in enumerate(ep.steps)
    ]


# -- our lossless JSONL ----------------------------------------------------------------------
_EPISODE_KEYS = (
    "task", "task_version", "seed", "options", "agent_kind", "agent_name", "partner_kind",
    "partner_name", "player", "source", "status", "first_observation", "success",
    "started_at", "ended_at", "meta",
)  # fmt: skip
_STEP_KEYS = ("role", "action", "typed", "observation", "reward", "terminated", "truncated", "info", "think_ms")


_LABEL_KEYS = ("step_idx", "label", "value", "author", "created_at")


def episode_to_json(ep: StoredEpisode, labels: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out = {k: ep.episode[k] for k in _EPISODE_KEYS}
    out["return"] = ep.episode["return"]
    out["steps"] = [{k: s[k] for k in _STEP_KEYS} for s in ep.steps]
    for s in out["steps"]:
        s["terminated"] = bool(s["terminated"])
        s["truncated"] = bool(s["truncated"])
    if labels:
        out["labels"] = [{k: lab[k] for k in _LABEL_KEYS} for lab in labels]
    return out


def episode_from_json(obj: Any) -> EpisodeRecord:
    if not isinstance(obj, dict) or "steps" not in obj or "task" not in obj:
        raise ValueError("expected an object with 'task' and 'steps'")
    steps = [
        StepRecord(
            action=s["action"], observation=s["observation"], reward=float(s["reward"]),
            terminated=bool(s.get("terminated")), truncated=bool(s.get("truncated")),
            info=s.get("info") or {}, typed=s.get("typed"), think_ms=s.get("think_ms"),
            role=s.get("role", "agent"),
        )  # fmt: skip
        for s in obj["steps"]
    ]
    partner = None
    if obj.get("partner_kind"):
        partner = Who(obj["partner_kind"], obj.get("partner_name") or obj["partner_kind"])
    success = obj.get("success")
    return EpisodeRecord(
        task=obj["task"], task_version=int(obj.get("task_version", 1)), seed=obj.get("seed"),
        first_observation=obj["first_observation"], steps=steps,
        agent=Who(obj.get("agent_kind", "import"), obj.get("agent_name", "import")),
        partner=partner, player=obj.get("player"), source=obj.get("source", "import"),
        options=obj.get("options") or {}, status=obj.get("status", "finished"),
        success=None if success is None else bool(success), meta=obj.get("meta") or {},
        started_at=obj.get("started_at"), ended_at=obj.get("ended_at"),
        labels=[dict(lab) for lab in obj.get("labels") or []],
    )  # fmt: skip


# -- export / import -------------------------------------------------------------------------
def export_episodes(store: Store, out: IO[str], fmt: str, query: DatasetQuery) -> int:
    """Write the episodes ``query`` selects to ``out``; returns how many were written."""
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    ids = select_episode_ids(store, query)
    if fmt == "jsonl":
        n = 0
        for ep in load_episodes(store, ids):
            out.write(json.dumps(episode_to_json(ep, store.labels(ep.id)), ensure_ascii=False) + "\n")
            n += 1
        return n
    if not query.task:
        raise FormatError("the lmrl format is per task: give --task")
    c = codec(query.task)
    items = (c.export_episode(ep) for ep in load_episodes(store, ids))
    if c.container == "json":
        data = list(items)
        json.dump(data, out, ensure_ascii=False)
        out.write("\n")
        return len(data)
    n = 0
    for item in items:
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        n += 1
    return n


def _read_items(path: Path, container: str) -> Iterator[tuple[int, Any]]:
    with path.open(encoding="utf-8") as f:
        if container == "json":
            try:
                data = json.load(f)
            except json.JSONDecodeError as e:
                raise FormatError(f"{path}: not valid JSON ({e})") from None
            if not isinstance(data, list):
                raise FormatError(f"{path}: expected a JSON list of episodes")
            yield from enumerate(data, 1)
            return
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as e:
                raise FormatError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None


def import_episodes(
    store: Store, path: str | Path, fmt: str, task: str | None = None, batch: int = 1000
) -> int:
    """Read a file into the store (source ``import`` for LMRL files); returns episodes written."""
    path = Path(path)
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if not path.is_file():
        raise FormatError(f"no such file: {path}")
    if fmt == "lmrl":
        if not task:
            raise FormatError("the lmrl format is per task: give --task")
        c = codec(task)
        convert: Callable[[Any], EpisodeRecord] = lambda item: c.import_item(item, task)  # noqa: E731
        container = c.container
    else:
        convert, container = episode_from_json, "jsonl"
    total = 0
    buf: list[EpisodeRecord] = []
    for where, item in _read_items(path, container):
        try:
            rec = convert(item)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise FormatError(f"{path}:{where}: not a {fmt} episode ({type(e).__name__}: {e})") from None
        if task and rec.task != task:
            raise FormatError(f"{path}:{where}: episode of task {rec.task!r}, expected {task!r}")
        buf.append(rec)
        if len(buf) >= batch:
            total += len(store.write_episodes(buf))
            buf.clear()
    total += len(store.write_episodes(buf))
    return total
