"""``results.md`` and ``results.json`` of ``experiments/gpu_campaign.py``: per task and algorithm
the mean and 95 % CI over seeds (Student's t, :func:`training.reproduce.report.seed_ci`) of the
return, LMRL-normalised score and success rate, with each run's tokens/s, MFU and padding; the
datasets, the exact commands, the device and the versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _device() -> tuple[str, float | None]:
    import torch

    from training.model.speed import peak_flops

    name = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    return name, peak_flops(name)


def run_speed(rec: dict[str, Any], peak: float | None) -> dict[str, Any]:
    """tokens/s, padding and MFU of one training run (None where not measured)."""
    from training.model.speed import train_flops_per_token

    tr, size = rec.get("train") or {}, rec.get("model") or {}
    tps = tr.get("tokens_per_s")
    mean_len = tr.get("dataset_tokens", 0) / max(tr.get("examples", 0), 1)
    mfu = None
    if tps and peak and size.get("params") and size.get("n_layer"):
        flops = train_flops_per_token(size["params"], size["n_layer"], size["d_model"], mean_len)
        mfu = 100.0 * tps * flops / peak
    return {"tokens_per_s": tps, "padding": tr.get("padding"), "mfu_percent": mfu}


def summarise(records: list[dict[str, Any]], peak: float | None) -> dict[str, Any]:
    from training.reproduce.report import METRICS, seed_ci

    tasks: dict[str, Any] = {}
    for rec in records:
        if rec.get("skipped"):
            continue
        row = tasks.setdefault(rec["task"], {}).setdefault(rec["algorithm"], {"runs": []})
        ev = ((rec.get("evaluation") or {}).get("result")) or {}
        row["runs"].append(
            {
                "seed": rec["seed"],
                "steps": (rec.get("train") or {}).get("steps"),
                "episodes": (rec.get("train") or {}).get("episodes"),
                **run_speed(rec, peak),
                **{m: ev.get(m) for m in METRICS},
                "normalised_store": ev.get("normalised_store"),
                "eval_episodes": ev.get("episodes"),
            }
        )
    for algos in tasks.values():
        for row in algos.values():
            for m in (*METRICS, "normalised_store", "tokens_per_s", "mfu_percent"):
                row[m] = seed_ci([r[m] for r in row["runs"]])
    return tasks


def _ci(c: dict[str, Any], fmt: str, scale: float = 1.0) -> str:
    if c["mean"] is None:
        return "–"
    if c["n"] < 2:
        return format(c["mean"] * scale, fmt)
    lo, hi = c["ci_low"] * scale, c["ci_high"] * scale
    return f"{format(c['mean'] * scale, fmt)} ({format(lo, fmt)} to {format(hi, fmt)})"


def _mean(c: dict[str, Any], fmt: str) -> str:
    return "–" if c["mean"] is None else format(c["mean"], fmt)


def markdown(res: dict[str, Any]) -> str:
    a = res["args"]
    lines = [
        "# GPU campaign: BC, MC and ILQL on the dialogue tasks (issue #49)",
        "",
        f"Written by `{res['command']}` in {res['stages']['total_s']:.0f} s of a "
        f"{a['minutes']:g}-minute budget (data {res['stages']['data_s']:.0f} s, training and "
        f"evaluation {res['stages']['train_eval_s']:.0f} s) on {res['device']}.",
        f"Model `{a['model']}`, `--pack`, `--precision auto` (bf16 autocast on a GPU), batch "
        f"{a['batch_size']} windows, context {a['max_length']}, lr {a['lr']:g}; each run at most "
        f"{a['train_episodes']:,} episodes and its share of the time (`--max-minutes`). Evaluation: "
        f"{a['eval_episodes']} episodes, seeds 0.. (disjoint from the data seeds). Mean over the "
        "seeds with a 95 % CI (Student's t). MFU: (6·N + 12·L·T·d) FLOPs a trained token, T the "
        "mean window length, N the LM's parameters (the Q/V heads, target and next-window forwards "
        "of MC and ILQL not counted: their MFU is a lower bound), over the device's dense bf16 "
        "peak; tokens/s and MFU: the mean over "
        "the seeds' runs (real tokens, padding not counted).",
        f"Versions: {', '.join(f'{k} {v}' for k, v in res['versions'].items())}; "
        f"commit {res['git_commit']}.",
        "",
        "| task | episodes | shards | generation |",
        "|---|---|---|---|",
    ]
    for t, d in res["datasets"].items():
        cut = "" if d.get("complete", True) else " (stopped at 40 % of the budget: fewer stored)"
        lines.append(f"| {t} | {d['episodes']:,}{cut} | {d['shards']} | {d['generate_s']:.0f} s |")
    for task, algos in res["tasks"].items():
        lines += [
            "",
            f"## {task}",
            "",
            "| algorithm | return | normalised (LMRL) | normalised (store) | success | seeds "
            "| steps | tokens/s | MFU | padding |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for algo, row in algos.items():
            steps = "/".join(str(r["steps"]) for r in row["runs"])
            pads = [r["padding"] for r in row["runs"] if r["padding"] is not None]
            pad = f"{100 * sum(pads) / len(pads):.1f} %" if pads else "–"
            lines.append(
                f"| {algo.upper()} | {_ci(row['mean_return'], '.3f')} | "
                f"{_ci(row['normalised_lmrl'], '.1f')} | {_ci(row['normalised_store'], '.1f')} | "
                f"{_ci(row['success_rate'], '.1f', 100)} % | "
                f"{len(row['runs'])} | {steps} | {_mean(row['tokens_per_s'], ',.0f')} | "
                f"{_mean(row['mfu_percent'], '.1f')} % | {pad} |"
            )
    if res["skipped"]:
        lines += ["", "Not run (the budget ran out): " + ", ".join(res["skipped"]) + "."]
    lines += ["", "## Commands", "", "```", res["command"]]
    lines += [d["command"] for d in res["datasets"].values()]
    for rec in res["records"]:
        if not rec.get("skipped"):
            lines.append(rec["command"])
            if rec.get("evaluation"):
                lines.append(rec["evaluation"]["command"])
    return "\n".join([*lines, "```", ""])


def write_report(args, data, records, stages, prior) -> dict[str, Any]:
    from training.reproduce.report import git_commit, versions

    device, peak = _device()
    import shlex

    res = {
        "command": " ".join(["python experiments/gpu_campaign.py", shlex.join(args.argv)]).strip(),
        "args": {
            k: getattr(args, k)
            for k in (
                "minutes seeds eval_episodes model batch_size max_length lr train_episodes "
                "train_flag".split()
            )
        },
        "device": device,
        "peak_flops": peak,
        "stages": stages,
        "prior": prior,
        "versions": versions(),
        "git_commit": git_commit(),
        "datasets": data,
        "tasks": summarise(records, peak),
        "skipped": [
            f"{r['task']} {r['algorithm']} seed {r['seed']}" for r in records if r.get("skipped")
        ],
        "records": records,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    (out / "results.md").write_text(markdown(res))
    return res
