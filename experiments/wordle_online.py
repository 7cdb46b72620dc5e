"""Wordle (``words=small``): BC against online %BC and PPO from it, over training seeds (issue #12).

The recipe of ``docs/notes/wordle.md`` (Wordle's online task defaults), run for several training
seeds so that the comparison has a confidence interval over seeds, not only over games:

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
   times and the exact commands (the table: ``experiments/wordle_online_table.py``).

    python experiments/wordle_online.py run OUT [--seeds 0 1 2] [--jobs 2] [--games 60000] [--rounds 150]
    python experiments/wordle_online.py report OUT [--merge EARLIER/results.json ...]

``--task wordle-lmrl --vocab-file PATH`` (given to both) plays LMRL's own game instead: its feedback
rule and its 431-word list (LMRL-Gym's ``wordle_official_400.txt``, not shipped), where the table
adds LMRL's normalised score.

``--merge`` adds the seeds of an earlier run's ``results.json`` (e.g. ``results/wordle-online``) that
``OUT`` lacks, with their commands and the commit they ran at, so that seeds run in several sessions
make one table.

Every step skips what is done (a training run that ended with rc 0 in ``steps.json``, an evaluation
whose JSON exists); a run killed part-way continues from its last checkpoint (``--resume``). An
online run starts as soon as its seed's BC has finished, and each checkpoint is evaluated as soon as
it is trained.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "experiments"))
from guided_llm import DATA_SEED, _run, lmrl  # noqa: E402
from wordle_online_table import markdown  # noqa: E402  (experiments/wordle_online_table.py)

from training.reproduce.runners import side_by_side  # noqa: E402

TASK = "wordle"
OPTION = ["--option", "words=small"]
"""The game: ``wordle --option words=small`` by default; ``--task wordle-lmrl --vocab-file PATH`` plays
LMRL's own (its rule and its 431-word list, which is not shipped), where LMRL's normalised score
applies (main sets both)."""
BC_FLAGS = [
    "--n-layer",
    "4",
    "--n-embd",
    "128",
    "--batch-size",
    "64",
    "--lr-schedule",
    "linear",
    "--warmup-steps",
    "100",
    "--eval-episodes",
    "0",
    "--no-progress",
]
ONLINE = ("online-filtered-bc", "ppo")
ONLINE_FLAGS = {"ppo": ["--batch-size", "64"]}
"""The flags of the Wordle note's table (docs/notes/wordle.md) beside the task defaults."""


def _steps(out: Path) -> dict[str, Any]:
    f = out / "steps.json"
    return json.loads(f.read_text()) if f.exists() else {}


def _shown(cmd: list[str], out: Path) -> str:
    """The command as run from the checkout, with OUT for the results folder (no machine paths)."""
    words = [
        "python"
        if a == sys.executable
        else "vocab_file=PATH"
        if a.startswith("vocab_file=")
        else a.replace(str(out), "OUT").replace(str(ROOT) + "/", "")
        for a in cmd
    ]
    return " ".join(words)


