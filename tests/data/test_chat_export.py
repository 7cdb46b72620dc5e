"""`lmrl export --format chat`: conversations with per-turn rewards and provenance, as JSON lines
that `datasets.load_dataset("json")` reads and as a `datasets` folder; one row per episode or per
turn; either side; the dataset filters; one-line refusals."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

import envs
from data.datasets import DatasetQuery
from data.generate import generate
from data.io.chat_export import export_chat_folder
from data.io.hf_export import ExportError
from data.store import Store, Who
from lmrl_tui.cli import main

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Scripted maze and Twenty Questions games, a game a person finished, one still going."""
    p = tmp_path_factory.mktemp("chat") / "e.db"
    s = Store(p)
    generate(s, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 3, seed=0)
    generate(s, "twenty-questions", envs.make_policy("twenty-questions", "behaviour"), 2, seed=0)
    done = s.start_episode("wordle", 1, 7, "Wordle:\n", Who("human", "human"), player="ann")
    s.add_step(done, 0, "c r a n e\n", "b b y b g\n", -1.0, typed="crane")
    s.add_step(done, 1, "s l a t e\n", "g g g g g\n", 0.0, terminated=True, typed="slate")
    s.finish_episode(done, success=True)
    live = s.start_episode("maze-fo", 1, 99, "here\n", Who("human", "human"), player="bob")
    s.add_step(live, 0, "move up\n", "wall\n", -1.0)
    s.close()
    return p


def _export(db: Path, *args: str) -> int:
    return main(["--db", str(db), "export", "--format", "chat", *args])


def _jsonl(path: Path) -> list[dict]:
    return datasets.load_dataset("json", data_files=str(path))["train"].to_list()


def test_episode_rows_load_with_datasets_and_hold_the_conversation(tmp_path: Path, db: Path):
    assert _export(db, "-o", str(tmp_path / "c.jsonl")) == 0
    rows = _jsonl(tmp_path / "c.jsonl")
    s = Store(db)
    finished = {
        r["id"]: r for r in (s.episode(i) for i in range(1, 8)) if r and r["status"] == "finished"
    }
    assert sorted(r["episode_id"] for r in rows) == sorted(finished)  # the live one left out
    for row in rows:
        ep, steps = finished[row["episode_id"]], s.steps(row["episode_id"])
        msgs = row["messages"]
        assert msgs[0]["role"] == "system" and msgs[0]["content"]
        assert msgs[1] == {"role": "user", "content": ep["first_observation"].rstrip("\n")}
        said = [m["content"] for m in msgs if m["role"] == "assistant"]
        assert said == [st["action"].rstrip("\n") for st in steps]
        assert row["rewards"] == [st["reward"] for st in steps] and row["n_turns"] == len(steps)
        assert math.isclose(row["return"], math.fsum(row["rewards"]))
        assert math.isclose(row["return"], ep["return"])
        for k in ("task", "seed", "source", "player", "agent_kind", "agent_name", "partner_kind"):
            assert row[k] == ep[k], k
        assert row["episode_uid"] == ep["uid"] and row["side"] == envs.spec(ep["task"]).roles[0]
    person = next(r for r in rows if r["task"] == "wordle")
    assert (person["source"], person["player"], person["agent_kind"]) == ("human", "ann", "human")
    assert person["success"] is True
    assert {r["source"] for r in rows if r["task"] != "wordle"} == {"scripted"}
    oracle = next(r for r in rows if r["task"] == "twenty-questions")
    assert oracle["partner_kind"] == "scripted" and oracle["partner_name"] == "oracle"
    assert json.loads(oracle["options"]) == s.episode(oracle["episode_id"])["options"]
    s.close()


def test_turn_rows_end_at_their_turn_with_its_reward(tmp_path: Path, db: Path):
    assert _export(db, "--task", "maze-fo", "--rows", "turn", "-o", str(tmp_path / "t.jsonl")) == 0
    rows = _jsonl(tmp_path / "t.jsonl")
    s = Store(db)
    steps = {i: s.steps(i) for i in {r["episode_id"] for r in rows}}
    assert len(rows) == sum(len(v) for v in steps.values()) and {r["task"] for r in rows} == {
        "maze-fo"
    }
    for row in rows:
        st = steps[row["episode_id"]]
        assert row["messages"][-1] == {
            "role": "assistant",
            "content": st[row["turn"]]["action"].rstrip("\n"),
        }
        assert row["reward"] == st[row["turn"]]["reward"]
        rest = math.fsum(x["reward"] for x in st[row["turn"] :])
        assert math.isclose(row["return_to_go"], rest)
    s.close()


def test_the_folder_form_loads_from_disk_with_the_same_rows(tmp_path: Path, db: Path):
    assert _export(db, "--out", str(tmp_path / "ds")) == 0
    assert _export(db, "-o", str(tmp_path / "c.jsonl")) == 0
    ds = datasets.load_from_disk(str(tmp_path / "ds"))
    lines = _jsonl(tmp_path / "c.jsonl")
    assert len(ds) == len(lines) == 6
    for a, b in zip(ds.to_list(), lines, strict=True):
        assert a["messages"] == b["messages"] and a["rewards"] == b["rewards"]
        assert (a["episode_uid"], a["return"], a["source"]) == (
            b["episode_uid"],
            b["return"],
            b["source"],
        )
    assert (tmp_path / "ds" / "data.jsonl").exists()


def test_the_partner_side_hears_the_questions_and_answers_them(tmp_path: Path, db: Path, capsys):
    assert _export(db, "--side", "partner", "-o", str(tmp_path / "p.jsonl")) == 0
    assert "4 left out" in capsys.readouterr().err  # the one-sided maze and wordle games
    rows = _jsonl(tmp_path / "p.jsonl")
    assert len(rows) == 2 and {r["side"] for r in rows} == {"oracle"}
    s = Store(db)
    for row in rows:
        st = s.steps(row["episode_id"])
        msgs = row["messages"]
        assert msgs[0]["content"] == envs.spec("twenty-questions").instructions["oracle"]
        assert [m["content"] for m in msgs if m["role"] == "user"] == [
            x["action"].rstrip("\n") for x in st
        ]
        assert [m["content"] for m in msgs if m["role"] == "assistant"] == [
            x["observation"].rstrip("\n") for x in st
        ]
    s.close()


def test_bad_rows_and_a_missing_datasets_package_are_one_line(
    tmp_path: Path, db: Path, capsys, monkeypatch
):
    assert _export(db, "--rows", "step") != 0
    err = capsys.readouterr().err
    assert "--format chat takes --rows episode or turn, not step" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["--db", str(db), "export", "--format", "hf", "--rows", "turn", "--out", "x"]) != 0
    assert "--format hf takes --rows step or episode" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "datasets", None)  # the hf extra is not installed
    assert _export(db, "--out", str(tmp_path / "ds")) != 0
    err = capsys.readouterr().err
    assert "needs the datasets package" in err and "Traceback" not in err
    assert _export(db, "-o", str(tmp_path / "ok.jsonl")) == 0  # plain JSON lines need nothing
    with pytest.raises(ExportError, match="already exists"):
        (tmp_path / "full").mkdir()
        (tmp_path / "full" / "x").write_text("")
        monkeypatch.delitem(sys.modules, "datasets")
        export_chat_folder(Store(db), DatasetQuery(), tmp_path / "full")
