"""Task views, discovered by module: each module under ``lmrl_tui.views`` may define
``TASK_VIEWS = {task_id: ViewClass}``. Tasks without a view get the plain :class:`TextView`.

A view's styles are in ``lmrl_tui/styles/views.tcss``, which the app loads (each rule starts with
the view's class name); a test that mounts a view builds the app with :func:`lmrl_tui.app.make_app`.
"""

from __future__ import annotations

import importlib
import pkgutil

from lmrl_tui.views.base import TaskView
from lmrl_tui.views.text import TextView

_VIEWS: dict[str, type[TaskView]] | None = None


def view_class(task_id: str) -> type[TaskView]:
    global _VIEWS
    if _VIEWS is None:
        _VIEWS = {}
        for mod in pkgutil.iter_modules(__path__):
            if mod.name in ("base", "text"):
                continue
            module = importlib.import_module(f"{__name__}.{mod.name}")
            _VIEWS.update(getattr(module, "TASK_VIEWS", {}))
    return _VIEWS.get(task_id, TextView)
