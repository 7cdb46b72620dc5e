"""Task options as a command line or a form writes them (``key=value``), and what each task
declared it takes (:data:`DECLARED`: kinds, defaults and valid values)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


def parse_option(text: str) -> tuple[str, Any]:
    """A command line's task option ``key=value``; the value is read as JSON when it parses
    (``3``, ``-10.5``, ``true``), else kept as text (``words=small``)."""
    if "=" not in text:
        raise ValueError(f"task options look like key=value, not {text!r}")
    key, value = text.split("=", 1)
    if not key.strip():
        raise ValueError(f"task option {text!r} has no name")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


@dataclass(frozen=True)
class OptionSpec:
    """One option a task takes: its kind, default and valid values, for ``lmrl tasks``, the
    ``--option`` help and the new-episode dialog (the task itself still checks what it is given).

    ``kind``: ``"int"``, ``"float"``, ``"text"`` (with ``choices``: one of them or a file's path),
    ``"choice"`` (one of ``choices``), ``"choices"`` (a comma-separated list of ``choices``) or
    ``"bool"``."""

    name: str
    kind: str
    default: Any = None
    choices: tuple[Any, ...] = ()
    help: str = ""
    minimum: float | None = None

    def values(self) -> str:
        """The valid values in a few words: ``standard|small``, ``a whole number ≥ 1``."""
        if self.kind in ("choice", "bool"):
            return "|".join(show_value(c) for c in (self.choices or (True, False)))
        if self.kind == "choices":
            return "any of " + ",".join(map(str, self.choices))
        if self.kind == "text" and self.choices:  # named values, or a file
            return "|".join(map(str, self.choices)) + "|a file"
        word = {"int": "a whole number", "float": "a number", "text": "text"}[self.kind]
        return word + (f" ≥ {self.minimum:g}" if self.minimum is not None else "")

    def describe(self) -> str:
        """``words=standard|small (default: standard)``"""
        return f"{self.name}={self.values()} (default: {show_value(self.default)})"

    def parse(self, text: str) -> Any:
        """The value typed in a form or on a command line, checked; blank is the default.
        Raises ValueError naming the valid values."""
        text = text.strip()
        if not text:
            return self.default
        bad = ValueError(f"{self.name} must be {self.values()}, not {text!r}")
        if self.kind == "bool":
            low = text.lower()
            if low not in ("true", "false", "yes", "no", "1", "0"):
                raise bad
            return low in ("true", "yes", "1")
        if self.kind == "choice":
            for c in self.choices:
                if text == show_value(c) or text.lower() == str(c).lower():
                    return c
            raise bad
        if self.kind == "choices":
            picked = [p.strip() for p in text.split(",") if p.strip()]
            if not picked or any(p not in self.choices for p in picked):
                raise bad
            return picked
        if self.kind == "text":
            return text
        if text.lower() in ("none", "null") and self.default is None:
            return None
        try:
            value: Any = int(text) if self.kind == "int" else float(text)
        except ValueError:
            raise bad from None
        if self.minimum is not None and value < self.minimum:
            raise bad
        return value


def show_value(value: Any) -> str:
    """An option's value as a person types it (``none``, ``true``, ``kQK,kRK``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def int_option(name: str, default: Any, help: str = "", minimum: float | None = 1) -> OptionSpec:
    """A whole-number option (at least ``minimum``)."""
    return OptionSpec(name, "int", default, help=help, minimum=minimum)


DECLARED: dict[str, tuple[OptionSpec, ...]] = {}
"""The options each task declared (:func:`declare_options`; ``envs.option_specs(task_id)`` adds any
a task's spec shows that are not declared)."""


def declare_options(task_ids: tuple[str, ...] | list[str], specs: tuple[OptionSpec, ...]) -> None:
    """The options ``task_ids`` take: kinds, defaults and valid values (a family declares its own)."""
    for task_id in task_ids:
        DECLARED[task_id] = tuple(specs)


def options_help() -> str:
    """Every built-in task's options in a few lines (the ``--option`` help)."""
    groups: dict[int, list[str]] = {}
    for task_id, specs in DECLARED.items():
        groups.setdefault(id(specs), []).append(task_id)
    return "\n".join(
        f"{', '.join(ids)}: " + "; ".join(s.describe() for s in DECLARED[ids[0]])
        for ids in groups.values()
    )
