"""Run every benchmark script and print one table: ``name value unit [target] [ratio]``.

Each script under ``bench/`` prints ``name value unit`` lines; this runs them one after another
(quick settings by default, ``--full`` for each script's own defaults), collects the lines and
sets each figure beside its target where the project has one (``TARGETS`` below, the figures
docs/benchmarks.md quotes). ``ratio`` is value / target for "at least" targets and
target / value for "at most" ones, so ≥ 1 means the target is met.

    python bench/run_all.py [--full] [--only spine training ...] [--json out.json]

It measures and prints; it never fails on a missed target (tests never assert timings).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

QUICK: dict[str, list[str]] = {
    "spine": [],
    "wordle_textnav": ["--seconds", "0.5"],
    "chess": ["--games", "2", "--episodes", "10"],
    "car_dealer": ["--episodes", "200"],
    "dialogue_qa": [],
    "training": ["--steps", "30", "--repeats", "2", "--episodes", "100"],
    "online": ["--episodes", "16", "--envs", "16"],
    "eval": ["--episodes", "50", "--train-episodes", "100", "--steps", "200"],
    "gpu": ["--cpu-smoke"],
    "gym": ["--seconds", "0.5"],
    "watch": ["--steps", "10", "--episodes", "2"],
    "person_keys": ["--answers", "6", "--dialogs", "2"],
}
"""Script (``bench/bench_NAME.py``) -> arguments of the quick run."""

TARGETS: dict[str, tuple[str, float]] = {
    "maze_fo_random_steps_per_s": (">=", 1_000_000),
    "store_vs_raw_ratio": (">=", 0.5),
    "app_start_to_home_s": ("<=", 0.3),
    "wordle_random_steps_per_s": (">=", 50_000),
    "wordle-lmrl_random_steps_per_s": (">=", 50_000),
    "textnav-fo_random_steps_per_s": (">=", 100_000),
    "textnav-po_random_steps_per_s": (">=", 100_000),
    "bc_step_over_bare": ("<=", 1.10),
    "ilql_step_over_bc": ("<=", 1.6),
    "eval_20q_batched_speedup": (">=", 10),
    "eval_textnav_batched_speedup": (">=", 10),
    "watch_tiny_move_ms": ("<=", 20),
    "watch_thinking_stall_ms": ("<=", 50),
    "watch_load_cold_stall_ms": ("<=", 50),
    "watch_load_warm_stall_ms": ("<=", 50),
    "watch_start_to_loading_frame_ms": ("<=", 100),
}
"""Figure -> (direction, target)."""


def run(name: str, args: list[str], timeout: float) -> tuple[list[tuple[str, float, str]], str]:
    """The figures one script printed, and its error text when it failed."""
    cmd = [sys.executable, str(HERE / f"bench_{name}.py"), *args]
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return [], f"timed out after {timeout:.0f} s"
    rows = []
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            try:
                rows.append((parts[0], float(parts[1]), " ".join(parts[2:])))
            except ValueError:
                continue
    err = (
        ""
        if done.returncode == 0
        else (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    )
    return rows, err


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--full", action="store_true", help="each script's own (longer) defaults")
    ap.add_argument("--only", nargs="*", choices=sorted(QUICK), help="run only these scripts")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per script")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args(argv)
    table: list[dict[str, object]] = []
    for name in a.only or QUICK:
        started = time.perf_counter()
        rows, err = run(name, [] if a.full else QUICK[name], a.timeout)
        if err:
            print(f"# bench_{name}: {err}", file=sys.stderr)
        for fig, value, unit in rows:
            row: dict[str, object] = {"script": name, "name": fig, "value": value, "unit": unit}
            if fig in TARGETS:
                way, target = TARGETS[fig]
                row["target"] = f"{way} {target:g}"
                row["ratio"] = (
                    (value / target) if way == ">=" else (target / value if value else 0.0)
                )
            table.append(row)
        print(f"# bench_{name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    width = max((len(str(r["name"])) for r in table), default=10)
    for r in table:
        extra = f"  target {r['target']}  ratio {r['ratio']:.2f}" if "target" in r else ""
        print(f"{str(r['name']):<{width}}  {r['value']:>12g} {r['unit']}{extra}")
    if a.json:
        a.json.write_text(json.dumps(table, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
