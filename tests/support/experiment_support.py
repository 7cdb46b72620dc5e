"""Loading a script of experiments/ as a module in tests (a support module: test files import
it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def experiment_script(name: str) -> ModuleType:
    """``experiments/NAME.py`` as a module (experiments/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
