"""``lmrl reproduce`` running its steps: the smoke reproduction end to end, ``--train-flag`` on
every run (or some algorithms' only), a recipe starting an offline run from its seed's BC, and an online run
judged by the checkpoint it kept. The recipes and the table are in test_reproduce.py, --jobs in
test_reproduce_jobs.py."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest


@pytest.mark.slow
def test_smoke_reproduction_writes_results_and_resumes(tmp_path):
    pytest.importorskip("torch")
    from training.algorithms import run_command
    from training.reproduce.run import Reproduction
    from training.reproduce.runners import in_process

    out = tmp_path / "maze-fo"
    calls: list[list[str]] = []

    def runner(argv):
        calls.append(argv)
        return in_process(run_command)(argv)

    rep = Reproduction(
        "maze-fo",
        out,
        budget="smoke",
        seeds=3,
        algorithms=["%bc", "ppo"],
        runner=runner,
        log=lambda _line: None,
    )
    res = rep.run()
    assert rep.algorithms == ["bc", "%bc", "ppo"]  # PPO starts from BC
    assert len(calls) == 3 * 3 * 2  # train + eval per (algorithm, seed)
    assert [c[c.index("train") + 1] for c in calls if "train" in c][:3] == [
        "bc",
        "bc",
        "bc",
    ]  # by algorithm
    for name in ("results.md", "results.json", "dataset.json", "store.db"):
        assert (out / name).exists()
    saved = json.loads((out / "results.json").read_text())
    assert saved["training_seeds"] == [0, 1, 2]
    assert saved["dataset"]["seeds"] == "100000..100029"
    assert saved["versions"]["torch"] and saved["versions"]["python"]
    for algo in ("bc", "%bc", "ppo"):
        row = saved["algorithms"][algo]
        for metric in ("mean_return", "normalised_lmrl", "success_rate"):
            c = row[metric]
            assert c["n"] == 3 and c["ci_low"] <= c["mean"] <= c["ci_high"], (algo, metric)
        assert row["normalised_lmrl"]["mean"] >= 0.0
        assert row["table2"] == {"bc": 58.2, "%bc": 68.9, "ppo": 79.7}[algo]
        assert len(row["commands"]) == 6 and row["wall_s"] > 0
    md = (out / "results.md").read_text()
    assert "| Online PPO |" in md and "79.7" in md and "lmrl --db store.db train ppo" in md
    assert "--seeds 3 --algorithms bc %bc ppo`" in md  # the title's command runs this table again
    assert "**Against BC**, on LMRL's normalised score" in md
    assert saved["versus_bc"]["ppo"]["starts_from_bc"] and saved["versus_bc"]["%bc"][
        "paired_seeds"
    ] == [0, 1, 2]
    assert str(tmp_path) not in md and str(tmp_path) not in (out / "results.json").read_text()
    assert (
        res["algorithms"]["bc"]["normalised_lmrl"]["values"]
        == saved["algorithms"]["bc"]["normalised_lmrl"]["values"]
    )
    # the store has every run and evaluation
    with sqlite3.connect(out / "store.db") as db:
        assert db.execute("SELECT COUNT(*) FROM runs WHERE status = 'finished'").fetchone()[0] == 9
        assert (
            db.execute(
                "SELECT COUNT(*) FROM evaluations WHERE checkpoint_id IS NOT NULL"
            ).fetchone()[0]
            == 9
        )

    # resumable: a rerun trains nothing and writes the same table; one more seed trains only it
    calls.clear()
    again = Reproduction(
        "maze-fo",
        out,
        budget="smoke",
        seeds=3,
        algorithms=["%bc", "ppo"],
        runner=runner,
        log=lambda _line: None,
    ).run()
    assert calls == [] and again["algorithms"] == res["algorithms"]
    Reproduction(
        "maze-fo",
        out,
        budget="smoke",
        seeds=4,
        algorithms=["bc"],
        runner=runner,
        log=lambda _line: None,
    ).run()
    assert (
        len(calls) == 2 and "--seed" in calls[0] and calls[0][calls[0].index("--seed") + 1] == "3"
    )


def test_train_flags_reach_every_run_and_the_bisim_loss_the_table(tmp_path):
    """``--train-flag`` goes last on every ``lmrl train`` line (so it wins over the recipe's),
    results.json/.md name it, and the value learners' final bisimulation loss gets its CI."""
    from training.cli import build_parser
    from training.reproduce.run import Reproduction

    args = build_parser().parse_args(
        ["reproduce", "maze-fo", "--train-flag=--bisim-weight=1", "--train-flag=--max-steps=7"]
    )
    assert args.train_flags == ["--bisim-weight=1", "--max-steps=7"]
    trains: list[list[str]] = []

    def runner(argv):  # the train and eval commands' last JSON lines, without training anything
        if "train" in argv:
            trains.append(argv)
            seed = int(argv[argv.index("--seed") + 1])
            return 0, json.dumps(
                {
                    "step": 7,
                    "run_id": seed + 1,
                    "checkpoint_id": seed + 1,
                    "bisim_loss": 0.01 * (seed + 1),
                }
            )
        return 0, json.dumps(
            {
                "episodes": 25,
                "method": "exact",
                "mean_return": -10.0,
                "success_rate": 0.5,
                "normalised_lmrl": 60.0,
            }
        )

    res = Reproduction(
        "maze-fo",
        tmp_path / "r",
        budget="smoke",
        seeds=3,
        algorithms=["bc", "ilql"],
        runner=runner,
        log=lambda _line: None,
        train_flags=args.train_flags,
    ).run()
    assert len(trains) == 6 and all(a[-2:] == ["--bisim-weight=1", "--max-steps=7"] for a in trains)
    assert res["train_flags"] == ["--bisim-weight=1", "--max-steps=7"]
    bisim = res["algorithms"]["ilql"]["bisim_loss"]
    assert (
        bisim["values"] == pytest.approx([0.01, 0.02, 0.03])
        and bisim["ci_low"] < 0.02 < bisim["ci_high"]
    )
    assert (
        "bisim_loss" in res["algorithms"]["bc"]
    )  # the fake reports it for BC too; real BC does not
    md = (tmp_path / "r" / "results.md").read_text()
    assert "--train-flag=--bisim-weight=1 --train-flag=--max-steps=7`" in md
    assert "Bisimulation loss" in md and "ILQL 0.0200 (" in md
    assert "--bisim-weight=1 --max-steps=7" in res["algorithms"]["ilql"]["commands"][0]


def test_a_train_flag_can_name_the_algorithms_it_is_for(tmp_path):
    """``--train-flag=ppo,online-%bc:--rounds=24`` reaches only those runs (BC, which has no
    --rounds, runs as before); the table's title and commands show it; a flag for an unknown
    algorithm, or one that is no flag, is refused in one line before anything runs."""
    from training.errors import TrainingError
    from training.reproduce.run import Reproduction

    trains: dict[str, list[str]] = {}

    def runner(argv):
        if "train" in argv:
            trains[argv[argv.index("train") + 1] + argv[argv.index("--seed") + 1]] = argv
            return 0, json.dumps({"step": 3, "run_id": 1, "checkpoint_id": 1})
        return 0, json.dumps(
            {
                "episodes": 25,
                "method": "exact",
                "mean_return": -10.0,
                "success_rate": 0.5,
                "normalised_lmrl": 60.0,
            }
        )

    flags = ["ppo,online-%bc:--rounds=24", "--max-steps=5"]
    res = Reproduction(
        "maze-fo",
        tmp_path / "r",
        budget="smoke",
        seeds=1,
        algorithms=["ppo", "online-filtered-bc"],
        runner=runner,
        log=lambda _line: None,
        train_flags=flags,
    ).run()
    assert sorted(trains) == ["bc0", "online-filtered-bc0", "ppo0"]
    assert "--rounds=24" not in trains["bc0"] and trains["bc0"][-1] == "--max-steps=5"
    for algo in ("ppo0", "online-filtered-bc0"):
        assert trains[algo][trains[algo].index("--rounds=24") + 1] == "--max-steps=5"
    assert "--rounds=24" in res["algorithms"]["ppo"]["commands"][0]
    assert "--rounds=24" not in res["algorithms"]["bc"]["commands"][0]
    assert "--train-flag=ppo,online-%bc:--rounds=24" in (tmp_path / "r" / "results.md").read_text()
    for bad, says in (
        ("dqn:--rounds=2", "unknown algorithm 'dqn'"),
        ("ppo:rounds=2", "ALGORITHMS:FLAG"),
        ("rounds=2", "ALGORITHMS:FLAG"),
    ):
        with pytest.raises(TrainingError, match=says):
            Reproduction(
                "maze-fo", tmp_path / "x", budget="smoke", runner=runner, train_flags=[bad]
            )


def test_a_recipe_can_start_an_offline_run_from_its_seeds_bc(tmp_path):
    """textnav-po's ILQL starts from the same seed's BC checkpoint (LMRL's workflow; measured in
    docs/notes/bisimulation.md), with the recipe's flags; BC is added, runs first and is waited for; other
    tasks' ILQL starts from scratch."""
    import threading

    from training.reproduce.recipes import starts_from_bc
    from training.reproduce.run import Reproduction

    assert starts_from_bc("textnav-po", "ilql") and starts_from_bc("maze-fo", "ppo")
    assert not starts_from_bc("maze-fo", "ilql") and not starts_from_bc("textnav-po", "mc")
    lock, events, trains = threading.Lock(), [], {}

    def runner(argv):
        cmd = "train" if "train" in argv else "eval"
        name = argv[argv.index("--out") + 1] if cmd == "train" else argv[argv.index("eval") + 1]
        with lock:
            events.append((cmd, name.rsplit("/", 1)[-1]))
            if cmd == "train":
                trains[name.rsplit("/", 1)[-1]] = argv
        if cmd == "train":
            return 0, json.dumps({"step": 3, "run_id": 1, "checkpoint_id": 1})
        return 0, json.dumps(
            {"episodes": 2, "method": "sampled", "mean_return": 0.5, "success_rate": 0.5}
        )

    out = tmp_path / "r"
    Reproduction(
        "textnav-po",
        out,
        budget="smoke",
        seeds=2,
        algorithms=["ilql"],
        runner=runner,
        log=lambda _line: None,
        jobs=2,
    ).run()
    for seed in range(2):
        argv = trains[f"ilql-s{seed}"]
        assert argv[argv.index("--model") + 1] == str(
            out.resolve() / "runs" / f"bc-s{seed}" / "checkpoint"
        )
        assert (
            argv[argv.index("--tau") + 1] == "0.8"
            and argv[argv.index("--logit-weight") + 1] == "0.1"
        )
        assert events.index(("train", f"ilql-s{seed}")) > events.index(("eval", f"bc-s{seed}"))
        assert "--model" not in trains[f"bc-s{seed}"]
    # listed after the runs that start from it, BC still comes first (one job: one after another)
    events.clear()
    trains.clear()
    Reproduction(
        "textnav-po",
        tmp_path / "s",
        budget="smoke",
        seeds=1,
        algorithms=["ilql", "bc"],
        runner=runner,
        log=lambda _line: None,
    ).run()
    assert [e for e in events if e[0] == "train"] == [("train", "bc-s0"), ("train", "ilql-s0")]
    trains.clear()
    Reproduction(
        "maze-fo",
        tmp_path / "m",
        budget="smoke",
        seeds=1,
        algorithms=["ilql"],
        runner=runner,
        log=lambda _line: None,
    ).run()
    assert "--model" not in trains["ilql-s0"] and "bc-s0" not in trains


def test_an_online_run_that_kept_its_best_is_evaluated_by_it(tmp_path):
    """``--train-flag=ppo:--keep-best=true``: the run's checkpoint-best is what gets evaluated
    (and its round is recorded); BC, which keeps none, is evaluated as before."""
    from training.reproduce.run import Reproduction

    evals: dict[str, str] = {}

    def runner(argv):
        if "train" in argv:
            folder = Path(argv[argv.index("--out") + 1])
            best = None
            if argv[argv.index("train") + 1] == "ppo":
                (folder / "checkpoint-best").mkdir(parents=True)
                best = {"round": 2, "mean_return": -5.0}
            return 0, json.dumps({"rounds": 3, "run_id": 1, "checkpoint_id": 1, "best": best})
        evals[Path(argv[argv.index("eval") + 1]).parent.name] = Path(
            argv[argv.index("eval") + 1]
        ).name
        return 0, json.dumps(
            {
                "episodes": 25,
                "method": "exact",
                "mean_return": -10.0,
                "success_rate": 0.5,
                "normalised_lmrl": 60.0,
            }
        )

    Reproduction(
        "maze-fo",
        tmp_path / "r",
        budget="smoke",
        seeds=1,
        algorithms=["ppo"],
        runner=runner,
        log=lambda _line: None,
        train_flags=["ppo:--keep-best=true"],
    ).run()
    assert evals == {"runs": "bc-s0", "ppo-s0": "checkpoint-best"}
    record = json.loads((tmp_path / "r" / "runs" / "ppo-s0" / "reproduce.json").read_text())
    assert record["kept_best"] == {"round": 2, "mean_return": -5.0}
    assert record["eval_command"].endswith("eval runs/ppo-s0/checkpoint-best --episodes 2 --seed 0")
