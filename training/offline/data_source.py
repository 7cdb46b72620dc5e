"""The store side of training: a dataset query -> episode ids -> LMRL windows."""

from __future__ import annotations

from dataclasses import replace

from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.stats import episode_returns
from training.dataset import Window, episode_windows, select_top
from training.errors import TrainingError


def select_ids(store, query: DatasetQuery, top_mode: str = "ties") -> list[int]:
    """The query's episode ids; a one-line TrainingError when nothing matches.

    ``top_mode="count"`` turns ``query.top_percent`` into an exact count: the best
    ``int(n * p / 100)`` episodes by a stable descending sort (LMRL's Wordle recipe).
    """
    try:
        if top_mode == "count" and query.top_percent is not None:
            base = select_episode_ids(store, replace(query, top_percent=None, limit=None))
            rets = episode_returns(store, base)
            keep = select_top(rets, "count", max(1, int(len(base) * query.top_percent / 100)))
            ids = [base[i] for i in keep][: query.limit]
        else:
            ids = select_episode_ids(store, query)
    except ValueError as e:
        raise TrainingError(f"bad dataset query: {e}") from None
    if not ids:
        if query.task and store.count(task=query.task) == 0:
            raise TrainingError(f"the store has no episodes of task {query.task!r}")
        raise TrainingError("the dataset is empty: no episodes match the query")
    return ids


def load_windows(store, ids: list[int], mode: str, truncation: str = "terminal") -> list[Window]:
    """LMRL windows of the episodes (agent steps only; ``mode`` is ``step`` or ``episode``).

    ``truncation="terminal"`` treats a time-limit end like a terminal state (LMRL-Gym);
    ``"drop"`` drops the timed-out last step and bootstraps from the state before it.
    """
    out: list[Window] = []
    for ep in load_episodes(store, ids):
        steps = [s for s in ep.steps if s.get("role", "agent") == "agent"]
        last = steps[-1] if steps else None
        ended = bool(last and (last["terminated"] or last["truncated"]))
        if truncation == "drop" and last and last["truncated"] and not last["terminated"]:
            steps, ended = steps[:-1], False
        pairs = [(s["action"], s["observation"], float(s["reward"])) for s in steps]
        out.extend(episode_windows(ep.episode["first_observation"], pairs, ended, mode, ep.id))
    if not out:
        raise TrainingError("the dataset is empty: the selected episodes have no steps")
    return out


def segment_texts(windows: list[Window]) -> list[str]:
    """Unique texts of the windows (what a ``tiny`` tokenizer is trained on)."""
    seen: dict[str, None] = {}
    for w in windows:
        for text, _, _ in w.segments:
            seen.setdefault(text, None)
        if w.next_prompt is not None:
            seen.setdefault(w.next_prompt, None)
    return list(seen)
