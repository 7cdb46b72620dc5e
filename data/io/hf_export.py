"""Export a dataset query as a Hugging Face ``datasets`` folder (``lmrl export --format hf``).

The folder ``out`` holds the dataset as ``save_to_disk`` writes it (``datasets.load_from_disk(out)``
reads it back), the same rows as ``data.parquet``, and a dataset card ``README.md`` (the query,
the counts, the columns, the licence line). One row per step (default) or per episode; every row
carries the episode's provenance: store id and ``uid``, task, seed, source, player, both sides,
options, status, return, ``origin`` (the store that recorded it) and times. ``datasets`` is
imported here only, when an export runs (the ``hf`` extra).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.datasets import (
    DatasetQuery,
    StoredEpisode,
    describe_query,
    load_episodes,
    select_episode_ids,
)
from data.store import Store

ROW_KINDS = ("step", "episode")
LICENSE_LINE = (
    "The licence of this data is the choice of whoever collected it. Unless the collector states "
    "otherwise, it is shared under CC-BY-4.0 (https://creativecommons.org/licenses/by/4.0/)."
)
CHUNK = 5_000
"""Rows turned into an Arrow table at a time."""


class ExportError(ValueError):
    """An export that cannot be written, in one line for the user."""


EPISODE_FIELDS = (
    ("episode_id", "int64"),
    ("episode_uid", "string"),
    ("task", "string"),
    ("task_version", "int64"),
    ("seed", "int64"),
    ("source", "string"),
    ("player", "string"),
    ("agent_kind", "string"),
    ("agent_name", "string"),
    ("partner_kind", "string"),
    ("partner_name", "string"),
    ("options", "string"),
    ("status", "string"),
    ("return", "float64"),
    ("success", "bool"),
    ("n_steps", "int64"),
    ("origin", "string"),
    ("started_at", "string"),
    ("ended_at", "string"),
    ("meta", "string"),
)
"""Every row's provenance columns (options and meta as JSON text: their keys vary by task)."""
STEP_FIELDS = (
    ("step_idx", "int64"),
    ("role", "string"),
    ("state", "string"),
    ("action", "string"),
    ("typed", "string"),
    ("observation", "string"),
    ("reward", "float64"),
    ("terminated", "bool"),
    ("truncated", "bool"),
    ("think_ms", "int64"),
    ("info", "string"),
    ("created_at", "string"),
)
"""A step row's own columns: ``state`` is the text the action answered (the previous observation,
or the episode's first one), ``observation`` the text that came back."""
LABEL_FIELDS = (
    ("step_idx", "int64"),
    ("label", "string"),
    ("value", "string"),
    ("author", "string"),
    ("created_at", "string"),
)


def _features(rows: str) -> Any:
    from datasets import Features, Value

    label = {k: Value(t) for k, t in LABEL_FIELDS}
    cols: dict[str, Any] = {k: Value(t) for k, t in EPISODE_FIELDS}
    if rows == "step":
        cols.update({k: Value(t) for k, t in STEP_FIELDS})
        cols["labels"] = [label]
        cols["episode_labels"] = [label]
    else:
        cols["first_observation"] = Value("string")
        cols.update({f"{k}s": [Value(t)] for k, t in STEP_FIELDS if k not in ("step_idx", "state")})
        cols["labels"] = [label]
    return Features(cols)


def _json(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)


def _episode_columns(ep: StoredEpisode) -> dict[str, Any]:
    e = ep.episode
    out = {k: e.get(k) for k, _ in EPISODE_FIELDS}
    out.update(
        episode_id=ep.id,
        episode_uid=e.get("uid"),
        options=_json(e.get("options") or {}),
        meta=_json(e.get("meta") or {}),
        success=None if e.get("success") is None else bool(e["success"]),
    )
    return out


def _label(lab: dict[str, Any]) -> dict[str, Any]:
    return {k: lab.get(k) for k, _ in LABEL_FIELDS}


def _step_columns(s: dict[str, Any], state: str) -> dict[str, Any]:
    out = {k: s.get(k) for k, _ in STEP_FIELDS}
    out.update(
        step_idx=s["idx"],
        state=state,
        terminated=bool(s["terminated"]),
        truncated=bool(s["truncated"]),
        info=_json(s.get("info") or {}),
    )
    return out


def rows_of(store: Store, ep: StoredEpisode, rows: str) -> Iterator[dict[str, Any]]:
    """The export's rows of one episode (one per step, or one for the episode)."""
    head = _episode_columns(ep)
    labels = [_label(lab) for lab in store.labels(ep.id)]
    if rows == "episode":
        steps = [_step_columns(s, "") for s in ep.steps]
        row = dict(head, first_observation=ep.episode["first_observation"], labels=labels)
        for k, _ in STEP_FIELDS:
            if k not in ("step_idx", "state"):
                row[f"{k}s"] = [s[k] for s in steps]
        yield row
        return
    state = ep.episode["first_observation"]
    whole = [lab for lab in labels if lab["step_idx"] is None]
    for s in ep.steps:
        mine = [lab for lab in labels if lab["step_idx"] == s["idx"]]
        yield dict(head, **_step_columns(s, state), labels=mine, episode_labels=whole)
        state = s["observation"]


