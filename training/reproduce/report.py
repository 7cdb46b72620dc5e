"""``results.json`` and ``results.md`` of ``lmrl reproduce``: mean and 95 % CI across training
seeds (Student's t), LMRL's Table 2 beside ours, the commands, wall times and versions."""

from __future__ import annotations

import json
import math
import platform
import statistics
import subprocess
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from data.ladder import t975
from data.store import store_in
from training.reproduce.recipes import (
    ALGORITHMS,
    DATA_SEED,
    TABLE2_KEYS,
    TaskRecipe,
    starts_from_bc,
)

# two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom
METRICS = ("mean_return", "normalised_lmrl", "success_rate")


def seed_ci(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean and 95 % CI (t interval) across training seeds; None where a value is missing."""
    vals = [float(v) for v in values if v is not None]
    if not vals or len(vals) != len(values):
        return {
            "mean": None,
            "ci_low": None,
            "ci_high": None,
            "n": len(vals),
            "values": list(values),
        }
    mean = math.fsum(vals) / len(vals)
    half = 0.0
    if len(vals) > 1:
        half = t975(len(vals) - 1) * statistics.stdev(vals) / math.sqrt(len(vals))
    return {
        "mean": mean,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "n": len(vals),
        "values": vals,
    }


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for pkg in ("torch", "transformers", "accelerate", "lmrl-tui"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def git_commit() -> str | None:
    """This code's commit (``-dirty`` with uncommitted changes to tracked files)."""
    try:
        res = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return res.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def summarise(recipe: TaskRecipe, records: list[dict[str, Any]]) -> dict[str, Any]:
    algos: dict[str, Any] = {}
    for algo in ALGORITHMS:
        mine = sorted((r for r in records if r["algorithm"] == algo), key=lambda r: r["seed"])
        if not mine:
            continue
        row = {m: seed_ci([r["evaluation"].get(m) for r in mine]) for m in METRICS}
        row["seeds"] = [r["seed"] for r in mine]
        row["eval_episodes"] = mine[0]["evaluation"].get("episodes")
        row["eval_method"] = mine[0]["evaluation"].get("method")
        row["wall_s"] = round(sum(r["train_wall_s"] + r["eval_wall_s"] for r in mine), 1)
        row["table2"] = recipe.table2(algo)
        row["commands"] = [c for r in mine for c in (r["train_command"], r["eval_command"])]
        if any(r.get("bisim_loss") is not None for r in mine):  # MC and ILQL report it
            row["bisim_loss"] = seed_ci([r.get("bisim_loss") for r in mine])
        algos[algo] = row
    return algos


def headline(algos: dict[str, Any]) -> str:
    """The measure a task is compared on: LMRL's normalised score where the task has its
    constants, else the success rate."""
    bc = algos.get("bc")
    return "normalised_lmrl" if bc and bc["normalised_lmrl"]["mean"] is not None else "success_rate"


def versus_bc(task: str, algos: dict[str, Any]) -> dict[str, Any]:
    """Each algorithm against BC on the task's headline measure: whether the two rows' 95 % CIs
    are apart (the issue's criterion), the difference of the means with a Welch interval (t with the
    smaller sample's n - 1 degrees of freedom, the conservative choice), and the per-seed difference
    over the seeds both have (paired; it removes BC's spread where the run started from that seed's
    BC checkpoint, as the online runs and the ``from_bc`` recipes do)."""
    if "bc" not in algos:
        return {}
    metric = headline(algos)
    bc = algos["bc"]
    b = bc[metric]
    by_seed_b = dict(zip(bc["seeds"], b["values"], strict=True))
    out: dict[str, Any] = {}
    for algo, row in algos.items():
        a = row[metric]
        if algo == "bc" or a["mean"] is None or b["mean"] is None:
            continue
        apart = None  # with one seed on either side there is no interval
        diff: dict[str, Any] = {
            "mean": a["mean"] - b["mean"],
            "ci_low": None,
            "ci_high": None,
            "n": min(a["n"], b["n"]),
        }  # n: for ``_ci``
        if diff["n"] > 1:
            apart = (
                "above"
                if a["ci_low"] > b["ci_high"]
                else "below"
                if a["ci_high"] < b["ci_low"]
                else "overlap"
            )
            se = math.sqrt(
                statistics.variance(a["values"]) / a["n"]
                + statistics.variance(b["values"]) / b["n"]
            )
            half = t975(diff["n"] - 1) * se
            diff.update(ci_low=diff["mean"] - half, ci_high=diff["mean"] + half)
        common = [s for s in row["seeds"] if s in by_seed_b]
        by_seed_a = dict(zip(row["seeds"], a["values"], strict=True))
        paired = seed_ci([by_seed_a[s] - by_seed_b[s] for s in common]) if common else None
        out[algo] = {
            "metric": metric,
            "cis_apart": apart,
            "difference": diff,
            "paired": paired,
            "paired_seeds": common,
            "starts_from_bc": starts_from_bc(task, algo),
        }
    return out


def write_report(
    out: Path,
    recipe: TaskRecipe,
    budget: str,
    data: dict[str, Any],
    records: list[dict[str, Any]],
    wall_s: float,
    commit: str | None = None,
    train_flags: Sequence[str] = (),
    model: str | None = None,
) -> dict[str, Any]:
    """Write ``results.json`` and ``results.md``; returns the JSON's content. ``commit``: the code's
    commit when the runs started (default: now); ``train_flags``: the ``--train-flag``s of every run."""
    algos = summarise(recipe, records)
    seeds = sorted({r["seed"] for r in records})
    res = {
        "task": recipe.task,
        "budget": budget,
        "training_seeds": seeds,
        "train_flags": list(train_flags),
        "dataset": {"seeds": f"{DATA_SEED}..{DATA_SEED + data['episodes'] - 1}", **data},
        "model": model,
        "evaluation_seeds": _eval_seeds(algos),
        "table2_row": recipe.table2_row,
        "recipe_note": recipe.note,
        "algorithms": algos,
        "versus_bc": versus_bc(recipe.task, algos),
        "wall_s_this_invocation": round(wall_s, 1),
        "versions": versions(),
        "git_commit": commit or git_commit(),
        "store": f"{store_in('.').name} (runs, checkpoints and evaluations tables)",
    }
    (out / "results.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    (out / "results.md").write_text(markdown(res))
    return res


def _data_flags(res: dict[str, Any]) -> str:
    """`` --model …``, `` --fresh-data``, `` --episodes N`` for the title's command, where given."""
    d = res["dataset"]
    out = f" --model {res['model']}" if res.get("model") else ""
    if d.get("fresh_per_seed"):
        out += " --fresh-data"
    return out + (f" --episodes {d['episodes']}" if d.get("episodes_given") else "")


def _dataset_line(d: dict[str, Any]) -> str:
    if not d.get("fresh_per_seed"):
        return (
            f"* Dataset: {d['episodes']} episodes of the behaviour policy, seeds {d['seeds']} "
            f"(mean return {d['mean_return']:.3f}, success {d['success_rate']:.1%}, {d['wall_s']} s): "
            f"`{d['command']}`"
        )
    lo, hi = d["return_range"]
    wlo, whi = d["success_range"]
    return (
        f"* Datasets: a fresh one per training seed, {d['episodes']} episodes of the behaviour policy each, "
        f"seeds {d['seeds']} (mean return {d['mean_return']:.3f}, {lo:.3f} to {hi:.3f} over the draws; "
        f"success {d['success_rate']:.1%}, {wlo:.1%} to {whi:.1%}; {d['wall_s']} s in all); the first: "
        f"`{d['command']}`"
    )


def _eval_seeds(algos: dict[str, Any]) -> str | None:
    if not algos:
        return None
    row = next(iter(algos.values()))
    if row["eval_method"] == "exact":
        return f"none: exact expected return over all {row['eval_episodes']} start states"
    return f"0..{row['eval_episodes'] - 1}"


def _ci(c: dict[str, Any], fmt: str, scale: float = 1.0) -> str:
    if c["mean"] is None:
        return "–"
    if c["n"] < 2:
        return format(c["mean"] * scale, fmt)
    return f"{format(c['mean'] * scale, fmt)} ({format(c['ci_low'] * scale, fmt)} to {format(c['ci_high'] * scale, fmt)})"


def _algorithms_flag(res: dict[str, Any]) -> str:
    """`` --algorithms …`` for the title's command, unless the table has every algorithm."""
    algos = list(res.get("algorithms", {}))
    return "" if not algos or set(algos) == set(ALGORITHMS) else " --algorithms " + " ".join(algos)


def markdown(res: dict[str, Any]) -> str:
    d = res["dataset"]
    lines = [
        f"# {res['task']}: LMRL-Gym Table 2 reproduction (budget `{res['budget']}`)",
        "",
        f"Written by `lmrl reproduce {res['task']} --budget {res['budget']} --seeds {len(res['training_seeds'])}"
        f"{_algorithms_flag(res)}{_data_flags(res)}{''.join(f' --train-flag={f}' for f in res.get('train_flags', []))}`.",
        f"Mean across training seeds {', '.join(map(str, res['training_seeds']))} with a 95 % CI "
        "(Student's t over the seeds' evaluation means). Normalised: LMRL's constants "
        "(0 = min, 50 = LMRL's dataset average, 100 = max; negatives clipped to 0 as in LMRL's Table 2).",
        "",
        _dataset_line(d),
        f"* Evaluation seeds: {res['evaluation_seeds']} (disjoint from the data seeds).",
        f"* Recipe: {res['recipe_note'] or 'see training/reproduce/recipes.py'}",
        f"* Versions: {', '.join(f'{k} {v}' for k, v in res['versions'].items())}; commit {res['git_commit']}",
        "",
        "| algorithm | return | **normalised** | success | LMRL Table 2 | seeds | eval | wall (train + eval, all seeds) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for algo, row in res["algorithms"].items():
        t2 = row["table2"]
        lines.append(
            f"| {TABLE2_KEYS[algo]} | {_ci(row['mean_return'], '.3f')} | **{_ci(row['normalised_lmrl'], '.1f')}** "
            f"| {_ci(row['success_rate'], '.1f', 100.0)} % | {'–' if t2 is None else t2} | {len(row['seeds'])} "
            f"| {row['eval_episodes']} {'exact' if row['eval_method'] == 'exact' else 'episodes'} | {row['wall_s']:.0f} s |"
        )
    bisim = [
        f"{TABLE2_KEYS[a]} {_ci(r['bisim_loss'], '.4f')}"
        for a, r in res["algorithms"].items()
        if "bisim_loss" in r
    ]
    if bisim:
        lines += [
            "",
            "Bisimulation loss of the final value model on its first 256 training windows "
            f"(`docs/research.md`; low: histories are represented by what matters for acting): {'; '.join(bisim)}.",
        ]
    lines += _versus_lines(res.get("versus_bc") or {})
    lines += [
        "",
        f"LMRL's Table 2 row: {res['table2_row']} (GPT-2 models, LMRL's dataset sizes).",
        "",
        "## Commands (run from this folder)",
        "",
    ]
    lines += [
        "```",
        *([p["command"] for p in d["per_seed"]] if d.get("fresh_per_seed") else [d["command"]]),
    ]
    for row in res["algorithms"].values():
        lines += row["commands"]
    lines += ["```", ""]
    return "\n".join(lines)


_APART = {
    "above": "**apart, above BC**",
    "below": "apart, below BC",
    "overlap": "overlap",
    None: "– (one seed)",
}


def _versus_lines(vs: dict[str, Any]) -> list[str]:
    if not vs:
        return []
    metric = next(iter(vs.values()))["metric"]
    scale, measure = (
        (100.0, "the success rate, in points")
        if metric == "success_rate"
        else (1.0, "LMRL's normalised score")
    )
    lines = [
        "",
        f"**Against BC**, on {measure}: the rows' 95 % CIs, the difference of the means (Welch, t with "
        "the smaller n − 1 degrees of freedom) and the per-seed difference over the seeds both have (paired; "
        "the fair comparison where the run starts from that seed's BC checkpoint).",
        "",
        "| algorithm | the rows' 95 % CIs | difference of the means | per seed (paired) | starts from its seed's BC |",
        "|---|---|---|---|---|",
    ]
    for algo, v in vs.items():
        p = v["paired"]
        per_seed = (
            "–"
            if p is None
            else f"{_ci(p, '+.1f', scale)} over seeds {', '.join(map(str, v['paired_seeds']))}"
        )
        lines.append(
            f"| {TABLE2_KEYS[algo]} | {_APART[v['cis_apart']]} | {_ci(v['difference'], '+.1f', scale)} "
            f"| {per_seed} | {'yes' if v['starts_from_bc'] else 'no'} |"
        )
    return lines
