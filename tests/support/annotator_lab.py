"""A small store of annotators with known figures (a support module: test files import it,
never each other)."""

from __future__ import annotations

import envs
from data.annotators import register_player
from data.records import EpisodeRecord, StepRecord, Who

HUMAN, TQ, MAZE = Who("human", "human"), "twenty-questions", "maze-fo"


def _at(minute: int, second: int = 0) -> str:
    return f"2026-01-01T10:{minute:02d}:{second:02d}.000+00:00"


def build_lab(store) -> dict[str, int]:
    """ann plays a maze (90 s, 3 refused inputs) and abandons a 20Q game (30 s); bob answers a
    scripted guesser (60 s: his think time is the partner's, not the guesser's); cy only has a
    name; ann labels bob's game twice, bob labels ann's maze once; a scripted episode has no player."""
    maze = EpisodeRecord(
        MAZE,
        envs.spec(MAZE).version,
        1,
        "o\n",
        [
            StepRecord(
                "move up\n",
                "o\n",
                -1.0,
                think_ms=1000,
                info={"attempts": [{"typed": "fly"}, {"typed": "jump"}]},
            ),
            StepRecord("move up\n", "o\n", -1.0, think_ms=2000),
            StepRecord("move left\n", "o\n", 0.0, True, think_ms=3000),
        ],
        HUMAN,
        player="ann",
        source="human",
        success=True,
        meta={"attempts": [{"typed": "swim"}]},
        started_at=_at(0),
        ended_at=_at(1, 30),
    )
    quit_20q = EpisodeRecord(
        TQ,
        envs.spec(TQ).version,
        2,
        "Questions:\n",
        [StepRecord("Is it alive?\n", "No.\n", -1.0, think_ms=4000)],
        HUMAN,
        partner=Who("scripted", "oracle"),
        player="ann",
        source="human",
        status="abandoned",
        started_at=_at(2),
        ended_at=_at(2, 30),
    )
    answered = EpisodeRecord(
        TQ,
        envs.spec(TQ).version,
        3,
        "Questions:\n",
        [
            StepRecord(
                "Is it alive?\n",
                "No.\n",
                -1.0,
                think_ms=50,
                info={"partner": {"typed": "no", "think_ms": 6000}},
            ),
            StepRecord(
                "Is it a car?\n",
                "No.\n",
                -1.0,
                True,
                think_ms=50,
                info={"partner": {"typed": "no", "think_ms": 8000}},
            ),
        ],
        Who("scripted", "behaviour"),
        partner=HUMAN,
        player="bob",
        source="human",
        success=False,
        started_at=_at(5),
        ended_at=_at(6),
        labels=[
            {"step_idx": 0, "label": "good", "author": "ann"},
            {"step_idx": 1, "label": "bad", "author": "ann"},
        ],
    )
    scripted = EpisodeRecord(
        MAZE,
        envs.spec(MAZE).version,
        4,
        "o\n",
        [StepRecord("move up\n", "o\n", -1.0, True)],
        Who("scripted", "behaviour"),
    )
    ids = store.write_episodes([maze, quit_20q, answered, scripted])
    store.add_label(ids[0], "typo", step_idx=1, author="bob")
    register_player(store, "cy")
    return {"maze": ids[0], "quit": ids[1], "answered": ids[2]}
