"""The package restructure changed no behaviour: generate + export through the real CLI gives the
same bytes (clock fields blanked) as the code before it, for every task id."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

import envs

_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "golden_exports.py"
_spec = importlib.util.spec_from_file_location("golden_exports", _SCRIPT)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)
TASKS, fingerprint = golden.TASKS, golden.fingerprint

HASHES = json.loads((Path(__file__).parent / "golden" / "export_hashes.json").read_text())


def test_fingerprint_covers_every_task() -> None:
    assert TASKS == envs.core.builtin_ids()


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_export_is_byte_identical(task: str, tmp_path: Path) -> None:
    if task in ("chess", "endgames") and not (
        shutil.which("stockfish") or Path("/usr/games/stockfish").exists()
    ):
        pytest.skip("needs stockfish")
    got = fingerprint(task, HASHES["episodes"], HASHES["seed"], tmp_path)
    assert got == HASHES["sha256"][task]