def _record(out: Path, key: str, value: Any) -> None:
    """Add one entry to ``steps.json`` (under a file lock: the runs side by side, and two invocations
    on other seeds, may write at once)."""
    if isinstance(value, dict) and "cmd" in value:
        value = {**value, "cmd": _shown(value["cmd"], out)}
    with (out / "steps.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        steps = _steps(out)
        steps[key] = value
        tmp = out / "steps.json.tmp"
        tmp.write_text(json.dumps(steps, indent=1, default=str) + "\n")
        tmp.replace(out / "steps.json")


def data(out: Path, games: int) -> None:
    if "data" in _steps(out):
        return
    cmd = lmrl(
        "--db",
        str(out / "store.db"),
        "generate",
        TASK,
        "--policy",
        "consistent",
        "--episodes",
        str(games),
        "--seed",
        str(DATA_SEED),
        "--quiet",
        *OPTION,
    )
    _record(out, "data", _run(cmd, out / "logs" / "data.log"))


def _trained(out: Path, name: str) -> bool:
    return (_steps(out).get(f"train {name}") or {}).get("rc") == 0


def _train_cmd(out: Path, algo: str, seed: int, bc_steps: int, rounds: int) -> list[str]:
    run = out / "runs" / f"{algo}-s{seed}"
    if algo == "bc":
        flags = ["--max-steps", str(bc_steps), *BC_FLAGS]
    else:
        flags = [
            "--init",
            str(out / "runs" / f"bc-s{seed}"),
            "--rounds",
            str(rounds),
            "--eval-every",
            "0",
            *ONLINE_FLAGS.get(algo, []),
        ]
    if (run / "checkpoint").exists():
        flags.append("--resume")  # killed part-way: continue from its last checkpoint
    return lmrl(
        "--db",
        str(out / "store.db"),
        "train",
        algo,
        "--task",
        TASK,
        *OPTION,
        "--seed",
        str(seed),
        "--out",
        str(run),
        *flags,
    )


def _eval(out: Path, name: str, games: int) -> dict[str, Any] | None:
    from training.reproduce.runners import last_json as _last_json

    if (out / "eval" / f"{name}.json").exists():
        return None
    log = out / "eval" / f"{name}.log"
    res = _run(
        lmrl(
            "--db",
            str(out / "store.db"),
            "eval",
            str(out / "runs" / name),
            "--task",
            TASK,
            *OPTION,
            "--episodes",
            str(games),
            "--seed",
            "0",
        ),
        log,
    )
    got = _last_json(log.read_text())
    if res["rc"] == 0 and got:
        got["eval_seconds"] = res["seconds"]
        (out / "eval" / f"{name}.json").write_text(json.dumps(got, indent=1, default=str) + "\n")
    return res


def train_and_eval(
    out: Path, seeds: list[int], bc_steps: int, rounds: int, jobs: int, algos: list[str], games: int
) -> None:
    """Every (algorithm, seed): its training (an online run after its seed's BC), then its evaluation;
    ``jobs`` of them side by side."""
    (out / "eval").mkdir(parents=True, exist_ok=True)
    order = [("bc", s) for s in seeds] + [(a, s) for s in seeds for a in algos if a != "bc"]

    def one(algo: str, seed: int) -> None:
        name = f"{algo}-s{seed}"
        if algo != "bc" and not _trained(out, f"bc-s{seed}"):
            return  # (side_by_side starts this after its seed's BC)
        if not _trained(out, name):
            from training.reproduce.report import git_commit

            commit = git_commit()  # the code this run starts from (a long series outlives commits)
            res = _run(
                _train_cmd(out, algo, seed, bc_steps, rounds), out / "logs" / f"train-{name}.log"
            )
            _record(out, f"train {name}", {**res, "commit": commit})
            if res["rc"] != 0:
                print(
                    f"{name}: training failed (rc {res['rc']}); see logs/train-{name}.log",
                    file=sys.stderr,
                )
                return
        res = _eval(out, name, games)
        if res is not None:
            _record(out, f"eval {name}", res)

    side_by_side(order, jobs, one)


def _reference(games: int = 1000) -> tuple[float, float]:
    """(LMRL's behaviour data's mean return, the strong player's): the score's 50 and 100, on the
    evaluation seeds (as the Wordle note's table scores, docs/notes/wordle.md)."""
    import envs
    from envs.players.agents import make_agent

    means = []
    for policy, n in (("behaviour", games), ("strong", 100)):
        task = envs.make(TASK, **_options())
        agent = make_agent(TASK, policy, role=envs.spec(TASK).roles[0])
        rets = [envs.run_episode(task, agent, seed=s).total_return for s in range(n)]
        task.close()
        means.append(sum(rets) / len(rets))
    return means[0], means[1]


def _options() -> dict[str, str]:
    return dict(OPTION[i + 1].split("=", 1) for i in range(0, len(OPTION), 2))


def _merge(
    rows: dict[str, dict[str, Any]], steps: dict[str, Any], earlier: Path, ref: tuple[float, float]
) -> None:
    """Add ``earlier``'s per-seed figures for the (algorithm, seed) pairs ``rows`` lacks, and their steps."""
    prev = json.loads(earlier.read_text())
    if prev.get("task", "wordle") != TASK:
        raise SystemExit(f"{earlier}: a {prev.get('task', 'wordle')} table, not {TASK}")
    pref = prev["reference"]
    if (round(pref["data_mean_return"], 3), round(pref["strong_mean_return"], 3)) != tuple(
        round(x, 3) for x in ref
    ):
        raise SystemExit(
            f"{earlier}: its score's reference returns differ from these ({pref} against {ref})"
        )
    for row in prev["rows"]:
        have = {s["seed"] for s in rows.get(row["algorithm"], {}).get("seeds", [])}
        for s in row["seeds"]:
            if s["seed"] not in have:
                rows.setdefault(row["algorithm"], {"algorithm": row["algorithm"], "seeds": []})[
                    "seeds"
                ].append({**s, "commit": s.get("commit") or prev.get("commit")})
                for key in (
                    f"train {row['algorithm']}-s{s['seed']}",
                    f"eval {row['algorithm']}-s{s['seed']}",
                ):
                    if key in prev["steps"] and key not in steps:
                        steps[key] = prev["steps"][key]


def report(out: Path, merge: list[Path] | None = None) -> dict[str, Any]:
    from training.reproduce.report import git_commit, seed_ci, versions

    lo, hi = _reference()
    commit = git_commit()
    rows: dict[str, dict[str, Any]] = {}
    steps = _steps(out)
    for ev in sorted((out / "eval").glob("*.json")):
        algo, seed = ev.stem.rsplit("-s", 1)
        e = json.loads(ev.read_text())
        ret = e["mean_return"]
        rows.setdefault(algo, {"algorithm": algo, "seeds": []})["seeds"].append(
            {
                "seed": int(seed),
                "success": e["success_rate"],
                "return": ret,
                "score": 50 + 50 * (ret - lo) / (hi - lo),
                "games": e.get("episodes"),
                "eval_s": e.get("eval_seconds"),
                "lmrl": e.get("normalised_lmrl"),
                "commit": (steps.get(f"train {algo}-s{seed}") or {}).get("commit") or commit,
            }
        )
    for earlier in merge or []:
        _merge(rows, steps, earlier, (lo, hi))
    for r in rows.values():
        r["seeds"].sort(key=lambda s: s["seed"])
    bc = {s["seed"]: s for s in rows.get("bc", {}).get("seeds", [])}
    for r in rows.values():
        for key in ("success", "return", "score"):
            r[key] = seed_ci([s[key] for s in r["seeds"]])
        if all(s.get("lmrl") is not None for s in r["seeds"]):  # LMRL's game: its normalised score
            r["lmrl"] = seed_ci([s["lmrl"] for s in r["seeds"]])
        paired = [s for s in r["seeds"] if s["seed"] in bc]
        if r["algorithm"] != "bc" and paired:  # each seed against the BC it started from
            r["gain_seeds"] = [s["seed"] for s in paired]
            r["score_gain"] = seed_ci([s["score"] - bc[s["seed"]]["score"] for s in paired])
            r["return_gain"] = seed_ci([s["return"] - bc[s["seed"]]["return"] for s in paired])
    result = {
        "task": TASK,
        "options": _shown(OPTION, out).split(" ")[1::2],
        "reference": {"data_mean_return": lo, "strong_mean_return": hi},
        "steps": steps,
        "versions": versions(),
        "commit": commit,
        "rows": [rows[a] for a in ("bc", *ONLINE) if a in rows],
    }
    (out / "results.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (out / "results.md").write_text(markdown(result))
    print(markdown(result))
    return result


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
    ap.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        default=[],
        help="earlier results.json files to add seeds from",
    )
    ap.add_argument(
        "--task",
        choices=["wordle", "wordle-lmrl"],
        default="wordle",
        help="wordle-lmrl: LMRL's feedback rule (give --vocab-file for LMRL's game)",
    )
    ap.add_argument(
        "--vocab-file", type=Path, help="the game's word list (LMRL-Gym's wordle_official_400.txt)"
    )
    args = ap.parse_args()
    global TASK, OPTION
    TASK = args.task
    if args.vocab_file:
        OPTION = ["--option", f"vocab_file={args.vocab_file.resolve()}"]
    out = args.out.resolve()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    if args.cmd == "run":
        algos = ["bc", *[a for a in args.algorithms if a != "bc"]]
        t0 = time.time()
        data(out, args.games)
        train_and_eval(
            out, args.seeds, args.bc_steps, args.rounds, args.jobs, algos, args.eval_games
        )
        _record(out, "run_wall_s", round(time.time() - t0, 1))
    report(out, args.merge)


if __name__ == "__main__":
    main()
