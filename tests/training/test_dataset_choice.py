"""Which episodes a training run uses, and that it says so: the default is the logged data, not
online runs' rollouts (source agent); ``--source agent|any`` and ``--run ID`` take those; every
run prints its dataset's composition on stderr and keeps it in its checkpoint and its ``runs``
row."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from data import runs  # noqa: E402
from data.composition import composition  # noqa: E402
from data.datasets import SOURCES, DatasetQuery, select_episode_ids  # noqa: E402
from data.records import Who, episode_record  # noqa: E402
from lmrl_tui.cli import build_parser, main  # noqa: E402
from training import args as targs  # noqa: E402
from training.offline.toy import maze_store  # noqa: E402

TINY = [
    "--max-steps",
    "1",
    "--batch-size",
    "8",
    "--n-embd",
    "32",
    "--n-head",
    "2",
    "--vocab-size",
    "300",
    "--eval-episodes",
    "0",
    "--no-progress",
]


def test_the_source_flag_knows_every_source():
    assert set(targs.SOURCES) == {*SOURCES, "any"}


@pytest.mark.parametrize("command", [["train", "bc", "--out", "o"], ["export"]])
def test_dataset_flags_default_to_the_logged_data(command):
    def query(*flags):
        return targs.dataset_query(
            build_parser().parse_args([*command, "--task", "maze-fo", *flags])
        )

    q = query()
    assert (q.sources, q.run_id, q.status) == (["human", "scripted", "import"], None, "finished")
    assert query("--source", "agent").sources == ["agent"]
    assert query("--source", "any").sources == []
    assert query("--source", "human", "--source", "import").sources == ["human", "import"]
    assert (query("--run", "7").run_id, query("--run", "7").sources) == (7, [])
    assert query("--run", "7", "--source", "agent").sources == ["agent"]


def _record(task, pol, seed, who, source, player=None, **kw):
    ep = envs.run_episode(task, pol, seed=seed)
    rec = episode_record(
        "maze-fo",
        task.spec.version,
        ep.seed,
        ep.first_observation,
        ep.transitions,
        who,
        partner=None,
        source=source,
        success=True,
        **kw,
    )
    rec.player = player
    return rec


@pytest.fixture
def mixed(tmp_path):
    """Scripted behaviour data, a person's game and a PPO-like run's rollouts (source agent)."""
    store = maze_store(tmp_path / "m.db", episodes=8)
    task, pol = envs.make("maze-fo"), envs.make_policy("maze-fo", "strong")
    store.write_episodes([_record(task, pol, 100, Who("human", "human"), "human", player="ann")])
    rid = runs.start_run(
        store,
        kind="train",
        algo="ppo",
        task="maze-fo",
        config={},
        dataset_query=None,
        episode_ids=None,
        out_dir=None,
    )
    agent = store.write_episodes(
        [
            _record(
                task,
                pol,
                200 + i,
                Who("checkpoint", "ppo:r@round1"),
                "agent",
                run_id=rid,
                meta={"round": 1},
            )
            for i in range(3)
        ]
    )
    yield store, rid, agent
    store.close()


def test_training_takes_the_logged_data_and_says_what_it_used(mixed, tmp_path, capsys):
    store, rid, agent = mixed
    out = tmp_path / "bc"
    assert (
        main(
            ["--db", str(store.path), "train", "bc", "--task", "maze-fo", "--out", str(out), *TINY]
        )
        == 0
    )
    err = capsys.readouterr().err
    saved = json.loads((out / "checkpoint" / "dataset.json").read_text())
    ids = saved["episode_ids"]
    assert len(ids) == 9 and not set(ids) & set(agent)
    query = DatasetQuery(**saved["query"])
    assert query.sources == ["human", "scripted", "import"]
    comp = composition(store, ids, query)
    assert saved["composition"] == comp
    assert {(r["source"], r["player"], r["agent"], r["episodes"]) for r in comp["rows"]} == {
        ("human", "ann", "human:human", 1),
        ("scripted", None, "scripted:behaviour", 8),
    }
    assert comp["left_out_rollouts"] == 3
    # printed on stderr at the start: the table, the query and what was left out
    assert "bc on maze-fo: dataset: 9 episodes" in err
    assert "scripted:behaviour" in err and "ann" in err and "total" in err
    assert "query: task=maze-fo sources=human,scripted,import status=finished" in err
    assert "not included: 3 episodes of models' own rollouts" in err
    run = next(r for r in runs.recent_runs(store) if r["out_dir"] == str(out))
    assert run["config"]["dataset"] == {k: v for k, v in comp.items() if k != "query"}
    assert run["episode_ids"] == ids

    # one online run's rollouts, asked for by its id
    out = tmp_path / "from-run"
    assert (
        main(
            [
                "--db",
                str(store.path),
                "train",
                "bc",
                "--task",
                "maze-fo",
                "--run",
                str(rid),
                "--out",
                str(out),
                *TINY,
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    saved = json.loads((out / "checkpoint" / "dataset.json").read_text())
    assert saved["episode_ids"] == agent
    assert "checkpoint:ppo:r@round1" in err and f"run_id={rid}" in err and "not included" not in err
    assert select_episode_ids(store, DatasetQuery(task="maze-fo", sources=["agent"])) == agent


def test_online_runs_say_they_train_on_their_rollouts(tmp_path, capsys):
    from data.records import EpisodeRecord, StepRecord
    from data.store import Store
    from training.online.toy import BANDIT, BANDIT_ACTIONS, register_bandit, tiny_checkpoint

    register_bandit()
    init = tiny_checkpoint(tmp_path / "init", BANDIT, [("s\n", a) for a in BANDIT_ACTIONS])
    store = Store(tmp_path / "s.db")
    store.write_episodes(
        [
            EpisodeRecord(
                BANDIT,
                1,
                i,
                "s\n",
                [StepRecord("B\n", "", 0.0, True)],
                Who("scripted", "b"),
                source="scripted",
            )
            for i in range(4)
        ]
    )
    base = [
        "--task",
        BANDIT,
        "--init",
        str(init),
        "--rounds",
        "1",
        "--n-rollouts",
        "4",
        "--eval-every",
        "0",
        "--no-progress",
        "--max-new-tokens",
        "2",
    ]
    out = tmp_path / "obc"
    assert (
        main(["--db", str(store.path), "train", "online-filtered-bc", *base, "--out", str(out)])
        == 0
    )
    err = capsys.readouterr().err
    run = next(r for r in runs.recent_runs(store) if r["out_dir"] == str(out))
    assert (
        f"online-filtered-bc on {BANDIT}: no dataset, trains on its own rollouts (4 episodes a round, "
        f"1 round; stored with source agent, run {run['id']})"
    ) in err
    assert f"initial policy: {init}" in err
    dataset = run["config"]["dataset"]
    assert (
        dataset["trains_on"] == "rollouts"
        and dataset["init"] == str(init)
        and "bc_term" not in dataset
    )
    saved = json.loads((out / "checkpoint" / "dataset.json").read_text())
    assert saved["trains_on"] == "rollouts" and saved["run_id"] == run["id"]

    # PPO with a BC term on stored episodes: that dataset's composition, printed and kept
    out = tmp_path / "ppo"
    assert (
        main(
            [
                "--db",
                str(store.path),
                "train",
                "ppo",
                *base,
                "--bc-weight",
                "0.5",
                "--init",
                str(tmp_path / "obc"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "the BC term's dataset: 4 episodes, 4 steps" in err and "scripted:b" in err
    assert f"initial policy: {tmp_path / 'obc'}, trained online (run {run['id']})" in err
    ppo = next(r for r in runs.recent_runs(store) if r["out_dir"] == str(out))
    bc_term = ppo["config"]["dataset"]["bc_term"]
    assert bc_term["total"]["episodes"] == 4 and bc_term["rows"][0]["agent"] == "scripted:b"
    assert json.loads((out / "checkpoint" / "dataset.json").read_text())["bc_term"] == bc_term
    store.close()


def test_an_empty_dataset_says_rollouts_were_left_out(mixed, tmp_path, capsys):
    store, rid, agent = mixed
    argv = [
        "--db",
        str(store.path),
        "train",
        "bc",
        "--task",
        "maze-fo",
        "--player",
        "nobody",
        "--out",
        str(tmp_path / "x"),
        *TINY,
    ]
    assert main(argv) == 1
    assert "no episodes match the query" in capsys.readouterr().err
    argv[argv.index("--player") : argv.index("--player") + 2] = ["--agent", "ppo:r@round1"]
    assert main(argv) == 1
    assert (
        "no episodes match the query (3 episodes of models' own rollouts are left out: --source agent, "
        "--source any or --run ID takes them)"
    ) in capsys.readouterr().err
