"""Export a dataset query as a Minari dataset (``lmrl export --format minari``).

Minari's Arrow format holds Gymnasium ``Text`` spaces: each episode's ``observations`` are its
first observation and the text after each action, its ``actions`` the actions, with per-turn
``rewards``, ``terminations`` and ``truncations``. The spaces are ``Text`` over the characters the
data uses, up to its longest text. Each step's ``infos`` carry the episode's provenance (uid,
store id, task, source, player, sides, status, origin) and what a person typed. Episodes without
steps are left out (Minari needs at least one). ``minari`` is imported here only (the ``minari``
extra).
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.datasets import (
    DatasetQuery,
    StoredEpisode,
    describe_query,
    load_episodes,
    select_episode_ids,
)
from data.io.hf_export import LICENSE_LINE, ExportError
from data.store import Store

ROOT_ENV = "MINARI_DATASETS_PATH"


@dataclass
class MinariExport:
    dataset_id: str
    episodes: int = 0
    steps: int = 0
    skipped: int = 0
    """Episodes left out because they have no steps."""


@contextmanager
def _datasets_root(folder: Path):
    """Minari writes under its datasets root: point it at ``folder`` while writing."""
    before = os.environ.get(ROOT_ENV)
    os.environ[ROOT_ENV] = str(folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ROOT_ENV, None)
        else:
            os.environ[ROOT_ENV] = before


def _infos(ep: StoredEpisode) -> dict[str, list[Any]]:
    e = ep.episode
    n = len(ep.steps) + 1
    same = {
        "episode_uid": e.get("uid") or "",
        "task": e["task"],
        "source": e["source"],
        "player": e["player"] or "",
        "agent": f"{e['agent_kind']}:{e['agent_name']}",
        "status": e["status"],
        "origin": e.get("origin") or "",
        "partner": f"{e['partner_kind']}:{e['partner_name']}" if e["partner_kind"] else "",
    }
    infos: dict[str, list[Any]] = {k: [v] * n for k, v in same.items()}
    infos["episode_id"] = [ep.id] * n
    infos["typed"] = ["", *(s["typed"] or "" for s in ep.steps)]
    return infos


def export_minari(
    store: Store, query: DatasetQuery, out: str | Path, dataset_id: str | None = None
) -> MinariExport:
    """Write the episodes ``query`` selects as the Minari dataset ``dataset_id`` (default
    ``lmrl/<task>-v0``) under the folder ``out`` (new or empty), its datasets root."""
    try:
        import minari
        from gymnasium import spaces
        from minari.data_collector import EpisodeBuffer
    except ImportError:
        raise ExportError(
            "the minari format needs minari: pip install 'lmrl-tui[minari]'"
        ) from None
    folder = Path(out).expanduser()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ExportError(f"{folder} already exists and is not an empty folder; give a new one")
    result = MinariExport(dataset_id or f"lmrl/{query.task or 'all'}-v0")
    buffers, chars, longest = [], set(), 1
    for ep in load_episodes(store, select_episode_ids(store, query)):
        if not ep.steps:
            result.skipped += 1
            continue
        obs = [ep.episode["first_observation"], *(s["observation"] for s in ep.steps)]
        acts = [s["action"] for s in ep.steps]
        for text in (*obs, *acts):
            chars.update(text)
            longest = max(longest, len(text))
        buffers.append(
            EpisodeBuffer(
                id=result.episodes,
                seed=ep.episode["seed"],
                observations=obs,
                actions=acts,
                rewards=[s["reward"] for s in ep.steps],
                terminations=[bool(s["terminated"]) for s in ep.steps],
                truncations=[bool(s["truncated"]) for s in ep.steps],
                infos=_infos(ep),
            )
        )
        result.episodes += 1
        result.steps += len(acts)
    if not buffers:
        raise ExportError("no episodes with steps match: a Minari dataset needs at least one")
    text = spaces.Text(max_length=longest, min_length=0, charset="".join(sorted(chars)) or "a")
    description = (
        f"lmrl-tui episodes, selected by `{describe_query(query)}`: {result.episodes} episodes, "
        f"{result.steps} steps. {LICENSE_LINE}"
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _datasets_root(folder), warnings.catch_warnings():
            warnings.simplefilter(
                "ignore"
            )  # Minari warns about the fields a store has no value for
            minari.create_dataset_from_buffers(
                result.dataset_id,
                buffers,
                observation_space=text,
                action_space=text,
                data_format="arrow",
                algorithm_name="lmrl-tui store",
                author="lmrl-tui",
                description=description,
            )
    except ValueError as e:
        raise ExportError(f"minari refused the dataset: {e}") from None
    except OSError as e:
        raise ExportError(f"cannot write {folder}: {e.strerror or e}") from None
    return result
