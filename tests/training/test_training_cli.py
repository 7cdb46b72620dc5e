"""The CLI contract: the training command tree (training/cli.py, training/algorithms.py; argparse in,
exit code out), tested without the app."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from training.cli import build_parser  # noqa: E402
from training.offline.cli import run_eval, run_train  # noqa: E402
from training.offline.toy import maze_store  # noqa: E402


def test_cli_args_imports_no_torch():
    code = (
        "import sys, training.cli, training.algorithms, training.args, training.offline.cli, "
        "training.online.cli, training.config; training.cli.build_parser(); "
        "assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


class _Command:
    """Parses the words after ``train`` or ``eval`` with the training command tree."""

    def __init__(self, command: str) -> None:
        self.command = command

    def parse_args(self, argv: list[str]) -> argparse.Namespace:
        return build_parser().parse_args([self.command, *argv])


def _parsers():
    return _Command("train"), _Command("eval")


@pytest.mark.slow
def test_train_then_eval_records_run_checkpoint_and_evaluation(tmp_path, capsys):
    store = maze_store(tmp_path / "m.db", episodes=10)
    tp, ep = _parsers()
    args = tp.parse_args(
        [
            "%bc",
            "--task",
            "maze-fo",
            "--out",
            str(tmp_path / "run"),
            "--max-steps",
            "2",
            "--batch-size",
            "8",
            "--n-embd",
            "32",
            "--eval-episodes",
            "0",
            "--no-progress",
            "--log-every",
            "1",
            "--top-percent",
            "20",
            "--top-mode",
            "count",
            "--source",
            "scripted",
        ]
    )
    assert run_train(args, store) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["steps"] == 2 and out["episodes"] == 2
    run = store.db.execute("SELECT algo, status, episode_ids, config FROM runs").fetchone()
    assert run[0] == "pbc" and run[1] == "finished" and len(json.loads(run[2])) == 2
    assert json.loads(run[3])["n_embd"] == 32
    assert store.db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 1
    assert (tmp_path / "run" / "metrics.jsonl").read_text().count('"kind": "train"') == 2

    args = ep.parse_args(
        [str(tmp_path / "run"), "--task", "maze-fo", "--episodes", "2", "--decoding", "rerank"]
    )
    assert run_eval(args, store) == 0
    said = capsys.readouterr()
    res = json.loads(said.out.strip().splitlines()[-1])
    assert res["method"] == "exact" and res["normalised_lmrl"] is not None
    assert "evaluated exactly over its 25 start cells" in said.err and "--episodes" in said.err
    row = store.db.execute(
        "SELECT policy, checkpoint_id, normalised_store FROM evaluations"
    ).fetchone()
    assert row[0].startswith("pbc:") and row[1] == 1 and row[2] is not None

    args = ep.parse_args(
        [
            str(tmp_path / "run"),
            "--episodes",
            "2",
            "--sampled",
            "--decoding",
            "rerank",
            "--logit-weight",
            "0.1",
        ]
    )
    assert run_eval(args, store) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert res["method"] == "sampled" and res["logit_weight"] == 0.1


def test_cli_errors_are_one_line_and_nonzero(tmp_path, capsys):
    store = maze_store(tmp_path / "m.db", episodes=2)
    tp, ep = _parsers()
    args = tp.parse_args(["bc", "--task", "maze-po", "--out", str(tmp_path / "r")])
    assert run_train(args, store) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "maze-po" in err
    with pytest.raises(SystemExit) as exit_:  # not a registered algorithm: a usage error
        tp.parse_args(["dqn", "--task", "maze-fo", "--out", str(tmp_path / "r")])
    assert exit_.value.code == 2
    capsys.readouterr()
    unknown = tp.parse_args(["bc", "--task", "maze-fo", "--out", str(tmp_path / "r")])
    unknown.algo = "dqn"
    assert run_train(unknown, store) == 1
    assert (
        run_train(tp.parse_args(["bc", "--task", "nope", "--out", str(tmp_path / "r")]), store) == 1
    )
    assert run_eval(ep.parse_args([str(tmp_path / "missing")]), store) == 1
    assert "no checkpoint" in capsys.readouterr().err


def test_eval_summary_line():
    from training.offline.cli import eval_summary

    line = eval_summary(
        "maze-fo",
        {
            "mean_return": -10.5,
            "ci_low": -12.0,
            "ci_high": -9.0,
            "episodes": 32,
            "success_rate": 0.75,
            "normalised_lmrl": 97.6,
            "normalised_store": 95.0,
        },
    )
    assert line == (
        "maze-fo: mean return -10.500 (95% CI -12.000 to -9.000) over 32 episodes, success 75.0%, "
        "normalised 97.6 (LMRL constants), 95.0 (store data vs our strong policy)"
    )


@pytest.mark.slow
def test_task_options_select_the_data_and_follow_the_checkpoint(tmp_path, capsys):
    """--option words=small: trains on the episodes logged with it, evaluates with it, and the
    checkpoint remembers it for eval, watching and online training."""
    import envs
    from data.store import Store
    from lmrl_tui.cli import main as lmrl_main

    db = tmp_path / "w.db"
    assert (
        lmrl_main(
            [
                "--db",
                str(db),
                "generate",
                "wordle",
                "--episodes",
                "30",
                "--quiet",
                "--option",
                "words=small",
            ]
        )
        == 0
    )
    assert (
        lmrl_main(
            ["--db", str(db), "generate", "wordle", "--episodes", "7", "--quiet", "--seed", "100"]
        )
        == 0
    )
    capsys.readouterr()
    store = Store(db)
    tp, ep = _parsers()
    args = tp.parse_args(
        [
            "bc",
            "--task",
            "wordle",
            "--option",
            "words=small",
            "--out",
            str(tmp_path / "run"),
            "--max-steps",
            "1",
            "--batch-size",
            "4",
            "--n-embd",
            "16",
            "--n-layer",
            "1",
            "--eval-episodes",
            "3",
            "--no-progress",
        ]
    )
    assert run_train(args, store) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["episodes"] == 30  # not the 7 standard-list games
    meta = json.loads((tmp_path / "run" / "checkpoint" / "lmrl.json").read_text())
    assert meta["config"]["task_options"] == {"words": "small"}

    args = ep.parse_args([str(tmp_path / "run"), "--episodes", "2"])
    assert run_eval(args, store) == 0
    captured = capsys.readouterr()
    res = json.loads(captured.out.strip().splitlines()[-1])
    assert res["task_options"] == {"words": "small"} and "wordle (words=small)" in captured.err
    # the store average is that of the small-list games only
    small = store.db.execute("SELECT AVG(return) FROM episodes WHERE seed < 100").fetchone()[0]
    assert res["store_average"] == pytest.approx(small)

    from training.agents.checkpoint_agent import load_agent

    agent = load_agent(tmp_path / "run")
    assert agent.meta["task_options"] == {"words": "small"}
    assert envs.make("wordle", **agent.meta["task_options"]).vocab.size == 400

    bad = tp.parse_args(
        ["bc", "--task", "wordle", "--option", "colour=red", "--out", str(tmp_path / "r2")]
    )
    assert run_train(bad, store) == 1
    assert "no option 'colour'" in capsys.readouterr().err


def test_store_score_ignores_agent_rollouts(tmp_path):
    """The store-based score is relative to the logged data: an online run's rollouts (here under a
    training-only -10 penalty) move neither its average nor its minimum."""
    from data.store import EpisodeRecord, StepRecord, Store, Who
    from training.evaluation.evaluate import normalise

    store = Store(tmp_path / "s.db")

    def ep(ret, source, opts):
        steps = [StepRecord("c r a n e\n", "b b b b b\n", ret, True, False, {})]
        return EpisodeRecord(
            "wordle", 1, 0, "Wordle:\n", steps, Who("scripted", "x"), source=source, options=opts
        )

    store.write_episodes(
        [
            ep(-4.0, "scripted", {"words": "small"}),
            ep(-6.0, "scripted", {"words": "small"}),
            ep(-60.0, "agent", {"words": "small", "bad_word_reward": -10}),
        ]
    )
    res = normalise(
        {"mean_return": -5.0}, "wordle", store, strong=-2.0, task_options={"words": "small"}
    )
    assert res["store_average"] == -5.0
    assert res["normalised_store"] == pytest.approx(50.0)
