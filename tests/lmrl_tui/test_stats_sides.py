"""``lmrl stats``: per task, its sources and, under each, its sides (the agent's kind v the
partner's: a person guessing against the built-in oracle is not a person answering a scripted
guesser), ``--by player`` splitting them by player; readable in 100 columns."""

from __future__ import annotations

import pytest

import envs
from data.records import EpisodeRecord, StepRecord, Who
from lmrl_tui.cli import main

TQ = "twenty-questions"


def _ep(
    agent,
    partner,
    source,
    returns,
    *,
    player=None,
    status="finished",
    understood=True,
    success=False,
):
    steps = [
        StepRecord(
            "Is it alive?\n", "No.\n", r, i == len(returns) - 1, info={"understood": understood}
        )
        for i, r in enumerate(returns)
    ]
    return EpisodeRecord(
        TQ,
        envs.spec(TQ).version,
        0,
        "Questions:\n",
        steps,
        agent,
        partner=partner,
        player=player,
        source=source,
        status=status,
        success=success,
    )


@pytest.fixture
def lab(store):
    oracle, guesser = Who("scripted", "oracle"), Who("scripted", "behaviour")
    ann, bob = Who("human", "human"), Who("human", "human")
    store.write_episodes(
        [
            *[_ep(guesser, oracle, "scripted", [-1.0] * 5) for _ in range(3)],
            _ep(
                ann, oracle, "human", [-1.0, -1.0, 0.0], player="ann", success=True
            ),  # a person guesses
            _ep(ann, oracle, "human", [-1.0] * 4, player="bob", status="abandoned"),
            _ep(ann, oracle, "human", [-1.0], player="cy", status="in_progress"),  # being played
            _ep(
                guesser, bob, "human", [-1.0] * 6, player="bob", understood=False
            ),  # a person answers
            _ep(ann, bob, "human", [-1.0] * 2, player="ann", success=True),  # hot seat
            *[
                _ep(Who("checkpoint", "ppo:tq@round3"), oracle, "agent", [-1.0] * 20)
                for _ in range(2)
            ],
        ]
    )
    store.write_episodes(
        [
            EpisodeRecord(
                "maze-fo",
                1,
                0,
                "o\n",
                [StepRecord("move up\n", "o\n", -1.0, True)],
                Who("scripted", "behaviour"),
                source="scripted",
            )
        ]
    )
    return store


def _stats(capsys, db, *argv) -> list[str]:
    assert main(["--db", str(db), "stats", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def _row(lines, label):
    (line,) = [x for x in lines if x.strip().startswith(label + "  ")]
    return line.split()[len(label.split()) :]


def test_sources_and_sides_are_separate_rows(lab, db_path, capsys):
    lines = _stats(capsys, db_path)
    assert max(len(x) for x in lines if not x.startswith("database:")) <= 100
    assert "twenty-questions (guesser v oracle)" in lines and "maze-fo" in lines
    head = " ".join(lines[1:3])
    for title in (
        "episodes",
        "finished",
        "in",
        "progress",
        "abandoned",
        "mean",
        "return",
        "success",
        "steps",
        "not",
        "understood",
    ):
        assert title in head.split()
    # per source: today's numbers (episodes, finished, abandoned, mean return, success, steps, not understood)
    human = _row(
        lines, "human"
    )  # finished: 3 + 6 + 2 steps, returns -2, -6, -2; 1 of 15 steps not understood
    assert human == ["5", "3", "1", "1", f"{(-2 - 6 - 2) / 3:.3f}", "66.7%", "11", f"{6 / 16:.1%}"]
    # per side, under the source: who played which side
    assert _row(lines, "human v scripted")[:4] == ["3", "1", "1", "1"]  # a person guessing
    assert _row(lines, "scripted v human")[:4] == ["1", "1", "0", "0"]  # a person answering
    assert _row(lines, "scripted v human")[-1] == "100.0%"  # ... who did not understand
    assert _row(lines, "human v human")[:2] == ["1", "1"]  # hot seat
    assert _row(lines, "checkpoint v scripted")[:2] == ["2", "2"]
    assert _row(lines, "agent")[:2] == ["2", "2"] and _row(lines, "scripted v scripted")[:2] == [
        "3",
        "3",
    ]
    order = [x.strip().split("  ")[0] for x in lines]
    assert order.index("agent") < order.index("checkpoint v scripted") < order.index("human")


def test_by_player_splits_the_sides(lab, db_path, capsys):
    lines = _stats(capsys, db_path, "--task", TQ, "--by", "player")
    assert max(len(x) for x in lines if not x.startswith("database:")) <= 100
    assert "maze-fo" not in lines
    assert _row(lines, "human v scripted (ann)")[:2] == ["1", "1"]
    assert _row(lines, "human v scripted (bob)")[:4] == ["1", "0", "0", "1"]
    assert _row(lines, "human v scripted (cy)")[:4] == ["1", "0", "1", "0"]
    assert _row(lines, "scripted v human (bob)")[:2] == ["1", "1"]
