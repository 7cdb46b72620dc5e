"""Documented config fields and the task facts their defaults read (no torch): :func:`setting`
makes a dataclass field that carries its ``--help`` line, which
:func:`training.args.add_config_arguments` turns into a flag; :func:`fits` checks a saved value
against a field's type (a config read back from a checkpoint); :func:`task_fact` and
:func:`action_token_limit` read a task's spec."""

from __future__ import annotations

import math
import types
import typing
from dataclasses import MISSING, field
from typing import Any

import envs


def setting(
    default: Any = MISSING,
    doc: str = "",
    *,
    factory: Any = MISSING,
    flag: bool = True,
    switch: bool = False,
) -> Any:
    """A config field with its help line (``metadata["help"]``).

    ``flag=False``: the command line sets it through its own argument (``--task``, ``--option``
    ...), not a generated ``--name`` flag; ``switch=True``: a bare ``--name`` sets it to True."""
    meta = {"help": doc, "flag": flag, "switch": switch}
    if factory is not MISSING:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a field's type hint (int, float, bool, str, dicts, lists, unions)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    if hint is str:
        return isinstance(value, str)
    base = origin or hint
    if base is dict:
        return isinstance(value, dict)
    if base in (list, tuple):
        return isinstance(value, list | tuple)
    return True


def task_fact(task_id: str, name: str, default: Any) -> Any:
    """A fact from the task's spec (``window``, ``decoding``, ``max_action_bytes``), or ``default``
    for a task id that is not registered (a toy task of the tests, an empty config)."""
    try:
        return getattr(envs.spec(task_id), name)
    except envs.UnknownTask:
        return default


def action_token_limit(task_id: str, free_text: int = 32) -> int:
    """The most tokens a generated action may take on ``task_id``: its spec's longest action in
    bytes (a byte-level tokenizer never needs more tokens than bytes) where the task bounds it, at
    most ``free_text``; else ``free_text``. An untrained chess agent wrote 32-token illegal moves,
    401 of them a game."""
    bound = task_fact(task_id, "max_action_bytes", None)
    return min(free_text, int(bound)) if bound else free_text
