"""The `lmrl` command line: the headless jobs work, and bad input is one line and a non-zero exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import envs
from data.store import Store
from lmrl_tui.cli import main


def run_cli(*args: str, env_db=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if env_db is not None:
        env["LMRL_DB"] = str(env_db)
    return subprocess.run(
        [sys.executable, "-m", "lmrl_tui", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
def test_generate_stats_export_import(tmp_path, capsys):
    db = tmp_path / "e.db"
    assert main(["--db", str(db), "generate", "maze-fo", "--episodes", "1000", "--seed", "0"]) == 0
    assert "wrote 1000 maze-fo episodes" in capsys.readouterr().out
    s = Store(db)
    assert s.count("task = 'maze-fo' AND status = 'finished'") == 1000
    s.close()
    assert main(["--db", str(db), "stats"]) == 0
    out = capsys.readouterr().out
    assert "maze-fo" in out and "1000" in out and "scripted" in out
    out_file = tmp_path / "fo.jsonl"
    assert (
        main(
            [
                "--db",
                str(db),
                "export",
                "--task",
                "maze-fo",
                "--format",
                "lmrl",
                "-o",
                str(out_file),
            ]
        )
        == 0
    )
    lines = out_file.read_text().splitlines()
    assert len(lines) == 1000 and set(json.loads(lines[0])[0]) == {
        "state",
        "action",
        "reward",
        "done",
    }
    db2 = tmp_path / "e2.db"
    assert (
        main(["--db", str(db2), "import", str(out_file), "--format", "lmrl", "--task", "maze-fo"])
        == 0
    )
    again = tmp_path / "again.jsonl"
    main(["--db", str(db2), "export", "--task", "maze-fo", "--format", "lmrl", "-o", str(again)])
    assert again.read_text() == out_file.read_text()


def test_tasks_lists_maze(capsys):
    assert main(["tasks"]) == 0
    assert "maze-fo" in capsys.readouterr().out


def test_tasks_and_the_option_help_list_every_task_s_options_with_values_and_defaults(capsys):
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    options = out[out.index("Task options") :]
    for line in (
        "layout=double_t|umaze|medium|random (default: double_t)",
        "words=standard|small (default: standard)",
        "max_guesses=a whole number ≥ 1 (default: 6)",
        "setups=any of kQK,kRK,kQRK,kRRK (default: kQK,kRK,kQRK,kRRK)",
        "reward_mode=fancy|revenue (default: fancy)",
        "max_questions=a whole number ≥ 1 (default: 20)",
    ):
        assert line in options, line
    for task_id in envs.ids():
        assert f"  {task_id}:" in options
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        "words=standard|small (default: standard)" in help_text
        and "positions=test|random" in help_text
    )


def test_env_var_selects_database(tmp_path):
    db = tmp_path / "via-env.db"
    r = run_cli("generate", "maze-po", "--episodes", "3", env_db=db)
    assert r.returncode == 0, r.stderr
    assert db.exists() and str(db) in r.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["generate", "no-such-task"], "unknown task 'no-such-task'"),
        (["generate", "maze-fo", "--seed", "abc"], "the seed must be a whole number"),
        (["generate", "maze-fo", "--episodes", "0"], "expected a positive whole number"),
        (["generate", "maze-fo", "--policy", "nope"], "unknown policy 'nope'"),
        (["generate", "maze-fo", "--option", "layout=nope"], "unknown maze layout"),
        (["import", "/no/such/file.jsonl"], "no such file"),
        (["export", "--format", "lmrl"], "give --task"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, message):
    r = run_cli("--db", str(tmp_path / "e.db"), *args)
    assert r.returncode != 0
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bad_database_paths(tmp_path):
    txt = tmp_path / "x.txt"
    txt.write_text("plain text")
    newer = tmp_path / "newer.db"
    s = Store(newer)
    s.db["_sqlite_migrations"].insert(
        {"migration_set": "lmrl-tui", "name": "m900_future", "applied_at": "x"}
    )
    s.close()
    for db, message in [
        (txt, "not an SQLite database"),
        (tmp_path, "is a directory"),
        (txt / "sub.db", "cannot create the folder"),
        (newer, "newer lmrl-tui"),
    ]:
        r = run_cli("--db", str(db), "stats")
        assert r.returncode != 0 and message in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_unknown_task_option_is_one_line(tmp_path, capsys):
    from lmrl_tui.cli import main

    assert (
        main(
            [
                "--db",
                str(tmp_path / "x.db"),
                "generate",
                "wordle",
                "--episodes",
                "1",
                "--option",
                "foo=1",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "wordle has no option 'foo'" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as e:
        main(["--db", str(tmp_path / "x.db"), "generate", "wordle", "--option", "=1"])
    assert e.value.code == 2 and "has no name" in capsys.readouterr().err


def test_a_wait_for_the_write_lock_is_one_readable_line_for_every_command(capsys):
    from lmrl_tui.cli import data_commands, entry
    from lmrl_tui.cli.errors import report_lock_wait

    report_lock_wait(12.3)
    assert capsys.readouterr().err == (
        "lmrl: waiting for another process to finish writing (12 s so far)\n"
    )
    # merge (which opens its stores itself) and every other command say the same line
    assert data_commands.report_lock_wait is entry.report_lock_wait is report_lock_wait
