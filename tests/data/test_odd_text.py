"""Odd text (a lone UTF-16 surrogate from a broken terminal or endpoint) is cleaned where it
enters: the step is taken and stored, or neither; indices never shift."""

from __future__ import annotations

import envs
from data.generate import generate
from data.session import PlaySession
from envs.core import clean_text

BROKEN = "Is it a ch\ud800air?"


def test_clean_text_replaces_only_lone_surrogates() -> None:
    assert clean_text(BROKEN) == "Is it a ch\ufffdair?"
    assert clean_text("plain\x07bell\ttab é 😀") == "plain\x07bell\ttab é 😀"


def test_a_person_typing_a_surrogate_is_stored_with_every_later_step(store) -> None:
    s = PlaySession(store, "twenty-questions", seed=3)
    s.start()
    s.human_input(BROKEN)
    s.human_input("Is it an animal?")
    rows = store.steps(s.episode_id)
    assert [r["idx"] for r in rows] == [0, 1] and len(s.transitions) == 2
    assert "\ufffd" in rows[0]["typed"] and rows[1]["typed"] == "Is it an animal?"
    s.abandon()


class SurrogateAgent:
    kind, name = "scripted", "broken"

    def reset(self, task, seed=None) -> None:
        pass

    def act(self, history) -> str:
        return "I s   i t   \ud800?\n"


def test_an_agent_saying_a_surrogate_is_generated_and_stored(store) -> None:
    res = generate(store, "twenty-questions", SurrogateAgent(), 2, seed=0)
    assert res.written == 2
    eid = store.recent_episodes(1)[0]["id"]
    assert all("\ud800" not in r["action"] for r in store.steps(eid))


def test_the_store_itself_never_fails_on_one(store) -> None:
    task = envs.make("maze-fo")
    first = task.reset(0)
    from data.records import Who

    eid = store.start_episode("maze-fo", 1, 0, first + "\udfff", Who("human", "human"))
    store.add_step(eid, 0, "move up\ud800\n", "obs\udc00", -1.0, typed="up\ud800")
    (row,) = store.steps(eid)
    assert row["action"] == "move up\ufffd\n" and row["typed"] == "up\ufffd"
