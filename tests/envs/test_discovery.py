"""Task families declare themselves in their own ``family.py``; ``envs.discovery`` finds and reads
those files without importing the families, so adding a family touches only its package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import envs
from envs.discovery import declarations


def test_a_new_family_is_found_by_its_file_alone(tmp_path: Path) -> None:
    (tmp_path / "zoo").mkdir()
    (tmp_path / "zoo" / "__init__.py").write_text(
        "raise RuntimeError('the package is never imported')\n"
    )
    (tmp_path / "zoo" / "family.py").write_text(
        "from envs.core.options import int_option\n"
        "DECLARED = ((5, 'envs.zoo', ('zoo-a', 'zoo-b'), (int_option('max_steps', 9, 'cut'),)),)\n"
    )
    (tmp_path / "early").mkdir()
    (tmp_path / "early" / "family.py").write_text(
        "DECLARED = ((1, 'envs.early', ('early',), ()),)\n"
    )
    rows = declarations(tmp_path)
    assert [r[2] for r in rows] == [
        ("early",),
        ("zoo-a", "zoo-b"),
    ]  # in their places, not by folder
    assert rows[1][1] == "envs.zoo" and rows[1][3][0].name == "max_steps"


def test_the_shipped_families_declare_every_task_in_the_listed_order() -> None:
    rows = declarations()
    assert [t for r in rows for t in r[2]] == envs.ids()
    assert {r[1].split(".")[1] for r in rows} == {
        "maze",
        "textnav",
        "wordle",
        "chess",
        "questions",
        "car_dealer",
    }


def test_importing_envs_imports_no_family() -> None:
    code = "import sys, envs; print(sorted(m for m in sys.modules if m.startswith('envs.')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert ast.literal_eval(out) == [
        "envs.core",
        "envs.core.api",
        "envs.core.episode",
        "envs.core.options",
        "envs.core.registry",
        "envs.discovery",
    ]
