"""Random text into every registered task (hypothesis): ``step`` gives a valid Step (an invalid
action with a defined reward), ``parse_input`` and ``parse_reply`` return text or raise
:class:`envs.InvalidInput`; never another exception. Text: empty, whitespace, control
characters, lone surrogates, any unicode, 100 kB.

Few examples by default (derandomized, so the selection is fixed); ``LMRL_HEAVY=1`` tries many.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzz_text import fuzz, odd_text

import envs
from envs.core import InvalidInput, Step
from envs.core.checker import _check_step

FUZZ = fuzz(15, 300)

TASKS = envs.ids()


@pytest.fixture(scope="module")
def tasks():
    made: dict[str, envs.Task] = {}
    yield made
    for t in made.values():
        t.close()


def _task(tasks, task_id: str) -> envs.Task:
    if task_id not in tasks:
        tasks[task_id] = envs.make(task_id)
    t = tasks[task_id]
    t.reset(7)
    return t


moves = st.lists(st.one_of(odd_text(), st.integers(0, 10_000)), min_size=1, max_size=6)
"""Odd text, or (an integer) one of the task's legal actions then: odd text deeper in an episode."""


@pytest.mark.parametrize("task_id", TASKS)
def test_step_takes_any_text(task_id: str, tasks) -> None:
    @FUZZ
    @given(moves=moves)
    def check(moves: list[str | int]) -> None:
        t = _task(tasks, task_id)
        for move in moves:
            if isinstance(move, int):
                legal = t.legal_actions()
                if not legal:
                    continue
                move = legal[move % len(legal)]
            st_ = t.step(move)
            assert isinstance(st_, Step)
            _check_step(task_id, t.spec, st_)
            json.dumps(t.state())
            assert isinstance(t.history(), tuple)
            if st_.terminated or st_.truncated:
                break

    check()


@pytest.mark.parametrize("task_id", TASKS)
@pytest.mark.parametrize("side", ["parse_input", "parse_reply"])
def test_parsers_take_any_text(task_id: str, side: str, tasks) -> None:
    @FUZZ
    @given(text=odd_text())
    def check(text: str) -> None:
        t = _task(tasks, task_id)
        try:
            out = getattr(t, side)(text)
        except InvalidInput as e:
            assert str(e).strip(), "an InvalidInput needs a message for the person"
            return
        assert isinstance(out, str)
        if side == "parse_input":  # what it accepted is an action the task takes
            _check_step(task_id, t.spec, t.step(out))

    check()
