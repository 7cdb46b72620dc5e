"""A language model guided by goal-conditioned values against the same model unguided (and against
RL checkpoints), on the dialogue tasks: the measurement of ``guided:`` (docs/research.md).

Three steps, each a subcommand over one output folder ``OUT``:

* ``values OUT``: per task, LMRL's behaviour data (``--data-episodes`` episodes, seeds 100000..,
  disjoint from the evaluation seeds) in ``OUT/TASK.db``, then one goal-conditioned value function
  per training seed (``lmrl train mc --goals``) in ``OUT/values/TASK-sSEED``; the runs go side by
  side (``--jobs``), on the GPU when there is one.
* ``play OUT --llm hf:MODEL``: on evaluation seeds 0.., every arm of every task side by side, each
  ``lmrl generate`` into its own store ``OUT/play/TASK-ARM.db`` (one episode per transaction): the
  model alone (``llm``) and the model guided by each value seed (``guided-sSEED``). ``--deadline``
  stops every arm after that many seconds; the episodes finished by then are kept.
* ``report OUT``: per task, on the seeds every arm finished, success and mean return per arm,
  mean and 95 % CI (t interval) over the value seeds for the guided arm and over episodes for the
  others (the model alone decodes greedily: one run); the share of guided turns where the model's
  answer picked the reply rather than the values; ``--rl TASK=CHECKPOINT`` adds an RL checkpoint
  played (here, once) on the same seeds. Markdown and JSON in ``OUT``.

    python experiments/guided_llm.py values OUT --tasks twenty-questions guess-city car-dealer --seeds 0 1 2
    python experiments/guided_llm.py play OUT --llm hf:smollm2-135m --episodes 100 --deadline 420
    python experiments/guided_llm.py report OUT --rl twenty-questions=runs/mc-s0
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TASKS = ("twenty-questions", "guess-city", "car-dealer")
DATA_SEED = 100000


def lmrl(*args: str) -> list[str]:
    """The ``lmrl`` command of this checkout (also where the package is not installed)."""
    return [sys.executable, "-m", "lmrl_tui", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _run(
    cmd: list[str], log: Path, deadline: float | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``cmd`` with its output in ``log`` (``env``: its whole environment, default :func:`_env`);
    stop it (SIGTERM) after ``deadline`` seconds."""
    start = time.monotonic()
    with log.open("w") as fh:
        fh.write(" ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, env=env or _env(), cwd=ROOT
        )
        try:
            rc = proc.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            rc = "deadline"
    return {"cmd": cmd, "rc": rc, "seconds": round(time.monotonic() - start, 1)}


def _parallel(
    jobs: list[tuple[list[str], Path]], workers: int, deadline: float | None = None
) -> list[dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(lambda j: _run(j[0], j[1], deadline), jobs))


def values(
    out: Path, tasks: list[str], seeds: list[int], steps: int, data_episodes: int, workers: int
) -> None:
    (out / "values").mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    gen = [
        (
            lmrl(
                "--db",
                str(out / f"{t}.db"),
                "generate",
                t,
                "--episodes",
                str(data_episodes),
                "--seed",
                str(DATA_SEED),
                "--quiet",
            ),
            out / "logs" / f"data-{t}.log",
        )
        for t in tasks
        if not (out / f"{t}.db").exists()
    ]
    runs = _parallel(gen, workers)
    train = [
        (
            lmrl(
                "--db",
                str(out / f"{t}.db"),
                "train",
                "mc",
                "--task",
                t,
                "--goals",
                "--seed",
                str(s),
                "--max-steps",
                str(steps),
                "--eval-episodes",
                "0",
                "--out",
                str(out / "values" / f"{t}-s{s}"),
            ),
            out / "logs" / f"values-{t}-s{s}.log",
        )
        for t in tasks
        for s in seeds
    ]
    runs += _parallel(train, workers)
    (out / "values.json").write_text(json.dumps(runs, indent=1))
    for r in runs:
        print(f"rc={r['rc']} {r['seconds']:>7.1f} s  {' '.join(r['cmd'][3:])}")


