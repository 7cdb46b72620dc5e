"""The task core: the registry's partner argument, the Task protocol's defaults, test isolation."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import envs
from data.store import default_db_path


def test_tests_never_touch_the_user_store() -> None:
    assert Path(default_db_path()).resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())


def test_a_partner_is_an_argument_not_an_option() -> None:
    asker = envs.make_policy("twenty-questions", "random")
    task = envs.make("twenty-questions", partner=asker)
    assert "partner" not in task.spec.options
    with pytest.raises(ValueError, match="one-sided"):
        envs.make("maze-fo", partner=asker)


def test_every_task_has_the_whole_protocol() -> None:
    for task_id in envs.core.builtin_ids():
        task = envs.make(task_id)
        try:
            assert isinstance(task, envs.Task)
            assert task.parse_reply("Yes.") in ("Yes.", "Yes.\n", "yes", "Yes")
        finally:
            task.close()
            task.close()  # closing twice is safe


@pytest.mark.stockfish
@pytest.mark.parametrize("task_id", envs.core.builtin_ids())
def test_every_option_a_task_shows_is_declared_with_the_default_it_uses(task_id) -> None:
    from envs.core.options import DECLARED
    from envs.core.registry import option_specs

    declared = {o.name: o for o in DECLARED[task_id]}
    shown = envs.spec(task_id).options
    assert set(shown) <= set(declared)
    for name, value in shown.items():
        assert declared[name].default == value, name
    for o in option_specs(task_id):  # every declared default and value is one the task takes
        for value in (o.default, *o.choices[:2]):
            if value is None or (o.name == "layout" and value == "random"):
                continue
            given = [value] if o.kind == "choices" and not isinstance(value, list) else value
            envs.make(task_id, **{o.name: given}).close()
        if o.kind == "choices":
            with pytest.raises(ValueError, match=o.name):
                o.parse("kXK")


def test_an_option_s_typed_value_is_checked_and_names_the_valid_values() -> None:
    from envs.core.registry import option_specs

    words, guesses = option_specs("wordle")[:2]
    assert words.parse("small") == "small" and words.parse("") == "standard"
    with pytest.raises(ValueError, match="words must be standard|small, not 'tiny'"):
        words.parse("tiny")
    assert guesses.parse("8") == 8
    with pytest.raises(ValueError, match="max_guesses must be a whole number ≥ 1, not 'x'"):
        guesses.parse("x")


def test_a_bad_number_given_to_make_names_what_the_option_takes() -> None:
    with pytest.raises(ValueError, match="max_guesses must be a whole number ≥ 1, not 'six'"):
        envs.make("wordle", max_guesses="six")
    with pytest.raises(ValueError, match="wordle has no option 'colour' \\(its options: "):
        envs.make("wordle", colour="red")
