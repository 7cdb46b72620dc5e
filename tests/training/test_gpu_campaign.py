"""The GPU campaign (issue #49) runs its whole pipeline on CPU (``--smoke``: tiny datasets and
model, 3 steps a run) and writes its report to the folder it is given, never to results/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "experiments" / "gpu_campaign.py"


@pytest.mark.slow
def test_the_campaign_smoke_runs_every_stage_within_its_budget(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "campaign"
    cmd = [sys.executable, str(CAMPAIGN), "--smoke", "--out", str(out), "--minutes", "6"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=420, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads((out / "results.json").read_text())
    assert res["stages"]["total_s"] <= 6 * 60
    assert set(res["datasets"]) == {"twenty-questions", "guess-city", "car-dealer"}
    assert all(d["episodes"] == 24 for d in res["datasets"].values())
    trained = [r for r in res["records"] if not r.get("skipped")]
    assert len(trained) == 18  # 3 tasks x BC, MC, ILQL x 2 seeds
    for rec in trained:
        assert "--pack" in rec["command"] and rec["train"]["steps"] == 3
        assert rec["evaluation"]["result"]["episodes"] == 4
    for algos in res["tasks"].values():
        assert set(algos) == {"bc", "mc", "ilql"}
        assert all(row["mean_return"]["n"] == 2 for row in algos.values())
    md = (out / "results.md").read_text()
    assert "## car-dealer" in md and "lmrl --db WORK/data/guess-city.db train ilql" in md


def test_the_smoke_refuses_to_write_into_results(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_campaign", CAMPAIGN)
    assert spec is not None and spec.loader is not None
    campaign = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(campaign)
    with pytest.raises(SystemExit) as e:
        campaign.parse(["--smoke", "--out", str(ROOT / "results" / "x")])
    assert e.value.code == 2 and "outside results/" in capsys.readouterr().err
    assert not (ROOT / "results" / "x").exists()
    args = campaign.parse(["--smoke", "--out", "somewhere"])
    assert (args.model, args.minutes, args.eval_episodes) == ("tiny", 4.0, 4)
    assert campaign.shards(10, 3) == [(0, 4), (4, 3), (7, 3)]
