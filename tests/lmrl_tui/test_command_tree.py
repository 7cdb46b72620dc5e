"""One `lmrl` command tree: `train` has a subcommand per registered algorithm, `--db` works before
or after every subcommand, the dataset flags are one definition, every config field has its help
line, and a missing or broken Stockfish is one line and exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import fields

import pytest

from lmrl_tui.cli import build_parser, main
from training.algorithms import ALGORITHMS, lookup
from training.args import config_flags, dataset_query
from training.config import ALGO_ALIASES, TrainConfig
from training.offline.cli import algo_defaults
from training.online.cli import ALIASES as ONLINE_ALIASES
from training.online.config import OnlineConfig

SEVEN = ("bc", "%bc", "mc", "ilql", "qsft", "ppo", "online-filtered-bc")


def test_train_help_lists_the_seven_algorithms(capsys):
    assert tuple(ALGORITHMS) == SEVEN
    with pytest.raises(SystemExit) as e:
        main(["train", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name in SEVEN:
        assert f"\n    {name} " in out or f"\n    {name}\n" in out, name


@pytest.mark.parametrize(
    "spelling,key",
    [
        ("bc", "bc"),
        ("BC", "bc"),
        ("%bc", "pbc"),
        ("pbc", "pbc"),
        ("filtered_bc", "pbc"),
        ("percent_bc", "pbc"),
        ("filtered-bc", "pbc"),
        ("mc_returns", "mc"),
        ("ILQL", "ilql"),
        ("q-sft", "qsft"),
        ("PPO", "ppo"),
        ("online-%bc", "online-filtered-bc"),
        ("obc", "online-filtered-bc"),
        ("online_filtered_bc", "online-filtered-bc"),
        ("online-pbc", "online-filtered-bc"),
    ],
)
def test_every_spelling_of_today_is_a_train_subcommand(spelling, key):
    extra = ["--init", "ckpt"] if key in ("ppo", "online-filtered-bc") else []
    args = build_parser().parse_args(["train", spelling, "--task", "maze-fo", "--out", "o", *extra])
    assert args.algo == key and args.command == "train"


def test_registry_spellings_cover_the_config_tables():
    for alias, key in {**ALGO_ALIASES, **ONLINE_ALIASES}.items():
        algo = lookup(alias)
        assert algo is not None and algo.key == key, alias


DB_COMMANDS = {
    "stats": ["stats"],
    "generate": ["generate", "maze-fo", "--episodes", "2"],
    "export": ["export", "--task", "maze-fo"],
    "train": ["train", "bc", "--task", "maze-fo", "--out", "o"],
    "train-online": ["train", "ppo", "--task", "maze-fo", "--init", "c", "--out", "o"],
    "eval": ["eval", "runs/x"],
    "import": ["import", "f.jsonl"],
    "tasks": ["tasks"],
}


@pytest.mark.parametrize("name", DB_COMMANDS)
def test_db_before_or_after_the_subcommand(name):
    argv = DB_COMMANDS[name]
    assert build_parser().parse_args(["--db", "before.db", *argv]).db == "before.db"
    assert build_parser().parse_args([*argv, "--db", "after.db"]).db == "after.db"
    assert build_parser().parse_args([argv[0], "--db", "mid.db", *argv[1:]]).db == "mid.db"
    assert build_parser().parse_args(argv).db is None  # then $LMRL_DB or the user data directory


NO_STORE = {"tasks": ["tasks"], "merge": ["merge", "a.db", "--into", "b.db"]}
"""The commands run without the ``--db`` store (merge names its stores itself)."""


@pytest.mark.parametrize(
    "argv",
    [
        [],
        *DB_COMMANDS.values(),
        ["play", "maze-fo"],
        ["serve"],
        ["reproduce", "maze-fo"],
        *NO_STORE.values(),
    ],
)
def test_every_command_names_its_runner_and_whether_it_needs_the_store(argv):
    """One dispatch (lmrl_tui.cli.entry): each subcommand sets ``run`` and ``needs_store``."""
    args = build_parser().parse_args(argv)
    assert callable(args.run)
    assert args.needs_store is (args.command not in NO_STORE), argv


def test_db_after_the_subcommand_is_the_store_used(tmp_path, capsys):
    db = tmp_path / "after.db"
    assert main(["generate", "maze-fo", "--episodes", "3", "--quiet", "--db", str(db)]) == 0
    assert main(["stats", "--db", str(db)]) == 0
    assert str(db) in capsys.readouterr().out
    out = tmp_path / "x.jsonl"
    assert main(["export", "--db", str(db), "--task", "maze-fo", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3
    for argv in (
        ["train", "bc", "--task", "nope", "--out", str(tmp_path / "r")],
        ["eval", str(tmp_path / "none")],
    ):
        other = tmp_path / f"{argv[0]}.db"
        assert main([*argv, "--db", str(other)]) == 1  # bad input, after the store was opened there
        assert other.exists()


def test_dataset_flags_are_one_definition():
    flags = [
        "--task",
        "wordle",
        "--option",
        "words=small",
        "--source",
        "scripted",
        "--player",
        "ann",
        "--agent",
        "behaviour",
        "--status",
        "any",
        "--min-return",
        "-3",
        "--top-percent",
        "20",
        "--wins-only",
        "--split",
        "eval",
        "--eval-fraction",
        "0.25",
        "--limit",
        "7",
    ]
    export = build_parser().parse_args(["export", *flags])
    train = build_parser().parse_args(["train", "bc", "--out", "o", *flags])
    assert dataset_query(export) == dataset_query(train)
    q = dataset_query(export)
    assert (
        q.sources,
        q.players,
        q.agents,
        q.status,
        q.min_return,
        q.top_percent,
        q.wins_only,
        q.split,
        q.eval_fraction,
        q.limit,
        q.options,
    ) == (
        ["scripted"],
        ["ann"],
        ["behaviour"],
        "any",
        -3.0,
        20.0,
        True,
        "eval",
        0.25,
        7,
        {"words": "small"},
    )


@pytest.mark.parametrize("cls", [TrainConfig, OnlineConfig])
def test_every_config_field_has_a_help_line(cls):
    for f in fields(cls):
        assert len(f.metadata.get("help", "").split()) >= 2, (
            f"{cls.__name__}.{f.name} has no help line"
        )


@pytest.mark.parametrize("algo,cls", [("ilql", TrainConfig), ("ppo", OnlineConfig)])
def test_generated_help_shows_each_field_and_its_default(algo, cls, capsys):
    with pytest.raises(SystemExit):
        main(["train", algo, "--help"])
    out = capsys.readouterr().out
    text = "".join(out.split())  # argparse wraps lines at spaces and hyphens
    # an offline algorithm shows its own defaults (ILQL: tau 0.95, polyak_alpha 0.1)
    defaults = algo_defaults(algo) if cls is TrainConfig else OnlineConfig(algo=algo)
    assert cls is OnlineConfig or (defaults.tau, defaults.polyak_alpha) == (0.95, 0.1)
    for f in config_flags(cls):
        assert "--" + f.name.replace("_", "-") + " " in out or f.metadata.get("switch"), f.name
        value = getattr(defaults, f.name)
        shown = (
            "none"
            if value is None
            else str(value).lower()
            if isinstance(value, bool)
            else str(value)
        )
        assert "".join(f"{f.metadata['help']} (default: {shown})".split()) in text, f.name


def test_the_flags_are_those_of_before():
    """The generated flags are exactly the hand-listed ones they replace, plus those added since
    (bisim_weight, goals, partner_model, side, head_act, max_minutes, top_k, qsft_target, qsft_support,
    pack, precision, compile, hindsight): no flag
    gained or lost by accident."""
    offline = {
        "seed",
        "tokenizer",
        "vocab_size",
        "n_layer",
        "n_embd",
        "n_head",
        "dropout",
        "windows",
        "max_length",
        "lr",
        "weight_decay",
        "batch_size",
        "epochs",
        "max_steps",
        "grad_clip",
        "warmup_steps",
        "gamma",
        "discount_mode",
        "tau",
        "cql_weight",
        "polyak_alpha",
        "target",
        "pi_beta",
        "bc_weight",
        "head_bias",
        "reward_scale",
        "qsft_reward",
        "qsft_target",
        "qsft_support",
        "beta",
        "decoding",
        "logit_weight",
        "eval_every",
        "eval_episodes",
        "save_every",
        "log_every",
        "top_mode",
        "truncation",
        "lr_schedule",
        "dedupe",
        "train_layers",
        "bisim_weight",
        "goals",
        "partner_model",
        "side",
        "head_act",
        "max_minutes",
        "top_k",
        "no_repeat",
        "pack",
        "precision",
        "compile",
        "hindsight",
    }
    assert {f.name for f in config_flags(TrainConfig)} == offline
    online = {f.name for f in fields(OnlineConfig)} - {
        "algo",
        "task",
        "task_options",
        "init",
        "extra",
        "progress",
    }
    assert {f.name for f in config_flags(OnlineConfig)} == online


# -- Stockfish ------------------------------------------------------------------------------------
@pytest.mark.parametrize("task", ["chess", "endgames"])
def test_missing_stockfish_is_one_line_and_exit_2(task, tmp_path, monkeypatch, capsys):
    import envs.chess.stockfish as sf

    monkeypatch.setattr(sf, "DEBIAN_PATHS", ())
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv(sf.PATH_ENV, raising=False)
    assert (
        main(["--db", str(tmp_path / "e.db"), "generate", task, "--episodes", "2", "--quiet"]) == 2
    )
    err = capsys.readouterr().err
    assert (
        err.startswith("lmrl: error: Stockfish is not installed")
        and "apt-get install stockfish" in err
    )
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(shutil.which("false") is None, reason="no `false` binary")
@pytest.mark.parametrize("task", ["chess", "endgames"])
def test_stockfish_path_not_an_engine_is_one_line_and_exit_2(task, tmp_path):
    env = {**os.environ, "STOCKFISH_PATH": shutil.which("false")}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "lmrl_tui",
            "--db",
            str(tmp_path / "e.db"),
            "generate",
            task,
            "--episodes",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2
    assert "could not start Stockfish" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_training_entry_module_for_launchers(tmp_path):
    """``python -m training.cli`` (what ``accelerate launch -m`` runs) has the same subcommands."""
    r = subprocess.run(
        [sys.executable, "-m", "training.cli", "train", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and all(name in r.stdout for name in SEVEN)
    db = tmp_path / "launch.db"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "training.cli",
            "train",
            "ppo",
            "--task",
            "nope",
            "--init",
            "x",
            "--out",
            str(tmp_path / "o"),
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1 and "unknown task 'nope'" in r.stderr and db.exists()


def test_debug_shows_the_traceback_before_the_one_line(tmp_path, capsys, monkeypatch) -> None:
    from lmrl_tui.cli import main

    db = str(tmp_path / "d.db")
    assert main(["--db", db, "generate", "maze-fo", "--option", "bogus=1"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().count("\n") == 0
    for argv in (
        ["--debug", "--db", db, "generate", "maze-fo", "--option", "bogus=1"],
        ["--db", db, "generate", "maze-fo", "--option", "bogus=1", "--debug"],
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "Traceback (most recent call last)" in err and err.rstrip().endswith("max_steps)")
    monkeypatch.setenv("LMRL_DEBUG", "1")
    assert main(["--db", db, "generate", "maze-fo", "--option", "bogus=1"]) == 1
    assert "Traceback" in capsys.readouterr().err
