from __future__ import annotations

from pathlib import Path

import pytest

from data.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "episodes.db"


@pytest.fixture
def store(db_path: Path):
    s = Store(db_path)
    yield s
    s.close()
