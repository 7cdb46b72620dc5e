"""The table of ``experiments/wordle_online.py``: ``results.md`` from the figures of its ``results.json``
(the score, success and return per algorithm over training seeds, each online run's gain over its
own BC, the commits and the commands)."""

from __future__ import annotations

from typing import Any


def markdown(result: dict[str, Any]) -> str:
    def ci(c: dict[str, Any], scale: float = 1.0, fmt: str = "{:.1f}") -> str:
        if c["mean"] is None:
            return "–"
        return f"{fmt.format(scale * c['mean'])} ({fmt.format(scale * c['ci_low'])} to {fmt.format(scale * c['ci_high'])})"

    ref = result["reference"]
    game = " ".join(f"--option {o}" for o in result.get("options", ["words=small"]))
    task = result.get("task", "wordle")
    lmrl = all("lmrl" in r for r in result["rows"]) and bool(result["rows"])
    lines = [
        f"# {task} (`{game}`): BC, and online RL from it, over training seeds",
        "",
        "Written by `python experiments/wordle_online.py run OUT"
        + ("" if task == "wordle" else f" --task {task}")
        + (" --vocab-file PATH" if "vocab_file=PATH" in game else "")
        + "` (issue #12): the `consistent` player's games, "
        "BC on them per training seed, online %BC / PPO from each seed's BC, every checkpoint evaluated "
        "on the evaluation seeds 0.. (disjoint from the data's 100000.. and the rollouts' 1000000..). "
        "The last column pairs each online run with the BC it started from.",
        "",
        f"Score: 50 = LMRL's behaviour recipe's mean return ({ref['data_mean_return']:.3f}), 100 = the strong "
        f"player's ({ref['strong_mean_return']:.3f}). Mean over training seeds, 95 % t interval."
        + (
            " LMRL: LMRL's normalised score (its constants: 0 = −6, 50 = −4.12, 100 = −1.935)."
            if lmrl
            else ""
        ),
        "",
        "| algorithm | seeds | success | mean return | score | score per seed | score gain over its own BC |"
        + (" LMRL |" if lmrl else ""),
        "|---|---|---|---|---|---|---|" + ("---|" if lmrl else ""),
    ]
    for r in result["rows"]:
        per = " / ".join(f"{s['score']:.1f}" for s in r["seeds"])
        gain = ci(r["score_gain"]) if "score_gain" in r else "–"
        lines.append(
            f"| {r['algorithm']} | {len(r['seeds'])} | {ci(r['success'], 100)} % | "
            f"{ci(r['return'], fmt='{:.3f}')} | {ci(r['score'])} | {per} | {gain} |"
            + (f" {ci(r['lmrl'])} |" if lmrl else "")
        )
    by_commit: dict[str, set[int]] = {}
    for r in result["rows"]:
        for s in r["seeds"]:
            by_commit.setdefault(s.get("commit") or str(result.get("commit")), set()).add(s["seed"])
    if len(by_commit) > 1:
        lines += [
            "",
            "Seeds by the commit they ran at: "
            + "; ".join(
                f"{', '.join(map(str, sorted(v)))} at {k[:7]}" for k, v in by_commit.items()
            )
            + ".",
        ]
    lines += [
        "",
        f"Commit {result.get('commit')}; "
        + ", ".join(f"{k} {v}" for k, v in result.get("versions", {}).items()),
        "",
        "Commands (run from the checkout; OUT is this folder) and their wall times, one thread each:",
        "",
    ]
    lines.append(
        f"* every evaluation: `python -m lmrl_tui --db OUT/store.db eval OUT/runs/NAME --task {task} "
        f"{game} --episodes GAMES --seed 0`"
    )
    for key, step in result["steps"].items():
        if isinstance(step, dict) and "cmd" in step:
            lines.append(f"* {key} ({step['seconds']} s, rc {step['rc']}): `{step['cmd']}`")
    return "\n".join(lines) + "\n"
