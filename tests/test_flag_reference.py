"""docs/flags.md is every flag of every ``lmrl`` command, written from the parsers: a flag added or
changed without rewriting the page fails here (``python scripts/flag_reference.py`` rewrites it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location(
        "flag_reference", ROOT / "scripts" / "flag_reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_flag_page_is_current_and_names_every_training_flag() -> None:
    script = _script()
    page = (ROOT / "docs" / "flags.md").read_text()
    assert page == script.render(), "docs/flags.md is stale: python scripts/flag_reference.py"
    for flag in ("--pack", "--precision", "--top-k", "--warmup-steps", "--campaign", "--vs"):
        assert f"`{flag}`" in page
