"""bench/wordle_online.py end to end on the CPU with a few steps: the consistent player's data, BC
and online %BC per training seed, every checkpoint evaluated, and the table over seeds."""

from __future__ import annotations

import json
import sys

import pytest

from tests.bench_support import bench_script


@pytest.mark.slow
def test_the_bench_trains_evaluates_and_reports_over_seeds(tmp_path, monkeypatch, capsys):
    bench = bench_script("wordle_online")
    out = tmp_path / "wo"
    argv = ["wordle_online.py", "run", str(out), "--seeds", "0", "1", "--games", "40", "--bc-steps", "2",
            "--rounds", "1", "--eval-games", "3", "--algorithms", "bc", "online-filtered-bc"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    bench.main()
    result = json.loads((out / "results.json").read_text())
    assert [r["algorithm"] for r in result["rows"]] == ["bc", "online-filtered-bc"]
    for r in result["rows"]:
        assert [s["seed"] for s in r["seeds"]] == [0, 1] and r["score"]["n"] == 2
        assert all(s["games"] == 3 for s in r["seeds"])
    ref = result["reference"]
    assert ref["strong_mean_return"] > ref["data_mean_return"]  # the score's 100 lies above its 50
    steps = result["steps"]
    assert steps["data"]["rc"] == 0 and "--policy consistent" in steps["data"]["cmd"]
    online = steps["train online-filtered-bc-s1"]["cmd"]
    assert "--init OUT/runs/bc-s1" in online and str(tmp_path) not in json.dumps(steps)
    assert steps["eval online-filtered-bc-s0"]["rc"] == 0 and "eval OUT/runs/online-filtered-bc-s0" in \
        steps["eval online-filtered-bc-s0"]["cmd"]
    for r in result["rows"][1:]:  # each online seed against the BC it started from
        assert r["gain_seeds"] == [0, 1] and r["score_gain"]["n"] == 2
    assert "| online-filtered-bc | 2 |" in (out / "results.md").read_text()
    # a second run finds everything done and trains nothing
    capsys.readouterr()
    bench.main()
    assert json.loads((out / "results.json").read_text())["steps"]["train bc-s0"] == steps["train bc-s0"]
