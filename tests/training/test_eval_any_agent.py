"""``lmrl eval AGENT --task T`` for agents that are not checkpoints: a scripted policy, an ``hf:``
model. The result is the episodes those seeds give, it is stored in the evaluations table (and so
on the ladder), and misuse is one line."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from support.checkpoint_support import tiny_hf_model  # noqa: E402

import envs  # noqa: E402
from data.store import Store  # noqa: E402
from lmrl_tui.cli import main as lmrl  # noqa: E402


def _result(capsys) -> tuple[dict, str]:
    captured = capsys.readouterr()
    return json.loads(captured.out.strip().splitlines()[-1]), captured.err


def test_a_scripted_policy_is_evaluated_on_the_seeds_and_stored(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert (
        lmrl(
            [
                "--db",
                str(db),
                "eval",
                "behaviour",
                "--task",
                "textnav-fo",
                "--episodes",
                "6",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    res, err = _result(capsys)
    task = envs.make("textnav-fo")
    eps = [
        envs.run_episode(task, envs.make_policy("textnav-fo", "behaviour"), seed=3 + i)
        for i in range(6)
    ]
    assert res["episodes"] == 6 and res["agent"] == "behaviour"
    assert res["mean_return"] == pytest.approx(sum(e.total_return for e in eps) / 6)
    assert err.startswith("textnav-fo: mean return")
    store = Store(db)
    try:
        rows = list(store.db.query("SELECT policy, checkpoint_id, episodes FROM evaluations"))
        assert rows == [{"policy": "behaviour", "checkpoint_id": None, "episodes": 6}]
        from data.ladder import ladder

        assert any("behaviour" in r.who for r in ladder(store, "textnav-fo"))
    finally:
        store.close()


def test_the_strong_maze_policy_scores_lmrls_maximum(tmp_path, capsys):
    assert (
        lmrl(
            [
                "--db",
                str(tmp_path / "s.db"),
                "eval",
                "strong",
                "--task",
                "maze-fo",
                "--episodes",
                "20",
            ]
        )
        == 0
    )
    res, _ = _result(capsys)
    assert res["success_rate"] == 1.0 and res["normalised_lmrl"] > 99


@pytest.mark.slow  # an hf: model evaluated over episodes (~5 s)
def test_an_hf_model_is_evaluated_like_a_policy(tmp_path, capsys):
    model = tiny_hf_model(tmp_path / "m")
    db = tmp_path / "s.db"
    assert (
        lmrl(["--db", str(db), "eval", f"hf:{model}", "--task", "maze-fo", "--episodes", "2"]) == 0
    )
    res, _ = _result(capsys)
    assert res["episodes"] == 2 and res["agent"] == f"hf:{model}"
    store = Store(db)
    try:
        assert store.db.execute("SELECT policy FROM evaluations").fetchone()[0] == f"hf:{model}"
    finally:
        store.close()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["eval", "behaviour", "--episodes", "2"], "--task"),
        (
            ["eval", "behaviour", "--task", "maze-fo", "--decoding", "greedy"],
            "only for a checkpoint",
        ),
        (
            ["eval", "behaviour", "--task", "maze-fo", "--temperature", "0.5"],
            "only for a checkpoint",
        ),
        (["eval", "nosuch", "--task", "maze-fo"], "unknown policy 'nosuch'"),
        (["eval", "behaviour", "--task", "nosuch"], "unknown task"),
        (["eval", "guided:hf:x+/nowhere", "--task", "guess-city"], "no value checkpoint"),
        (["stats", "--task", "nosuch"], "unknown task 'nosuch'"),
    ],
)
def test_misuse_is_one_line_and_stores_nothing(tmp_path, capsys, argv, says):
    db = tmp_path / "s.db"
    assert lmrl(["--db", str(db), *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err and "Traceback" not in err
    store = Store(db)
    try:
        assert store.db.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0] == 0
    finally:
        store.close()
