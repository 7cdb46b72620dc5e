"""Wordle (``words=small``): BC against online %BC and PPO from it, over training seeds (issue #12).

The recipe of ``training/README.md`` (section Wordle), run for several training seeds so that the
comparison has a confidence interval over seeds, not only over games:

1. ``data``: games of the ``consistent`` player (every guess a random answer still consistent with
   the feedback) from the data seeds ``100000..``, into ``OUT/store.db``;
2. ``train``: per seed, BC (4 layers x 128, 2,500 steps, linear decay), then online %BC and PPO
   from that seed's BC (``--rounds``, the task's online defaults), ``--jobs`` runs side by side,
   each on one thread;
3. ``eval``: every checkpoint plays the evaluation seeds ``0..`` (``--eval-games``), disjoint from
   the data's and from the online rollouts' (1,000,000..);
4. ``report``: ``results.md`` / ``results.json``: per algorithm the mean over training seeds and its
   95 % t interval of the success rate, the mean return and the score (the mean return of LMRL's
   behaviour recipe on these seeds = 50, the ``strong`` player's = 100), each seed's figures, wall
   times and the exact commands.

    python bench/wordle_online.py run OUT [--seeds 0 1 2] [--jobs 2] [--games 60000] [--rounds 150]
    python bench/wordle_online.py report OUT

Every step skips what is done (a run whose checkpoint exists, an evaluation whose JSON exists), so a
killed run continues where it stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from guided_llm import DATA_SEED, _parallel, _run, lmrl  # noqa: E402

OPTION = ["--option", "words=small"]
BC_FLAGS = ["--n-layer", "4", "--n-embd", "128", "--batch-size", "64", "--lr-schedule", "linear",
            "--warmup-steps", "100", "--eval-episodes", "0", "--no-progress"]  # fmt: skip
ONLINE = ("online-filtered-bc", "ppo")
ONLINE_FLAGS = {"ppo": ["--batch-size", "64"]}
"""The flags of training/README.md's table beside the task defaults."""


def _steps(out: Path) -> dict[str, Any]:
    f = out / "steps.json"
    return json.loads(f.read_text()) if f.exists() else {}


def _shown(cmd: list[str], out: Path) -> str:
    """The command as run from the checkout, with OUT for the results folder (no machine paths)."""
    words = ["python" if a == sys.executable else a.replace(str(out), "OUT").replace(str(ROOT) + "/", "")
             for a in cmd]  # fmt: skip
    return " ".join(words)


def _record(out: Path, key: str, value: Any) -> None:
    steps = _steps(out)
    if isinstance(value, dict) and "cmd" in value:
        value = {**value, "cmd": _shown(value["cmd"], out)}
    steps[key] = value
    (out / "steps.json").write_text(json.dumps(steps, indent=1, default=str) + "\n")


def data(out: Path, games: int) -> None:
    if "data" in _steps(out):
        return
    cmd = lmrl("--db", str(out / "store.db"), "generate", "wordle", "--policy", "consistent", "--episodes",
               str(games), "--seed", str(DATA_SEED), "--quiet", *OPTION)  # fmt: skip
    _record(out, "data", _run(cmd, out / "logs" / "data.log"))


def train(out: Path, seeds: list[int], bc_steps: int, rounds: int, jobs: int, algos: list[str]) -> None:
    db = ["--db", str(out / "store.db")]

    def job(algo: str, seed: int) -> tuple[list[str], Path] | None:
        run = out / "runs" / f"{algo}-s{seed}"
        if (run / "checkpoint" / "lmrl.json").exists():
            return None
        if algo == "bc":
            flags = ["--max-steps", str(bc_steps), *BC_FLAGS]
        else:
            flags = ["--init", str(out / "runs" / f"bc-s{seed}"), "--rounds", str(rounds), "--eval-every", "0",
                     *ONLINE_FLAGS.get(algo, [])]  # fmt: skip
        cmd = lmrl(*db, "train", algo, "--task", "wordle", *OPTION, "--seed", str(seed), "--out", str(run), *flags)
        return cmd, out / "logs" / f"train-{algo}-s{seed}.log"

    # BC of every seed first, then the online runs (each needs its seed's BC)
    for wave in (["bc"], [a for a in algos if a != "bc"]):
        jobs_ = [j for a in wave for s in seeds if (j := job(a, s)) is not None]
        for res in _parallel(jobs_, jobs):
            _record(out, "train " + Path(res["cmd"][res["cmd"].index("--out") + 1]).name, res)


