"""Eight `lmrl generate` processes and a reader on one new store: nothing lost, no lock error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from data.store import Store


@pytest.mark.slow
def test_eight_writers_and_a_reader_lose_nothing(tmp_path) -> None:
    db = tmp_path / "shared.db"  # new: the eight also race to create and migrate it
    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "lmrl_tui", "--db", str(db), "generate", "maze-fo",
             "--episodes", "250", "--seed", str(1000 * i), "--batch", "50", "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for i in range(8)
    ]
    reads = 0
    while any(w.poll() is None for w in writers):
        reader = subprocess.run(
            [sys.executable, "-m", "lmrl_tui", "--db", str(db), "stats"], capture_output=True, text=True
        )
        if db.exists():
            assert reader.returncode == 0, reader.stderr
            reads += 1
    errors = [w.communicate()[1] for w in writers]
    assert [w.returncode for w in writers] == [0] * 8, errors
    assert not any("locked" in e or "Traceback" in e for e in errors)
    store = Store(db)
    assert store.count() == 8 * 250
    store.close()
    assert reads >= 1
