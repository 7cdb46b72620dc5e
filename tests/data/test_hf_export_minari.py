"""`lmrl export --format minari`: Minari reads the text episodes back, their per-turn rewards
summing to the store's returns, with the provenance in each step's infos."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import envs
from data.datasets import DatasetQuery, select_episode_ids
from data.generate import generate
from data.io.hf_export import ExportError
from data.io.minari_export import export_minari
from data.store import Store, Who
from lmrl_tui.cli import main

minari = pytest.importorskip("minari")
pytest.importorskip("PIL")


def test_minari_reads_the_episodes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "e.db"
    s = Store(db)
    generate(s, "wordle", envs.make_policy("wordle", "random"), 4, seed=0)
    empty = s.start_episode(
        "wordle", 1, 9, "Guess the word.\n", Who("human", "human")
    )  # no steps yet
    query = DatasetQuery(task="wordle", status="any")
    want = {s.episode(i)["uid"]: s.episode(i) for i in select_episode_ids(s, query) if i != empty}
    s.close()
    out = tmp_path / "minari"
    assert (
        main(
            [
                "--db",
                str(db),
                "export",
                "--format",
                "minari",
                "--task",
                "wordle",
                "--status",
                "any",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "1 without steps left out" in capsys.readouterr().err
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    ds = minari.load_dataset("lmrl/wordle-v0")
    assert ds.total_episodes == len(want) == 4
    for ep in ds.iterate_episodes():
        stored = want[ep.infos["episode_uid"][0]]
        assert ep.observations[0] == stored["first_observation"]
        assert len(ep.actions) == stored["n_steps"] and math.isclose(
            float(sum(ep.rewards)), stored["return"]
        )
        assert (
            bool(ep.terminations[-1]) == bool(stored["terminated"])
            and ep.infos["task"][0] == "wordle"
        )
    assert all(
        ds.observation_space.contains(o) for ep in ds.iterate_episodes() for o in ep.observations
    )
    s = Store(db)
    with pytest.raises(ExportError, match="not an empty folder"):
        export_minari(s, query, out)
    s.close()