def play(
    out: Path,
    tasks: list[str],
    llm: str,
    seeds: list[int],
    episodes: int,
    deadline: float,
    workers: int,
    first_seed: int,
) -> None:
    play_dir = out / "play"
    play_dir.mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    jobs = []
    for t in tasks:
        arms = {
            "llm": llm,
            **{f"guided-s{s}": f"guided:{llm}+{out / 'values' / f'{t}-s{s}'}" for s in seeds},
        }
        for arm, policy in arms.items():
            cmd = lmrl(
                "--db",
                str(play_dir / f"{t}-{arm}.db"),
                "generate",
                t,
                "--episodes",
                str(episodes),
                "--seed",
                str(first_seed),
                "--policy",
                policy,
                "--batch",
                "1",
                "--quiet",
            )
            jobs.append((cmd, out / "logs" / f"play-{t}-{arm}.log"))
    runs = _parallel(jobs, workers or len(jobs), deadline)
    (out / "play.json").write_text(
        json.dumps({"llm": llm, "deadline": deadline, "runs": runs}, indent=1)
    )
    for r in runs:
        print(f"rc={r['rc']} {r['seconds']:>7.1f} s  {r['cmd'][4]}")


def _episodes(db: Path, task: str) -> dict[int, dict[str, Any]]:
    """seed -> {return, success, turns, chosen_by_model} of the store's finished agent episodes."""
    from data.datasets import DatasetQuery, load_episodes, select_episode_ids
    from data.store import Store

    store = Store(str(db))
    try:
        ids = select_episode_ids(store, DatasetQuery(task=task, sources=[]))  # one arm per store
        out = {}
        for ep in load_episodes(store, ids):
            infos = [s.get("info") for s in ep.steps]
            infos = [json.loads(i) if isinstance(i, str) else (i or {}) for i in infos]
            notes = [i.get("guided") for i in infos if isinstance(i, dict) and i.get("guided")]
            out[int(ep.episode["seed"])] = {
                "return": float(ep.episode["return"]),
                "success": float(bool(ep.episode["success"])),
                "turns": len(ep.steps),
                "guided_turns": len(notes),
                "by_model": sum(n.get("chosen_by") == "model" for n in notes),
            }
        return out
    finally:
        store.close()


def _fmt(c: dict[str, Any], pct: bool) -> str:
    if c["mean"] is None:
        return "–"
    f = (lambda v: f"{100 * v:.1f} %") if pct else (lambda v: f"{v:.2f}")
    if c["ci_low"] is None or c["n"] < 2:
        return f(c["mean"])
    return f"{f(c['mean'])} ({f(c['ci_low'])} to {f(c['ci_high'])})"


