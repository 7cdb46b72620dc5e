"""The task registry: ``make(id, **options)``, ``ids()``, ``spec(id)``, scripted policies by name.

Each built-in task family registers its ids when its package is imported; the registry imports
that package the first time one of its ids is used (the families declare which: the core names
none), so the app lists tasks without loading them all.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from envs.core.api import Agent, RandomAgent, Task, TaskSpec
from envs.core.options import DECLARED, OptionSpec

TaskFactory = Callable[..., Task]
AgentFactory = Callable[..., Agent]


@dataclass
class _Entry:
    factory: TaskFactory
    policies: dict[str, AgentFactory]
    spec: TaskSpec


_REGISTRY: dict[str, _Entry] = {}
POLICY_ALIASES = {"optimal": "strong", "expert": "strong"}


class UnknownTask(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


class UnknownPolicy(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def register(
    task_id: str,
    factory: TaskFactory,
    *,
    policies: Mapping[str, AgentFactory] | None = None,
) -> None:
    """Register a task factory and its scripted policies (``behaviour``, ``strong``, ...).

    ``random`` is added for every task that lists its legal actions.
    """
    spec = factory().spec
    pols = dict(policies or {})
    pols.setdefault("random", RandomAgent)
    _REGISTRY[task_id] = _Entry(factory, pols, spec)


def ids() -> list[str]:
    """Every registered task id: the built-in ones in a fixed order, then any others."""
    _load_builtin()
    order = {task_id: i for i, task_id in enumerate(_BUILTIN)}
    return sorted(_REGISTRY, key=lambda t: (order.get(t, len(order)), t))


def spec(task_id: str, **options: Any) -> TaskSpec:
    """The task's spec; with ``options``, that of the task built with them (options can change
    its constants; a bad option raises ValueError)."""
    if not options:
        return _entry(task_id).spec
    task = make(task_id, **options)
    try:
        return task.spec
    finally:
        task.close()


def make(task_id: str, *, partner: Agent | None = None, **options: Any) -> Task:
    """Build a task by id; ``options`` are task-specific (see each task's docstring).

    ``partner`` is the agent on the other side of a two-sided task (a person, a model, a scripted
    policy) instead of the task's embedded one; it is a constructor argument, never an option (it
    is not recorded with the episode's options). An option the task does not take raises
    :class:`ValueError` naming it (not a TypeError).
    """
    entry = _entry(task_id)
    if partner is not None:
        if len(entry.spec.roles) < 2:
            raise ValueError(f"{task_id} is one-sided: it takes no partner")
        options = {**options, "partner": partner}
    declared = {o.name: o for o in DECLARED.get(task_id, ())}
    for name, value in options.items():  # a number given as text that is none: say what it takes
        o = declared.get(name)
        if o is not None and o.kind in ("int", "float") and isinstance(value, str):
            o.parse(value)
    try:
        return entry.factory(**options)
    except TypeError as e:
        m = re.search(
            r"(?:unexpected keyword argument|passed as keyword arguments?:) '([^']+)'", str(e)
        )
        if m is None:
            raise
        known = ", ".join(entry.spec.options) or "none"
        raise ValueError(f"{task_id} has no option {m.group(1)!r} (its options: {known})") from None


_INTERNAL_OPTIONS = frozenset({"partner", "partner_replies"})
"""Options only the store's replay and tests give (recorded replies), never a person."""


def option_specs(task_id: str) -> list[OptionSpec]:
    """The options ``task_id`` takes, with the defaults it really uses (its spec's), then any other
    option its spec shows (a task registered at run time declares its options by its spec alone)."""
    shown = _entry(task_id).spec.options
    out: list[OptionSpec] = []
    for o in DECLARED.get(task_id, ()):
        default = shown.get(o.name, o.default)
        out.append(OptionSpec(o.name, o.kind, default, o.choices, o.help, o.minimum))
    declared = {o.name for o in out}
    for name, value in shown.items():
        if name in declared or name in _INTERNAL_OPTIONS:
            continue
        kind = (
            "bool"
            if isinstance(value, bool)
            else "int"
            if isinstance(value, int)
            else ("float" if isinstance(value, float) else "text")
        )
        out.append(OptionSpec(name, kind, value))
    return out


def policies(task_id: str) -> list[str]:
    return list(_entry(task_id).policies)


def make_policy(task_id: str, name: str, **kwargs: Any) -> Agent:
    entry = _entry(task_id)
    key = POLICY_ALIASES.get(name, name)
    if key not in entry.policies:
        raise UnknownPolicy(
            f"unknown policy {name!r} for {task_id}; choose one of: {', '.join(entry.policies)}"
        )
    return entry.policies[key](**kwargs)


def _entry(task_id: str) -> _Entry:
    _load_builtin(task_id)
    if task_id not in _REGISTRY:
        _load_builtin()
    try:
        return _REGISTRY[task_id]
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise UnknownTask(f"unknown task {task_id!r}; known tasks: {known}") from None


_BUILTIN: dict[str, str] = {}
"""Built-in task ids, in their order, and the module that registers each (imported on first use):
declared by the package's families (each ``family.py``, :mod:`envs.discovery`), never named here."""


def declare_builtin(task_id: str, module: str) -> None:
    """``task_id`` ships with this package and is registered by ``module`` when first used."""
    _BUILTIN[task_id] = module


_loaded = False


def _load_builtin(task_id: str | None = None) -> None:
    """Import the module of ``task_id`` (or of every built-in task); absent modules are skipped."""
    global _loaded

    if task_id is not None:
        if task_id in _REGISTRY:
            return
        mod = _BUILTIN.get(task_id)
        if mod is not None and importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)
        return
    if _loaded:
        return
    _loaded = True
    for mod in dict.fromkeys(_BUILTIN.values()):
        if importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)


def builtin_ids() -> list[str]:
    """The task ids this package ships, in their fixed order (without tasks registered at run time,
    such as the tests' toy tasks)."""
    return list(_BUILTIN)


def registered_ids() -> list[str]:
    """The ids registered so far, importing nothing (what is shown when a task module fails)."""
    return list(_REGISTRY)
