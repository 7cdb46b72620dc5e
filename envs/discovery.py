"""The task families this package ships declare themselves: each family's ``family.py`` lists its
task ids, the module that registers them (imported the first time one of its ids is used, so
listing the tasks loads none of them) and the options they take. This module finds every
``family.py`` under ``envs/`` and reads it *as a file*, so no family package (nor its heavy
imports: python-chess, the word lists) is imported here; the task core names none of them. A new
family adds its own ``family.py`` (see CONTRIBUTING.md: adding a task) and nothing here."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from envs.core.options import declare_options
from envs.core.registry import declare_builtin

FILE = "family.py"


def declarations(root: Path = Path(__file__).parent) -> list[tuple[int, str, tuple[str, ...], Any]]:
    """Every family's ``DECLARED`` rows under ``root``, in their place in the task list."""
    rows: list[tuple[int, str, tuple[str, ...], Any]] = []
    for path in sorted(root.rglob(FILE)):
        name = "envs.declared." + ".".join(path.parent.relative_to(root).parts)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot read the family declaration {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rows.extend(module.DECLARED)
    return sorted(rows, key=lambda row: row[0])


def declare_families() -> None:
    """Declare every family found to the task core."""
    for _place, module, ids, options in declarations():
        for task_id in ids:
            declare_builtin(task_id, module)
        declare_options(ids, options)
