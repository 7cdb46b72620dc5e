"""``lmrl reproduce --jobs``: runs side by side (each command its own process), a run that starts
from its seed's BC waiting for it while holding no worker."""

from __future__ import annotations

import json
import sqlite3

import pytest


def test_jobs_run_side_by_side_and_an_online_run_waits_for_its_bc(tmp_path):
    """``--jobs 2``: two runs at a time; PPO of a seed starts only after that seed's BC (trained
    and evaluated) is done; the records come back in the table's order."""
    import threading
    import time

    from training.reproduce.run import Reproduction

    lock, events, running, most = threading.Lock(), [], [0], [0]

    def runner(argv):
        cmd = "train" if "train" in argv else "eval"
        name = argv[argv.index("--out") + 1] if cmd == "train" else argv[argv.index("eval") + 1]
        key = (cmd, name.rsplit("/", 1)[-1])
        with lock:
            events.append(("start", *key))
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05 if key[1].startswith("bc-s1") else 0.01)
        with lock:
            events.append(("end", *key))
            running[0] -= 1
        if cmd == "train":
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

    res = Reproduction(
        "maze-fo",
        tmp_path / "r",
        budget="smoke",
        seeds=3,
        algorithms=["ppo"],
        runner=runner,
        log=lambda _line: None,
        jobs=2,
    ).run()
    assert most[0] == 2
    for seed in range(3):
        bc_done = events.index(("end", "eval", f"bc-s{seed}"))
        assert events.index(("start", "train", f"ppo-s{seed}")) > bc_done
    assert res["algorithms"]["ppo"]["mean_return"]["n"] == 3
    with pytest.raises(Exception, match="--jobs"):
        Reproduction("maze-fo", tmp_path / "x", budget="smoke", runner=runner, jobs=0)


def test_a_run_waiting_for_its_bc_holds_no_worker():
    """Two workers, BC seed 1 slow: seed 1's PPO waits for it, but MC seed 0 (queued after that
    PPO) starts while BC seed 1 still runs instead of waiting behind it; a failed BC fails its
    PPO, not the others; results come back in order."""
    import threading
    import time

    from training.reproduce.runners import side_by_side

    lock, events = threading.Lock(), []

    def one(algo, seed):
        with lock:
            events.append(("start", algo, seed))
        time.sleep(0.4 if (algo, seed) == ("bc", 1) else 0.01)
        with lock:
            events.append(("end", algo, seed))
        if (algo, seed) == ("bc", 2):
            raise RuntimeError("bc 2 failed")
        return f"{algo}{seed}"

    order = [("bc", 0), ("bc", 1), ("ppo", 0), ("ppo", 1), ("mc", 0)]
    assert side_by_side(order, 2, one) == ["bc0", "bc1", "ppo0", "ppo1", "mc0"]
    assert events.index(("start", "mc", 0)) < events.index(("end", "bc", 1))
    assert events.index(("start", "ppo", 1)) > events.index(("end", "bc", 1))
    assert events.index(("start", "ppo", 0)) > events.index(("end", "bc", 0))
    events.clear()
    with pytest.raises(RuntimeError, match="bc 2 failed"):
        side_by_side([("bc", 2), ("ppo", 2), ("mc", 0)], 2, one)
    assert ("start", "ppo", 2) not in events and ("end", "mc", 0) in events


@pytest.mark.slow
def test_reproduce_with_jobs_runs_each_command_in_its_own_process(tmp_path, capsys):
    from training.cli import main

    out = tmp_path / "r"
    rc = main(
        [
            "reproduce",
            "maze-fo",
            "--budget",
            "smoke",
            "--seeds",
            "2",
            "--algorithms",
            "bc",
            "ppo",
            "--jobs",
            "2",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    saved = json.loads((out / "results.json").read_text())
    assert saved["algorithms"]["ppo"]["mean_return"]["n"] == 2
    line = json.loads(printed.out.strip().splitlines()[-1])  # the verdict against BC, for scripts
    assert line["cis_apart_from_bc"] == {"ppo": saved["versus_bc"]["ppo"]["cis_apart"]}
    assert "--init runs/bc-s1" in " ".join(saved["algorithms"]["ppo"]["commands"])
    assert sorted(p.name for p in (out / "logs").iterdir()) == [
        "eval-bc-s0.log",
        "eval-bc-s1.log",
        "eval-ppo-s0.log",
        "eval-ppo-s1.log",
        "train-bc-s0.log",
        "train-bc-s1.log",
        "train-ppo-s0.log",
        "train-ppo-s1.log",
    ]
    with sqlite3.connect(out / "store.db") as db:
        assert db.execute("SELECT COUNT(*) FROM runs WHERE status = 'finished'").fetchone()[0] == 4
