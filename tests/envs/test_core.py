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