@dataclass
class HfExport:
    """What an export wrote."""

    rows: int = 0
    episodes: int = 0
    steps: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_source: Counter[str] = field(default_factory=Counter)
    by_task: Counter[str] = field(default_factory=Counter)
    by_origin: Counter[str] = field(default_factory=Counter)


def export_hf(store: Store, query: DatasetQuery, out: str | Path, rows: str = "step") -> HfExport:
    """Write the episodes ``query`` selects as a ``datasets`` folder at ``out`` (which must be
    new or empty), with ``data.parquet`` and a ``README.md`` dataset card; returns the counts."""
    if rows not in ROW_KINDS:
        raise ExportError(f"rows must be one of {', '.join(ROW_KINDS)}, not {rows!r}")
    try:
        import datasets
        import pyarrow as pa
    except ImportError:
        raise ExportError(
            "the hf format needs the datasets package: pip install 'lmrl-tui[hf]'"
        ) from None
    datasets.disable_progress_bars()  # the CLI prints one line; no bars on stderr
    folder = Path(out).expanduser()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ExportError(f"{folder} already exists and is not an empty folder; give a new one")
    features = _features(rows)
    schema = (
        features.arrow_schema
    )  # rows go to Arrow in C++: datasets' per-row encoding is ~50x slower
    result = HfExport()
    parts: list[Any] = []
    buffer: list[dict[str, Any]] = []
    for ep in load_episodes(store, select_episode_ids(store, query)):
        result.episodes += 1
        result.steps += len(ep.steps)
        result.by_status[ep.episode["status"]] += 1
        result.by_source[ep.episode["source"]] += 1
        result.by_task[ep.task] += 1
        result.by_origin[ep.episode.get("origin") or "this store"] += 1
        buffer.extend(rows_of(store, ep, rows))
        if len(buffer) >= CHUNK:
            parts.append(pa.Table.from_pylist(buffer, schema=schema))
            buffer = []
    if buffer or not parts:
        parts.append(pa.Table.from_pylist(buffer, schema=schema))
    split = datasets.NamedSplit(query.split or "train")
    ds = datasets.Dataset(
        pa.concat_tables(parts), info=datasets.DatasetInfo(features=features), split=split
    )
    result.rows = len(ds)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ds.save_to_disk(str(folder))
        ds.to_parquet(str(folder / "data.parquet"))
        (folder / "README.md").write_text(
            dataset_card(query, rows, result, features), encoding="utf-8"
        )
    except OSError as e:
        raise ExportError(f"cannot write {folder}: {e.strerror or e}") from None
    return result


def _counts(c: Counter[str]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(c.items())) or "none"


def dataset_card(query: DatasetQuery, rows: str, result: HfExport, features: Any) -> str:
    """The folder's README.md: what the data is, how it was selected, what it holds."""
    tasks = sorted(result.by_task) or ([query.task] if query.task else [])
    columns = "\n".join(f"- `{name}`: {feature}" for name, feature in features.items())
    return f"""---
license: cc-by-4.0
task_categories:
- reinforcement-learning
tags:
- lmrl-gym
- multi-turn
- lmrl-tui
---

# lmrl-tui episodes: {", ".join(tasks) or "no episodes"}

Episodes of LMRL-Gym's text games logged with lmrl-tui (people playing,
scripted policies, trained agents), one row per {rows}.

- Task(s): {", ".join(tasks) or "none"}
- Selection (the store's dataset query): `{describe_query(query)}`
- Episodes: {result.episodes}; steps: {result.steps}; rows: {result.rows}
- By status: {_counts(result.by_status)}
- By source: {_counts(result.by_source)}
- By origin (the store that recorded them): {_counts(result.by_origin)}

## Licence

{LICENSE_LINE} If you collected it under other terms, change this section and the `license`
field above.

## Loading

```python
import datasets
ds = datasets.load_from_disk("THIS_FOLDER")              # the saved dataset
ds = datasets.load_dataset("parquet", data_files="THIS_FOLDER/data.parquet")["train"]
```

## Columns

`episode_uid` is the episode's stable id across stores; `origin` names the store that recorded
it (`host:file`); `options`, `meta` and `info` are JSON text. In step rows, `state` is the text
the action answered and `reward` the reward of that turn; `labels` are people's labels on that
step and `episode_labels` those on the whole episode. In episode rows, the per-turn values are
lists (`actions`, `observations`, `rewards`, ...).

{columns}
"""
