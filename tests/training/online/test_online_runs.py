"""Online runs on the toy bandit: rollouts in the store, --resume, the command line, task options,
the optimizer groups of older runs, --keep-best."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from support.online_bandit import bandit_config  # noqa: E402

from data.store import Store  # noqa: E402
from training.errors import TrainingError  # noqa: E402
from training.model.checkpoint import load_checkpoint  # noqa: E402
from training.online.loop import OnlineTrainer  # noqa: E402
from training.online.toy import BANDIT, BANDIT_ACTIONS, action_probs  # noqa: E402


def test_resume_continues_a_killed_run(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    straight = OnlineTrainer(bandit_config(bandit_init, rounds=3), store, tmp_path / "a")
    straight.run()
    first = OnlineTrainer(bandit_config(bandit_init, rounds=2, save_every=1), store, tmp_path / "b")
    first.run()
    # simulate a kill after round 2: the run is left 'running' and resumed with the full budget
    resumed = OnlineTrainer(
        bandit_config(bandit_init, rounds=3), store, tmp_path / "b", resume=True
    )
    res = resumed.run()
    assert res["rounds"] == 3 and res["run_id"] == first.state["run_id"]
    for pa, pb in zip(straight.inner.parameters(), resumed.inner.parameters(), strict=True):
        assert torch.allclose(pa, pb, atol=1e-6)
    rounds = [
        json.loads(x)["round"] for x in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()
    ]
    assert rounds == [1, 2, 3]
    n = store.db.execute(
        "SELECT COUNT(*) FROM episodes WHERE run_id = ?", [res["run_id"]]
    ).fetchone()[0]
    assert n == 3 * 64


def test_resume_without_checkpoint_is_an_error(bandit_init, tmp_path):
    from training.errors import TrainingError

    with pytest.raises(TrainingError, match="nothing to resume"):
        OnlineTrainer(bandit_config(bandit_init), None, tmp_path / "none", resume=True)


def _parse_train(argv):
    """The words after ``train``, parsed by the training entry module's command tree."""
    from training.cli import build_parser

    return build_parser().parse_args(["train", *argv])


def test_cli_runs_and_resume_does_not_duplicate_rollouts(bandit_init, tmp_path, capsys):
    from training.online.cli import run_online

    store = Store(tmp_path / "s.db")
    argv = [
        "ppo",
        "--task",
        BANDIT,
        "--init",
        str(bandit_init),
        "--out",
        str(tmp_path / "run"),
        "--rounds",
        "1",
        "--n-rollouts",
        "16",
        "--eval-every",
        "0",
        "--no-progress",
        "--max-new-tokens",
        "4",
    ]
    assert run_online(_parse_train(argv), store) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # a kill after round 2's rollouts were written but before its checkpoint: resume must not
    # store them twice
    ckpt_state = json.loads((tmp_path / "run" / "checkpoint" / "online_state.json").read_text())
    tr = OnlineTrainer(
        bandit_config(bandit_init, rounds=2, n_rollouts=16), store, tmp_path / "run", resume=True
    )
    assert tr.state == ckpt_state
    from training.online.rollout import TaskPool

    with TaskPool(BANDIT, 4) as pool:
        tr.collect(pool, 1)
    assert (
        run_online(
            _parse_train(
                [
                    *argv[:-7],
                    "--rounds",
                    "2",
                    "--n-rollouts",
                    "16",
                    "--resume",
                    "--eval-every",
                    "0",
                    "--no-progress",
                    "--max-new-tokens",
                    "4",
                ]
            ),
            store,
        )
        == 0
    )
    n = store.db.execute(
        "SELECT COUNT(*) FROM episodes WHERE run_id = ?", [res["run_id"]]
    ).fetchone()[0]
    assert n == 2 * 16
    bogus = _parse_train(argv)
    bogus.algo = "bogus"
    assert run_online(bogus, store) == 1
    assert "unknown online algorithm" in capsys.readouterr().err


def test_task_options_reach_rollouts_and_the_checkpoint(bandit_init, tmp_path, capsys):
    from training.online.cli import run_online

    store = Store(tmp_path / "s.db")
    argv = [
        "online-filtered-bc",
        "--task",
        BANDIT,
        "--option",
        "flavour=mint",
        "--init",
        str(bandit_init),
        "--out",
        str(tmp_path / "run"),
        "--rounds",
        "1",
        "--n-rollouts",
        "8",
        "--eval-every",
        "0",
        "--no-progress",
        "--max-new-tokens",
        "4",
    ]
    assert run_online(_parse_train(argv), store) == 0
    rows = store.db.execute("SELECT DISTINCT options FROM episodes").fetchall()
    assert [json.loads(r[0]) for r in rows] == [{"flavour": "mint"}]
    meta = json.loads((tmp_path / "run" / "checkpoint" / "lmrl.json").read_text())
    assert meta["config"]["task_options"] == {"flavour": "mint"}
    # a later run from that checkpoint plays the same game unless told otherwise
    again = bandit_config(tmp_path / "run", rounds=1, n_rollouts=8, algo="online-filtered-bc")
    OnlineTrainer(again, store, tmp_path / "run2")
    assert again.task_options == {"flavour": "mint"}


