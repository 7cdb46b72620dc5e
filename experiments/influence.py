"""Influencing a biased partner (Car Dealer, ``buyer_bias=mixed``): the sellers in the data, the
partner model, and trained sellers, measured on both sides of the deal.

For each seller it prints the seller's outcome (mean return, deal rate) and the buyer's (mean price
paid as a share of the buyer's budget over the deals, share of deals above the budget), on
evaluation seeds 0..N-1 (disjoint from ``lmrl reproduce``'s data seeds, 100000 on):

* ``baselines``: the scripted sellers of the data, one row per behaviour style (the behaviour
  seller draws one of three per episode: anchor, halfway, features; none of them knows the bias),
  the strong seller; then the partner model's held-out accuracy (fitted on 400 behaviour episodes,
  tested on 200 others; chance: the largest class).
* ``table OUT [OUT ...]``: the checkpoints of ``lmrl reproduce car-dealer --option
  buyer_bias=mixed`` folders (``OUT/runs/ALGO-sSEED``), each played on the same seeds with ``lmrl
  generate --policy`` into the folder's store (once; later calls read them back), as mean and 95 %
  CI over the training seeds; a markdown table.

Usage: ``python experiments/influence.py baselines [--episodes 100]`` or ``python experiments/influence.py
table results/car-dealer-biased [...] [--episodes 100]``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.generate import generate
from data.store import Store

OPTIONS = {"buyer_bias": "mixed"}


def outcome(transitions: list[Any], budget: int) -> dict[str, float | None]:
    """One episode: the seller's return and deal, the buyer's price / budget when it bought."""
    info = transitions[-1].info if transitions else {}
    d = info.get("decision") or {}
    bought = bool(d.get("car_bought")) and d.get("buy_price") is not None
    return {
        "return": sum(t.reward for t in transitions),
        "deal": float(bool(info.get("success"))),
        "paid": d["buy_price"] / budget if bought else None,
    }


def summary(rows: list[dict[str, float | None]]) -> dict[str, float]:
    paid = [r["paid"] for r in rows if r["paid"] is not None]
    return {
        "return": statistics.mean(r["return"] for r in rows),  # type: ignore[misc]
        "deal": statistics.mean(r["deal"] for r in rows),  # type: ignore[misc]
        "paid": statistics.mean(paid) if paid else float("nan"),
        "over": sum(p > 1 for p in paid) / len(paid) if paid else float("nan"),
    }


def baselines(episodes: int) -> None:
    by: dict[str, list[dict[str, float | None]]] = {}
    for policy in ("behaviour", "strong"):
        for seed in range(episodes):
            task = envs.make("car-dealer", **OPTIONS)
            seller = envs.make_policy("car-dealer", policy)
            ep = envs.run_episode(task, seller, seed)
            name = f"behaviour ({seller.style})" if policy == "behaviour" else policy
            by.setdefault(name, []).append(outcome(ep.transitions, task.persona.budget))
    print(
        "| seller | episodes | return | deals | buyer paid / budget | deals above budget |\n|---|---|---|---|---|---|"
    )
    for name, rows in sorted(by.items()):
        s = summary(rows)
        print(
            f"| {name} | {len(rows)} | {s['return']:.3f} | {s['deal']:.1%} | {s['paid']:.3f} | {s['over']:.1%} |"
        )
    print()
    partner_model_accuracy()


def partner_model_accuracy(train: int = 400, test: int = 200) -> None:
    from training.datasets.partner_conditioned import partner_label
    from training.datasets.source import fit_partner_model

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "pm.db"))
        generate(
            store,
            "car-dealer",
            envs.make_policy("car-dealer", "behaviour"),
            train + test,
            seed=100000,
            options=OPTIONS,
        )
        ids = select_episode_ids(store, DatasetQuery(task="car-dealer"))
        model = fit_partner_model(store, ids[:train], "car-dealer")
        hits, labels = 0, []
        for ep in load_episodes(store, ids[train:]):
            label = partner_label("car-dealer", ep.steps[-1]["info"])
            post = model.posterior([s["observation"] for s in ep.steps])
            hits += max(post, key=post.get) == label  # type: ignore[arg-type]
            labels.append(label)
        store.close()
    chance = max(labels.count(x) for x in set(labels)) / len(labels)
    print(
        f"partner model: held-out accuracy {hits / len(labels):.1%} at the episode's end over {len(labels)} "
        f"episodes (chance {chance:.1%}; fitted on {train})"
    )


def _ci(xs: list[float]) -> str:
    from training.reproduce.report import seed_ci

    c = seed_ci(xs)
    if c["mean"] is None:
        return "–"
    if c.get("ci_low") is None:
        return f"{c['mean']:.3f}"
    return f"{c['mean']:.3f} ({c['ci_low']:.3f} to {c['ci_high']:.3f})"


def table(outs: list[str], episodes: int) -> None:
    from lmrl_tui.cli import main as lmrl

    print(
        "| seller (training seeds) | return | deals | buyer paid / budget | deals above budget |\n|---|---|---|---|---|"
    )
    for out in outs:
        root = Path(out)
        store_path = root / "store.db"
        per_algo: dict[str, list[dict[str, float]]] = {}
        for run in sorted((root / "runs").glob("*-s*")):
            if not (run / "checkpoint").exists():
                continue
            algo = run.name.rsplit("-s", 1)[0]  # the run folder's prefix is its TrainConfig.algo
            name = f"{algo}:{run.name}/checkpoint"  # the checkpoint agent's name (training/agents/checkpoint_agent.py)
            if len(_played(store_path, name, episodes)) < episodes:
                rc = lmrl(
                    [
                        "--db",
                        str(store_path),
                        "generate",
                        "car-dealer",
                        "--policy",
                        str(run),
                        "--episodes",
                        str(episodes),
                        "--seed",
                        "0",
                        "--quiet",
                        *[a for k, v in OPTIONS.items() for a in ("--option", f"{k}={v}")],
                    ]
                )
                if rc != 0:
                    sys.exit(f"generate failed for {run}")
            rows = []
            for ep in _played(store_path, name, episodes):
                info = ep.steps[-1]["info"] if ep.steps else {}
                budget = (info.get("persona") or {}).get("budget") or 1
                rows.append(outcome([_Tr(s) for s in ep.steps], budget))
            per_algo.setdefault(algo, []).append(summary(rows))
        for algo, seeds in per_algo.items():
            cells = [
                _ci([s[k] for s in seeds if not math.isnan(s[k])])
                for k in ("return", "deal", "paid", "over")
            ]
            print(f"| {root.name}: {algo} ({len(seeds)}) | " + " | ".join(cells) + " |")


def _played(store_path: Path, name: str, episodes: int) -> list[Any]:
    """The checkpoint's stored episodes (with their steps) on seeds 0..episodes-1."""
    store = Store(str(store_path))
    try:
        ids = select_episode_ids(
            store, DatasetQuery(task="car-dealer", sources=["agent"], agents=[name])
        )
        return [ep for ep in load_episodes(store, ids) if (ep.episode.get("seed") or 0) < episodes]
    finally:
        store.close()


class _Tr:
    def __init__(self, step: dict[str, Any]) -> None:
        self.reward = float(step["reward"])
        info = step.get("info")
        self.info = info if isinstance(info, dict) else json.loads(info or "{}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("baselines", "table"))
    ap.add_argument("outs", nargs="*")
    ap.add_argument("--episodes", type=int, default=100)
    args = ap.parse_args()
    if args.mode == "baselines":
        baselines(args.episodes)
    else:
        table(args.outs, args.episodes)


if __name__ == "__main__":
    main()
