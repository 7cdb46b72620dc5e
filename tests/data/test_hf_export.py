"""`lmrl export --format hf`: a `datasets` folder that `load_from_disk` reads back with the
store's rows and returns, the same rows in parquet, a dataset card, and the dataset filters."""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import envs
from data.datasets import DatasetQuery, select_episode_ids
from data.generate import generate
from data.io.hf_export import ExportError, export_hf
from data.store import Store, Who
from lmrl_tui.cli import main

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tasks of scripted play, a labelled episode, and one a person is still playing."""
    p = tmp_path_factory.mktemp("hf") / "e.db"
    s = Store(p)
    generate(s, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 12, seed=0)
    generate(s, "wordle", envs.make_policy("wordle", "random"), 5, seed=0)
    s.add_label(1, "good", author="ann", step_idx=0)
    s.add_label(1, "clever", "the whole game")
    live = s.start_episode("maze-fo", 1, 99, "here\n", Who("human", "human"), player="bob")
    s.add_step(live, 0, "up\n", "wall\n", -1.0, think_ms=800, typed="u")
    s.close()
    return p


def _store_view(db: Path, query: DatasetQuery) -> dict[str, tuple[float, int]]:
    """Per episode uid: the store's return and number of steps."""
    s = Store(db)
    ids = select_episode_ids(s, query)
    out = {(ep := s.episode(i))["uid"]: (ep["return"], len(s.steps(i))) for i in ids}
    s.close()
    return out


@pytest.mark.parametrize(
    "query",
    [DatasetQuery(), DatasetQuery(task="maze-fo", status="any")],
    ids=["default", "maze-any"],
)
def test_step_rows_read_back_with_the_store_returns(
    tmp_path: Path, db: Path, query: DatasetQuery
) -> None:
    want = _store_view(db, query)
    s = Store(db)
    result = export_hf(s, query, tmp_path / "out")
    s.close()
    ds = datasets.load_from_disk(str(tmp_path / "out"))
    assert len(ds) == result.rows == sum(n for _, n in want.values())
    got: dict[str, list[float]] = defaultdict(list)
    for row in ds:
        got[row["episode_uid"]].append(row["reward"])
        assert math.isclose(row["return"], want[row["episode_uid"]][0])
    assert set(got) == set(want)
    assert all(
        math.isclose(math.fsum(r), want[u][0]) for u, r in got.items()
    )  # per-turn rewards sum to the return
    parquet = datasets.load_dataset("parquet", data_files=str(tmp_path / "out" / "data.parquet"))[
        "train"
    ]
    assert parquet.to_list() == ds.to_list()
    card = (tmp_path / "out" / "README.md").read_text()
    assert f"Episodes: {len(want)}" in card and "CC-BY-4.0" in card and "collector" in card


def test_step_rows_carry_provenance_labels_and_the_text_answered(tmp_path: Path, db: Path) -> None:
    s = Store(db)
    export_hf(s, DatasetQuery(task="maze-fo", status="any"), tmp_path / "out")
    first = s.episode(1)
    s.close()
    ds = datasets.load_from_disk(str(tmp_path / "out"))
    rows = [r for r in ds if r["episode_id"] == 1]
    assert (
        rows[0]["state"] == first["first_observation"]
        and rows[1]["state"] == rows[0]["observation"]
    )
    assert rows[0]["labels"][0]["label"] == "good" and rows[1]["labels"] == []
    assert [lab["label"] for lab in rows[0]["episode_labels"]] == ["clever"]
    assert rows[0]["origin"] == first["origin"] and rows[0]["episode_uid"] == first["uid"]
    live = [r for r in ds if r["status"] == "in_progress"]
    assert (
        len(live) == 1
        and live[0]["player"] == "bob"
        and live[0]["think_ms"] == 800
        and live[0]["typed"] == "u"
    )


def test_episode_rows(tmp_path: Path, db: Path) -> None:
    want = _store_view(db, DatasetQuery(task="wordle"))
    s = Store(db)
    export_hf(s, DatasetQuery(task="wordle"), tmp_path / "out", rows="episode")
    s.close()
    ds = datasets.load_from_disk(str(tmp_path / "out"))
    assert len(ds) == len(want) == 5
    for row in ds:
        ret, n = want[row["episode_uid"]]
        assert len(row["actions"]) == len(row["rewards"]) == n and math.isclose(
            math.fsum(row["rewards"]), ret
        )
        assert row["task"] == "wordle" and row["source"] == "scripted"


def test_cli_hf_export_and_its_errors(
    tmp_path: Path, db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "maze"
    assert (
        main(
            [
                "--db",
                str(db),
                "export",
                "--format",
                "hf",
                "--task",
                "maze-fo",
                "--rows",
                "episode",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "exported 12 episodes" in capsys.readouterr().err
    assert len(datasets.load_from_disk(str(out))) == 12
    for argv, message in (
        (["--out", str(out)], "not an empty folder"),  # never writes over an earlier export
        ([], "give --out FOLDER"),
    ):
        assert main(["--db", str(db), "export", "--format", "hf", *argv]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err
    monkeypatch.setitem(sys.modules, "datasets", None)  # the hf extra is not installed
    with pytest.raises(ExportError, match=r"pip install 'lmrl-tui\[hf\]'"):
        s = Store(db)
        try:
            export_hf(s, DatasetQuery(), tmp_path / "none")
        finally:
            s.close()
    assert not (tmp_path / "none").exists()