def report(out: Path, rl: dict[str, list[str]]) -> dict[str, Any]:
    from training.reproduce.report import seed_ci as _ci

    play_dir = out / "play"
    meta = json.loads((out / "play.json").read_text()) if (out / "play.json").exists() else {}
    secs = {Path(r["cmd"][4]).stem: r["seconds"] for r in meta.get("runs", [])}
    tasks = sorted({p.stem.split("-llm")[0] for p in play_dir.glob("*-llm.db")})
    result: dict[str, Any] = {"llm": meta.get("llm"), "deadline": meta.get("deadline"), "tasks": {}}
    for t in tasks:
        arms = {
            p.stem[len(t) + 1 :]: _episodes(p, t)
            for p in sorted(play_dir.glob(f"{t}-*.db"))
            if not p.stem[len(t) + 1 :].startswith("rl")
        }
        common = sorted(set.intersection(*(set(a) for a in arms.values()))) if arms else []
        for i, ck in enumerate(rl.get(t, [])):  # RL checkpoints: played here on the common seeds
            db = play_dir / f"{t}-rl{i}.db"
            if common and not db.exists():
                _run(
                    lmrl(
                        "--db",
                        str(db),
                        "generate",
                        t,
                        "--episodes",
                        str(max(common) + 1),
                        "--seed",
                        "0",
                        "--policy",
                        ck,
                        "--quiet",
                    ),
                    out / "logs" / f"play-{t}-rl{i}.log",
                )
            arms[f"rl{i}"] = _episodes(db, t) if db.exists() else {}
        rows: dict[str, Any] = {}
        groups = {
            "llm": ["llm"],
            "guided": sorted(a for a in arms if a.startswith("guided")),
            "rl": sorted(a for a in arms if a.startswith("rl")),
        }
        for group, names in groups.items():
            if not names:
                continue
            per = [[arms[n][s] for s in common if s in arms[n]] for n in names]
            if len(names) > 1:  # mean over the training seeds of each seed's mean
                succ = _ci([statistics.mean(e["success"] for e in p) for p in per if p])
                ret = _ci([statistics.mean(e["return"] for e in p) for p in per if p])
                over = "value / training seeds"
            else:  # one run: over episodes
                succ = _ci([e["success"] for e in per[0]])
                ret = _ci([e["return"] for e in per[0]])
                over = "episodes"
            eps = [e for p in per for e in p]
            gturns = sum(e["guided_turns"] for e in eps)
            rows[group] = {
                "arms": names,
                "ci_over": over,
                "episodes": len(eps),
                "success": succ,
                "return": ret,
                "turns": statistics.mean(e["turns"] for e in eps) if eps else None,
                "model_chose": (sum(e["by_model"] for e in eps) / gturns) if gturns else None,
                "finished": {n: len(arms[n]) for n in names},
                "seconds": {n: secs.get(f"{t}-{n}") for n in names},
            }
        result["tasks"][t] = {"common_seeds": common, "rows": rows}
    (out / "results.json").write_text(json.dumps(result, indent=1))
    (out / "results.md").write_text(markdown(result))
    print(markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Language model: `{result.get('llm')}`; each arm stopped after {result.get('deadline')} s.",
        "",
        "| task | arm | seeds (common) | success | return | turns | model's answer chose | finished per arm |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t, r in result["tasks"].items():
        for group, row in r["rows"].items():
            chose = "–" if row["model_chose"] is None else f"{100 * row['model_chose']:.0f} %"
            fin = ", ".join(f"{n} {k}" for n, k in row["finished"].items())
            turns = "–" if row["turns"] is None else f"{row['turns']:.1f}"
            lines.append(
                f"| {t} | {group} ({row['ci_over']}) | {len(r['common_seeds'])} | "
                f"{_fmt(row['success'], True)} | {_fmt(row['return'], False)} | {turns} | {chose} | {fin} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("values", "play", "report"))
    ap.add_argument("out", type=Path)
    ap.add_argument("--tasks", nargs="+", default=list(TASKS))
    ap.add_argument(
        "--seeds", nargs="+", type=int, default=[0, 1, 2], help="value-function training seeds"
    )
    ap.add_argument("--steps", type=int, default=3000, help="values: training steps")
    ap.add_argument("--data-episodes", type=int, default=2000)
    ap.add_argument("--llm", default="hf:smollm2-135m")
    ap.add_argument("--episodes", type=int, default=100, help="play: evaluation seeds first-seed..")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--deadline", type=float, default=None, help="play: seconds per arm")
    ap.add_argument("--jobs", type=int, default=0, help="processes side by side (0: all)")
    ap.add_argument("--rl", action="append", default=[], metavar="TASK=CHECKPOINT")
    args = ap.parse_args()
    if args.mode == "values":
        values(args.out, args.tasks, args.seeds, args.steps, args.data_episodes, args.jobs or 9)
    elif args.mode == "play":
        play(
            args.out,
            args.tasks,
            args.llm,
            args.seeds,
            args.episodes,
            args.deadline,
            args.jobs,
            args.first_seed,
        )
    else:
        rl: dict[str, list[str]] = {}
        for item in args.rl:
            task, _, ck = item.partition("=")
            rl.setdefault(task, []).append(ck)
        report(args.out, rl)


if __name__ == "__main__":
    sys.exit(main())
