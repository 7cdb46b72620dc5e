"""The store side of training: a dataset query -> episode ids -> LMRL windows; and what an online
run trains on, said at its start and kept with it."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from data.composition import format_composition, left_out_rollouts
from data.datasets import DatasetQuery, describe_query, load_episodes, select_episode_ids
from data.stats import episode_returns
from training.datasets.windows import Window, episode_windows, select_top
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
        rollouts = left_out_rollouts(store, query)
        hint = (
            (
                f" ({rollouts} episodes of models' own rollouts are left out: --source agent, --source any "
                "or --run ID takes them)"
            )
            if rollouts
            else ""
        )
        raise TrainingError(f"the dataset is empty: no episodes match the query{hint}")
    return ids


def load_windows(
    store,
    ids: list[int],
    mode: str,
    truncation: str = "terminal",
    goals_of: str | None = None,
    partner_model: Any = None,
) -> list[Window]:
    """LMRL windows of the episodes (agent steps only; ``mode`` is ``step``, ``history`` or
    ``episode``).

    ``truncation="terminal"`` treats a time-limit end like a terminal state (LMRL-Gym);
    ``"drop"`` drops the timed-out last step and bootstraps from the state before it.
    ``goals_of`` (a task id): one copy of each episode per goal of that task, relabelled
    (:func:`training.datasets.goals.relabel`).
    ``partner_model`` (a :class:`training.datasets.partner_conditioned.PartnerModel`): every prompt ends with its
    line after what the partner had said by then (:func:`training.datasets.partner_conditioned.condition`).
    """
    if goals_of is not None:
        from training.datasets.goals import achieved, goals_for, relabel

        goals = goals_for(goals_of)
    out: list[Window] = []
    for ep in load_episodes(store, ids):
        steps = [s for s in ep.steps if s.get("role", "agent") == "agent"]
        last = steps[-1] if steps else None
        ended = bool(last and (last["terminated"] or last["truncated"]))
        if truncation == "drop" and last and last["truncated"] and not last["terminated"]:
            steps, ended = steps[:-1], False
        pairs = [(s["action"], s["observation"], float(s["reward"])) for s in steps]
        wins = episode_windows(ep.episode["first_observation"], pairs, ended, mode, ep.id)
        if partner_model is not None:
            from training.datasets.partner_conditioned import condition

            wins = condition(wins, partner_model, [p[1] for p in pairs])
        if goals_of is not None:
            info = ep.steps[-1].get("info") if ep.steps else None
            reached = achieved(
                goals_of, ep.episode.get("success"), info if isinstance(info, dict) else None
            )
            wins = relabel(wins, reached, goals)
        out.extend(wins)
    if not out:
        raise TrainingError("the dataset is empty: the selected episodes have no steps")
    return out


def fit_partner_model(store, ids: list[int], task_id: str) -> Any:
    """The partner model of ``lmrl train --partner-model``, fitted on the selected episodes whose
    partner type is recorded (:func:`training.datasets.partner_conditioned.fit`)."""
    from training.datasets.partner_conditioned import fit, partner_label

    labelled = []
    for ep in load_episodes(store, ids):
        steps = [s for s in ep.steps if s.get("role", "agent") == "agent"]
        info = ep.steps[-1].get("info") if ep.steps else None
        label = partner_label(task_id, info if isinstance(info, dict) else None)
        if label is not None:
            labelled.append(([s["observation"] for s in steps], label))
    try:
        return fit(task_id, labelled)
    except ValueError as e:
        raise TrainingError(str(e)) from None


MAX_CANDIDATES = 4096
"""At most this many of the data's actions are kept as a checkpoint's candidate actions."""


def dataset_actions(windows: list[Window], limit: int = MAX_CANDIDATES) -> list[str]:
    """The distinct actions of the windows, most frequent first (ties: first seen first), at most
    ``limit``: kept with a checkpoint (``dataset.json``) so that an agent can choose among what the
    data did on a task whose actions are free text (``--decoding rerank``)."""
    counts: dict[str, int] = {}
    for w in windows:
        for text, is_action, _ in w.segments:
            if is_action:
                counts[text] = counts.get(text, 0) + 1
    order = sorted(counts, key=lambda a: -counts[a])  # stable: ties keep their first-seen order
    return order[:limit]


def segment_texts(windows: list[Window]) -> list[str]:
    """Unique texts of the windows (what a ``tiny`` tokenizer is trained on)."""
    seen: dict[str, None] = {}
    for w in windows:
        for text, _, _ in w.segments:
            seen.setdefault(text, None)
        if w.next_prompt is not None:
            seen.setdefault(w.next_prompt, None)
    return list(seen)


# -- what an online run trains on ----------------------------------------------------------------
def checkpoint_dataset(path: str) -> dict[str, Any] | None:
    """What the checkpoint at ``path`` was trained on, from its ``dataset.json``: ``episodes`` and
    ``selected_by`` (offline), or ``online`` and its ``run_id``; None when it does not say."""
    from training.model.checkpoint import resolve_path

    try:
        info = json.loads((resolve_path(path) / "dataset.json").read_text())
    except (TrainingError, OSError, ValueError):
        return None
    if info.get("online"):
        return {"online": True, "run_id": info.get("run_id")}
    comp = info.get("composition")
    if comp:
        return {"episodes": comp["total"]["episodes"], "selected_by": comp.get("selected_by")}
    query = info.get("query")
    return {
        "episodes": len(info.get("episode_ids") or []),
        "selected_by": describe_query(DatasetQuery(**query)) if query else None,
    }


def online_dataset(cfg, bc_composition: dict[str, Any] | None) -> dict[str, Any]:
    """An online run's data (JSON-ready): its own rollouts, the initial policy and what that was
    trained on, and the composition of the BC term's stored episodes if it has one."""
    info: dict[str, Any] = {
        "trains_on": "rollouts",
        "rollouts": {"source": "agent", "per_round": cfg.n_rollouts, "rounds": cfg.rounds},
        "init": cfg.init,
        "init_dataset": checkpoint_dataset(cfg.init),
    }
    if bc_composition is not None:
        info["bc_term"] = bc_composition
    return info


def format_online_dataset(cfg, info: dict[str, Any], run_id: int | None) -> str:
    """What :func:`online_dataset` says, for a person (stderr at the start of the run)."""
    stored = f"stored with source agent, run {run_id}" if run_id is not None else "not stored"
    lines = [
        f"{cfg.algo} on {cfg.task}: no dataset, trains on its own rollouts "
        f"({cfg.n_rollouts} episodes a round, {cfg.rounds} round{'s' if cfg.rounds != 1 else ''}; {stored})"
    ]
    init = info.get("init_dataset")
    if init and init.get("online"):
        lines.append(f"  initial policy: {cfg.init}, trained online (run {init.get('run_id')})")
    elif init:
        lines.append(
            f"  initial policy: {cfg.init}, trained on {init['episodes']:,} episodes"
            + (f" ({init['selected_by']})" if init.get("selected_by") else "")
        )
    else:
        lines.append(f"  initial policy: {cfg.init}")
    if info.get("bc_term"):
        lines.append(format_composition(info["bc_term"], "the BC term's dataset"))
    return "\n".join(lines)
