"""experiments/dialogue_prior.py end to end on the CPU with the tiny model: data, time-limited
training runs side by side, every checkpoint evaluated (MC also at another β and top-k, every
checkpoint also reranked among the data's actions), and the table over seeds."""

from __future__ import annotations

import json
import sys

import pytest
from support.experiment_support import experiment_script


@pytest.mark.slow
def test_the_experiment_trains_evaluates_and_reports(tmp_path, monkeypatch, capsys):
    script = experiment_script("dialogue_prior")
    out = tmp_path / "dp"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "dialogue_prior.py",
            "run",
            str(out),
            "--model",
            "tiny",
            "--tasks",
            "car-dealer",
            "--algos",
            "bc",
            "mc",
            "--seeds",
            "0",
            "1",
            "--data-episodes",
            "12",
            "--train-minutes",
            "0.02",
            "--eval-episodes",
            "2",
            "--budget",
            "600",
            "--startup",
            "5",
            "--eval-reserve",
            "300",
            "--eval-beta",
            "1",
            "--eval-top-k",
            "5",
            "--eval-rerank",
            "car-dealer",
        ],
    )
    script.main()
    printed = capsys.readouterr().out
    result = json.loads((out / "results.json").read_text())
    rows = {r["algo"]: r for r in result["rows"]}
    assert set(rows) == {"bc", "mc", "mc@beta1", "mc@top5", "bc@rerank", "mc@rerank"}
    for r in rows.values():
        assert [s["seed"] for s in r["seeds"]] == [0, 1] and r["success"]["n"] == 2
        assert all(s["steps"] >= 1 and s["device"] == "cpu" for s in r["seeds"])
        assert f"car-dealer_{r['algo']}_success" in printed
    assert json.loads((out / "eval" / "car-dealer-mc@beta1-s0.json").read_text())["beta"] == 1.0
    assert json.loads((out / "eval" / "car-dealer-mc@top5-s1.json").read_text())["top_k"] == 5
    reranked = json.loads((out / "eval" / "car-dealer-bc@rerank-s0.json").read_text())
    assert reranked["decoding"] == "rerank" and reranked["method"] == "reranked"
    assert json.loads((out / "eval" / "car-dealer-bc-s0.json").read_text())["decoding"] != "rerank"
    meta = json.loads((out / "runs" / "car-dealer-bc-s0" / "checkpoint" / "lmrl.json").read_text())
    assert meta["metrics"]["stopped_by"] == "time"
    table = (out / "results.md").read_text()
    assert table.count("\n| car-dealer |") == 6
    # the evaluation is in each run's store too
    from data.store import Store

    with Store(out / "runs" / "car-dealer-mc-s1.db") as store:
        assert (
            store.db.execute("SELECT count(*) FROM evaluations").fetchone()[0] == 4
        )  # own, β 1, top-k 5, reranked
