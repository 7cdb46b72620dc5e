"""``lmrl reproduce TASK --model utterance --fresh-data --episodes N``: a dataset per training seed
in its own store from its own data seeds, every run told its model and reading its seed's store,
and the report saying so (the datasets are really generated; the runs are a fake runner's)."""

from __future__ import annotations

import json

import pytest

from data.datasets import load_episodes
from data.store import Store
from training.errors import TrainingError
from training.reproduce.datasets import FRESH_STRIDE, data_seed


def _fake(calls: list[list[str]]):
    def runner(argv: list[str]) -> tuple[int, str]:
        calls.append(argv)
        if "train" in argv:
            seed = int(argv[argv.index("--seed") + 1])
            return 0, json.dumps({"steps": 5, "run_id": seed + 1, "checkpoint_id": seed + 1})
        return 0, json.dumps(
            {
                "episodes": 2,
                "method": "sampled",
                "mean_return": -19.0,
                "success_rate": 0.5,
                "normalised_lmrl": None,
                "model": "utterance",
            }
        )

    return runner


def test_each_training_seed_gets_its_own_dataset_and_the_runs_their_model(tmp_path):
    from training.reproduce.run import Reproduction

    calls: list[list[str]] = []
    out = tmp_path / "r"
    res = Reproduction(
        "guess-city",
        out,
        budget="smoke",
        seeds=2,
        algorithms=["bc", "mc"],
        runner=_fake(calls),
        log=lambda _line: None,
        model="utterance",
        fresh_data=True,
        episodes=4,
    ).run()
    firsts = []
    for seed in (0, 1):
        store = Store(str(out / f"store-s{seed}.db"))
        try:
            eps = list(load_episodes(store, list(range(1, 5))))
        finally:
            store.close()
        assert len(eps) == 4
        firsts.append(min(e.episode["seed"] for e in eps))
        record = json.loads((out / f"dataset-s{seed}.json").read_text())
        assert record["seed"] == data_seed(seed) and record["episodes"] == 4
    assert firsts == [data_seed(0), data_seed(0) + FRESH_STRIDE]
    trains = [a for a in calls if "train" in a]
    assert len(trains) == 4
    for argv in trains:
        seed = argv[argv.index("--seed") + 1]
        assert argv[argv.index("--db") + 1].endswith(f"store-s{seed}.db")
        assert argv[argv.index("--model") + 1] == "utterance"
    evals = [a for a in calls if "eval" in a]
    assert len(evals) == 4 and all("store-s" in a[a.index("--db") + 1] for a in evals)
    assert res["dataset"]["fresh_per_seed"] and len(res["dataset"]["per_seed"]) == 2
    md = (out / "results.md").read_text()
    assert "--model utterance --fresh-data --episodes 4`" in md
    assert "a fresh one per training seed" in md and "store-s1.db generate guess-city" in md


def test_utterance_runs_refuse_online_algorithms_and_fresh_data_keeps_clear_of_rollout_seeds(
    tmp_path,
):
    from training.reproduce.run import Reproduction

    with pytest.raises(TrainingError, match="offline algorithms"):
        Reproduction(
            "guess-city",
            tmp_path / "a",
            budget="smoke",
            seeds=1,
            algorithms=["ppo"],
            runner=_fake([]),
            model="utterance",
        )
    with pytest.raises(TrainingError, match="online rollouts"):
        Reproduction(
            "guess-city",
            tmp_path / "b",
            budget="smoke",
            seeds=12,
            algorithms=["bc"],
            runner=_fake([]),
            log=lambda _line: None,
            fresh_data=True,
            episodes=2,
        )
