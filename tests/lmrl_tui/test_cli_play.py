"""``lmrl play``'s flags: the dialog fields they make, the one-line refusals, and the arguments
``lmrl serve --task`` hands every browser session."""

from __future__ import annotations

import argparse

import pytest

from lmrl_tui.cli import main
from lmrl_tui.cli.play import (
    PlayFlagsError,
    add_play_arguments,
    play_argv,
    play_fields,
    play_request,
)
from lmrl_tui.serve import served_command


@pytest.mark.parametrize(
    ("task", "role", "vs", "agent", "checkpoint", "partner", "partner_model"),
    [
        ("maze-fo", None, None, "human", "", "embedded", ""),
        ("twenty-questions", None, "person", "human", "", "human", ""),
        ("twenty-questions", "oracle", "strong", "strong", "", "human", ""),
        ("twenty-questions", "oracle", None, "strong", "", "human", ""),
        ("guess-city", "oracle", "person", "human", "", "human", ""),
        ("car-dealer", "buyer", "runs/seller", "strong", "runs/seller", "human", ""),
        ("car-dealer", "seller", "hf:tiny", "human", "", "embedded", "hf:tiny"),
        ("chess", None, "built-in", "human", "", "embedded", ""),
    ],
)
def test_the_flags_fill_the_dialog_s_fields(
    task, role, vs, agent, checkpoint, partner, partner_model
):
    fields = play_fields(task, role, vs)
    assert (fields["agent"], fields["checkpoint"], fields["partner"], fields["partner_model"]) == (
        agent,
        checkpoint,
        partner,
        partner_model,
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["play", "nosuch"], "unknown task 'nosuch'"),
        (
            ["play", "twenty-questions", "--as", "judge"],
            "--as takes guesser or oracle, not 'judge'",
        ),
        (["play", "maze-fo", "--vs", "person"], "maze-fo has one side"),
        (["play", "twenty-questions", "--vs", "strong"], "use --as oracle --vs strong"),
        (
            ["play", "car-dealer", "--as", "buyer", "--vs", "built-in"],
            "the seller has no built-in player",
        ),
    ],
)
def test_flags_that_do_not_fit_are_one_line(tmp_path, capsys, argv, said):
    assert main(["--db", str(tmp_path / "s.db"), *argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err


def test_serve_hands_every_session_the_same_episode(tmp_path):
    p = argparse.ArgumentParser()
    add_play_arguments(p, required=False)
    args = p.parse_args(
        [
            "--task",
            "twenty-questions",
            "--as",
            "oracle",
            "--vs",
            "strong",
            "--seed",
            "3",
            "--option",
            "secret=guitar",
        ]
    )
    request = play_request(args)
    assert request is not None and (request.task_id, request.seed) == ("twenty-questions", 3)
    assert request.fields["options"] == "secret=guitar"
    argv = play_argv(args)
    assert argv == (
        "play",
        "twenty-questions",
        "--as",
        "oracle",
        "--vs",
        "strong",
        "--seed",
        "3",
        "--option",
        "secret=guitar",
    )
    command = served_command(tmp_path / "s.db", play=argv)
    assert (
        " -m lmrl_tui play twenty-questions --as oracle --vs strong --seed 3 --option secret=guitar --db "
        in command
    )
    assert play_argv(p.parse_args([])) == () and play_request(p.parse_args([])) is None
    with pytest.raises(PlayFlagsError, match="need --task"):
        play_request(p.parse_args(["--as", "oracle"]))