def test_resume_of_a_run_saved_with_one_optimizer_group(bandit_init, tmp_path):
    """Runs saved before the value head had its own learning rate resume with their one group."""
    store = Store(tmp_path / "s.db")
    OnlineTrainer(bandit_config(bandit_init, rounds=1, save_every=1), store, tmp_path / "run").run()
    f = tmp_path / "run" / "checkpoint" / "trainer_state.pt"
    state = torch.load(f, weights_only=True)
    groups = state["optimizer"]["param_groups"]
    assert len(groups) == 2
    merged = dict(groups[0], params=[i for g in groups for i in g["params"]])
    state["optimizer"]["param_groups"] = [merged]
    torch.save(state, f)
    resumed = OnlineTrainer(
        bandit_config(bandit_init, rounds=2), store, tmp_path / "run", resume=True
    )
    assert len(resumed.opt.param_groups) == 1
    assert resumed.run()["rounds"] == 2


def test_keep_best_keeps_the_best_evaluated_round_not_the_last(bandit_init, tmp_path, monkeypatch):
    scores = iter(
        [0.2, 0.5, 0.9, 0.3]
    )  # rounds 0 (the start), 1, 2, 3: the run collapses at the end
    monkeypatch.setattr(OnlineTrainer, "evaluate", lambda self: {"mean_return": next(scores)})
    tr = OnlineTrainer(
        bandit_config(
            bandit_init,
            rounds=3,
            n_rollouts=16,
            keep_best=True,
            eval_every=1,
            eval_episodes=4,
            save_every=0,
        ),
        None,
        tmp_path / "run",
    )
    res = tr.run()
    assert res["best"] == {"round": 2, "mean_return": 0.9} and res["rounds"] == 3
    best, last = tmp_path / "run" / "checkpoint-best", tmp_path / "run" / "checkpoint"
    assert json.loads((best / "online_state.json").read_text())["round"] == 2
    assert json.loads((last / "online_state.json").read_text())["round"] == 3
    assert not (tmp_path / "run" / "checkpoint-best.tmp").exists()
    p_best = action_probs(load_checkpoint(best)[0].lm, tr.tok, "s\n", BANDIT_ACTIONS)
    p_last = action_probs(load_checkpoint(last)[0].lm, tr.tok, "s\n", BANDIT_ACTIONS)
    assert p_best != p_last  # round 3's update moved the policy; the best copy is round 2's


def test_keep_best_with_real_evaluations_on_their_own_seeds(bandit_init, tmp_path, monkeypatch):
    import training.agents.checkpoint_agent as checkpoint_agent

    seeds = []
    real = checkpoint_agent.evaluate_model

    def spy(*a, seed=0, **kw):
        seeds.append(seed)
        return real(*a, seed=seed, **kw)

    monkeypatch.setattr(checkpoint_agent, "evaluate_model", spy)
    cfg = bandit_config(
        bandit_init,
        rounds=2,
        n_rollouts=16,
        keep_best=True,
        eval_every=1,
        eval_episodes=8,
        eval_seed=500_000,
    )
    store = Store(tmp_path / "s.db")
    res = OnlineTrainer(cfg, store, tmp_path / "run").run()
    evals = [
        json.loads(x)
        for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
        if json.loads(x)["kind"] == "eval"
    ]
    assert seeds == [500_000] * 3 and [e["round"] for e in evals] == [0, 1, 2]
    top = max(
        evals, key=lambda e: e["mean_return"]
    )  # the first of equals: a later one must beat it
    assert res["best"] == {"round": top["round"], "mean_return": top["mean_return"]}
    state = json.loads((tmp_path / "run" / "checkpoint-best" / "online_state.json").read_text())
    assert state["round"] == top["round"] and state["best"]["round"] == top["round"]
    kept = [
        r
        for r in store.db.execute(
            "SELECT path, step, meta FROM checkpoints WHERE run_id = ?", [res["run_id"]]
        )
        if r[0].endswith("checkpoint-best")
    ]
    assert (
        kept and kept[-1][1] == top["round"] and json.loads(kept[-1][2])["kept_best"] == res["best"]
    )
    assert kept[-1][0] == str((tmp_path / "run" / "checkpoint-best").resolve())


def test_keep_best_needs_evaluations(bandit_init):
    with pytest.raises(TrainingError, match="--keep-best"):
        bandit_config(bandit_init, keep_best=True, eval_every=0)
