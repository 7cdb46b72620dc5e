"""The table of ``experiments/dialogue_prior.py``: ``OUT/results.md`` and ``OUT/results.json`` from the
evaluations in ``OUT/eval`` and the runs' checkpoints (its ``report`` command; ``run`` ends with it).
Per task and algorithm: the success rate and return, mean and 95 % t interval over the training
seeds, the steps each run made, its tokens/s and wall times, and the agent's first lines on
evaluation seed 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _ci(xs: list[float]) -> dict[str, Any]:
    """Mean and 95 % t interval over the training seeds."""
    from training.reproduce.report import seed_ci

    c = seed_ci(xs)
    return {"mean": c["mean"], "low": c["ci_low"], "high": c["ci_high"], "n": c["n"], "values": xs}


def report(out: Path) -> dict[str, Any]:
    phases = json.loads((out / "phases.json").read_text()) if (out / "phases.json").exists() else {}
    rows: dict[str, dict[str, Any]] = {}
    for ev in sorted((out / "eval").glob("*.json")):
        name = ev.stem
        task, algo, seed = name.rsplit("-", 2)
        e = json.loads(ev.read_text())
        ck = out / "runs" / f"{task}-{algo.split('@')[0]}-{seed}" / "checkpoint" / "lmrl.json"
        meta = json.loads(ck.read_text()) if ck.exists() else {}
        m = meta.get("metrics") or {}
        r = rows.setdefault(f"{task}|{algo}", {"task": task, "algo": algo, "seeds": []})
        r["seeds"].append(
            {
                "seed": int(seed[1:]),
                "success": e["success_rate"],
                "return": e["mean_return"],
                "turns": sum(e["turns"]) / max(len(e["turns"]), 1),
                "steps": m.get("steps"),
                "train_s": m.get("train_seconds"),
                "tokens_per_s": m.get("tokens_per_s"),
                "eval_play_s": e.get("play_s"),
                "device": e.get("device"),
                "seed0": e.get("seed0"),
            }
        )
    for r in rows.values():
        r["success"] = _ci([s["success"] for s in r["seeds"]])
        r["return"] = _ci([s["return"] for s in r["seeds"]])
    result = {"phases": phases, "rows": list(rows.values())}
    (out / "results.json").write_text(json.dumps(result, indent=1, default=str))
    (out / "results.md").write_text(markdown(result))
    for r in rows.values():
        s = r["success"]
        print(
            f"{r['task']}_{r['algo']}_success {100 * s['mean']:.1f} % ({100 * s['low']:.1f} to {100 * s['high']:.1f}, "
            f"{s['n']} seeds)"
        )
    return result


def markdown(result: dict[str, Any]) -> str:
    def pct(c: dict[str, Any]) -> str:
        return f"{100 * c['mean']:.1f} % ({100 * c['low']:.1f} to {100 * c['high']:.1f})"

    lines = [
        "| task | algorithm | success, mean (95 % CI) | per seed | return (95 % CI) | steps per run | "
        "tokens/s per run | train s | eval play s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        ss = r["seeds"]

        def each(key: str, fmt: str = "{:.0f}", ss=ss) -> str:
            return " / ".join("–" if s[key] is None else fmt.format(s[key]) for s in ss)

        ret = r["return"]
        lines.append(
            f"| {r['task']} | {r['algo']} | {pct(r['success'])} | "
            + " / ".join(f"{100 * s['success']:.0f}" for s in ss)
            + " % | "
            f"{ret['mean']:.2f} ({ret['low']:.2f} to {ret['high']:.2f}) | {each('steps')} | "
            f"{each('tokens_per_s')} | {each('train_s')} | {each('eval_play_s', '{}')} |"
        )
    return "\n".join(lines) + "\n"