def evaluate(out: Path, seeds: list[int], games: int, jobs: int, algos: list[str]) -> None:
    todo = []
    for algo in algos:
        for seed in seeds:
            run, res = out / "runs" / f"{algo}-s{seed}", out / "eval" / f"{algo}-s{seed}.log"
            if (run / "checkpoint").exists() and not (out / "eval" / f"{algo}-s{seed}.json").exists():
                todo.append((lmrl("--db", str(out / "store.db"), "eval", str(run), "--task", "wordle", *OPTION,
                                  "--episodes", str(games), "--seed", "0"), res))  # fmt: skip
    (out / "eval").mkdir(parents=True, exist_ok=True)
    for res in _parallel(todo, jobs):
        log = Path(res["cmd"][res["cmd"].index("eval") + 1]).name
        text = (out / "eval" / f"{log}.log").read_text()
        from training.reproduce import _last_json

        got = _last_json(text)
        if got:
            got["eval_seconds"] = res["seconds"]
            (out / "eval" / f"{log}.json").write_text(json.dumps(got, indent=1, default=str) + "\n")


def _reference(games: int = 1000) -> tuple[float, float]:
    """(LMRL's behaviour data's mean return, the strong player's): the score's 50 and 100, on the
    evaluation seeds (as training/README.md's Wordle table scores)."""
    import envs
    from envs.core.agents import make_agent

    means = []
    for policy, n in (("behaviour", games), ("strong", 100)):
        task = envs.make("wordle", words="small")
        agent = make_agent("wordle", policy, role=envs.spec("wordle").roles[0])
        rets = [envs.run_episode(task, agent, seed=s).total_return for s in range(n)]
        task.close()
        means.append(sum(rets) / len(rets))
    return means[0], means[1]


def report(out: Path) -> dict[str, Any]:
    from training.reproduce_report import seed_ci

    lo, hi = _reference()
    rows: dict[str, dict[str, Any]] = {}
    for ev in sorted((out / "eval").glob("*.json")):
        algo, seed = ev.stem.rsplit("-s", 1)
        e = json.loads(ev.read_text())
        ret = e["mean_return"]
        rows.setdefault(algo, {"algorithm": algo, "seeds": []})["seeds"].append({
            "seed": int(seed), "success": e["success_rate"], "return": ret, "score": 50 + 50 * (ret - lo) / (hi - lo),
            "games": e.get("episodes"), "eval_s": e.get("eval_seconds")})  # fmt: skip
    for r in rows.values():
        for key in ("success", "return", "score"):
            r[key] = seed_ci([s[key] for s in r["seeds"]])
    result = {"reference": {"data_mean_return": lo, "strong_mean_return": hi}, "steps": _steps(out),
              "rows": [rows[a] for a in ("bc", *ONLINE) if a in rows]}  # fmt: skip
    (out / "results.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (out / "results.md").write_text(markdown(result))
    print(markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    def ci(c: dict[str, Any], scale: float = 1.0, fmt: str = "{:.1f}") -> str:
        if c["mean"] is None:
            return "–"
        return f"{fmt.format(scale * c['mean'])} ({fmt.format(scale * c['ci_low'])} to {fmt.format(scale * c['ci_high'])})"

    ref = result["reference"]
    lines = [f"Score: 50 = LMRL's behaviour recipe's mean return ({ref['data_mean_return']:.3f}), 100 = the strong "
             f"player's ({ref['strong_mean_return']:.3f}). Mean over training seeds, 95 % t interval.", "",
             "| algorithm | seeds | success | mean return | score | score per seed |", "|---|---|---|---|---|---|"]  # fmt: skip
    for r in result["rows"]:
        per = " / ".join(f"{s['score']:.1f}" for s in r["seeds"])
        lines.append(f"| {r['algorithm']} | {len(r['seeds'])} | {ci(r['success'], 100)} % | "
                     f"{ci(r['return'], fmt='{:.3f}')} | {ci(r['score'])} | {per} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["run", "report"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--jobs", type=int, default=2, help="runs side by side")
    ap.add_argument("--games", type=int, default=60_000, help="games of the consistent player")
    ap.add_argument("--bc-steps", type=int, default=2500)
    ap.add_argument("--rounds", type=int, default=150, help="online rounds")
    ap.add_argument("--eval-games", type=int, default=1000)
    ap.add_argument("--algorithms", nargs="+", default=["bc", *ONLINE], choices=["bc", *ONLINE])
    args = ap.parse_args()
    out = args.out.resolve()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    if args.cmd == "run":
        algos = ["bc", *[a for a in args.algorithms if a != "bc"]]
        t0 = time.time()
        data(out, args.games)
        train(out, args.seeds, args.bc_steps, args.rounds, args.jobs, algos)
        evaluate(out, args.seeds, args.eval_games, args.jobs, algos)
        _record(out, "run_wall_s", round(time.time() - t0, 1))
    report(out)


if __name__ == "__main__":
    main()
