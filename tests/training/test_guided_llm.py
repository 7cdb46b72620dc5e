"""experiments/guided_llm.py's report: the seeds every arm finished, per-arm means and CIs (no
model)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from support.experiment_support import experiment_script

from data.generate import generate
from data.store import Store
from envs.players.agents import make_agent


def _script():
    return experiment_script("guided_llm")


def _play(path: Path, policy: str, episodes: int, seed: int = 0) -> list[tuple[int, float, bool]]:
    store = Store(path)
    try:
        generate(
            store, "twenty-questions", make_agent("twenty-questions", policy), episodes, seed=seed
        )
        return [(e["seed"], e["return"], bool(e["success"])) for e in store.recent_episodes(100)]
    finally:
        store.close()


def test_the_report_keeps_the_seeds_every_arm_finished(tmp_path):
    script = _script()
    play = tmp_path / "play"
    play.mkdir()
    eps = {
        "llm": _play(play / "twenty-questions-llm.db", "strong", 6),
        "guided-s0": _play(play / "twenty-questions-guided-s0.db", "behaviour", 4),
        "guided-s1": _play(play / "twenty-questions-guided-s1.db", "behaviour", 3, seed=1),
    }
    result = script.report(tmp_path, {})
    r = result["tasks"]["twenty-questions"]
    assert r["common_seeds"] == [1, 2, 3]  # guided-s1 began at seed 1, guided-s0 stopped after 3
    rows = r["rows"]
    assert set(rows) == {"llm", "guided"}
    common = set(r["common_seeds"])
    llm = [ret for s, ret, _ in eps["llm"] if s in common]
    assert (
        rows["llm"]["return"]["mean"] == statistics.mean(llm)
        and rows["llm"]["ci_over"] == "episodes"
    )
    means = [
        statistics.mean(ret for s, ret, _ in eps[a] if s in common)
        for a in ("guided-s0", "guided-s1")
    ]
    assert rows["guided"]["return"]["values"] == means  # one mean per value seed, CI over those
    assert rows["guided"]["finished"] == {"guided-s0": 4, "guided-s1": 3}
    assert rows["guided"]["model_chose"] is None  # no guided notes in scripted play
    assert json.loads((tmp_path / "results.json").read_text())["tasks"]["twenty-questions"][
        "common_seeds"
    ] == [1, 2, 3]
    assert (
        "| twenty-questions | guided (value / training seeds) | 3 |"
        in (tmp_path / "results.md").read_text()
    )
