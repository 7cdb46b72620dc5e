"""Stored episodes as chat conversations (``lmrl export --format chat``): what SFT, DPO and
GRPO trainers read.

Each row holds ``messages`` (a list of ``{"role", "content"}``: the side's rules as ``system``,
what the environment said as ``user``, the side's turns as ``assistant``; see
:mod:`envs.adapters.chat`), the per-turn ``rewards`` (one per assistant turn, as recorded), the
episode's ``return`` and ``success``, and its provenance: the store's ids, the task, seed and
options, ``source`` (human, scripted, agent, import), ``player`` (the person), who played each
side (``agent_kind``/``agent_name``: ``human``, a scripted policy, a ``checkpoint``, ``hf``,
``http``; ``partner_kind``/``partner_name``), status, ``origin`` and times. ``options`` and
``meta`` are JSON text (their keys vary by task).

Rows are one per episode (default) or one per turn (``rows="turn"``: the conversation up to and
including that turn's assistant message, that turn's ``reward``, the ``return_to_go`` from it).
``side="partner"`` writes the partner's side of two-sided tasks (the acting side's actions as
``user``, the observations that came back as ``assistant``); the rewards stay the acting side's,
as recorded (the tasks define none for their partner).

:func:`write_chat_jsonl` needs nothing beyond the standard library
(``datasets.load_dataset("json", data_files=FILE)`` reads it); :func:`export_chat_folder` writes a
``datasets`` folder (``datasets.load_from_disk``) and needs the ``datasets`` package.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any

import envs
from data.datasets import DatasetQuery, StoredEpisode, load_episodes, select_episode_ids
from data.io.hf_export import ExportError
from data.store import Store
from envs.adapters.chat import (
    episode_messages,
    is_partner,
    partner_messages,
    resolve_side,
    system_prompt,
)

CHAT_ROWS = ("episode", "turn")
PROVENANCE = (
    "episode_id",
    "episode_uid",
    "task",
    "task_version",
    "seed",
    "source",
    "player",
    "agent_kind",
    "agent_name",
    "partner_kind",
    "partner_name",
    "options",
    "status",
    "origin",
    "started_at",
    "ended_at",
    "meta",
)


@dataclass
class ChatExport:
    """What an export wrote."""

    episodes: int = 0
    rows: int = 0
    skipped: int = 0
    """Episodes left out: no steps, or (``side="partner"``) a task with one side."""


def _json(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)


class _Prompts:
    """The system message of each (task, role), from the task's spec (built once)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], tuple[str, bool]] = {}

    def of(self, task_id: str, side: str) -> tuple[str, str, bool] | None:
        try:
            spec = envs.spec(task_id)
            role = resolve_side(spec, side)
        except (KeyError, ValueError):
            return None
        if (task_id, role) not in self._known:
            prompt = system_prompt(SimpleNamespace(spec=spec), role)
            self._known[(task_id, role)] = (prompt, is_partner(spec, role))
        prompt, partner = self._known[(task_id, role)]
        return role, prompt, partner


def chat_rows(
    ep: StoredEpisode, role: str, system: str, partner: bool, rows: str
) -> Iterator[dict[str, Any]]:
    """The rows of one episode (see the module docstring)."""
    e = ep.episode
    head: dict[str, Any] = {k: e.get(k) for k in PROVENANCE}
    head.update(
        episode_id=ep.id,
        episode_uid=e.get("uid"),
        options=_json(e.get("options") or {}),
        meta=_json(e.get("meta") or {}),
        side=role,
    )
    rewards = [float(s["reward"]) for s in ep.steps]
    total = math.fsum(rewards)
    success = None if e.get("success") is None else bool(e["success"])
    turns = [(s["action"], s["observation"]) for s in ep.steps]
    if rows == "episode":
        messages = (
            partner_messages(system, turns)
            if partner
            else episode_messages(system, e["first_observation"], turns)
        )
        yield dict(
            head, messages=messages, rewards=rewards, n_turns=len(turns), success=success
        ) | {"return": total}
        return
    for k in range(len(turns)):
        upto = turns[: k + 1]
        if partner:
            messages = partner_messages(system, upto)
        else:
            # the turn's own observation is not part of its example: drop the last user message
            messages = episode_messages(system, e["first_observation"], upto)
            if messages[-1]["role"] == "user" and len(messages) > 2:
                messages = messages[:-1]
        yield dict(
            head,
            messages=messages,
            turn=k,
            reward=rewards[k],
            return_to_go=math.fsum(rewards[k:]),
            success=success,
        ) | {"return": total}


def _rows(
    store: Store, query: DatasetQuery, rows: str, side: str, result: ChatExport
) -> Iterator[dict[str, Any]]:
    if rows not in CHAT_ROWS:
        raise ExportError(f"the chat format's rows are one of {', '.join(CHAT_ROWS)}, not {rows!r}")
    if side not in ("agent", "partner"):
        raise ExportError(f"--side must be agent or partner, not {side!r}")
    prompts = _Prompts()
    for ep in load_episodes(store, select_episode_ids(store, query)):
        found = prompts.of(ep.task, side)
        if found is None or not ep.steps:
            result.skipped += 1
            continue
        role, system, partner = found
        result.episodes += 1
        for row in chat_rows(ep, role, system, partner, rows):
            result.rows += 1
            yield row


def write_chat_jsonl(
    store: Store, f: IO[str], query: DatasetQuery, rows: str = "episode", side: str = "agent"
) -> ChatExport:
    """Write the rows as JSON lines to ``f``; returns the counts."""
    result = ChatExport()
    for row in _rows(store, query, rows, side, result):
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return result


def export_chat_folder(
    store: Store, query: DatasetQuery, out: str | Path, rows: str = "episode", side: str = "agent"
) -> ChatExport:
    """Write the rows as a ``datasets`` folder at ``out`` (new or empty), with ``data.jsonl``."""
    try:
        import datasets
    except ImportError:
        raise ExportError(
            "the chat format's folder needs the datasets package: pip install 'lmrl-tui[hf]' "
            "(or give -o FILE.jsonl)"
        ) from None
    datasets.disable_progress_bars()
    folder = Path(out).expanduser()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ExportError(f"{folder} already exists and is not an empty folder; give a new one")
    result = ChatExport()
    table = list(_rows(store, query, rows, side, result))
    ds = datasets.Dataset.from_list(table, features=_features(rows))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ds.save_to_disk(str(folder))
        with (folder / "data.jsonl").open("w", encoding="utf-8") as f:
            for row in table:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as e:
        raise ExportError(f"cannot write {folder}: {e.strerror or e}") from None
    return result


def _features(rows: str) -> Any:
    from datasets import Features, List, Value

    cols: dict[str, Any] = {k: Value("string") for k in PROVENANCE}
    cols.update(episode_id=Value("int64"), task_version=Value("int64"), seed=Value("int64"))
    cols["side"] = Value("string")
    cols["messages"] = List({"role": Value("string"), "content": Value("string")})
    if rows == "episode":
        cols.update(rewards=List(Value("float64")), n_turns=Value("int64"))
    else:
        cols.update(turn=Value("int64"), reward=Value("float64"), return_to_go=Value("float64"))
    cols.update(success=Value("bool"))
    cols["return"] = Value("float64")
    return Features(cols)
